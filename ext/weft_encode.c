/*
 * Weft\Ext\encodeResponse(): the native fast path of Weft\Http\Message\ResponseEncoder::encode() for the
 * common response, and checkResponseLayout(), the start-up check of the PHP layout it reads.
 *
 * The common response: a Weft\Http\Message\Response of exactly the checked class and layout, with a string
 * body (no producer), no protocol switch, no trailers, a final status other than 204 and 304, answering a request that
 * is not HEAD, whose header fields are all strings or integers (or lists of them), name valid tokens and
 * values free of control bytes (tab allowed: HeaderField's rule), and which has no Transfer-Encoding or
 * Connection field. For it, encodeResponse() returns exactly the bytes encode() returns for the same
 * arguments: the status line, Server (unless the response has its own), Date (likewise), the fields as
 * given, Content-Length (the body's, whatever the response said), Connection, the body. For anything else
 * it returns null and PHP's encoder, which stays the reference, encodes it or raises its exception: the
 * error paths and their messages are written once, in PHP.
 *
 * The Response is read from its property slots, at offsets checkResponseLayout() verified once per process
 * (ResponseEncoder::nativeEncode()): the class is final, declares exactly the seven properties below with
 * these types and no others, its REASONS constant is an array, and a Response built by its constructor
 * answers its accessors (status(), body(), reason(), headerFields(), isStreamed(), upgrade(), hasTrailers())
 * with what the slots hold. A class that gains a property fails the check, and every response
 * is then encoded in PHP, said once in the log, until this file is taught the new property.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_weft.h"
#include "zend_exceptions.h"
#include "zend_interfaces.h"

#include <sys/time.h>
#include <time.h>

/* Field names are RFC 9110 tokens: weft_tchar (weft_http.c), the parser's own table. */

/* HeaderField::VALUE refuses these: every control byte but tab, and DEL. */
static zend_always_inline bool weft_encode_bad_value_byte(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

#define WEFT_RESPONSE_PROPERTIES 7
static const char *const weft_response_names[WEFT_RESPONSE_PROPERTIES] = {
	"status", "headers", "body", "reason", "producer", "upgrade", "trailers",
};
enum { WEFT_RS_STATUS, WEFT_RS_HEADERS, WEFT_RS_BODY, WEFT_RS_REASON, WEFT_RS_PRODUCER, WEFT_RS_UPGRADE, WEFT_RS_TRAILERS };

/* The class checked by checkResponseLayout() (NULL: none, or the check failed); reset at the request's end. */
static zend_class_entry *weft_response_ce = NULL;
static uint32_t weft_response_offsets[WEFT_RESPONSE_PROPERTIES];
/* Its REASONS constant: status => standard reason phrase. */
static HashTable *weft_response_reasons = NULL;

void weft_encode_rshutdown(void)
{
	weft_response_ce = NULL;
	weft_response_reasons = NULL;
}

/* The property's declared type is exactly `mask` (no class), or exactly ClassName|mask when class_name is set. */
static bool weft_encode_type_is(const zend_property_info *info, uint32_t mask, const char *class_name)
{
	if (class_name == NULL) {
		return !ZEND_TYPE_IS_COMPLEX(info->type) && ZEND_TYPE_PURE_MASK(info->type) == mask;
	}
	if (!ZEND_TYPE_HAS_NAME(info->type) || ZEND_TYPE_PURE_MASK(info->type) != mask) {
		return false;
	}
	zend_string *name = ZEND_TYPE_NAME(info->type);
	return zend_string_equals_cstr(name, class_name, strlen(class_name));
}

/* Calls $object->$method() ($method in lower case) and says whether its result is identical to *expected. */
static bool weft_encode_answers(zend_object *object, const char *method, zval *expected)
{
	zend_function *function = zend_hash_str_find_ptr(&object->ce->function_table, method, strlen(method));
	if (function == NULL || (function->common.fn_flags & (ZEND_ACC_STATIC | ZEND_ACC_ABSTRACT))) {
		return false;
	}
	zval result;
	ZVAL_UNDEF(&result);
	zend_call_known_instance_method(function, object, &result, 0, NULL);
	bool same = EG(exception) == NULL && !Z_ISUNDEF(result) && zend_is_identical(&result, expected);
	zval_ptr_dtor(&result);
	return same;
}

/* NULL when encodeResponse() may read $ce's objects from these offsets, else why not. */
static const char *weft_response_check(zend_class_entry *ce, uint32_t *offsets, HashTable **reasons)
{
	static char reason[240];
	if (ce->type != ZEND_USER_CLASS || ce->constructor == NULL || ce->parent != NULL || !(ce->ce_flags & ZEND_ACC_FINAL)
		|| (ce->ce_flags & (ZEND_ACC_ABSTRACT | ZEND_ACC_INTERFACE | ZEND_ACC_TRAIT | ZEND_ACC_ENUM))) {
		return "not a final user class with a constructor and no parent";
	}
	if (ce->default_properties_count != WEFT_RESPONSE_PROPERTIES) {
		snprintf(reason, sizeof(reason), "it has %d instance properties, the native encoder knows %d (status, headers, body, "
			"reason, producer, upgrade, trailers): a new one must be taught to ext/weft_encode.c",
			ce->default_properties_count, WEFT_RESPONSE_PROPERTIES);
		return reason;
	}
	static const uint32_t masks[WEFT_RESPONSE_PROPERTIES] = {
		MAY_BE_LONG, MAY_BE_ARRAY, MAY_BE_STRING, MAY_BE_STRING, MAY_BE_NULL, MAY_BE_NULL, MAY_BE_ARRAY | MAY_BE_NULL,
	};
	static const char *const classes[WEFT_RESPONSE_PROPERTIES] = { NULL, NULL, NULL, NULL, "Closure", "Weft\\Http\\Message\\Upgrade", "Closure" };
	static const char *const types[WEFT_RESPONSE_PROPERTIES] = { "int", "array", "string", "string", "?\\Closure", "?Upgrade", "array|\\Closure|null" };
	for (int i = 0; i < WEFT_RESPONSE_PROPERTIES; i++) {
		zend_property_info *info = zend_hash_str_find_ptr(&ce->properties_info, weft_response_names[i], strlen(weft_response_names[i]));
		if (info == NULL || info->ce != ce || (info->flags & ZEND_ACC_STATIC) || !IS_VALID_PROPERTY_OFFSET(info->offset)
			|| !weft_encode_type_is(info, masks[i], classes[i])) {
			snprintf(reason, sizeof(reason), "property $%s is not a declared %s instance property", weft_response_names[i], types[i]);
			return reason;
		}
		offsets[i] = info->offset;
	}
	zend_class_constant *constant = zend_hash_str_find_ptr(CE_CONSTANTS_TABLE(ce), "REASONS", sizeof("REASONS") - 1);
	if (constant == NULL || Z_TYPE(constant->value) != IS_ARRAY) {
		return "its REASONS constant is not an array";
	}
	*reasons = Z_ARRVAL(constant->value);

	/* A Response built by the constructor holds what its accessors answer, in the slots read here. */
	const char *result = NULL;
	for (int round = 0; result == NULL && round < 2; round++) {
		zval params[4], response;
		ZVAL_LONG(&params[0], 201);
		array_init(&params[1]);
		add_assoc_string(&params[1], "X-Layout", "checked");
		ZVAL_STRING(&params[2], "the body");
		ZVAL_STRING(&params[3], round == 0 ? "Fine" : "");
		object_init_ex(&response, ce);
		zend_call_known_instance_method(ce->constructor, Z_OBJ(response), NULL, 4, params);
		if (EG(exception) != NULL) {
			zend_clear_exception();
			result = "its constructor threw with sample values";
		} else {
			zend_object *object = Z_OBJ(response);
			zval *status = OBJ_PROP(object, offsets[WEFT_RS_STATUS]), *headers = OBJ_PROP(object, offsets[WEFT_RS_HEADERS]);
			zval *body = OBJ_PROP(object, offsets[WEFT_RS_BODY]), *custom = OBJ_PROP(object, offsets[WEFT_RS_REASON]);
			zval *producer = OBJ_PROP(object, offsets[WEFT_RS_PRODUCER]), *upgrade = OBJ_PROP(object, offsets[WEFT_RS_UPGRADE]);
			zval *trailers = OBJ_PROP(object, offsets[WEFT_RS_TRAILERS]);
			zval streamed, standard, *created = zend_hash_index_find(*reasons, 201);
			ZVAL_FALSE(&streamed);
			if (created == NULL) {
				ZVAL_EMPTY_STRING(&standard);
			} else {
				ZVAL_COPY(&standard, created);
			}
			if (!zend_is_identical(status, &params[0]) || !zend_is_identical(headers, &params[1])
				|| !zend_is_identical(body, &params[2]) || !zend_is_identical(custom, &params[3])
				|| Z_TYPE_P(producer) != IS_NULL || Z_TYPE_P(upgrade) != IS_NULL || Z_TYPE_P(trailers) != IS_NULL) {
				result = "its constructor does not keep its arguments in the properties of the same names";
			} else if (!weft_encode_answers(object, "status", status) || !weft_encode_answers(object, "body", body)
				|| !weft_encode_answers(object, "headerfields", headers) || !weft_encode_answers(object, "isstreamed", &streamed)
				|| !weft_encode_answers(object, "upgrade", upgrade) || !weft_encode_answers(object, "hastrailers", &streamed)
				|| !weft_encode_answers(object, "reason", round == 0 ? custom : &standard)) {
				zend_clear_exception();
				result = "its accessors do not answer what its properties hold";
			}
			zval_ptr_dtor(&standard);
		}
		for (int i = 0; i < 4; i++) {
			zval_ptr_dtor(&params[i]);
		}
		zval_ptr_dtor(&response);
	}
	return result;
}

PHP_FUNCTION(weft_check_response_layout)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	weft_response_ce = NULL;
	weft_response_reasons = NULL;
	zend_class_entry *ce = zend_lookup_class(name);
	if (ce == NULL) {
		if (EG(exception) != NULL) {
			RETURN_THROWS();
		}
		RETURN_STR(zend_strpprintf(0, "class %s not found", ZSTR_VAL(name)));
	}
	uint32_t offsets[WEFT_RESPONSE_PROPERTIES];
	HashTable *reasons = NULL;
	const char *problem = weft_response_check(ce, offsets, &reasons);
	if (problem != NULL) {
		RETURN_STR(zend_strpprintf(0, "%s: %s", ZSTR_VAL(ce->name), problem));
	}
	memcpy(weft_response_offsets, offsets, sizeof(offsets));
	weft_response_reasons = reasons;
	weft_response_ce = ce;
	RETURN_NULL();
}

/* The digits of a zend_long, written backwards from the end of buf[MAX_LENGTH_OF_LONG]; returns the start. */
static zend_always_inline char *weft_encode_long(char *end, zend_long value)
{
	return zend_print_long_to_buf(end, value);
}

/* A field value or one item of a list: a string or an integer (anything else is PHP's to convert). */
static zend_always_inline bool weft_encode_scalar(zval *value, size_t *length)
{
	if (Z_TYPE_P(value) == IS_STRING) {
		const unsigned char *p = (const unsigned char *) Z_STRVAL_P(value);
		size_t n = Z_STRLEN_P(value);
		for (size_t i = 0; i < n; i++) {
			if (weft_encode_bad_value_byte(p[i])) {
				return false;
			}
		}
		*length += n;
		return true;
	}
	if (Z_TYPE_P(value) == IS_LONG) {
		char buf[MAX_LENGTH_OF_LONG + 1];
		char *end = buf + sizeof(buf) - 1;
		*length += (size_t) (end - weft_encode_long(end, Z_LVAL_P(value)));
		return true;
	}
	return false;
}

/* A field's name: its string key, or the digits of an integer key (PHP turns a name like "123" into one). */
static zend_always_inline const char *weft_encode_field_name(zend_string *key, zend_ulong index, char buf[MAX_LENGTH_OF_LONG + 1], size_t *length)
{
	if (key != NULL) {
		*length = ZSTR_LEN(key);
		return ZSTR_VAL(key);
	}
	char *end = buf + MAX_LENGTH_OF_LONG;
	const char *name = weft_encode_long(end, (zend_long) index);
	*length = (size_t) (end - name);
	return name;
}

static zend_always_inline char *weft_encode_put(char *out, const char *bytes, size_t length)
{
	memcpy(out, bytes, length);
	return out + length;
}

static zend_always_inline char *weft_encode_put_scalar(char *out, zval *value)
{
	if (Z_TYPE_P(value) == IS_STRING) {
		return weft_encode_put(out, Z_STRVAL_P(value), Z_STRLEN_P(value));
	}
	char buf[MAX_LENGTH_OF_LONG + 1];
	char *end = buf + sizeof(buf) - 1;
	char *start = weft_encode_long(end, Z_LVAL_P(value));
	return weft_encode_put(out, start, (size_t) (end - start));
}

/* The managed fields ResponseEncoder::MANAGED names, by their lower-case names. */
enum { WEFT_FIELD_PLAIN, WEFT_FIELD_LENGTH, WEFT_FIELD_REFUSED, WEFT_FIELD_SERVER, WEFT_FIELD_DATE };

static int weft_encode_managed(const char *name, size_t length)
{
	switch (length) {
		case 14: return zend_binary_strcasecmp(name, length, "content-length", 14) == 0 ? WEFT_FIELD_LENGTH : WEFT_FIELD_PLAIN;
		case 17: return zend_binary_strcasecmp(name, length, "transfer-encoding", 17) == 0 ? WEFT_FIELD_REFUSED : WEFT_FIELD_PLAIN;
		case 10: return zend_binary_strcasecmp(name, length, "connection", 10) == 0 ? WEFT_FIELD_REFUSED : WEFT_FIELD_PLAIN;
		case 6: return zend_binary_strcasecmp(name, length, "server", 6) == 0 ? WEFT_FIELD_SERVER : WEFT_FIELD_PLAIN;
		case 4: return zend_binary_strcasecmp(name, length, "date", 4) == 0 ? WEFT_FIELD_DATE : WEFT_FIELD_PLAIN;
		default: return WEFT_FIELD_PLAIN;
	}
}

static void weft_encode_into(zval *return_value, zend_object *response, zend_string *version, bool keep_alive,
	bool is_head, const char *date, size_t date_length, zend_string *server_field, zend_long max_body);

PHP_FUNCTION(weft_encode_response)
{
	zend_object *response;
	zend_string *version, *date, *server_field;
	bool keep_alive, is_head;
	zend_long max_body;

	ZEND_PARSE_PARAMETERS_START(7, 7)
		Z_PARAM_OBJ(response)
		Z_PARAM_STR(version)
		Z_PARAM_BOOL(keep_alive)
		Z_PARAM_BOOL(is_head)
		Z_PARAM_STR(date)
		Z_PARAM_STR(server_field)
		Z_PARAM_LONG(max_body)
	ZEND_PARSE_PARAMETERS_END();
	weft_encode_into(return_value, response, version, keep_alive, is_head, ZSTR_VAL(date), ZSTR_LEN(date), server_field, max_body);
}

/*
 * The Date field's value for now, as ResponseEncoder::httpDate(time()) gives it ("Fri, 27 Nov 2026 09:05:00
 * GMT"), formatted once a second: what encodeAnswer() uses when PHP passes no date, saving the server's
 * hot path a PHP call and a time() call per request.
 */
static const char *weft_encode_now(size_t *length)
{
	static time_t second = (time_t) -1;
	static char value[64];
	static size_t value_length = 0;
	/* gettimeofday(), as PHP's time() reads it: time(NULL) reads the kernel's coarse clock, which lags it by
	 * up to a tick, so the two would disagree for a few milliseconds after each second. */
	struct timeval tv;
	gettimeofday(&tv, NULL);
	time_t now = tv.tv_sec;
	if (now != second) {
		static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
		static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };
		struct tm tm;
		if (gmtime_r(&now, &tm) == NULL) {
			*length = 0;
			return NULL;
		}
		int n = snprintf(value, sizeof(value), "%s, %02d %s %04d %02d:%02d:%02d GMT", days[tm.tm_wday], tm.tm_mday,
			months[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
		if (n <= 0 || (size_t) n >= sizeof(value)) {
			*length = 0;
			return NULL;
		}
		value_length = (size_t) n;
		second = now;
	}
	*length = value_length;
	return value;
}

/*
 * encodeResponse() for the answer to $request, which decides keep-alive itself and reads the version from
 * the request: with no Connection field, a request keeps the connection unless it is HTTP/1.0
 * (Request::keepAlive()'s rule for that case), and only if $mayKeepAlive. $keepAlive is set to the
 * decision. False, and $keepAlive untouched, when the request is not of the class checkRequestLayout()
 * accepted or holds a Connection field: PHP decides then (Request::keepAlive()) and calls encodeResponse().
 * It saves the server's hot path two PHP calls and Request::keepAlive()'s case-insensitive search of the
 * header block for every request.
 */
PHP_FUNCTION(weft_encode_answer)
{
	zend_object *response, *request;
	zend_string *date = NULL, *server_field;
	bool may_keep_alive, is_head;
	zend_long max_body;
	zval *keep_alive_ref;

	ZEND_PARSE_PARAMETERS_START(8, 8)
		Z_PARAM_OBJ(response)
		Z_PARAM_OBJ(request)
		Z_PARAM_BOOL(may_keep_alive)
		Z_PARAM_BOOL(is_head)
		Z_PARAM_STR_OR_NULL(date)
		Z_PARAM_STR(server_field)
		Z_PARAM_LONG(max_body)
		Z_PARAM_ZVAL(keep_alive_ref)
	ZEND_PARSE_PARAMETERS_END();

	zend_string *version, *block;
	if (!weft_http_request_fields(request, &version, &block)) {
		RETURN_FALSE;
	}
	/* "\r\nConnection:" anywhere in the block, in any case: each field starts after a CRLF. */
	const char *p = ZSTR_VAL(block), *end = p + ZSTR_LEN(block);
	while (end - p >= 13) {
		const char *crlf = memchr(p, '\r', (size_t) (end - p) - 12);
		if (crlf == NULL) {
			break;
		}
		if (crlf[1] == '\n' && crlf[12] == ':' && zend_binary_strncasecmp(crlf + 2, 10, "connection", 10, 10) == 0) {
			RETURN_FALSE;
		}
		p = crlf + 1;
	}
	size_t date_length;
	const char *date_value;
	if (date != NULL) {
		date_value = ZSTR_VAL(date);
		date_length = ZSTR_LEN(date);
	} else if ((date_value = weft_encode_now(&date_length)) == NULL) {
		RETURN_FALSE; /* no clock: PHP's encoder dates it */
	}
	bool keep_alive = may_keep_alive && !zend_string_equals_literal(version, "1.0");
	ZEND_TRY_ASSIGN_REF_BOOL(keep_alive_ref, keep_alive);
	weft_encode_into(return_value, response, version, keep_alive, is_head, date_value, date_length, server_field, max_body);
}

static void weft_encode_into(zval *return_value, zend_object *response, zend_string *version, bool keep_alive,
	bool is_head, const char *date, size_t date_length, zend_string *server_field, zend_long max_body)
{
	if (response->ce != weft_response_ce || weft_response_ce == NULL || is_head) {
		RETURN_NULL();
	}
	const uint32_t *offsets = weft_response_offsets;
	zval *status_zv = OBJ_PROP(response, offsets[WEFT_RS_STATUS]);
	zval *headers_zv = OBJ_PROP(response, offsets[WEFT_RS_HEADERS]);
	zval *body_zv = OBJ_PROP(response, offsets[WEFT_RS_BODY]);
	zval *reason_zv = OBJ_PROP(response, offsets[WEFT_RS_REASON]);
	if (Z_TYPE_P(status_zv) != IS_LONG || Z_TYPE_P(headers_zv) != IS_ARRAY || Z_TYPE_P(body_zv) != IS_STRING
		|| Z_TYPE_P(reason_zv) != IS_STRING || Z_TYPE_P(OBJ_PROP(response, offsets[WEFT_RS_PRODUCER])) != IS_NULL
		|| Z_TYPE_P(OBJ_PROP(response, offsets[WEFT_RS_UPGRADE])) != IS_NULL
		|| Z_TYPE_P(OBJ_PROP(response, offsets[WEFT_RS_TRAILERS])) != IS_NULL) {
		RETURN_NULL();
	}
	zend_long status = Z_LVAL_P(status_zv);
	if (status < 200 || status > 599 || status == 204 || status == 304 || (zend_long) Z_STRLEN_P(body_zv) > max_body) {
		RETURN_NULL();
	}
	zend_string *reason = Z_STR_P(reason_zv);
	if (ZSTR_LEN(reason) == 0 && weft_response_reasons != NULL) {
		zval *standard = zend_hash_index_find(weft_response_reasons, status);
		if (standard != NULL) {
			if (Z_TYPE_P(standard) != IS_STRING) {
				RETURN_NULL();
			}
			reason = Z_STR_P(standard);
		}
	}

	/* First pass: every field checked and measured; the second writes them into a string of that size. */
	HashTable *headers = Z_ARRVAL_P(headers_zv);
	bool own_server = false, own_date = false;
	size_t fields = 0;
	zend_string *key;
	zend_ulong index;
	zval *value;
	char name_buf[MAX_LENGTH_OF_LONG + 1];
	ZEND_HASH_FOREACH_KEY_VAL(headers, index, key, value) {
		size_t name_length;
		const char *name = weft_encode_field_name(key, index, name_buf, &name_length);
		int managed = weft_encode_managed(name, name_length);
		if (managed == WEFT_FIELD_REFUSED) {
			RETURN_NULL();
		}
		size_t values = 0, items = 0;
		if (Z_TYPE_P(value) == IS_ARRAY) {
			zval *item;
			ZEND_HASH_FOREACH_VAL(Z_ARRVAL_P(value), item) {
				if (!weft_encode_scalar(item, &values)) {
					RETURN_NULL();
				}
				items++;
			} ZEND_HASH_FOREACH_END();
		} else {
			if (!weft_encode_scalar(value, &values)) {
				RETURN_NULL();
			}
			items = 1;
		}
		if (managed == WEFT_FIELD_LENGTH) {
			continue; /* the body's own length is sent instead */
		}
		if (items > 0) {
			if (name_length == 0) {
				RETURN_NULL();
			}
			for (size_t i = 0; i < name_length; i++) {
				if (!weft_tchar[(unsigned char) name[i]]) {
					RETURN_NULL();
				}
			}
		}
		own_server |= managed == WEFT_FIELD_SERVER;
		own_date |= managed == WEFT_FIELD_DATE;
		fields += items * (name_length + 4) + values;
	} ZEND_HASH_FOREACH_END();

	char length_buf[MAX_LENGTH_OF_LONG + 1];
	char *length_end = length_buf + sizeof(length_buf) - 1;
	char *length_start = weft_encode_long(length_end, (zend_long) Z_STRLEN_P(body_zv));
	size_t length_digits = (size_t) (length_end - length_start);
	char status_buf[MAX_LENGTH_OF_LONG + 1];
	char *status_end = status_buf + sizeof(status_buf) - 1;
	char *status_start = weft_encode_long(status_end, status);
	size_t status_digits = (size_t) (status_end - status_start);

	static const char connection_keep[] = "Connection: keep-alive\r\n\r\n";
	static const char connection_close[] = "Connection: close\r\n\r\n";
	size_t connection_length = keep_alive ? sizeof(connection_keep) - 1 : sizeof(connection_close) - 1;
	size_t total = sizeof("HTTP/1.1 ") - 1 + status_digits + 1 + ZSTR_LEN(reason) + 2
		+ (own_server ? 0 : ZSTR_LEN(server_field))
		+ (own_date ? 0 : sizeof("Date: ") - 1 + date_length + 2)
		+ fields
		+ sizeof("Content-Length: ") - 1 + length_digits + 2
		+ connection_length
		+ Z_STRLEN_P(body_zv);

	zend_string *result = zend_string_alloc(total, 0);
	char *out = ZSTR_VAL(result);
	bool http10 = zend_string_equals_literal(version, "1.0");
	out = weft_encode_put(out, http10 ? "HTTP/1.0 " : "HTTP/1.1 ", sizeof("HTTP/1.1 ") - 1);
	out = weft_encode_put(out, status_start, status_digits);
	*out++ = ' ';
	out = weft_encode_put(out, ZSTR_VAL(reason), ZSTR_LEN(reason));
	out = weft_encode_put(out, "\r\n", 2);
	if (!own_server) {
		out = weft_encode_put(out, ZSTR_VAL(server_field), ZSTR_LEN(server_field));
	}
	if (!own_date) {
		out = weft_encode_put(out, "Date: ", sizeof("Date: ") - 1);
		out = weft_encode_put(out, date, date_length);
		out = weft_encode_put(out, "\r\n", 2);
	}
	ZEND_HASH_FOREACH_KEY_VAL(headers, index, key, value) {
		size_t name_length;
		const char *name = weft_encode_field_name(key, index, name_buf, &name_length);
		if (name_length == 14 && weft_encode_managed(name, name_length) == WEFT_FIELD_LENGTH) {
			continue;
		}
		if (Z_TYPE_P(value) == IS_ARRAY) {
			zval *item;
			ZEND_HASH_FOREACH_VAL(Z_ARRVAL_P(value), item) {
				out = weft_encode_put(out, name, name_length);
				out = weft_encode_put(out, ": ", 2);
				out = weft_encode_put_scalar(out, item);
				out = weft_encode_put(out, "\r\n", 2);
			} ZEND_HASH_FOREACH_END();
		} else {
			out = weft_encode_put(out, name, name_length);
			out = weft_encode_put(out, ": ", 2);
			out = weft_encode_put_scalar(out, value);
			out = weft_encode_put(out, "\r\n", 2);
		}
	} ZEND_HASH_FOREACH_END();
	out = weft_encode_put(out, "Content-Length: ", sizeof("Content-Length: ") - 1);
	out = weft_encode_put(out, length_start, length_digits);
	out = weft_encode_put(out, "\r\n", 2);
	out = weft_encode_put(out, keep_alive ? connection_keep : connection_close, connection_length);
	out = weft_encode_put(out, Z_STRVAL_P(body_zv), Z_STRLEN_P(body_zv));
	ZEND_ASSERT(out == ZSTR_VAL(result) + total);
	*out = '\0';
	RETURN_NEW_STR(result);
}

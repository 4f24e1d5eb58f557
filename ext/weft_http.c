/*
 * Weft\Ext\parseHead(): the native fast path of Weft\Http\Parser\RequestParser for a complete request
 * head. It accepts exactly the heads the PHP parser accepts on its own fast path and hands back the same
 * parts; for anything else (no CRLFCRLF yet, a limit exceeded, any grammar or semantic error) it returns
 * false and the PHP parser, which stays the reference, takes the head and raises the precise HttpError.
 * The error path is rare and its ranking (first invalid byte, 414, 431, ...) is subtle: it is written once,
 * in PHP, so the two paths cannot disagree on which error a head gets.
 *
 * What "accepted" means, in the order the PHP parser checks it (RequestParser::nextHead, Syntax::checkHead,
 * the head pattern, HeaderBlock::FIELD, Syntax::HOST_VALUE):
 *   - the head (request line, fields, CRLFCRLF) is at most max_header_bytes long and its request line
 *     (without CRLF) at most max_target_bytes;
 *   - method SP target SP "HTTP/1.0" or "HTTP/1.1", method a token, target without controls, SP or DEL;
 *   - at most max_header_count field lines "name:value", name a token, value without CR, LF or NUL;
 *   - the method is a key of $methods (Limits::$methodSet);
 *   - the method is not CONNECT; a target not starting with "/" is absolute-form without userinfo, and
 *     the path does not climb above the root with ".." segments (Syntax::targetError);
 *   - Host: exactly one in HTTP/1.1, at most one in HTTP/1.0, with a valid value.
 * Every read is bounded by the end of the head, found first with a bounded search.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_weft.h"
#include "zend_exceptions.h"

/* RFC 9110 tchar: the bytes of methods and field names (the response encoder's too: php_weft.h). */
const unsigned char weft_tchar[256] = {
	['!'] = 1, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 1, ['\''] = 1, ['*'] = 1, ['+'] = 1, ['-'] = 1,
	['.'] = 1, ['^'] = 1, ['_'] = 1, ['`'] = 1, ['|'] = 1, ['~'] = 1,
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1,
	['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
	['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
	['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1,
	['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
	['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

/* The interned version strings handed back for every request (no allocation per request). */
static zend_string *weft_http_v10 = NULL;
static zend_string *weft_http_v11 = NULL;
/* The usual methods, interned too (parseRequest()). */
static zend_string *weft_http_get = NULL;
static zend_string *weft_http_post = NULL;
static zend_string *weft_http_head = NULL;
/* The scheme of a Request read over TLS (weft_http_frame_request()). */
static zend_string *weft_http_https = NULL;

zend_result weft_http_minit(void)
{
	weft_http_https = zend_string_init_interned("https", 5, 1);
	weft_http_v10 = zend_string_init_interned("1.0", 3, 1);
	weft_http_v11 = zend_string_init_interned("1.1", 3, 1);
	weft_http_get = zend_string_init_interned("GET", 3, 1);
	weft_http_post = zend_string_init_interned("POST", 4, 1);
	weft_http_head = zend_string_init_interned("HEAD", 4, 1);
	return weft_http_v10 != NULL && weft_http_v11 != NULL && weft_http_get != NULL && weft_http_post != NULL
		&& weft_http_head != NULL && weft_http_https != NULL ? SUCCESS : FAILURE;
}

static zend_always_inline bool weft_is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static zend_always_inline bool weft_is_hex_colon_dot(unsigned char c)
{
	return weft_is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
}

static zend_always_inline bool weft_is_alpha(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Host's reg-name bytes as Syntax::HOST_VALUE lists them: unreserved, sub-delims and "%". */
static zend_always_inline bool weft_is_reg_name_byte(unsigned char c)
{
	if (weft_is_alpha(c) || weft_is_digit(c)) {
		return true;
	}
	switch (c) {
		case '-': case '.': case '_': case '~': case '!': case '$': case '&': case '\'':
		case '(': case ')': case '*': case '+': case ';': case '=': case '%':
			return true;
		default:
			return false;
	}
}

/* Bytes of a request target: anything but controls, SP and DEL (the PHP pattern's [^\x00-\x20\x7f]). */
static zend_always_inline bool weft_is_target_byte(unsigned char c)
{
	return c > 0x20 && c != 0x7f;
}

/* Case-insensitive comparison of a field name with a lower-case literal of the same length. */
static bool weft_name_is(const unsigned char *name, size_t length, const char *lower, size_t lower_length)
{
	if (length != lower_length) {
		return false;
	}
	for (size_t i = 0; i < length; i++) {
		unsigned char c = name[i];
		if (c >= 'A' && c <= 'Z') {
			c = (unsigned char) (c + ('a' - 'A'));
		}
		if (c != (unsigned char) lower[i]) {
			return false;
		}
	}
	return true;
}

/*
 * The PHP pattern \A[A-Za-z][A-Za-z0-9+.\-]*+:\/\/([^\/?#]++) (absolute-form, Syntax::targetError): on a
 * match, *path is where the authority ends and *userinfo whether it holds an "@".
 */
static bool weft_is_absolute(const unsigned char *p, size_t length, size_t *path, bool *userinfo)
{
	const unsigned char *start = p;
	const unsigned char *end = p + length;
	if (p == end || !weft_is_alpha(*p)) {
		return false;
	}
	p++;
	while (p < end && (weft_is_alpha(*p) || weft_is_digit(*p) || *p == '+' || *p == '.' || *p == '-')) {
		p++;
	}
	if (end - p < 4 || p[0] != ':' || p[1] != '/' || p[2] != '/') {
		return false;
	}
	p += 3;
	const unsigned char *authority = p;
	*userinfo = false;
	while (p < end && *p != '/' && *p != '?' && *p != '#') {
		if (*p == '@') {
			*userinfo = true;
		}
		p++;
	}
	*path = (size_t) (p - start);
	return p != authority;
}

/*
 * Syntax::climbsAboveRoot(): whether the path (up to "?" or "#") has more ".." segments than segments
 * before them, reading "%2e" as "." and "%2f" as "/" (any case); empty and "." segments do not count.
 */
static bool weft_climbs_above_root(const unsigned char *p, size_t length)
{
	const unsigned char *end = p + length;
	size_t depth = 0, chars = 0, dots = 0;
	for (;;) {
		int c;
		if (p == end || *p == '?' || *p == '#') {
			c = -1;
		} else if (*p == '%' && end - p >= 3 && p[1] == '2' && (p[2] == 'e' || p[2] == 'E')) {
			c = '.';
			p += 3;
		} else if (*p == '%' && end - p >= 3 && p[1] == '2' && (p[2] == 'f' || p[2] == 'F')) {
			c = '/';
			p += 3;
		} else {
			c = *p++;
		}
		if (c == '/' || c == -1) {
			if (chars == 2 && dots == 2) {
				if (depth == 0) {
					return true;
				}
				depth--;
			} else if (chars > 0 && !(chars == 1 && dots == 1)) {
				depth++;
			}
			if (c == -1) {
				return false;
			}
			chars = dots = 0;
		} else {
			chars++;
			if (c == '.') {
				dots++;
			}
		}
	}
}

/*
 * Syntax::HOST_VALUE over a whole field value (the PHP pattern must reach the CR that ends the field or
 * the end of the block, which is where the value ends):
 * [ \t]*+ (?:[A-Za-z0-9\-._~!$&'()*+;=%]++ | \[[0-9A-Fa-f:.]++\]) (?::[0-9]*+)? [ \t]*+
 */
static bool weft_is_host_value(const unsigned char *p, size_t length)
{
	const unsigned char *end = p + length;
	while (p < end && (*p == ' ' || *p == '\t')) {
		p++;
	}
	if (p < end && *p == '[') {
		p++;
		const unsigned char *start = p;
		while (p < end && weft_is_hex_colon_dot(*p)) {
			p++;
		}
		if (p == start || p == end || *p != ']') {
			return false;
		}
		p++;
	} else {
		const unsigned char *start = p;
		while (p < end && weft_is_reg_name_byte(*p)) {
			p++;
		}
		if (p == start) {
			return false;
		}
	}
	if (p < end && *p == ':') {
		p++;
		while (p < end && weft_is_digit(*p)) {
			p++;
		}
	}
	while (p < end && (*p == ' ' || *p == '\t')) {
		p++;
	}
	return p == end;
}

/* Where the parts of an accepted head are in the buffer. */
typedef struct weft_head {
	size_t method_end, target_start, target_end, block_start, end;
	bool http11, framing;
} weft_head;

/*
 * Parses the head that starts at offset in buffer (the caller skipped the empty lines before it). The
 * search for its CRLFCRLF starts at scan_from (>= offset), where the caller knows none can start earlier.
 * Returns whether it is accepted (see the top of this file), and then where its parts are.
 */
static bool weft_parse_head(zend_string *buffer, size_t offset, size_t scan_from, zend_long max_header_bytes,
	zend_long max_target_bytes, zend_long max_header_count, HashTable *methods, weft_head *head)
{
	const unsigned char *base = (const unsigned char *) ZSTR_VAL(buffer);
	const size_t length = ZSTR_LEN(buffer);
	const char *found = zend_memnstr(ZSTR_VAL(buffer) + scan_from, "\r\n\r\n", 4, ZSTR_VAL(buffer) + length);
	if (found == NULL) {
		return false;
	}
	/* The head is [offset, end + 4); end is the position of its CRLFCRLF, so base[end .. end + 3] exist. */
	const size_t end = (size_t) (found - ZSTR_VAL(buffer));
	if (max_header_bytes < 0 || end + 4 - offset > (zend_ulong) max_header_bytes) {
		return false;
	}

	/* Request line. Every loop below stops at a byte its class excludes, and base[end] is CR, which
	 * every class excludes, so no loop runs past the head; the fixed-width version is bounded explicitly. */
	size_t p = offset;
	while (p < end && weft_tchar[base[p]]) {
		p++;
	}
	const size_t method_end = p;
	if (method_end == offset || p >= end || base[p] != ' ') {
		return false;
	}
	const size_t target_start = ++p;
	while (p < end && weft_is_target_byte(base[p])) {
		p++;
	}
	const size_t target_end = p;
	if (target_end == target_start || p >= end || base[p] != ' ') {
		return false;
	}
	p++;
	if (end - p < 8 || memcmp(base + p, "HTTP/1.", 7) != 0 || (base[p + 7] != '0' && base[p + 7] != '1')) {
		return false;
	}
	const bool http11 = base[p + 7] == '1';
	p += 8;
	const size_t block_start = p;
	if (max_target_bytes < 0 || block_start - offset > (zend_ulong) max_target_bytes) {
		return false; /* 414 */
	}

	/* Field lines, each "\r\n" name ":" value, up to the CRLFCRLF at end. */
	zend_long fields = 0;
	zend_long hosts = 0;
	size_t host_value = 0, host_value_end = 0;
	bool framing = false;
	while (p < end) {
		/* p < end and base[end + 1] exists, so p + 1 is within the buffer. */
		if (base[p] != '\r' || base[p + 1] != '\n') {
			return false;
		}
		if (++fields > max_header_count) {
			return false;
		}
		p += 2;
		const size_t name = p;
		while (p < end && weft_tchar[base[p]]) {
			p++;
		}
		if (p == name || p >= end || base[p] != ':') {
			return false;
		}
		const size_t name_length = p - name;
		const size_t value = ++p;
		while (p < end && base[p] != '\r' && base[p] != '\n' && base[p] != '\0') {
			p++;
		}
		/* The value ends at a CR (the next field's CRLF or the head's CRLFCRLF): a bare LF or a NUL fails. */
		if (p < end && base[p] != '\r') {
			return false;
		}
		if (weft_name_is(base + name, name_length, "host", 4)) {
			hosts++;
			host_value = value;
			host_value_end = p;
		} else if (weft_name_is(base + name, name_length, "content-length", 14)
			|| weft_name_is(base + name, name_length, "transfer-encoding", 17)) {
			framing = true;
		}
	}

	/* Semantics, as RequestParser::nextHead judges a head that matched its pattern. */
	const char *method = ZSTR_VAL(buffer) + offset;
	const size_t method_length = method_end - offset;
	if (!zend_symtable_str_exists(methods, method, method_length)) {
		return false; /* 501 or 400 */
	}
	const unsigned char *target = base + target_start;
	const size_t target_length = target_end - target_start;
	if (method_length == 7 && memcmp(method, "CONNECT", 7) == 0) {
		return false;
	}
	size_t path = 0;
	if (target[0] != '/') {
		bool userinfo;
		if (!weft_is_absolute(target, target_length, &path, &userinfo) || userinfo) {
			return false; /* the asterisk-form, other forms, userinfo */
		}
	}
	if (weft_climbs_above_root(target + path, target_length - path)) {
		return false;
	}
	if (hosts > 1 || (hosts == 0 && http11)) {
		return false;
	}
	if (hosts == 1 && !weft_is_host_value(base + host_value, host_value_end - host_value)) {
		return false;
	}

	head->method_end = method_end;
	head->target_start = target_start;
	head->target_end = target_end;
	head->block_start = block_start;
	head->end = end;
	head->http11 = http11;
	head->framing = framing;
	return true;
}

/* parseHead()'s answer: [method, target, version, header block, offset after the head, has framing fields]. */
static void weft_head_array(zend_string *buffer, size_t offset, const weft_head *head, zval *return_value)
{
	array_init_size(return_value, 6);
	add_next_index_stringl(return_value, ZSTR_VAL(buffer) + offset, head->method_end - offset);
	add_next_index_stringl(return_value, ZSTR_VAL(buffer) + head->target_start, head->target_end - head->target_start);
	add_next_index_str(return_value, head->http11 ? weft_http_v11 : weft_http_v10);
	if (head->end == head->block_start) {
		add_next_index_str(return_value, ZSTR_EMPTY_ALLOC());
	} else {
		add_next_index_stringl(return_value, ZSTR_VAL(buffer) + head->block_start, head->end - head->block_start);
	}
	add_next_index_long(return_value, (zend_long) (head->end + 4));
	add_next_index_bool(return_value, head->framing);
}

/* parseHead()'s and parseRequest()'s $offset and $scanFrom lie within the buffer, in order; else throws. */
static bool weft_head_bounds(const zend_string *buffer, zend_long offset, zend_long scan_from)
{
	if (offset < 0 || (zend_ulong) offset > ZSTR_LEN(buffer)) {
		zend_argument_value_error(2, "must be between 0 and the length of the buffer");
		return false;
	}
	if (scan_from < offset || (zend_ulong) scan_from > ZSTR_LEN(buffer)) {
		zend_argument_value_error(3, "must be between $offset and the length of the buffer");
		return false;
	}
	return true;
}

PHP_FUNCTION(weft_parse_head)
{
	zend_string *buffer;
	zend_long offset, scan_from, max_header_bytes, max_target_bytes, max_header_count;
	HashTable *methods;

	ZEND_PARSE_PARAMETERS_START(7, 7)
		Z_PARAM_STR(buffer)
		Z_PARAM_LONG(offset)
		Z_PARAM_LONG(scan_from)
		Z_PARAM_LONG(max_header_bytes)
		Z_PARAM_LONG(max_target_bytes)
		Z_PARAM_LONG(max_header_count)
		Z_PARAM_ARRAY_HT(methods)
	ZEND_PARSE_PARAMETERS_END();

	if (!weft_head_bounds(buffer, offset, scan_from)) {
		RETURN_THROWS();
	}
	weft_head head;
	if (!weft_parse_head(buffer, (size_t) offset, (size_t) scan_from, max_header_bytes, max_target_bytes,
			max_header_count, methods, &head)) {
		RETURN_FALSE;
	}
	weft_head_array(buffer, (size_t) offset, &head, return_value);
}


/*
 * Weft\Ext\parseRequest(): the same parse, answered with a ready Weft\Http\Message\Request when the head is
 * the whole rest of the buffer and has no framing fields (the usual request: one GET, read at once), so
 * that PHP neither unpacks an array nor runs the constructor. Anything else gets parseHead()'s answer.
 *
 * The Request is built by writing its seven constructor-promoted properties into their slots, as its
 * constructor does. That relies on the class's layout, which checkRequestLayout() verifies once (start-up,
 * RequestParser::nativeHead()): every property exists on the class itself, is an instance property of type
 * string (?string for remoteAddress), and a Request built here is identical, slot by slot, to one the
 * constructor builds from the same values. Until that check passed (or after it failed, saying why),
 * parseRequest() answers as parseHead() does and PHP constructs every Request itself.
 */
#define WEFT_REQUEST_PROPERTIES 7
static const char *const weft_request_names[WEFT_REQUEST_PROPERTIES] = {
	"method", "target", "headerBlock", "body", "version", "remoteAddress", "trailerBlock",
};
enum { WEFT_RQ_METHOD, WEFT_RQ_TARGET, WEFT_RQ_BLOCK, WEFT_RQ_BODY, WEFT_RQ_VERSION, WEFT_RQ_REMOTE, WEFT_RQ_TRAILERS };
/* The class checked by checkRequestLayout() (NULL: none, or the check failed); reset at the request's end. */
static zend_class_entry *weft_request_ce = NULL;
static uint32_t weft_request_offsets[WEFT_REQUEST_PROPERTIES];
/* Its $scheme ("http" by default, as every Request is built): a Request read over TLS gets "https" there,
 * as Request::overTls() gives it in PHP. */
static uint32_t weft_request_scheme_offset;

bool weft_http_request_fields(zend_object *request, zend_string **version, zend_string **block)
{
	if (weft_request_ce == NULL || request->ce != weft_request_ce) {
		return false;
	}
	zval *v = OBJ_PROP(request, weft_request_offsets[WEFT_RQ_VERSION]);
	zval *b = OBJ_PROP(request, weft_request_offsets[WEFT_RQ_BLOCK]);
	if (Z_TYPE_P(v) != IS_STRING || Z_TYPE_P(b) != IS_STRING) {
		return false; /* not initialized (a constructor that failed): PHP's accessors say what happens */
	}
	*version = Z_STR_P(v);
	*block = Z_STR_P(b);
	return true;
}

void weft_http_rshutdown(void)
{
	weft_request_ce = NULL; /* a class of this request; the next one checks its own */
}

/* values: the seven properties in weft_request_names' order; NULL for a null remoteAddress. Consumes them. */
static void weft_request_build(zval *out, zend_class_entry *ce, const uint32_t *offsets, zend_string **values)
{
	object_init_ex(out, ce);
	zend_object *object = Z_OBJ_P(out);
	for (int i = 0; i < WEFT_REQUEST_PROPERTIES; i++) {
		zval *slot = OBJ_PROP(object, offsets[i]);
		zval_ptr_dtor(slot); /* UNDEF for a promoted property; a default would be released */
		if (values[i] == NULL) {
			ZVAL_NULL(slot);
		} else {
			ZVAL_STR(slot, values[i]);
		}
		Z_PROP_FLAG_P(slot) = 0; /* initialized, as the constructor's assignment leaves it */
	}
}

static zend_always_inline bool weft_slots_identical(zval *a, zval *b)
{
	if (Z_ISUNDEF_P(a) || Z_ISUNDEF_P(b)) {
		return Z_ISUNDEF_P(a) && Z_ISUNDEF_P(b);
	}
	return zend_is_identical(a, b);
}

/* NULL when the class can be built by weft_request_build(), else why not. */
static const char *weft_request_check(zend_class_entry *ce, uint32_t *offsets, uint32_t *scheme_offset)
{
	static char reason[200];
	if (ce->type != ZEND_USER_CLASS || ce->constructor == NULL || (ce->ce_flags & (ZEND_ACC_ABSTRACT | ZEND_ACC_INTERFACE | ZEND_ACC_TRAIT | ZEND_ACC_ENUM))) {
		return "not a user class with a constructor";
	}
	for (int i = 0; i < WEFT_REQUEST_PROPERTIES; i++) {
		zend_property_info *info = zend_hash_str_find_ptr(&ce->properties_info, weft_request_names[i], strlen(weft_request_names[i]));
		uint32_t expected = MAY_BE_STRING | (i == WEFT_RQ_REMOTE ? MAY_BE_NULL : 0);
		if (info == NULL || info->ce != ce || (info->flags & ZEND_ACC_STATIC) || ZEND_TYPE_IS_COMPLEX(info->type)
			|| ZEND_TYPE_PURE_MASK(info->type) != expected || !IS_VALID_PROPERTY_OFFSET(info->offset)) {
			snprintf(reason, sizeof(reason), "property $%s is not a declared %s instance property", weft_request_names[i],
				i == WEFT_RQ_REMOTE ? "?string" : "string");
			return reason;
		}
		offsets[i] = info->offset;
	}
	zend_property_info *scheme = zend_hash_str_find_ptr(&ce->properties_info, "scheme", sizeof("scheme") - 1);
	if (scheme == NULL || scheme->ce != ce || (scheme->flags & ZEND_ACC_STATIC) || ZEND_TYPE_IS_COMPLEX(scheme->type)
		|| ZEND_TYPE_PURE_MASK(scheme->type) != MAY_BE_STRING || !IS_VALID_PROPERTY_OFFSET(scheme->offset)) {
		return "property $scheme is not a declared string instance property";
	}
	zval *scheme_default = &ce->default_properties_table[OBJ_PROP_TO_NUM(scheme->offset)];
	if (Z_TYPE_P(scheme_default) != IS_STRING || !zend_string_equals_literal(Z_STR_P(scheme_default), "http")) {
		return "property $scheme does not default to 'http'";
	}
	*scheme_offset = scheme->offset;
	/* The constructor does nothing else: one built by it from distinct values equals one built here. */
	static const char *const samples[WEFT_REQUEST_PROPERTIES] = {
		"PATCH", "/check?layout=1", "\r\nHost: example.test", "the body", "1.0", "192.0.2.7", "\r\nX-Trailer: t",
	};
	zval params[WEFT_REQUEST_PROPERTIES];
	zend_string *values[WEFT_REQUEST_PROPERTIES];
	for (int i = 0; i < WEFT_REQUEST_PROPERTIES; i++) {
		ZVAL_STRING(&params[i], samples[i]);
		values[i] = zend_string_init(samples[i], strlen(samples[i]), 0);
	}
	zval constructed, built;
	object_init_ex(&constructed, ce);
	zend_call_known_instance_method(ce->constructor, Z_OBJ(constructed), NULL, WEFT_REQUEST_PROPERTIES, params);
	weft_request_build(&built, ce, offsets, values);
	const char *result = NULL;
	if (EG(exception) != NULL) {
		zend_clear_exception();
		result = "its constructor threw with sample values";
	} else {
		zend_object *a = Z_OBJ(constructed), *b = Z_OBJ(built);
		if ((a->properties != NULL && zend_hash_num_elements(a->properties) > 0)) {
			result = "its constructor adds dynamic properties";
		}
		for (int i = 0; result == NULL && i < ce->default_properties_count; i++) {
			if (!weft_slots_identical(OBJ_PROP_NUM(a, i), OBJ_PROP_NUM(b, i))) {
				result = "its constructor sets more than its seven promoted properties";
			}
		}
	}
	for (int i = 0; i < WEFT_REQUEST_PROPERTIES; i++) {
		zval_ptr_dtor(&params[i]);
	}
	zval_ptr_dtor(&constructed);
	zval_ptr_dtor(&built);
	return result;
}

PHP_FUNCTION(weft_check_request_layout)
{
	zend_string *name;
	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(name)
	ZEND_PARSE_PARAMETERS_END();
	weft_request_ce = NULL;
	zend_class_entry *ce = zend_lookup_class(name);
	if (ce == NULL) {
		if (EG(exception) != NULL) {
			RETURN_THROWS();
		}
		RETURN_STR(zend_strpprintf(0, "class %s not found", ZSTR_VAL(name)));
	}
	uint32_t offsets[WEFT_REQUEST_PROPERTIES], scheme_offset = 0;
	const char *problem = weft_request_check(ce, offsets, &scheme_offset);
	if (problem != NULL) {
		RETURN_STR(zend_strpprintf(0, "%s: %s", ZSTR_VAL(ce->name), problem));
	}
	memcpy(weft_request_offsets, offsets, sizeof(offsets));
	weft_request_scheme_offset = scheme_offset;
	weft_request_ce = ce;
	RETURN_NULL();
}

static zend_always_inline zend_string *weft_method_string(const char *method, size_t length)
{
	if (length == 3 && memcmp(method, "GET", 3) == 0) {
		return weft_http_get;
	}
	if (length == 4 && memcmp(method, "POST", 4) == 0) {
		return weft_http_post;
	}
	if (length == 4 && memcmp(method, "HEAD", 4) == 0) {
		return weft_http_head;
	}
	return zend_string_init(method, length, 0);
}

PHP_FUNCTION(weft_parse_request)
{
	zend_string *buffer;
	zend_long offset, scan_from, max_header_bytes, max_target_bytes, max_header_count;
	HashTable *methods;
	zend_string *remote = NULL;

	ZEND_PARSE_PARAMETERS_START(8, 8)
		Z_PARAM_STR(buffer)
		Z_PARAM_LONG(offset)
		Z_PARAM_LONG(scan_from)
		Z_PARAM_LONG(max_header_bytes)
		Z_PARAM_LONG(max_target_bytes)
		Z_PARAM_LONG(max_header_count)
		Z_PARAM_ARRAY_HT(methods)
		Z_PARAM_STR_OR_NULL(remote)
	ZEND_PARSE_PARAMETERS_END();

	if (!weft_head_bounds(buffer, offset, scan_from)) {
		RETURN_THROWS();
	}
	weft_head head;
	if (!weft_parse_head(buffer, (size_t) offset, (size_t) scan_from, max_header_bytes, max_target_bytes,
			max_header_count, methods, &head)) {
		RETURN_FALSE;
	}
	if (weft_request_ce == NULL || head.framing || head.end + 4 != ZSTR_LEN(buffer)) {
		weft_head_array(buffer, (size_t) offset, &head, return_value);
		return;
	}
	zend_string *values[WEFT_REQUEST_PROPERTIES];
	values[WEFT_RQ_METHOD] = weft_method_string(ZSTR_VAL(buffer) + offset, head.method_end - offset);
	values[WEFT_RQ_TARGET] = zend_string_init(ZSTR_VAL(buffer) + head.target_start, head.target_end - head.target_start, 0);
	values[WEFT_RQ_BLOCK] = head.end == head.block_start ? ZSTR_EMPTY_ALLOC()
		: zend_string_init(ZSTR_VAL(buffer) + head.block_start, head.end - head.block_start, 0);
	values[WEFT_RQ_BODY] = ZSTR_EMPTY_ALLOC();
	values[WEFT_RQ_VERSION] = head.http11 ? weft_http_v11 : weft_http_v10;
	values[WEFT_RQ_REMOTE] = remote == NULL ? NULL : zend_string_copy(remote);
	values[WEFT_RQ_TRAILERS] = ZSTR_EMPTY_ALLOC();
	weft_request_build(return_value, weft_request_ce, weft_request_offsets, values);
}

/*
 * For weft_conn.c: the Request of a read that is exactly one complete head without framing fields (no
 * empty lines before it), built as parseRequest() builds it, with scheme "https" when it was read over TLS
 * ($https); false for anything else, or before checkRequestLayout() accepted the class. Never throws.
 */
bool weft_http_frame_request(zend_string *bytes, zend_long max_header_bytes, zend_long max_target_bytes,
	zend_long max_header_count, HashTable *methods, zend_string *remote, bool https, zval *out)
{
	if (weft_request_ce == NULL || ZSTR_LEN(bytes) < 4 || ZSTR_VAL(bytes)[0] == '\r'
		|| memcmp(ZSTR_VAL(bytes) + ZSTR_LEN(bytes) - 4, "\r\n\r\n", 4) != 0) {
		return false;
	}
	weft_head head;
	if (!weft_parse_head(bytes, 0, 0, max_header_bytes, max_target_bytes, max_header_count, methods, &head)
		|| head.framing || head.end + 4 != ZSTR_LEN(bytes)) {
		return false;
	}
	zend_string *values[WEFT_REQUEST_PROPERTIES];
	values[WEFT_RQ_METHOD] = weft_method_string(ZSTR_VAL(bytes), head.method_end);
	values[WEFT_RQ_TARGET] = zend_string_init(ZSTR_VAL(bytes) + head.target_start, head.target_end - head.target_start, 0);
	values[WEFT_RQ_BLOCK] = head.end == head.block_start ? ZSTR_EMPTY_ALLOC()
		: zend_string_init(ZSTR_VAL(bytes) + head.block_start, head.end - head.block_start, 0);
	values[WEFT_RQ_BODY] = ZSTR_EMPTY_ALLOC();
	values[WEFT_RQ_VERSION] = head.http11 ? weft_http_v11 : weft_http_v10;
	values[WEFT_RQ_REMOTE] = remote == NULL ? NULL : zend_string_copy(remote);
	values[WEFT_RQ_TRAILERS] = ZSTR_EMPTY_ALLOC();
	weft_request_build(out, weft_request_ce, weft_request_offsets, values);
	if (https) {
		zval *scheme = OBJ_PROP(Z_OBJ_P(out), weft_request_scheme_offset);
		zval_ptr_dtor(scheme); /* the default "http" */
		ZVAL_INTERNED_STR(scheme, weft_http_https);
	}
	return true;
}

/*
 * TLS session tickets shared by the workers of one instance: Weft\Ext\tlsTicketKeys() and
 * Weft\Ext\tlsShareTickets().
 *
 * PHP's OpenSSL stream layer (ext/openssl/xp_ssl.c) builds a new SSL_CTX for every connection
 * (php_openssl_setup_crypto: SSL_CTX_new per stream), and OpenSSL gives each SSL_CTX random ticket keys
 * of its own: a ticket issued on one connection can be decrypted by no other, not even in the same
 * worker, and PHP offers no context option for a ticket key. So without this file no resumption ever
 * happens. tlsShareTickets() runs PHP's own crypto setup early (php_stream_xport_crypto_setup(), the
 * first half of stream_socket_enable_crypto()), finds the SSL_CTX it made, and installs a ticket key
 * callback that uses the keys every worker derives from one secret (Weft\Socket\Tls\TicketKeys).
 *
 * The SSL_CTX is reached through a private layout: the start of php_openssl_netstream_data_t, which is
 * { php_netstream_data_t s; SSL *ssl_handle; SSL_CTX *ctx; ... } in PHP 8.0 to 8.3. It is used only when
 * the stream's ops are PHP's OpenSSL socket ops (by label), only for the PHP versions whose layout is
 * known (compile time), and only when what it finds is consistent: SSL_get_fd() of the handle is the
 * stream's socket and SSL_get_SSL_CTX() of it is the context found next to it. Otherwise the function
 * says so (-1) and changes nothing; the caller logs it once and runs without resumption.
 *
 * Weft\Ext\tlsContext() and tlsAttach() go one step further, once tlsShareTickets() has verified the
 * layout on a stream PHP set up itself: the worker builds its SSL_CTX (and one per SNI name) once, from
 * the same files and policy, and tlsAttach() gives an accepted stream an SSL of that context in the two
 * fields PHP's setup would fill. PHP's stream_socket_enable_crypto() then finds its setup done (it
 * returns early when ssl_handle is set on a non-blocking stream) and runs the handshake, reads, writes
 * and close (SSL_free, SSL_CTX_free of the reference taken here) exactly as for its own. What that
 * saves is PHP's per-connection SSL_CTX_new() and certificate and key decoding, several times the cost
 * of the handshake's own cryptography with OpenSSL 3.
 *
 * The SSLs tlsAttach() makes read ahead (SSL_set_read_ahead): one read() takes a whole record, or
 * several, where OpenSSL otherwise reads each record's 5-byte header and then its body (two read()s
 * per request of a keep-alive client). The price is that whole records may then sit in OpenSSL's
 * buffer, already taken from the socket: epoll and select no longer see them, and SSL_pending(), which
 * PHP's select cast looks at, counts only a record already decrypted. weft_tls_unread() decrypts such
 * a record (SSL_peek) so that both loops see it: the native loop's sweep (weft_epoll.c) reports the
 * stream readable, and Weft\Ext\tlsUnread() does it for the streams StreamSelectDriver hands to
 * stream_select(), whose cast then moves the record into PHP's read buffer, where select looks.
 */

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#include "php.h"
#include "php_network.h"
#include "php_weft.h"

#include <openssl/ssl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/err.h>
#include <errno.h>
#include "zend_exceptions.h"

#define WEFT_TICKET_NAME 16
#define WEFT_TICKET_AES 32
#define WEFT_TICKET_HMAC 32
#define WEFT_TICKET_KEY (WEFT_TICKET_NAME + WEFT_TICKET_AES + WEFT_TICKET_HMAC)
#define WEFT_TICKET_KEYS 3

#if PHP_VERSION_ID >= 80000 && PHP_VERSION_ID < 80400
# define WEFT_TLS_LAYOUT_KNOWN 1
typedef struct {
	php_netstream_data_t s;
	SSL *ssl_handle;
	SSL_CTX *ctx;
} weft_openssl_netstream_head;

/*
 * The OpenSSL state of PHP's own TLS socket stream (one accepted from a tcp:// server, which the openssl
 * extension provides), NULL for any other stream: the one test of which streams this file may read.
 */
static weft_openssl_netstream_head *weft_tls_head(php_stream *stream)
{
	if (stream->ops == NULL || stream->ops->label == NULL || strcmp(stream->ops->label, "tcp_socket/ssl") != 0) {
		return NULL;
	}
	return (weft_openssl_netstream_head *) stream->abstract;
}
#else
# define WEFT_TLS_LAYOUT_KNOWN 0
#endif

typedef struct {
	unsigned char name[WEFT_TICKET_NAME];
	unsigned char aes[WEFT_TICKET_AES];
	unsigned char hmac[WEFT_TICKET_HMAC];
} weft_ticket_key;

/* [0] encrypts new tickets; all decrypt. Per process: set in each worker from the shared secret. */
static weft_ticket_key weft_ticket_keys[WEFT_TICKET_KEYS];
static int weft_ticket_key_count = 0;
/* Set once tlsShareTickets() found PHP's own setup where this build expects it. */
static bool weft_tls_layout_verified = false;
/* The label of PHP's OpenSSL socket ops, as found by that check. weft_tls_unread() compares a stream's
 * label with it, pointer first: the stream hooks (weft_hook_stream.c) give a hooked stream a copy of its
 * ops, label pointer included, so the ops pointer itself says nothing. */
static const char *weft_tls_ssl_label = NULL;

#define WEFT_TLS_MAX_CONTEXTS 64
typedef struct {
	char *name; /* NULL: the default; "*.example.org": its subdomains */
	SSL_CTX *ctx;
} weft_tls_context;
static weft_tls_context weft_tls_contexts[WEFT_TLS_MAX_CONTEXTS];
static int weft_tls_context_count = 0;
static unsigned char weft_tls_alpn[256];
static unsigned int weft_tls_alpn_len = 0;

static int weft_ticket_mac(EVP_MAC_CTX *hmac, weft_ticket_key *key)
{
	OSSL_PARAM params[3];
	params[0] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_KEY, key->hmac, WEFT_TICKET_HMAC);
	params[1] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *) "sha256", 0);
	params[2] = OSSL_PARAM_construct_end();
	return EVP_MAC_CTX_set_params(hmac, params);
}

/* OpenSSL's ticket key callback (SSL_CTX_set_tlsext_ticket_key_evp_cb): pure C, no PHP inside. */
static int weft_ticket_callback(SSL *ssl, unsigned char *name, unsigned char *iv, EVP_CIPHER_CTX *cipher, EVP_MAC_CTX *hmac, int encrypt)
{
	if (weft_ticket_key_count == 0) {
		return encrypt ? 0 : 0; /* no key: issue no ticket; a ticket offered means a full handshake */
	}
	if (encrypt) {
		weft_ticket_key *key = &weft_ticket_keys[0];
		if (RAND_bytes(iv, EVP_CIPHER_get_iv_length(EVP_aes_256_cbc())) <= 0
			|| EVP_EncryptInit_ex(cipher, EVP_aes_256_cbc(), NULL, key->aes, iv) != 1
			|| weft_ticket_mac(hmac, key) != 1) {
			return -1;
		}
		memcpy(name, key->name, WEFT_TICKET_NAME);
		return 1;
	}
	for (int i = 0; i < weft_ticket_key_count; i++) {
		weft_ticket_key *key = &weft_ticket_keys[i];
		if (memcmp(name, key->name, WEFT_TICKET_NAME) != 0) {
			continue;
		}
		if (weft_ticket_mac(hmac, key) != 1 || EVP_DecryptInit_ex(cipher, EVP_aes_256_cbc(), NULL, key->aes, iv) != 1) {
			return -1;
		}
		/* 2: valid, but under an older key: the client gets a fresh ticket. */
		return i == 0 ? 1 : 2;
	}
	return 0; /* unknown (rotated out, or another instance's): a full handshake */
}

PHP_FUNCTION(weft_tls_ticket_keys)
{
	zend_string *keys;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_STR(keys)
	ZEND_PARSE_PARAMETERS_END();

	size_t count = ZSTR_LEN(keys) / WEFT_TICKET_KEY;
	if (ZSTR_LEN(keys) % WEFT_TICKET_KEY != 0 || count > WEFT_TICKET_KEYS) {
		zend_argument_value_error(1, "must be up to %d keys of %d bytes each", WEFT_TICKET_KEYS, WEFT_TICKET_KEY);
		RETURN_THROWS();
	}
	for (size_t i = 0; i < count; i++) {
		const unsigned char *from = (const unsigned char *) ZSTR_VAL(keys) + i * WEFT_TICKET_KEY;
		memcpy(weft_ticket_keys[i].name, from, WEFT_TICKET_NAME);
		memcpy(weft_ticket_keys[i].aes, from + WEFT_TICKET_NAME, WEFT_TICKET_AES);
		memcpy(weft_ticket_keys[i].hmac, from + WEFT_TICKET_NAME + WEFT_TICKET_AES, WEFT_TICKET_HMAC);
	}
	weft_ticket_key_count = (int) count;
}

PHP_FUNCTION(weft_tls_share_tickets)
{
	zval *zstream;
	zend_long method;
	zend_long lifetime;
	php_stream *stream;

	ZEND_PARSE_PARAMETERS_START(3, 3)
		Z_PARAM_RESOURCE(zstream)
		Z_PARAM_LONG(method)
		Z_PARAM_LONG(lifetime)
	ZEND_PARSE_PARAMETERS_END();

	php_stream_from_zval(stream, zstream);

#if WEFT_TLS_LAYOUT_KNOWN
	weft_openssl_netstream_head *head = weft_tls_head(stream);
	if (head == NULL) {
		RETURN_LONG(0);
	}
	if (php_stream_xport_crypto_setup(stream, (php_stream_xport_crypt_method_t) method, NULL) < 0) {
		RETURN_LONG(0); /* PHP said why (a warning); stream_socket_enable_crypto() will fail the same way */
	}
	SSL *ssl = head->ssl_handle;
	SSL_CTX *ctx = head->ctx;
	if (ssl == NULL || ctx == NULL || SSL_get_fd(ssl) != (int) head->s.socket || SSL_get_SSL_CTX(ssl) != ctx) {
		RETURN_LONG(-1);
	}
	weft_tls_layout_verified = true;
	weft_tls_ssl_label = stream->ops->label;
	SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, weft_ticket_callback);
	if (lifetime > 0) {
		SSL_CTX_set_timeout(ctx, (long) lifetime);
	}
	RETURN_LONG(1);
#else
	RETURN_LONG(-1);
#endif
}

PHP_FUNCTION(weft_tls_session_reused)
{
	zval *zstream;
	php_stream *stream;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_RESOURCE(zstream)
	ZEND_PARSE_PARAMETERS_END();

	php_stream_from_zval(stream, zstream);
#if WEFT_TLS_LAYOUT_KNOWN
	weft_openssl_netstream_head *head = weft_tls_head(stream);
	if (head != NULL) {
		SSL *ssl = head->ssl_handle;
		if (ssl != NULL && SSL_get_fd(ssl) == (int) head->s.socket && SSL_get_SSL_CTX(ssl) != NULL) {
			RETURN_BOOL(SSL_session_reused(ssl));
		}
	}
#endif
	RETURN_NULL();
}

static void weft_tls_free_contexts(void)
{
	for (int i = 0; i < weft_tls_context_count; i++) {
		SSL_CTX_free(weft_tls_contexts[i].ctx); /* connections hold their own references */
		if (weft_tls_contexts[i].name != NULL) {
			pefree(weft_tls_contexts[i].name, 1);
		}
	}
	weft_tls_context_count = 0;
}

static bool weft_tls_name_matches(const char *pattern, const char *name)
{
	if (strcasecmp(pattern, name) == 0) {
		return true;
	}
	/* "*.example.org": one more label, never the bare domain */
	if (pattern[0] == '*' && pattern[1] == '.') {
		const char *dot = strchr(name, '.');
		return dot != NULL && dot != name && strcasecmp(dot, pattern + 1) == 0;
	}
	return false;
}

static int weft_tls_servername(SSL *ssl, int *alert, void *arg)
{
	const char *name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
	if (name == NULL) {
		return SSL_TLSEXT_ERR_NOACK;
	}
	for (int i = 1; i < weft_tls_context_count; i++) {
		if (weft_tls_name_matches(weft_tls_contexts[i].name, name)) {
			SSL_set_SSL_CTX(ssl, weft_tls_contexts[i].ctx);
			return SSL_TLSEXT_ERR_OK;
		}
	}
	return SSL_TLSEXT_ERR_NOACK; /* the default certificate */
}

static int weft_tls_alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in, unsigned int inlen, void *arg)
{
	if (weft_tls_alpn_len == 0 || SSL_select_next_proto((unsigned char **) out, outlen, weft_tls_alpn, weft_tls_alpn_len, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
		return SSL_TLSEXT_ERR_NOACK;
	}
	return SSL_TLSEXT_ERR_OK;
}

static SSL_CTX *weft_tls_new_context(const char *cert, const char *key, const char *ciphers, zend_long lifetime, char *error, size_t error_size)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	if (ctx == NULL) {
		snprintf(error, error_size, "SSL_CTX_new failed");
		return NULL;
	}
	const char *what = NULL;
	ERR_clear_error();
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 || SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1) {
		what = "protocol versions";
	} else if (SSL_CTX_set_cipher_list(ctx, ciphers) != 1) {
		what = "cipher list";
	} else if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		what = "certificate";
	} else if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
		what = "private key";
	} else if (SSL_CTX_check_private_key(ctx) != 1) {
		what = "key against the certificate";
	}
	if (what != NULL) {
		char reason[256] = "";
		ERR_error_string_n(ERR_get_error(), reason, sizeof(reason));
		ERR_clear_error();
		snprintf(error, error_size, "OpenSSL refused the %s (%s): %s", what, cert, reason);
		SSL_CTX_free(ctx);
		return NULL;
	}
	/* What PHP's own setup sets for a server, less what only its callbacks need; renegotiation off. */
	SSL_CTX_set_options(ctx, SSL_OP_ALL | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
		| SSL_OP_IGNORE_UNEXPECTED_EOF
#endif
	);
	SSL_CTX_clear_options(ctx, SSL_OP_DONT_INSERT_EMPTY_FRAGMENTS | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_dh_auto(ctx, 1); /* the RFC 7919 group matching the key's strength for the DHE suites */
	SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_session_id_context(ctx, (const unsigned char *) "weft", 4);
	SSL_CTX_set_alpn_select_cb(ctx, weft_tls_alpn_select, NULL);
	SSL_CTX_set_tlsext_ticket_key_evp_cb(ctx, weft_ticket_callback);
	if (lifetime > 0) {
		SSL_CTX_set_timeout(ctx, (long) lifetime);
	}
	return ctx;
}

PHP_FUNCTION(weft_tls_context)
{
	HashTable *certificates;
	zend_string *ciphers;
	zend_string *alpn;
	zend_long lifetime;

	ZEND_PARSE_PARAMETERS_START(4, 4)
		Z_PARAM_ARRAY_HT(certificates)
		Z_PARAM_STR(ciphers)
		Z_PARAM_STR(alpn)
		Z_PARAM_LONG(lifetime)
	ZEND_PARSE_PARAMETERS_END();

	uint32_t count = zend_hash_num_elements(certificates);
	if (count == 0 || count > WEFT_TLS_MAX_CONTEXTS) {
		zend_argument_value_error(1, "must hold 1 to %d certificates", WEFT_TLS_MAX_CONTEXTS);
		RETURN_THROWS();
	}
	if (ZSTR_LEN(alpn) > sizeof(weft_tls_alpn)) {
		zend_argument_value_error(3, "is too long");
		RETURN_THROWS();
	}
	weft_tls_context fresh[WEFT_TLS_MAX_CONTEXTS];
	int made = 0;
	char error[512];
	zval *entry;
	ZEND_HASH_FOREACH_VAL(certificates, entry) {
		zval *name, *cert, *key;
		if (Z_TYPE_P(entry) != IS_ARRAY
			|| (name = zend_hash_index_find(Z_ARRVAL_P(entry), 0)) == NULL
			|| (cert = zend_hash_index_find(Z_ARRVAL_P(entry), 1)) == NULL || Z_TYPE_P(cert) != IS_STRING
			|| (key = zend_hash_index_find(Z_ARRVAL_P(entry), 2)) == NULL || Z_TYPE_P(key) != IS_STRING
			|| (made == 0) != (Z_TYPE_P(name) == IS_NULL) || (made > 0 && Z_TYPE_P(name) != IS_STRING)) {
			for (int i = 0; i < made; i++) {
				SSL_CTX_free(fresh[i].ctx);
				if (fresh[i].name != NULL) {
					pefree(fresh[i].name, 1);
				}
			}
			zend_argument_value_error(1, "must list [name, cert, key] entries, the first with a null name, the others with one");
			RETURN_THROWS();
		}
		SSL_CTX *ctx = weft_tls_new_context(Z_STRVAL_P(cert), Z_STRVAL_P(key), ZSTR_VAL(ciphers), lifetime, error, sizeof(error));
		if (ctx == NULL) {
			for (int i = 0; i < made; i++) {
				SSL_CTX_free(fresh[i].ctx);
				if (fresh[i].name != NULL) {
					pefree(fresh[i].name, 1);
				}
			}
			zend_throw_exception(zend_ce_exception, error, 0);
			RETURN_THROWS();
		}
		fresh[made].ctx = ctx;
		fresh[made].name = Z_TYPE_P(name) == IS_STRING ? pestrdup(Z_STRVAL_P(name), 1) : NULL;
		made++;
	} ZEND_HASH_FOREACH_END();

	weft_tls_free_contexts();
	memcpy(weft_tls_contexts, fresh, sizeof(fresh[0]) * made);
	weft_tls_context_count = made;
	memcpy(weft_tls_alpn, ZSTR_VAL(alpn), ZSTR_LEN(alpn));
	weft_tls_alpn_len = (unsigned int) ZSTR_LEN(alpn);
	if (made > 1) {
		SSL_CTX_set_tlsext_servername_callback(weft_tls_contexts[0].ctx, weft_tls_servername);
	}
}

PHP_FUNCTION(weft_tls_attach)
{
	zval *zstream;
	php_stream *stream;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_RESOURCE(zstream)
	ZEND_PARSE_PARAMETERS_END();

	php_stream_from_zval(stream, zstream);
#if WEFT_TLS_LAYOUT_KNOWN
	if (!weft_tls_layout_verified) {
		RETURN_LONG(-1);
	}
	weft_openssl_netstream_head *head = weft_tls_head(stream);
	if (weft_tls_context_count == 0 || head == NULL) {
		RETURN_LONG(0);
	}
	/* Only a stream PHP has not set up yet, and non-blocking (PHP's setup returns early only then). */
	if (head->ssl_handle != NULL || head->ctx != NULL || head->s.is_blocked) {
		RETURN_LONG(0);
	}
	SSL_CTX *ctx = weft_tls_contexts[0].ctx;
	SSL *ssl = SSL_new(ctx);
	if (ssl == NULL) {
		RETURN_LONG(0);
	}
	if (SSL_set_fd(ssl, (int) head->s.socket) != 1 || SSL_CTX_up_ref(ctx) != 1) {
		SSL_free(ssl);
		RETURN_LONG(0);
	}
	/* One read() per flight of records, not two per record; weft_tls_unread() keeps the loops seeing
	 * what that leaves in OpenSSL's buffer. The default buffer (one record and its overhead) is enough:
	 * a bigger one only helps bulk uploads, at 16 KB or more of memory more per connection. */
	SSL_set_read_ahead(ssl, 1);
	head->ctx = ctx;
	head->ssl_handle = ssl;
	RETURN_LONG(1);
#else
	RETURN_LONG(-1);
#endif
}

#if WEFT_TLS_LAYOUT_KNOWN
/*
 * The SSL of a stream tlsAttach() set up (read-ahead on, which PHP's own setup never sets), once its
 * handshake is done; NULL for every other stream, and mid-handshake (TlsAcceptor drives that).
 */
static SSL *weft_tls_attached(php_stream *stream)
{
	if (!weft_tls_layout_verified || stream->ops == NULL || stream->abstract == NULL
		|| (stream->ops->label != weft_tls_ssl_label && (stream->ops->label == NULL || strcmp(stream->ops->label, "tcp_socket/ssl") != 0))) {
		return NULL;
	}
	SSL *ssl = ((weft_openssl_netstream_head *) stream->abstract)->ssl_handle;
	if (ssl == NULL || !SSL_get_read_ahead(ssl) || !SSL_is_init_finished(ssl)) {
		return NULL;
	}
	return ssl;
}

/*
 * OpenSSL wants the thread's error queue empty before an I/O call; emptying it costs more than looking.
 * Looking costs ~200 instructions (ERR_peek_error(): OpenSSL's init check and thread-local lookup), two
 * per keep-alive request, and stays: SSL_get_error() takes whatever the queue holds as this call's
 * error, and PHP code that ran since the last call (curl, a database client, PHP's own TLS streams) may
 * have left some; without the look a connection merely waiting for bytes would be closed as failed.
 * (nginx looks before every SSL_read() and SSL_write() too.)
 */
static inline void weft_tls_errors_cleared(void)
{
	if (UNEXPECTED(ERR_peek_error() != 0)) {
		ERR_clear_error();
	}
}

/*
 * SSL_write() until every byte is taken or the socket is full. With partial writes on, one SSL_write()
 * sends one record (16 KiB at most) and returns: a caller that took that short write for a full socket
 * would wait a loop turn per record of a big answer. Returns the bytes taken (0: the socket was full, try
 * again later with the same bytes, or more of them, as OpenSSL requires of a retry), or -errno when the
 * connection failed before a byte was taken (-EPIPE for a TLS error, whose alert OpenSSL has sent if it
 * could). A failure after some bytes answers those: the next call meets it again, OpenSSL keeps it.
 */
static zend_long weft_tls_write_records(SSL *ssl, const char *bytes, size_t len)
{
	size_t taken = 0;
	while (taken < len) {
		size_t left = len - taken;
		weft_tls_errors_cleared();
		errno = 0;
		int wrote = SSL_write(ssl, bytes + taken, left > INT_MAX ? INT_MAX : (int) left);
		if (wrote > 0) {
			taken += (size_t) wrote;
			continue;
		}
		int error = SSL_get_error(ssl, wrote);
		if (error == SSL_ERROR_WANT_WRITE || error == SSL_ERROR_WANT_READ) {
			break;
		}
		int why = error == SSL_ERROR_SYSCALL && errno != 0 ? errno : EPIPE;
		ERR_clear_error();
		if (taken == 0) {
			return -(zend_long) why;
		}
		break;
	}
	return (zend_long) taken;
}
#endif

/*
 * Whether an attached stream (tlsAttach(): read-ahead on, handshake done) has decrypted data waiting in
 * OpenSSL, after decrypting the next whole record it holds undecrypted, if any (SSL_peek: the record
 * stays for the next read, decrypted once). Also true when that peek hit the end of the stream or an
 * error: the reader must come and find it. False for every other stream, and when what OpenSSL holds is
 * only part of a record: the rest has to come from the socket, which the loop watches. A peek at a
 * partial record costs one read() (EAGAIN); it happens only when the loop looks at the stream.
 * Pure C, no PHP, no warning.
 */
bool weft_tls_unread(php_stream *stream)
{
#if WEFT_TLS_LAYOUT_KNOWN
	SSL *ssl = weft_tls_attached(stream);
	if (ssl == NULL) {
		return false;
	}
	if (SSL_pending(ssl) > 0) {
		return true;
	}
	if (!SSL_has_pending(ssl)) {
		return false;
	}
	char byte;
	ERR_clear_error();
	int got = SSL_peek(ssl, &byte, 1);
	if (got > 0) {
		return true;
	}
	int error = SSL_get_error(ssl, got);
	ERR_clear_error();
	return error != SSL_ERROR_WANT_READ && error != SSL_ERROR_WANT_WRITE;
#else
	return false;
#endif
}

PHP_FUNCTION(weft_tls_unread)
{
	HashTable *streams;

	ZEND_PARSE_PARAMETERS_START(1, 1)
		Z_PARAM_ARRAY_HT(streams)
	ZEND_PARSE_PARAMETERS_END();

	zend_long count = 0;
	zval *entry;
	ZEND_HASH_FOREACH_VAL(streams, entry) {
		ZVAL_DEREF(entry);
		if (Z_TYPE_P(entry) != IS_RESOURCE) {
			continue;
		}
		php_stream *stream = (php_stream *) zend_fetch_resource2(Z_RES_P(entry), NULL, php_file_le_stream(), php_file_le_pstream());
		if (stream != NULL && weft_tls_unread(stream)) {
			count++;
		}
	} ZEND_HASH_FOREACH_END();
	RETURN_LONG(count);
}

/*
 * Weft\Ext\tlsRead() and tlsWrite(): the connection's reads and writes on an attached stream, straight
 * to SSL_read()/SSL_write(), without PHP's stream layer around them (its error-queue clearing, error
 * mapping, progress notification and stream hooks cost a third as much again as the record itself for
 * a small request). Non-blocking only: what would block answers '' or 0. PHP's stream keeps working:
 * bytes already in its read buffer (select's cast puts decrypted data there) are read first, through
 * it; close and everything else stay PHP's.
 */
PHP_FUNCTION(weft_tls_read)
{
	zval *zstream;
	zend_long length;
	php_stream *stream;

	ZEND_PARSE_PARAMETERS_START(2, 2)
		Z_PARAM_RESOURCE(zstream)
		Z_PARAM_LONG(length)
	ZEND_PARSE_PARAMETERS_END();

	if (length < 1) {
		zend_argument_value_error(2, "must be greater than 0");
		RETURN_THROWS();
	}
	php_stream_from_zval(stream, zstream);
#if WEFT_TLS_LAYOUT_KNOWN
	SSL *ssl = weft_tls_attached(stream);
	if (ssl == NULL) {
		RETURN_NULL();
	}
	/* One record at most per call: a buffer of a record's size, the string made to measure. */
	char buf[SSL3_RT_MAX_PLAIN_LENGTH];
	int want = length < (zend_long) sizeof(buf) ? (int) length : (int) sizeof(buf);
	zend_off_t buffered = stream->writepos - stream->readpos;
	if (buffered > 0) {
		/* Those bytes alone (PHP's read would go on into OpenSSL): the next call reads the next record. */
		ssize_t got = php_stream_read(stream, buf, buffered < want ? (size_t) buffered : (size_t) want);
		RETURN_STRINGL(buf, got > 0 ? (size_t) got : 0);
	}
	weft_tls_errors_cleared();
	int got = SSL_read(ssl, buf, want);
	if (got > 0) {
		RETURN_STRINGL(buf, (size_t) got);
	}
	int error = SSL_get_error(ssl, got);
	if (error == SSL_ERROR_WANT_READ || error == SSL_ERROR_WANT_WRITE) {
		RETURN_EMPTY_STRING();
	}
	ERR_clear_error();
	RETURN_FALSE; /* the peer's close_notify, its end of the stream, a reset or a TLS error */
#else
	RETURN_NULL();
#endif
}

PHP_FUNCTION(weft_tls_write)
{
	zval *zstream;
	zend_string *data;
	zend_long offset = 0;
	zend_long length = 0;
	bool length_null = true;
	php_stream *stream;

	ZEND_PARSE_PARAMETERS_START(2, 4)
		Z_PARAM_RESOURCE(zstream)
		Z_PARAM_STR(data)
		Z_PARAM_OPTIONAL
		Z_PARAM_LONG(offset)
		Z_PARAM_LONG_OR_NULL(length, length_null)
	ZEND_PARSE_PARAMETERS_END();

	if (offset < 0 || (size_t) offset > ZSTR_LEN(data)) {
		zend_argument_value_error(3, "must be within the data");
		RETURN_THROWS();
	}
	if (length_null || (size_t) length > ZSTR_LEN(data) - (size_t) offset) {
		length = (zend_long) (ZSTR_LEN(data) - (size_t) offset);
	} else if (length < 0) {
		zend_argument_value_error(4, "must be greater than or equal to 0");
		RETURN_THROWS();
	}
	php_stream_from_zval(stream, zstream);
#if WEFT_TLS_LAYOUT_KNOWN
	SSL *ssl = weft_tls_attached(stream);
	if (ssl == NULL) {
		RETURN_NULL();
	}
	if (length == 0) {
		RETURN_LONG(0);
	}
	/* 0 when the socket is full: again later with the same bytes, as OpenSSL requires */
	zend_long taken = weft_tls_write_records(ssl, ZSTR_VAL(data) + offset, (size_t) length);
	if (taken < 0) {
		RETURN_FALSE; /* the peer is gone (reset, broken pipe) or a TLS error */
	}
	RETURN_LONG(taken);
#else
	RETURN_NULL();
#endif
}

/*
 * For Weft\Ext\Conn (weft_conn.c): a TLS connection's reads and writes straight from the native loop's C
 * handler, no PHP call around them. The SSL stays the PHP stream's (PHP's close sends close_notify and
 * frees it); Conn holds a reference to the stream's resource and asks weft_tls_conn_handle() for the SSL
 * before each use, so a stream closed behind its back only makes it answer "gone".
 */

/*
 * The SSL of an attached stream (tlsAttach(), handshake done) that Conn may drive: its socket is `fd`,
 * PHP's read buffer is empty (nothing read through the stream would be lost), and partial writes are on
 * (PHP's handshake turned them on; set again here, so that Conn's write contract never depends on it).
 * NULL for anything else: the caller keeps PHP's stream path.
 */
void *weft_tls_conn_claim(php_stream *stream, int fd)
{
#if WEFT_TLS_LAYOUT_KNOWN
	SSL *ssl = weft_tls_attached(stream);
	if (ssl == NULL || SSL_get_fd(ssl) != fd || stream->writepos - stream->readpos > 0) {
		return NULL;
	}
	SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	return ssl;
#else
	return NULL;
#endif
}

/* The SSL of a stream weft_tls_conn_claim() accepted, as it is now (NULL once PHP let go of it). */
void *weft_tls_conn_handle(php_stream *stream)
{
#if WEFT_TLS_LAYOUT_KNOWN
	return stream->abstract == NULL ? NULL : ((weft_openssl_netstream_head *) stream->abstract)->ssl_handle;
#else
	return NULL;
#endif
}

/* Whether OpenSSL holds bytes taken from the socket already (a record, part of one, or decrypted data). */
bool weft_tls_conn_holds(void *handle)
{
#if WEFT_TLS_LAYOUT_KNOWN
	return SSL_has_pending((SSL *) handle) == 1;
#else
	return false;
#endif
}

/*
 * Decrypts into buf (at most cap bytes) what OpenSSL holds and the socket has, one record per
 * SSL_read(), reading the socket as seldom as it can: it goes on after a record only while OpenSSL holds
 * more bytes already, or after a full-size record (a bulk transfer: the socket likely has more, and one
 * read() that finds nothing costs less than another turn of the loop). Returns the bytes decrypted;
 * *state says what comes next:
 *   WEFT_TLS_WAIT        the socket is drained (or what OpenSSL holds is part of a record): wait for it;
 *   WEFT_TLS_MORE        buf is full and OpenSSL still holds bytes the kernel no longer reports: call
 *                        again without waiting for the socket;
 *   WEFT_TLS_WANT_WRITE  OpenSSL must write first (a TLS 1.3 KeyUpdate answer, an alert) and the socket
 *                        is full: call again once it is writable;
 *   WEFT_TLS_END         the peer's close_notify, or its end of the stream without one;
 *   WEFT_TLS_FAILED      a reset or a TLS error (the connection is unusable).
 * END and FAILED may come with bytes decrypted before them; OpenSSL answers the same again on the next
 * call. Pure C, no PHP, no warning; leaves OpenSSL's error queue empty.
 */
size_t weft_tls_conn_read(void *handle, char *buf, size_t cap, int *state)
{
#if WEFT_TLS_LAYOUT_KNOWN
	SSL *ssl = handle;
	size_t got = 0;
	weft_tls_errors_cleared();
	while (got < cap) {
		size_t want = cap - got;
		errno = 0;
		int n = SSL_read(ssl, buf + got, want > INT_MAX ? INT_MAX : (int) want);
		if (n > 0) {
			got += (size_t) n;
			if (SSL_has_pending(ssl) || n == SSL3_RT_MAX_PLAIN_LENGTH) {
				continue;
			}
			*state = WEFT_TLS_WAIT;
			return got;
		}
		int error = SSL_get_error(ssl, n);
		switch (error) {
			case SSL_ERROR_WANT_READ:
				*state = WEFT_TLS_WAIT;
				break;
			case SSL_ERROR_WANT_WRITE:
				*state = WEFT_TLS_WANT_WRITE;
				break;
			case SSL_ERROR_ZERO_RETURN:
				*state = WEFT_TLS_END;
				break;
			case SSL_ERROR_SYSCALL:
				/* errno 0: the peer's end without close_notify (SSL_OP_IGNORE_UNEXPECTED_EOF makes it a
				 * ZERO_RETURN in OpenSSL 3; older ones report it here) */
				*state = errno == 0 ? WEFT_TLS_END : WEFT_TLS_FAILED;
				break;
			default:
				*state = WEFT_TLS_FAILED;
		}
		ERR_clear_error();
		return got;
	}
	*state = SSL_has_pending(ssl) ? WEFT_TLS_MORE : WEFT_TLS_WAIT;
	return got;
#else
	*state = WEFT_TLS_FAILED;
	return 0;
#endif
}

/*
 * SSL_write() of len bytes (partial writes: whole records, as many as the socket takes). Returns the
 * bytes taken (> 0), 0 when the socket is full (again later with the same bytes, or more of them: what
 * OpenSSL requires of a retry; the moving-buffer mode lets the caller's string be another copy), or
 * -errno when the connection is gone (-EPIPE for a TLS error, whose alert OpenSSL has sent if it could).
 * SSL_ERROR_WANT_READ cannot come after the handshake: renegotiation is off in the native context
 * (SSL_OP_NO_RENEGOTIATION) and TLS 1.3 writes never wait for the peer; it would answer 0 like a full
 * socket. OpenSSL's socket BIO write()s without MSG_NOSIGNAL: a peer gone answers EPIPE and no signal
 * because PHP's CLI ignores SIGPIPE, as for PHP's own TLS writes.
 */
zend_long weft_tls_conn_write(void *handle, const char *bytes, size_t len)
{
#if WEFT_TLS_LAYOUT_KNOWN
	return weft_tls_write_records(handle, bytes, len);
#else
	return -EBADF;
#endif
}

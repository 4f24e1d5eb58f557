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
	/* PHP's OpenSSL socket streams only (accepted from a tcp:// server, which the openssl extension provides). */
	if (stream->ops == NULL || stream->ops->label == NULL || strcmp(stream->ops->label, "tcp_socket/ssl") != 0
		|| stream->abstract == NULL) {
		RETURN_LONG(0);
	}
	if (php_stream_xport_crypto_setup(stream, (php_stream_xport_crypt_method_t) method, NULL) < 0) {
		RETURN_LONG(0); /* PHP said why (a warning); stream_socket_enable_crypto() will fail the same way */
	}
	weft_openssl_netstream_head *head = (weft_openssl_netstream_head *) stream->abstract;
	SSL *ssl = head->ssl_handle;
	SSL_CTX *ctx = head->ctx;
	if (ssl == NULL || ctx == NULL || SSL_get_fd(ssl) != (int) head->s.socket || SSL_get_SSL_CTX(ssl) != ctx) {
		RETURN_LONG(-1);
	}
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
	if (stream->ops != NULL && stream->ops->label != NULL && strcmp(stream->ops->label, "tcp_socket/ssl") == 0 && stream->abstract != NULL) {
		weft_openssl_netstream_head *head = (weft_openssl_netstream_head *) stream->abstract;
		SSL *ssl = head->ssl_handle;
		if (ssl != NULL && SSL_get_fd(ssl) == (int) head->s.socket && SSL_get_SSL_CTX(ssl) != NULL) {
			RETURN_BOOL(SSL_session_reused(ssl));
		}
	}
#endif
	RETURN_NULL();
}

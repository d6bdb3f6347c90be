#ifndef COPENSSL_H
#define COPENSSL_H
// OpenSSL 3's headers, and wrappers for what Swift cannot import. The library itself is not linked:
// trampolines.c loads libssl.so.3 (and libcrypto) with dlopen on the first call.
#if defined(__linux__)
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/md5.h>
#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/bio.h>
#include <openssl/rand.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

/// Loads libssl and libcrypto once (later calls return at once). Returns NULL when they are loaded, or a
/// message saying why they could not be ("could not load OpenSSL (…)"): every other OpenSSL function
/// called without them stops the process with that message, so code that can report it calls this first.
const char *cossl_load(void);

// Macros Swift cannot import.
static inline long cossl_set_mode(SSL_CTX *ctx, long mode) { return SSL_CTX_set_mode(ctx, mode); }
static inline long cossl_set_min_proto(SSL_CTX *ctx, int v) { return SSL_CTX_set_min_proto_version(ctx, v); }
static inline int cossl_set_tlsext_host_name(SSL *s, const char *name) { return SSL_set_tlsext_host_name(s, name); }

// TLS (issue 8): wrappers for macros, variadic functions and STACK_OF helpers.

/// Options for every context: no renegotiation, no compression, a peer closing without close_notify
/// reads as end of stream (SSL_ERROR_ZERO_RETURN) instead of a protocol error.
static inline uint64_t cossl_ctx_set_default_options(SSL_CTX *ctx) {
  return SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                                      SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_CIPHER_SERVER_PREFERENCE);
}
/// Partial writes and a moving write buffer, as a non-blocking writer needs.
static inline long cossl_ctx_set_nonblocking_modes(SSL_CTX *ctx) {
  return SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}
static inline long cossl_ctx_add1_chain_cert(SSL_CTX *ctx, X509 *x) { return SSL_CTX_add1_chain_cert(ctx, x); }
static inline long cossl_bio_get_mem_data(BIO *b, char **pp) { return BIO_get_mem_data(b, pp); }
static inline void cossl_free(void *p) { OPENSSL_free(p); }
static inline unsigned long cossl_xn_flag_rfc2253(void) { return XN_FLAG_RFC2253; }
/// A fresh EC P-256 key (EVP_PKEY_Q_keygen is variadic), or NULL.
EVP_PKEY *cossl_generate_ec_p256(void);

static inline STACK_OF(X509) *cossl_sk_x509_new(void) { return sk_X509_new_null(); }
static inline int cossl_sk_x509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline int cossl_sk_x509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
static inline X509 *cossl_sk_x509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
/// Frees the stack and releases one reference to each certificate in it.
static inline void cossl_sk_x509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }
/// Frees the stack only (certificates not released).
static inline void cossl_sk_x509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }

// A write-only socket BIO that sends with MSG_NOSIGNAL, so writing to a peer that hung up returns EPIPE
// instead of raising SIGPIPE (OpenSSL's socket BIO uses write(2)). Reads keep OpenSSL's socket BIO.
#ifndef MSG_NOSIGNAL
#define COSSL_SEND_FLAGS 0 /* Darwin: the socket carries SO_NOSIGPIPE instead */
#else
#define COSSL_SEND_FLAGS MSG_NOSIGNAL
#endif
static inline int cossl_nosigpipe_write(BIO *b, const char *data, int len) {
  int fd = (int)(intptr_t)BIO_get_data(b);
  ssize_t n;
  BIO_clear_retry_flags(b);
  do { n = send(fd, data, (size_t)len, COSSL_SEND_FLAGS); } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) BIO_set_retry_write(b);
  return (int)n;
}
static inline long cossl_nosigpipe_ctrl(BIO *b, int cmd, long num, void *ptr) {
  (void)b; (void)num; (void)ptr;
  return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}
/// The method of that BIO, or NULL. Make it once per process and never free it (every BIO uses it).
static inline BIO_METHOD *cossl_make_nosigpipe_method(void) {
  BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "socket (MSG_NOSIGNAL)");
  if (m == NULL) return NULL;
  BIO_meth_set_write(m, cossl_nosigpipe_write);
  BIO_meth_set_ctrl(m, cossl_nosigpipe_ctrl);
  return m;
}
/// Attaches `fd` to `ssl`: reads through OpenSSL's socket BIO, writes through a BIO of `method` (from
/// cossl_make_nosigpipe_method). OpenSSL does not close the descriptor. Returns 1 on success, 0 on failure.
static inline int cossl_ssl_set_socket(SSL *ssl, int fd, BIO_METHOD *method) {
  BIO *rbio = BIO_new_socket(fd, BIO_NOCLOSE);
  BIO *wbio = BIO_new(method);
  if (rbio == NULL || wbio == NULL) { BIO_free(rbio); BIO_free(wbio); return 0; }
  BIO_set_data(wbio, (void *)(intptr_t)fd);
  BIO_set_init(wbio, 1);
  SSL_set_bio(ssl, rbio, wbio); /* ssl owns both BIOs now */
  return 1;
}
#endif  // __linux__
#endif

#ifndef COPENSSL_SHIM_H
#define COPENSSL_SHIM_H
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
static inline EVP_PKEY *cossl_generate_ec_p256(void) { return EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256"); }

static inline STACK_OF(X509) *cossl_sk_x509_new(void) { return sk_X509_new_null(); }
static inline int cossl_sk_x509_push(STACK_OF(X509) *sk, X509 *x) { return sk_X509_push(sk, x); }
static inline int cossl_sk_x509_num(const STACK_OF(X509) *sk) { return sk_X509_num(sk); }
static inline X509 *cossl_sk_x509_value(const STACK_OF(X509) *sk, int i) { return sk_X509_value(sk, i); }
/// Frees the stack and releases one reference to each certificate in it.
static inline void cossl_sk_x509_pop_free(STACK_OF(X509) *sk) { sk_X509_pop_free(sk, X509_free); }
/// Frees the stack only (certificates not released).
static inline void cossl_sk_x509_free(STACK_OF(X509) *sk) { sk_X509_free(sk); }
#endif

// libssl and libcrypto loaded with dlopen on first use instead of linked at start: mapped and relocated, the
// two libraries are about 1.7 MiB of resident memory in every process, and a server without HTTPS, proxy
// stubs to https upstreams or digests never calls them. Each function the Swift code (or an inline wrapper
// in COpenSSL.h) calls is defined here with OpenSSL's own prototype, so a signature that differs from the
// installed headers fails to compile; each one loads the libraries once (pthread_once) and calls through
// the pointer looked up then. Definitions are hidden: they are linked into our binary only and never
// interpose on the references of a library that links OpenSSL itself (libcurl in a test process).
#if defined(__linux__)

// The C library's headers first, with default visibility: a function of libc declared hidden could not be
// linked from it.
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#pragma GCC visibility push(hidden)
#include "COpenSSL.h"
#pragma GCC visibility pop

#define COSSL_STRINGIFY2(x) #x
#define COSSL_STRINGIFY(x) COSSL_STRINGIFY2(x)
// The soname of the ABI the headers describe (libssl.so.3 for OpenSSL 3.x); libcrypto comes with it.
#define COSSL_LIBRARY "libssl.so." COSSL_STRINGIFY(OPENSSL_SHLIB_VERSION)

// Every function called: COSSL_VALUE(return type, name, (parameters), (arguments)) or COSSL_VOID(...).
#define COSSL_FUNCTIONS(COSSL_VALUE, COSSL_VOID)                                                          \
  COSSL_VALUE(ASN1_TIME *, ASN1_TIME_set, (ASN1_TIME *s, time_t t), (s, t)) \
  COSSL_VOID(void, BIO_clear_flags, (BIO *b, int flags), (b, flags)) \
  COSSL_VALUE(long, BIO_ctrl, (BIO *bp, int cmd, long larg, void *parg), (bp, cmd, larg, parg)) \
  COSSL_VALUE(int, BIO_free, (BIO *a), (a)) \
  COSSL_VALUE(void *, BIO_get_data, (BIO *a), (a)) \
  COSSL_VALUE(int, BIO_get_new_index, (void), ()) \
  COSSL_VALUE(BIO_METHOD *, BIO_meth_new, (int type, const char *name), (type, name)) \
  COSSL_VALUE(int, BIO_meth_set_ctrl, (BIO_METHOD *biom, long (*ctrl)(BIO *, int, long, void *)), (biom, ctrl)) \
  COSSL_VALUE(int, BIO_meth_set_write, (BIO_METHOD *biom, int (*write)(BIO *, const char *, int)), (biom, write)) \
  COSSL_VALUE(BIO *, BIO_new, (const BIO_METHOD *type), (type)) \
  COSSL_VALUE(BIO *, BIO_new_socket, (int sock, int close_flag), (sock, close_flag)) \
  COSSL_VALUE(const BIO_METHOD *, BIO_s_mem, (void), ()) \
  COSSL_VOID(void, BIO_set_data, (BIO *a, void *ptr), (a, ptr)) \
  COSSL_VOID(void, BIO_set_flags, (BIO *b, int flags), (b, flags)) \
  COSSL_VOID(void, BIO_set_init, (BIO *a, int init), (a, init)) \
  COSSL_VALUE(int, BIO_write, (BIO *b, const void *data, int dlen), (b, data, dlen)) \
  COSSL_VOID(void, BN_free, (BIGNUM *a), (a)) \
  COSSL_VALUE(BIGNUM *, BN_new, (void), ()) \
  COSSL_VALUE(int, BN_rand, (BIGNUM *rnd, int bits, int top, int bottom), (rnd, bits, top, bottom)) \
  COSSL_VALUE(ASN1_INTEGER *, BN_to_ASN1_INTEGER, (const BIGNUM *bn, ASN1_INTEGER *ai), (bn, ai)) \
  COSSL_VOID(void, CRYPTO_free, (void *ptr, const char *file, int line), (ptr, file, line)) \
  COSSL_VOID(void, ERR_clear_error, (void), ()) \
  COSSL_VOID(void, ERR_error_string_n, (unsigned long e, char *buf, size_t len), (e, buf, len)) \
  COSSL_VALUE(unsigned long, ERR_get_error, (void), ()) \
  COSSL_VALUE(unsigned long, ERR_peek_last_error, (void), ()) \
  COSSL_VALUE(int, EVP_Digest, (const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type, ENGINE *impl), (data, count, md, size, type, impl)) \
  COSSL_VOID(void, EVP_PKEY_free, (EVP_PKEY *pkey), (pkey)) \
  COSSL_VALUE(const EVP_MD *, EVP_md5, (void), ()) \
  COSSL_VALUE(const EVP_MD *, EVP_sha1, (void), ()) \
  COSSL_VALUE(const EVP_MD *, EVP_sha256, (void), ()) \
  COSSL_VALUE(unsigned char *, HMAC, (const EVP_MD *evp_md, const void *key, int key_len, const unsigned char *data, size_t data_len, unsigned char *md, unsigned int *md_len), (evp_md, key, key_len, data, data_len, md, md_len)) \
  COSSL_VALUE(const char *, OBJ_nid2sn, (int n), (n)) \
  COSSL_VOID(void, OPENSSL_sk_free, (OPENSSL_STACK *a0), (a0)) \
  COSSL_VALUE(OPENSSL_STACK *, OPENSSL_sk_new_null, (void), ()) \
  COSSL_VALUE(int, OPENSSL_sk_num, (const OPENSSL_STACK *a0), (a0)) \
  COSSL_VOID(void, OPENSSL_sk_pop_free, (OPENSSL_STACK *st, void (*func)(void *)), (st, func)) \
  COSSL_VALUE(int, OPENSSL_sk_push, (OPENSSL_STACK *st, const void *data), (st, data)) \
  COSSL_VALUE(void *, OPENSSL_sk_value, (const OPENSSL_STACK *a0, int a1), (a0, a1)) \
  COSSL_VALUE(EVP_PKEY *, PEM_read_bio_PrivateKey, (BIO *out, EVP_PKEY **x, pem_password_cb *cb, void *u), (out, x, cb, u)) \
  COSSL_VALUE(X509 *, PEM_read_bio_X509, (BIO *out, X509 **x, pem_password_cb *cb, void *u), (out, x, cb, u)) \
  COSSL_VALUE(int, PEM_write_bio_PrivateKey, (BIO *out, const EVP_PKEY *x, const EVP_CIPHER *enc, const unsigned char *kstr, int klen, pem_password_cb *cb, void *u), (out, x, enc, kstr, klen, cb, u)) \
  COSSL_VALUE(int, PEM_write_bio_X509, (BIO *out, const X509 *x), (out, x)) \
  COSSL_VALUE(int, SSL_CTX_add_client_CA, (SSL_CTX *ctx, X509 *x), (ctx, x)) \
  COSSL_VALUE(int, SSL_CTX_check_private_key, (const SSL_CTX *ctx), (ctx)) \
  COSSL_VALUE(long, SSL_CTX_ctrl, (SSL_CTX *ctx, int cmd, long larg, void *parg), (ctx, cmd, larg, parg)) \
  COSSL_VOID(void, SSL_CTX_free, (SSL_CTX *a0), (a0)) \
  COSSL_VALUE(X509_STORE *, SSL_CTX_get_cert_store, (const SSL_CTX *a0), (a0)) \
  COSSL_VALUE(int, SSL_CTX_load_verify_locations, (SSL_CTX *ctx, const char *CAfile, const char *CApath), (ctx, CAfile, CApath)) \
  COSSL_VALUE(SSL_CTX *, SSL_CTX_new, (const SSL_METHOD *meth), (meth)) \
  COSSL_VALUE(int, SSL_CTX_set_alpn_protos, (SSL_CTX *ctx, const unsigned char *protos, unsigned int protos_len), (ctx, protos, protos_len)) \
  COSSL_VALUE(int, SSL_CTX_set_default_verify_paths, (SSL_CTX *ctx), (ctx)) \
  COSSL_VALUE(uint64_t, SSL_CTX_set_options, (SSL_CTX *ctx, uint64_t op), (ctx, op)) \
  COSSL_VALUE(int, SSL_CTX_set_session_id_context, (SSL_CTX *ctx, const unsigned char *sid_ctx, unsigned int sid_ctx_len), (ctx, sid_ctx, sid_ctx_len)) \
  COSSL_VOID(void, SSL_CTX_set_verify, (SSL_CTX *ctx, int mode, SSL_verify_cb callback), (ctx, mode, callback)) \
  COSSL_VOID(void, SSL_CTX_set_verify_depth, (SSL_CTX *ctx, int depth), (ctx, depth)) \
  COSSL_VALUE(int, SSL_CTX_use_PrivateKey, (SSL_CTX *ctx, EVP_PKEY *pkey), (ctx, pkey)) \
  COSSL_VALUE(int, SSL_CTX_use_certificate, (SSL_CTX *ctx, X509 *x), (ctx, x)) \
  COSSL_VALUE(long, SSL_ctrl, (SSL *ssl, int cmd, long larg, void *parg), (ssl, cmd, larg, parg)) \
  COSSL_VALUE(int, SSL_do_handshake, (SSL *s), (s)) \
  COSSL_VOID(void, SSL_free, (SSL *ssl), (ssl)) \
  COSSL_VALUE(X509_VERIFY_PARAM *, SSL_get0_param, (SSL *ssl), (ssl)) \
  COSSL_VALUE(X509 *, SSL_get1_peer_certificate, (const SSL *s), (s)) \
  COSSL_VALUE(int, SSL_get_error, (const SSL *s, int ret_code), (s, ret_code)) \
  COSSL_VALUE(STACK_OF(X509) *, SSL_get_peer_cert_chain, (const SSL *s), (s)) \
  COSSL_VALUE(long, SSL_get_verify_result, (const SSL *ssl), (ssl)) \
  COSSL_VALUE(const char *, SSL_get_version, (const SSL *s), (s)) \
  COSSL_VALUE(int, SSL_is_init_finished, (const SSL *s), (s)) \
  COSSL_VALUE(SSL *, SSL_new, (SSL_CTX *ctx), (ctx)) \
  COSSL_VALUE(int, SSL_pending, (const SSL *s), (s)) \
  COSSL_VALUE(int, SSL_read, (SSL *ssl, void *buf, int num), (ssl, buf, num)) \
  COSSL_VALUE(int, SSL_set1_host, (SSL *s, const char *hostname), (s, hostname)) \
  COSSL_VOID(void, SSL_set_accept_state, (SSL *s), (s)) \
  COSSL_VOID(void, SSL_set_bio, (SSL *s, BIO *rbio, BIO *wbio), (s, rbio, wbio)) \
  COSSL_VOID(void, SSL_set_connect_state, (SSL *s), (s)) \
  COSSL_VALUE(int, SSL_shutdown, (SSL *s), (s)) \
  COSSL_VALUE(int, SSL_write, (SSL *ssl, const void *buf, int num), (ssl, buf, num)) \
  COSSL_VALUE(const SSL_METHOD *, TLS_client_method, (void), ()) \
  COSSL_VALUE(const SSL_METHOD *, TLS_server_method, (void), ()) \
  COSSL_VALUE(X509_EXTENSION *, X509V3_EXT_conf_nid, (LHASH_OF(CONF_VALUE) *conf, X509V3_CTX *ctx, int ext_nid, const char *value), (conf, ctx, ext_nid, value)) \
  COSSL_VOID(void, X509V3_set_ctx, (X509V3_CTX *ctx, X509 *issuer, X509 *subject, X509_REQ *req, X509_CRL *crl, int flags), (ctx, issuer, subject, req, crl, flags)) \
  COSSL_VOID(void, X509_EXTENSION_free, (X509_EXTENSION *a), (a)) \
  COSSL_VALUE(int, X509_NAME_add_entry_by_txt, (X509_NAME *name, const char *field, int type, const unsigned char *bytes, int len, int loc, int set), (name, field, type, bytes, len, loc, set)) \
  COSSL_VOID(void, X509_NAME_free, (X509_NAME *a), (a)) \
  COSSL_VALUE(X509_NAME *, X509_NAME_new, (void), ()) \
  COSSL_VALUE(int, X509_NAME_print_ex, (BIO *out, const X509_NAME *nm, int indent, unsigned long flags), (out, nm, indent, flags)) \
  COSSL_VOID(void, X509_STORE_CTX_free, (X509_STORE_CTX *ctx), (ctx)) \
  COSSL_VALUE(STACK_OF(X509) *, X509_STORE_CTX_get1_chain, (const X509_STORE_CTX *ctx), (ctx)) \
  COSSL_VALUE(int, X509_STORE_CTX_get_error, (const X509_STORE_CTX *ctx), (ctx)) \
  COSSL_VALUE(int, X509_STORE_CTX_init, (X509_STORE_CTX *ctx, X509_STORE *trust_store, X509 *target, STACK_OF(X509) *untrusted), (ctx, trust_store, target, untrusted)) \
  COSSL_VALUE(X509_STORE_CTX *, X509_STORE_CTX_new, (void), ()) \
  COSSL_VALUE(int, X509_STORE_CTX_set_purpose, (X509_STORE_CTX *ctx, int purpose), (ctx, purpose)) \
  COSSL_VOID(void, X509_STORE_CTX_set_time, (X509_STORE_CTX *ctx, unsigned long flags, time_t t), (ctx, flags, t)) \
  COSSL_VALUE(int, X509_STORE_add_cert, (X509_STORE *ctx, X509 *x), (ctx, x)) \
  COSSL_VOID(void, X509_STORE_free, (X509_STORE *v), (v)) \
  COSSL_VALUE(X509_STORE *, X509_STORE_new, (void), ()) \
  COSSL_VALUE(int, X509_STORE_set_default_paths, (X509_STORE *ctx), (ctx)) \
  COSSL_VALUE(int, X509_VERIFY_PARAM_set1_ip_asc, (X509_VERIFY_PARAM *param, const char *ipasc), (param, ipasc)) \
  COSSL_VALUE(int, X509_add_ext, (X509 *x, X509_EXTENSION *ex, int loc), (x, ex, loc)) \
  COSSL_VALUE(int, X509_check_host, (X509 *x, const char *chk, size_t chklen, unsigned int flags, char **peername), (x, chk, chklen, flags, peername)) \
  COSSL_VALUE(int, X509_check_ip_asc, (X509 *x, const char *ipasc, unsigned int flags), (x, ipasc, flags)) \
  COSSL_VOID(void, X509_free, (X509 *a), (a)) \
  COSSL_VALUE(EVP_PKEY *, X509_get0_pubkey, (const X509 *x), (x)) \
  COSSL_VALUE(ASN1_INTEGER *, X509_get_serialNumber, (X509 *x), (x)) \
  COSSL_VALUE(X509_NAME *, X509_get_subject_name, (const X509 *a), (a)) \
  COSSL_VALUE(ASN1_TIME *, X509_getm_notAfter, (const X509 *x), (x)) \
  COSSL_VALUE(ASN1_TIME *, X509_getm_notBefore, (const X509 *x), (x)) \
  COSSL_VALUE(X509 *, X509_new, (void), ()) \
  COSSL_VALUE(int, X509_set_issuer_name, (X509 *x, const X509_NAME *name), (x, name)) \
  COSSL_VALUE(int, X509_set_pubkey, (X509 *x, EVP_PKEY *pkey), (x, pkey)) \
  COSSL_VALUE(int, X509_set_subject_name, (X509 *x, const X509_NAME *name), (x, name)) \
  COSSL_VALUE(int, X509_set_version, (X509 *x, long version), (x, version)) \
  COSSL_VALUE(int, X509_sign, (X509 *x, EVP_PKEY *pkey, const EVP_MD *md), (x, pkey, md)) \
  COSSL_VALUE(int, X509_up_ref, (X509 *x), (x)) \
  COSSL_VALUE(int, X509_verify_cert, (X509_STORE_CTX *ctx), (ctx)) \
  COSSL_VALUE(const char *, X509_verify_cert_error_string, (long n), (n)) \
  COSSL_VALUE(X509 *, d2i_X509, (X509 **a, const unsigned char **in, long len), (a, in, len)) \
  COSSL_VALUE(int, i2d_PUBKEY, (const EVP_PKEY *a, unsigned char **pp), (a, pp)) \
  COSSL_VALUE(int, i2d_X509, (const X509 *a, unsigned char **out), (a, out)) \

static struct {
#define COSSL_POINTER(ret, name, params, args) __typeof__(&name) name;
  COSSL_FUNCTIONS(COSSL_POINTER, COSSL_POINTER)
  COSSL_POINTER(EVP_PKEY *, EVP_PKEY_Q_keygen, (), ())  // variadic: called by cossl_generate_ec_p256 only
#undef COSSL_POINTER
} cossl_functions;

static pthread_once_t cossl_once = PTHREAD_ONCE_INIT;
static const char *cossl_problem;
static char cossl_message[512];

static void cossl_load_once(void) {
  // RTLD_LOCAL: its symbols stay out of the global namespace; the handle is never closed. A process that
  // already has the library (linked by libcurl) gets that copy.
  void *handle = dlopen(COSSL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *reason = dlerror();
    snprintf(cossl_message, sizeof cossl_message, "could not load OpenSSL (%s)", reason ? reason : COSSL_LIBRARY);
    cossl_problem = cossl_message;
    return;
  }
  // dlsym on libssl's handle also searches its dependency libcrypto.
#define COSSL_LOOK_UP(ret, name, params, args)                                                             \
  do {                                                                                                     \
    void *symbol = dlsym(handle, #name);                                                                   \
    if (symbol == NULL) {                                                                                  \
      snprintf(cossl_message, sizeof cossl_message, "could not load OpenSSL (%s has no %s)", COSSL_LIBRARY, \
               #name);                                                                                     \
      cossl_problem = cossl_message;                                                                       \
      return;                                                                                              \
    }                                                                                                      \
    memcpy(&cossl_functions.name, &symbol, sizeof symbol);                                                 \
  } while (0);
  COSSL_FUNCTIONS(COSSL_LOOK_UP, COSSL_LOOK_UP)
  COSSL_LOOK_UP(EVP_PKEY *, EVP_PKEY_Q_keygen, (), ())
#undef COSSL_LOOK_UP
}

const char *cossl_load(void) {
  pthread_once(&cossl_once, cossl_load_once);
  return cossl_problem;
}

// A function called when the libraries cannot be loaded has no result to give: the process stops with the
// loader's message. Callers that can report it (TLS set-up) call cossl_load first and throw.
static void cossl_require(void) {
  const char *problem = cossl_load();
  if (problem != NULL) {
    fprintf(stderr, "mockserver: %s\n", problem);
    abort();
  }
}

#define COSSL_DEFINE_VALUE(ret, name, params, args)                                                        \
  ret name params {                                                                                        \
    cossl_require();                                                                                       \
    return cossl_functions.name args;                                                                      \
  }
#define COSSL_DEFINE_VOID(ret, name, params, args)                                                         \
  void name params {                                                                                       \
    cossl_require();                                                                                       \
    cossl_functions.name args;                                                                             \
  }
COSSL_FUNCTIONS(COSSL_DEFINE_VALUE, COSSL_DEFINE_VOID)

EVP_PKEY *cossl_generate_ec_p256(void) {
  cossl_require();
  return cossl_functions.EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
}

#endif

#include "COpenSSLShim.h"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

int pg_ssl_ctx_configure_client(struct ssl_ctx_st *ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
    return 1;
}

int pg_ssl_ctx_configure_server(struct ssl_ctx_st *ctx) {
    if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1) return 0;
    SSL_CTX_set_options(
        ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_TICKET);
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    return 1;
}

int pg_ssl_ctx_add0_chain_cert(struct ssl_ctx_st *ctx, struct x509_st *certificate) {
    return SSL_CTX_add0_chain_cert(ctx, certificate) == 1 ? 1 : 0;
}

struct evp_pkey_st *pg_evp_ec_gen(const char *curve) {
    return EVP_EC_gen(curve);
}

int pg_ssl_set_server_name(struct ssl_st *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name) == 1 ? 1 : 0;
}

void pg_ssl_set_nonblocking_modes(struct ssl_st *ssl) {
    SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
}

int pg_bio_shutdown_write(struct bio_st *bio) {
    return BIO_shutdown_wr(bio);
}

int pg_err_is_unexpected_eof(unsigned long code) {
    return ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
}

int pg_err_is_certificate_verify_failed(unsigned long code) {
    return ERR_GET_LIB(code) == ERR_LIB_SSL && ERR_GET_REASON(code) == SSL_R_CERTIFICATE_VERIFY_FAILED;
}

int pg_err_is_pem_no_start_line(unsigned long code) {
    return ERR_GET_LIB(code) == ERR_LIB_PEM && ERR_GET_REASON(code) == PEM_R_NO_START_LINE;
}

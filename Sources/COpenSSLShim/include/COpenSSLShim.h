// COpenSSLShim: OpenSSL macros that Swift cannot call, as plain functions.
//
// OpenSSL spells many settings as function-like macros over SSL_ctrl/BIO_ctrl (and its
// option bits as SSL_OP_BIT(n)), which the Swift importer skips. Each function below is
// one such macro and nothing more. The OpenSSL types are forward-declared structs, so
// they import as OpaquePointer, the same type the COpenSSL module gives them.
#ifndef PG_COPENSSL_SHIM_H
#define PG_COPENSSL_SHIM_H

struct ssl_st;
struct ssl_ctx_st;
struct bio_st;
struct x509_st;
struct evp_pkey_st;

/// SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) plus SSL_OP_NO_COMPRESSION and
/// SSL_OP_NO_RENEGOTIATION. Returns 1 on success, 0 on failure.
int pg_ssl_ctx_configure_client(struct ssl_ctx_st *ctx);

/// For a server: SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION), SSL_OP_NO_COMPRESSION,
/// SSL_OP_NO_RENEGOTIATION, SSL_OP_CIPHER_SERVER_PREFERENCE and SSL_OP_NO_TICKET, and
/// SSL_CTX_set_session_cache_mode(SSL_SESS_CACHE_OFF). Returns 1 on success, 0 on failure.
int pg_ssl_ctx_configure_server(struct ssl_ctx_st *ctx);

/// SSL_CTX_add0_chain_cert: one more certificate sent after the leaf. On success the
/// context owns it. Returns 1 on success, 0 on failure.
int pg_ssl_ctx_add0_chain_cert(struct ssl_ctx_st *ctx, struct x509_st *certificate);

/// EVP_EC_gen(curve): a new EC key pair on a named curve such as "P-256", or NULL.
struct evp_pkey_st *pg_evp_ec_gen(const char *curve);

/// SSL_set_tlsext_host_name: the SNI extension. Returns 1 on success, 0 on failure.
int pg_ssl_set_server_name(struct ssl_st *ssl, const char *name);

/// SSL_set_mode(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
/// SSL_MODE_RELEASE_BUFFERS): writes report what they took, a retried write may come from
/// another address, and idle connections give their record buffers back.
void pg_ssl_set_nonblocking_modes(struct ssl_st *ssl);

/// BIO_shutdown_wr: no more bytes will be written into this BIO (the peer's EOF).
int pg_bio_shutdown_write(struct bio_st *bio);

/// Whether an error-queue code is SSL_R_UNEXPECTED_EOF_WHILE_READING: the peer closed the
/// transport without sending close_notify.
int pg_err_is_unexpected_eof(unsigned long code);

/// Whether an error-queue code is SSL_R_CERTIFICATE_VERIFY_FAILED.
int pg_err_is_certificate_verify_failed(unsigned long code);

/// Whether an error-queue code is PEM_R_NO_START_LINE: no PEM block of the kind asked for
/// (the input is not PEM, holds another kind of block, or has no more of them).
int pg_err_is_pem_no_start_line(unsigned long code);

#endif

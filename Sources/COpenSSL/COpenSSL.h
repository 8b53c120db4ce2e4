// The OpenSSL headers the TLS module uses. Only what Swift imports directly lives
// here; macros Swift cannot call are wrapped in the COpenSSLShim target.
#ifndef PG_COPENSSL_H
#define PG_COPENSSL_H

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#endif

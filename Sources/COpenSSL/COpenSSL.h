// The OpenSSL headers the TLS and Passwords modules use. Only what Swift imports directly
// lives here; macros Swift cannot call are wrapped in the COpenSSLShim target.
#ifndef PG_COPENSSL_H
#define PG_COPENSSL_H

#include <openssl/asn1.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#endif

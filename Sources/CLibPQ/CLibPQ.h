// PostgreSQL's client library from the system (Debian: libpq-dev). Its header lives in
// /usr/include/postgresql and includes its neighbours by quoted name, so no include path
// beyond the system's is needed.
#include <postgresql/libpq-fe.h>

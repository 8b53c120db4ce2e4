// The SQLite header the Store module uses, plus the one macro Swift cannot import.
#ifndef PG_CSQLITE_H
#define PG_CSQLITE_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT: "copy the bound text or blob before the bind call returns".
/// The macro is a cast of -1 to a function pointer, which the Swift importer skips;
/// a static inline function in this header is compiled by Clang and callable from Swift,
/// so no C target is needed.
static inline sqlite3_destructor_type pg_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif

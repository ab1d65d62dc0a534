#ifndef MVVMR_CSQLITE_SHIM_H
#define MVVMR_CSQLITE_SHIM_H

/*
 * SQLite for Swift. The few things Swift cannot import from sqlite3.h are given here as plain
 * declarations, all prefixed `mvvmr_sqlite_`. Nothing above the session store sees these.
 */

#include <sqlite3.h>

/*
 * SQLITE_TRANSIENT: a macro casting -1 to a destructor pointer, which Swift cannot import. Passed to
 * sqlite3_bind_text or sqlite3_bind_blob, it makes SQLite copy the bytes before the call returns, so
 * the caller's buffer may go away at once.
 */
static inline sqlite3_destructor_type mvvmr_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif

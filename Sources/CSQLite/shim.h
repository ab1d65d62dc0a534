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

/*
 * The WAL hook, which SQLite calls after each commit with the number of frames in the write-ahead log,
 * writes that number to `frames`. Installing it turns SQLite's automatic checkpoint off: the caller
 * checkpoints when the count says so, at a moment of its choosing.
 */
static int mvvmr_sqlite_note_wal_frames(void *frames, sqlite3 *database, const char *name, int count) {
    (void)database;
    (void)name;
    *(int *)frames = count;
    return SQLITE_OK;
}

static inline void mvvmr_sqlite_count_wal_frames(sqlite3 *database, int *frames) {
    sqlite3_wal_hook(database, mvvmr_sqlite_note_wal_frames, frames);
}

#endif

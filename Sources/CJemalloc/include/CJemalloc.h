#ifndef MVVMR_CJEMALLOC_H
#define MVVMR_CJEMALLOC_H

/*
 * jemalloc, linked into the demo server so that it replaces the C library's malloc for the whole process (Debian
 * builds it without a symbol prefix), and its configuration (jemalloc.c). The server's library asks it for its free
 * pages by name at run time (FreedMemory.swift), so tests and other programs that do not link it keep glibc's.
 */

/* The version of the jemalloc serving this process's allocations ("5.3.0-0-g…"), or NULL if it cannot say. */
const char *mvvmr_jemalloc_version(void);

#endif

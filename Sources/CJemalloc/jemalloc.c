#include <stddef.h>
#include <jemalloc/jemalloc.h>

#include "CJemalloc.h"

/*
 * Read by jemalloc when the process starts, before MALLOC_CONF (which can still change anything here).
 *
 * tcache_nslots_small_max: each thread caches at most 32 freed objects per small size class (jemalloc's default is
 * 200). A thread's cache is returned only by that thread, so after a burst of load every request thread kept several
 * MiB that no purge could reach: 10,000 passivated sessions left 760-1,190 bytes each resident, against 400-500 with
 * 32 slots, and actions ran no slower in alternated runs (BENCHMARKS.md, "Allocator").
 */
const char *malloc_conf = "tcache_nslots_small_max:32";

const char *mvvmr_jemalloc_version(void) {
    const char *version = NULL;
    size_t length = sizeof(version);
    if (mallctl("version", &version, &length, NULL, 0) != 0) return NULL;
    return version;
}

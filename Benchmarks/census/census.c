/*
 * Live Swift objects by type and allocation site, for Benchmarks/census/census.py (LD_PRELOAD into the release demo).
 *
 * Every swift_allocObject the program makes (its own code's, and the standard library's inlined into it) is kept in
 * a table with its type, size and the first return addresses of its stack; every free() takes its block out again
 * (the runtime frees objects through free, so objects freed inside libswiftCore leave too). SIGUSR2 asks a thread
 * of its own to write the live objects, grouped by type and allocation site, to /tmp/census.N.txt (N counts up).
 * Objects the standard library allocates in its own, not inlined, code (most String storage) are not seen, nor
 * plain malloc (the runtime's weak-reference side tables, SQLite): the census is a lower bound of the heap, by
 * object, while the memory section measures RSS.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef void *(*alloc_fn)(const void *, size_t, size_t);
typedef void (*dealloc_fn)(void *, size_t, size_t);
typedef struct { const char *data; size_t length; } name_pair;
typedef name_pair (*name_fn)(const void *, int);
typedef void (*free_fn)(void *); static free_fn real_free; static alloc_fn real_alloc; static dealloc_fn real_dealloc_instance, real_dealloc_object, real_dealloc_uninit;
#define SLOTS (1u << 23)
typedef struct { void *ptr; const void *meta; size_t size; void *caller[4]; } slot;
static slot *table; static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; static volatile int dump_wanted; static int dumps;

static size_t h(void *p) { uintptr_t x = (uintptr_t)p; x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; return x & (SLOTS - 1); }
static void put(void *p, const void *m, size_t s, void **c) {
  for (size_t i = h(p);; i = (i + 1) & (SLOTS - 1)) if (!table[i].ptr || table[i].ptr == (void *)1) { table[i].ptr = p; table[i].meta = m; table[i].size = s; memcpy(table[i].caller, c, sizeof table[i].caller); return; }
}
static void del(void *p) {
  for (size_t i = h(p);; i = (i + 1) & (SLOTS - 1)) { if (!table[i].ptr) return; if (table[i].ptr == p) { table[i].ptr = (void *)1; return; } }
}
static void init(void) {
  if (real_alloc) return;
  real_free = (free_fn)dlsym(RTLD_NEXT, "free");
  real_alloc = (alloc_fn)dlsym(RTLD_NEXT, "swift_allocObject");
  real_dealloc_instance = (dealloc_fn)dlsym(RTLD_NEXT, "swift_deallocClassInstance");
  real_dealloc_object = (dealloc_fn)dlsym(RTLD_NEXT, "swift_deallocObject");
  real_dealloc_uninit = (dealloc_fn)dlsym(RTLD_NEXT, "swift_deallocUninitializedObject");
}
void *swift_allocObject(const void *m, size_t size, size_t align) {
  init(); void *p = real_alloc(m, size, align);
  void *frames[6] = {0}; int got = backtrace(frames, 6); (void)got; pthread_mutex_lock(&lock); put(p, m, size, frames + 1); pthread_mutex_unlock(&lock); return p;
}
void swift_deallocClassInstance(void *p, size_t s, size_t a) { init(); pthread_mutex_lock(&lock); del(p); pthread_mutex_unlock(&lock); real_dealloc_instance(p, s, a); }
void swift_deallocObject(void *p, size_t s, size_t a) { init(); pthread_mutex_lock(&lock); del(p); pthread_mutex_unlock(&lock); real_dealloc_object(p, s, a); }
void swift_deallocUninitializedObject(void *p, size_t s, size_t a) { init(); pthread_mutex_lock(&lock); del(p); pthread_mutex_unlock(&lock); real_dealloc_uninit(p, s, a); }

void free(void *p) {
  if (!real_free) { real_free = (free_fn)dlsym(RTLD_NEXT, "free"); }
  if (p && table) { pthread_mutex_lock(&lock); del(p); pthread_mutex_unlock(&lock); }
  real_free(p);
}
typedef struct { const void *meta; void *caller[4]; size_t count, bytes; } agg;
static int cmp(const void *a, const void *b) { const agg *x = a, *y = b; return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0; }
static void dump(void) {
  static agg aggs[200000]; size_t n = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < SLOTS; i++) {
    if (!table[i].ptr || table[i].ptr == (void *)1) continue;
    size_t j; for (j = 0; j < n; j++) if (aggs[j].meta == table[i].meta && !memcmp(aggs[j].caller, table[i].caller, sizeof aggs[j].caller)) break;
    if (j == n) { if (n == 200000) continue; aggs[n].meta = table[i].meta; memcpy(aggs[n].caller, table[i].caller, sizeof aggs[n].caller); aggs[n].count = 0; aggs[n].bytes = 0; n++; }
    aggs[j].count++; aggs[j].bytes += table[i].size;
  }
  pthread_mutex_unlock(&lock);
  qsort(aggs, n, sizeof(agg), cmp);
  name_fn getname = (name_fn)dlsym(RTLD_DEFAULT, "swift_getTypeName");
  char path[64]; snprintf(path, sizeof path, "/tmp/census.%d.txt", dumps++);
  FILE *f = fopen(path, "w");
  for (size_t j = 0; j < n; j++) {
    name_pair name = getname ? getname(aggs[j].meta, 1) : (name_pair){"?", 1};
    fprintf(f, "%zu\t%zu\t", aggs[j].count, aggs[j].bytes);
    for (int k = 0; k < 4; k++) { Dl_info info; const char *mod = "?"; uintptr_t off = 0; if (aggs[j].caller[k] && dladdr(aggs[j].caller[k], &info) && info.dli_fname) { mod = info.dli_fname; off = (uintptr_t)aggs[j].caller[k] - (uintptr_t)info.dli_fbase; } fprintf(f, "%s %lx;", mod, (unsigned long)off); }
    fprintf(f, "\t%.*s\n", (int)name.length, name.data);
  }
  fclose(f);
}
static void on_signal(int s) { (void)s; dump_wanted = 1; }
static void *watcher(void *x) { (void)x; for (;;) { usleep(100000); if (dump_wanted) { dump_wanted = 0; dump(); } } return NULL; }
__attribute__((constructor)) static void start(void) {
  table = calloc(SLOTS, sizeof(slot)); init(); signal(SIGUSR2, on_signal);
  pthread_t t; pthread_create(&t, NULL, watcher, NULL);
}

/*
 * small_blocks.c -- a cache of small blocks for tensor headers and the
 * storages of small CPU tensors.
 *
 * Why: every op result costs two small mallocs (the ch_tensor header and
 * its storage with the data inline), and the Lua GC frees dead tensors in
 * batches of hundreds.  glibc's per-thread cache keeps only 7 blocks per
 * size, so a batch overflows it and each free/malloc then takes the slow
 * path (bins, coalescing, malloc_consolidate): about a thousand
 * instructions per tensor in the autograd's per-node loop.  Here freed
 * blocks go onto a free list per 64-byte size class (up to CLASS_BYTES per
 * class) and are handed out again last-in first-out, which also keeps them
 * warm in the cache.
 *
 * Set CHAINLUA_NO_BLOCK_CACHE=1 (read once) to use plain malloc/free, so
 * that valgrind and AddressSanitizer see every use after free; builds with
 * AddressSanitizer bypass the cache always.
 */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

#define GRANULE 64
#define NCLASSES (CH_SMALL_BLOCK_MAX / GRANULE)
#define CLASS_BYTES ((size_t)1 << 20)     /* cap of cached bytes per class */

typedef struct free_block {
    struct free_block *next;
} free_block;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *lists[NCLASSES];
static size_t list_bytes[NCLASSES];
static size_t total_bytes;

#if defined(__SANITIZE_ADDRESS__)
#define CACHE_BYPASSED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CACHE_BYPASSED 1
#endif
#endif

/* 1 uses the cache, 0 bypasses it, -1 not decided yet. */
static int enabled = -1;

static int cache_enabled(void) {
#ifdef CACHE_BYPASSED
    return 0;
#else
    int e = __atomic_load_n(&enabled, __ATOMIC_RELAXED);
    if (e < 0) {
        const char *v = getenv("CHAINLUA_NO_BLOCK_CACHE");
        e = !(v && *v && *v != '0');
        __atomic_store_n(&enabled, e, __ATOMIC_RELAXED);
    }
    return e;
#endif
}

/* Blocks are rounded up to the class size, so any block of a class can
 * serve any request of it. */
static size_t class_of(size_t nbytes) { return (nbytes + GRANULE - 1) / GRANULE - 1; }

void *ch_small_alloc(size_t nbytes) {
    if (nbytes == 0 || nbytes > CH_SMALL_BLOCK_MAX || !cache_enabled())
        return malloc(nbytes ? nbytes : 1);
    size_t c = class_of(nbytes);
    pthread_mutex_lock(&lock);
    free_block *b = lists[c];
    if (b) {
        lists[c] = b->next;
        list_bytes[c] -= (c + 1) * GRANULE;
        total_bytes -= (c + 1) * GRANULE;
    }
    pthread_mutex_unlock(&lock);
    return b ? (void *)b : malloc((c + 1) * GRANULE);
}

void ch_small_free(void *p, size_t nbytes) {
    if (!p)
        return;
    if (nbytes == 0 || nbytes > CH_SMALL_BLOCK_MAX || !cache_enabled()) {
        free(p);
        return;
    }
    size_t c = class_of(nbytes);
    size_t z = (c + 1) * GRANULE;
    pthread_mutex_lock(&lock);
    if (list_bytes[c] + z <= CLASS_BYTES) {
        free_block *b = p;
        b->next = lists[c];
        lists[c] = b;
        list_bytes[c] += z;
        total_bytes += z;
        p = NULL;
    }
    pthread_mutex_unlock(&lock);
    free(p);
}

void ch_small_blocks_release(void) {
    pthread_mutex_lock(&lock);
    for (size_t c = 0; c < NCLASSES; c++) {
        free_block *b = lists[c];
        while (b) {
            free_block *next = b->next;
            free(b);
            b = next;
        }
        lists[c] = NULL;
        list_bytes[c] = 0;
    }
    total_bytes = 0;
    pthread_mutex_unlock(&lock);
}

size_t ch_small_blocks_cached(void) {
    pthread_mutex_lock(&lock);
    size_t n = total_bytes;
    pthread_mutex_unlock(&lock);
    return n;
}

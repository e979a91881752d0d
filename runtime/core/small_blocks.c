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
 * blocks go onto a free list per 64-byte size class and are handed out
 * again last-in first-out, which also keeps them warm in the cache.
 *
 * Two levels, so that the common case takes no lock (a lock and unlock per
 * block cost ~55 instructions, issue 19):
 *   - each thread keeps up to LOCAL_MAX blocks per class of its own;
 *   - behind them a shared cache under a mutex (up to CLASS_BYTES per
 *     class).  A thread whose list of a class is full hands its older half
 *     over as one chain, and one whose list is empty takes a chain back: a
 *     lock per LOCAL_MAX / 2 blocks at most, and O(1) work under it.
 * A block freed on another thread than the one that took it simply joins
 * the freeing thread's list (blocks of a class are interchangeable).  A
 * thread's lists go to the shared cache when it exits (a pthread key's
 * destructor).  ch_small_blocks_release empties the shared cache and the
 * calling thread's lists at once; every other thread drops its own lists at
 * its next allocation or free (the release bumps `ch_small_epoch`), or at exit.
 * ch_small_blocks_cached counts both levels, every thread included.
 *
 * Set CHAINLUA_NO_BLOCK_CACHE=1 (read once) to use plain malloc/free, so
 * that valgrind and AddressSanitizer see every use after free; builds with
 * AddressSanitizer bypass the cache always.
 */
#include "local.h"

#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#define GRANULE CH_SMALL_GRANULE
#define NCLASSES CH_SMALL_NCLASSES
#define CLASS_BYTES ((size_t)1 << 20)     /* cap of the shared cache's bytes per class */
#define LOCAL_MAX CH_SMALL_LOCAL_MAX

typedef ch_free_block free_block;
typedef ch_local thread_cache;
_Static_assert(sizeof(free_block) <= GRANULE, "a free block's links fit in the smallest class");

/* ---- the shared cache (under `lock`) ------------------------------------- */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static free_block *chains[NCLASSES];
static size_t chain_bytes[NCLASSES];
static size_t total_bytes;

/* ---- each thread's cache (ch_local, local.h) ------------------------------ */
_Thread_local ch_local ch_tls;
static thread_cache *registry;
/* Bumped by every ch_small_blocks_release; starts at 1 so that a thread's
 * zeroed cache is "not registered yet" and its first use takes the slow
 * path. */
unsigned ch_small_epoch = 1;
static pthread_key_t exit_key;
static bool exit_key_made;

#if defined(__SANITIZE_ADDRESS__)
#define CACHE_BYPASSED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CACHE_BYPASSED 1
#endif
#endif

bool ch_block_cache_enabled(void) {
#ifdef CACHE_BYPASSED
    return 0;
#else
    /* 1 uses the cache, 0 bypasses it, -1 not decided yet.  Only the slow
     * paths ask: a thread registers (and so ever caches a block) only when
     * the cache is on. */
    static int enabled = -1;
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
static size_t class_size(size_t c) { return (c + 1) * GRANULE; }


static void free_chain(free_block *b) {
    while (b) {
        free_block *next = b->next;
        free(b);
        b = next;
    }
}

/* Takes thread t's whole list of class c: onto the shared cache as one
 * chain when `keep` and it fits under the cap, else back to malloc. */
static void hand_over_locked(thread_cache *t, size_t c, bool keep) {
    free_block *b = t->head[c];
    if (!b)
        return;
    size_t z = (size_t)t->count[c] * class_size(c);
    if (keep && chain_bytes[c] + z <= CLASS_BYTES) {
        b->tail = t->tail[c];
        b->count = t->count[c];
        b->next_chain = chains[c];
        chains[c] = b;
        chain_bytes[c] += z;
        total_bytes += z;
    } else {
        free_chain(b);
    }
    t->head[c] = t->tail[c] = NULL;
    ch_small_set_count(t, c, 0);
}

static void unregister_locked(thread_cache *t) {
    if (t->prev)
        t->prev->next = t->next;
    else
        registry = t->next;
    if (t->next)
        t->next->prev = t->prev;
    t->prev = t->next = NULL;
    t->epoch = 0;
}

/* A thread's exit: its lists go to the shared cache. */
static void thread_exit(void *arg) {
    thread_cache *t = arg;
    pthread_mutex_lock(&lock);
    for (size_t c = 0; c < NCLASSES; c++)
        hand_over_locked(t, c, true);
    unregister_locked(t);
    pthread_mutex_unlock(&lock);
}

/* The slow paths' entry, under `lock`: registers a thread's cache on its
 * first use (so that its blocks are counted and handed over at exit), or
 * drops lists left from before a ch_small_blocks_release.  False when the
 * cache is off. */
static bool adopt_locked(thread_cache *t) {
    unsigned now = __atomic_load_n(&ch_small_epoch, __ATOMIC_RELAXED);
    if (t->epoch == now)
        return true;
    if (t->epoch == 0) {
        if (!ch_block_cache_enabled())
            return false;
        if (!exit_key_made)
            exit_key_made = pthread_key_create(&exit_key, thread_exit) == 0;
        if (exit_key_made)
            pthread_setspecific(exit_key, t);
        t->prev = NULL;
        t->next = registry;
        if (registry)
            registry->prev = t;
        registry = t;
    } else {
        for (size_t c = 0; c < NCLASSES; c++)
            hand_over_locked(t, c, false);
    }
    t->epoch = now;
    return true;
}

/* The thread's list of class c is empty (or stale): take a chain (up to
 * LOCAL_MAX blocks) from the shared cache, or a new block from malloc. */
void *ch_small_alloc_slow(thread_cache *t, size_t c) {
    pthread_mutex_lock(&lock);
    if (adopt_locked(t) && !t->head[c] && chains[c]) {
        free_block *b = chains[c];
        size_t z = (size_t)b->count * class_size(c);
        chains[c] = b->next_chain;
        chain_bytes[c] -= z;
        total_bytes -= z;
        t->head[c] = b;
        t->tail[c] = b->tail;
        ch_small_set_count(t, c, b->count);
    }
    pthread_mutex_unlock(&lock);
    free_block *b = t->head[c];
    if (!b)
        return malloc(class_size(c));
    t->head[c] = b->next;
    ch_small_set_count(t, c, t->count[c] - 1);
    return b;
}

void *ch_small_alloc(size_t nbytes) { return ch_small_alloc_at(ch_here(), nbytes); }

/* The thread's list of class c is full (its older half goes to the shared
 * cache), or the thread is not registered yet, or its lists are stale. */
void ch_small_free_slow(thread_cache *t, free_block *p, size_t c) {
    /* Keep the LOCAL_MAX / 2 most recent blocks: a thread whose use swings
     * around the boundary then takes the lock once per LOCAL_MAX / 2 frees
     * or allocations, not at every other one as with the whole list. */
    free_block *older = NULL;
    if (t->count[c] >= LOCAL_MAX) {
        free_block *last_kept = t->head[c];
        for (int k = 1; k < LOCAL_MAX / 2; k++)
            last_kept = last_kept->next;
        older = last_kept->next;
        older->tail = t->tail[c];
        older->count = t->count[c] - LOCAL_MAX / 2;
        last_kept->next = NULL;
        t->tail[c] = last_kept;
        ch_small_set_count(t, c, LOCAL_MAX / 2);
    }
    pthread_mutex_lock(&lock);
    /* (lists from before a release are dropped, that half included) */
    bool current = t->epoch == __atomic_load_n(&ch_small_epoch, __ATOMIC_RELAXED);
    bool on = adopt_locked(t);
    if (older) {
        size_t z = (size_t)older->count * class_size(c);
        if (current && chain_bytes[c] + z <= CLASS_BYTES) {
            older->next_chain = chains[c];
            chains[c] = older;
            chain_bytes[c] += z;
            total_bytes += z;
            older = NULL;
        }
    }
    pthread_mutex_unlock(&lock);
    free_chain(older);
    if (!on) {
        free(p);
        return;
    }
    ch_small_push(t, c, p);
}

void ch_small_free(void *p, size_t nbytes) { ch_small_free_at(ch_here(), p, nbytes); }

void ch_small_blocks_release(void) {
    pthread_mutex_lock(&lock);
    for (size_t c = 0; c < NCLASSES; c++) {
        for (free_block *b = chains[c], *next; b; b = next) {
            next = b->next_chain;
            free_chain(b);
        }
        chains[c] = NULL;
        chain_bytes[c] = 0;
    }
    total_bytes = 0;
    /* the other threads drop their lists at their next use (adopt_locked) */
    unsigned next = __atomic_load_n(&ch_small_epoch, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&ch_small_epoch, next ? next : 1, __ATOMIC_RELAXED);
    if (ch_tls.epoch != 0) {
        for (size_t c = 0; c < NCLASSES; c++)
            hand_over_locked(&ch_tls, c, false);
        ch_tls.epoch = __atomic_load_n(&ch_small_epoch, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&lock);
}

size_t ch_small_blocks_cached(void) {
    pthread_mutex_lock(&lock);
    size_t n = total_bytes;
    for (thread_cache *t = registry; t; t = t->next)
        for (size_t c = 0; c < NCLASSES; c++)
            n += (size_t)__atomic_load_n(&t->count[c], __ATOMIC_RELAXED) * class_size(c);
    pthread_mutex_unlock(&lock);
    return n;
}

/* An unloaded library must not leave its destructor on the key. */
__attribute__((destructor)) static void small_blocks_unload(void) {
    if (exit_key_made)
        pthread_key_delete(exit_key);
}

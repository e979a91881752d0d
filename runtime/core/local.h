/*
 * local.h -- what each thread keeps for itself: its lists of small blocks
 * (small_blocks.c) and its slot of the live counters (counters.c).
 *
 * Why one struct: a small tensor's life is a header and a storage taken
 * from the block cache and counted in the live counters, and the library is
 * loaded with dlopen, so each reach for thread-local data is a call to
 * __tls_get_addr (~17 instructions).  The tensor and storage code looks
 * this struct up once per tensor (`&ch_tls`) and hands it to the inline
 * fast paths below.
 *
 * Why per-thread counters: a locked read-modify-write costs ~20 cycles even
 * uncontended, and it waits for every earlier store (the new header's) to
 * drain.  Each thread adds to its own slot with plain loads and stores; the
 * readers (ch_live_bytes, ch_live_tensors) add up the slots in use.
 */
#ifndef CHAINLUA_LOCAL_H
#define CHAINLUA_LOCAL_H

#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>

#define CH_SMALL_GRANULE 64
#define CH_SMALL_NCLASSES (CH_SMALL_BLOCK_MAX / CH_SMALL_GRANULE)

/* A free block.  Lists move between a thread and the shared cache whole, as
 * a chain: its first block also records the chain's last block, its length
 * and the next chain of the shared cache (blocks are at least 64 bytes). */
typedef struct ch_free_block {
    struct ch_free_block *next;
    struct ch_free_block *tail, *next_chain;
    int count;
} ch_free_block;

/* One thread's live counters.  Only its thread writes them (plain adds);
 * the slot outlives the thread and the next thread to start counting takes
 * it over with the values it holds (a tensor may die on another thread than
 * the one that made it: slots can go negative, their sum is exact).  The
 * `shared` slot serves every thread once all slots are taken: it is added
 * to atomically. */
typedef struct ch_counters {
    _Atomic int64_t cpu_bytes;     /* bytes of live CPU storages */
    _Atomic int64_t tensors;       /* live ch_tensor structs */
    _Atomic int in_use;            /* a thread holds the slot */
    int shared;
} __attribute__((aligned(64))) ch_counters;

typedef struct ch_local {
    ch_free_block *head[CH_SMALL_NCLASSES], *tail[CH_SMALL_NCLASSES];
    int count[CH_SMALL_NCLASSES]; /* written by its thread, read (atomically) by ch_small_blocks_cached */
    unsigned epoch;               /* the small-block epoch its lists belong to; 0 until registered */
    struct ch_local *prev, *next; /* small_blocks.c's registry, under its lock */
    ch_counters *counters;        /* NULL until the thread first counts */
} ch_local;

CH_INTERNAL extern _Thread_local ch_local ch_tls;
CH_INTERNAL extern unsigned ch_small_epoch;

/* &ch_tls, looked up once: the empty asm hides where the pointer came from,
 * or GCC computes the address again (another __tls_get_addr call) after
 * every call instead of keeping it in a register. */
static inline ch_local *ch_here(void) {
    ch_local *l = &ch_tls;
    __asm__("" : "+r"(l));
    return l;
}

/* ---- small blocks (small_blocks.c) --------------------------------------- */
CH_INTERNAL void *ch_small_alloc_slow(ch_local *t, size_t c);
CH_INTERNAL void ch_small_free_slow(ch_local *t, ch_free_block *p, size_t c);

/* Blocks are rounded up to the class size, so any block of a class can
 * serve any request of it. */
static inline size_t ch_small_class(size_t nbytes) { return (nbytes + CH_SMALL_GRANULE - 1) / CH_SMALL_GRANULE - 1; }

static inline void ch_small_set_count(ch_local *t, size_t c, int n) { __atomic_store_n(&t->count[c], n, __ATOMIC_RELAXED); }

/* Puts block b at the head of this thread's list of class c. */
static inline void ch_small_push(ch_local *t, size_t c, ch_free_block *b) {
    if (!t->head[c])
        t->tail[c] = b;
    b->next = t->head[c];
    t->head[c] = b;
    ch_small_set_count(t, c, t->count[c] + 1);
}

/* ch_small_alloc / ch_small_free for the thread whose struct is t. */
static inline void *ch_small_alloc_at(ch_local *t, size_t nbytes) {
    if (nbytes == 0 || nbytes > CH_SMALL_BLOCK_MAX)
        return malloc(nbytes ? nbytes : 1);
    size_t c = ch_small_class(nbytes);
    ch_free_block *b = t->head[c];
    if (!b || t->epoch != __atomic_load_n(&ch_small_epoch, __ATOMIC_RELAXED))
        return ch_small_alloc_slow(t, c);
    t->head[c] = b->next;
    ch_small_set_count(t, c, t->count[c] - 1);
    return b;
}

#define CH_SMALL_LOCAL_MAX 256     /* blocks a thread keeps per class */

static inline void ch_small_free_at(ch_local *t, void *p, size_t nbytes) {
    if (!p)
        return;
    if (nbytes == 0 || nbytes > CH_SMALL_BLOCK_MAX) {
        free(p);
        return;
    }
    size_t c = ch_small_class(nbytes);
    ch_free_block *b = p;
    if (t->count[c] >= CH_SMALL_LOCAL_MAX || t->epoch != __atomic_load_n(&ch_small_epoch, __ATOMIC_RELAXED)) {
        ch_small_free_slow(t, b, c);
        return;
    }
    ch_small_push(t, c, b);
}

/* ---- live counters (counters.c) ------------------------------------------ */
CH_INTERNAL ch_counters *ch_counters_attach(ch_local *t);
/* Raises the CPU peak to the sum of the slots when that is higher. */
CH_INTERNAL void ch_counters_note_growth(void);
CH_INTERNAL int64_t ch_cpu_live_bytes(void);
CH_INTERNAL int64_t ch_cpu_peak_bytes(void);
CH_INTERNAL void ch_cpu_reset_peak_bytes(void);

static inline ch_counters *ch_counters_of(ch_local *t) {
    ch_counters *c = t->counters;
    return c ? c : ch_counters_attach(t);
}

static inline void ch_counter_add(ch_counters *c, _Atomic int64_t *v, int64_t d) {
    if (__builtin_expect(c->shared, 0))
        atomic_fetch_add_explicit(v, d, memory_order_relaxed);
    else
        atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + d, memory_order_relaxed);
}

static inline void ch_count_tensors(ch_local *t, int64_t d) {
    ch_counters *c = ch_counters_of(t);
    ch_counter_add(c, &c->tensors, d);
}

/* Live CPU bytes up or down by d (the peak follows growth). */
static inline void ch_count_cpu_bytes(ch_local *t, int64_t d) {
    ch_counters *c = ch_counters_of(t);
    ch_counter_add(c, &c->cpu_bytes, d);
    if (d > 0)
        ch_counters_note_growth();
}

/* ---- storages (storage.c) and tensors (tensor.c) ------------------------- */
CH_INTERNAL ch_storage *ch_storage_new_at(ch_local *l, size_t nbytes, int device);
CH_INTERNAL void ch_storage_release_at(ch_local *l, ch_storage *s);
/* A header block's storage (CH_OWNS_HEADER) loses `units` of its count:
 * 2 per user, 1 for the header's life (storage.c). */
CH_INTERNAL void ch_header_block_drop(ch_local *l, ch_storage *s, int units);

#endif

/*
 * storage.c -- refcounted storages, live-byte accounting and the CPU
 * allocator.
 *
 * Large blocks are cached instead of freed: glibc hands big blocks back to
 * the kernel with munmap and every reuse then pays page faults (PyTorch's
 * per-step LSTM spends most of its time there, see PERFORMANCE.md).  Blocks
 * of at least CACHE_MIN bytes are rounded up to a size class and kept in
 * per-class free lists up to a total of `cache_limit` bytes.  CACHE_MIN is
 * 16 KiB: medium blocks from the heap fault too once glibc trims its top
 * (chainlua's per-step LSTM: ~1,300 page faults per update with 64 KiB).
 *
 * Small blocks (below SMALL_MAX) come from plain malloc: its per-thread
 * cache serves them in a few dozen instructions, where posix_memalign
 * takes the slow path (hundreds of instructions and fragments that later
 * cost malloc_consolidate).  Such blocks are 16-byte aligned, which the
 * kernels accept (they never assume more: views start anywhere).  Medium
 * blocks keep the 64-byte alignment for vector loads.
 *
 * A miss of a block up to CH_CARVE_MAX bytes is carved out of a chunk on
 * transparent huge pages (chunks.c), so its first touch costs one page
 * fault per 2 MiB instead of one per 4 KiB.  Such blocks never go back to
 * glibc: they stay on the free lists past the cache's limit, and their
 * chunks are unmapped once every block of a chunk is cached (at
 * ch_cache_free_all, or when the cache has grown past its limit).
 *
 * Larger blocks, of HUGE_MIN bytes or more, start on a 2 MiB boundary and are marked
 * for transparent huge pages.  Touching fresh memory costs a page fault per
 * 4 KiB, and on a virtual machine every fault exits to the hypervisor: on
 * the dev VM a new 4 MiB matmul result took 25 ms of faults against 9 ms of
 * arithmetic (issue 19); with huge pages it is one fault per 2 MiB.  A huge
 * page becomes resident as a whole when touched, so only the 2 MiB ranges
 * that the request fills are marked.
 */
#include "local.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>

#define MAX_DEVICES 17            /* slot 0 is the CPU, then CUDA 0..15 */
#define ALIGN 64
#define SMALL_MAX 4096
#define CACHE_MIN (16 * 1024)
#define STEPS 8                   /* size classes per power of two */
#define NCLASSES (64 * STEPS)
#define HUGE_MIN (2 * 1024 * 1024)
#define PAGE 4096

/* The CPU's live bytes and live tensors are per-thread counters
 * (counters.c); the devices' bytes are counted here. */
static _Atomic int64_t live_bytes[MAX_DEVICES];
static _Atomic int64_t peak_bytes[MAX_DEVICES];
static _Atomic int64_t fresh_bytes;   /* cacheable CPU blocks taken from the system */

static int slot(int device) {
    int s = device + 1;
    return s < 0 || s >= MAX_DEVICES ? 0 : s;
}

static void account(ch_local *l, int device, int64_t delta) {
    int s = slot(device);
    if (s == 0) {
        ch_count_cpu_bytes(l, delta);
        return;
    }
    int64_t now = atomic_fetch_add(&live_bytes[s], delta) + delta;
    int64_t peak = atomic_load(&peak_bytes[s]);
    while (now > peak && !atomic_compare_exchange_weak(&peak_bytes[s], &peak, now)) {
    }
}

/* (an id out of range reads the CPU's, as slot() maps it) */
int64_t ch_live_bytes(int device) {
    int s = slot(device);
    return s == 0 ? ch_cpu_live_bytes() : atomic_load(&live_bytes[s]);
}
int64_t ch_peak_bytes(int device) {
    int s = slot(device);
    return s == 0 ? ch_cpu_peak_bytes() : atomic_load(&peak_bytes[s]);
}
void ch_reset_peak_bytes(int device) {
    if (slot(device) == 0)
        ch_cpu_reset_peak_bytes();
    else
        atomic_store(&peak_bytes[slot(device)], atomic_load(&live_bytes[slot(device)]));
}
int64_t ch_fresh_bytes(void) { return atomic_load(&fresh_bytes); }

/* ---- CPU block cache --------------------------------------------------- */
typedef struct block {
    struct block *next;
} block;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static block *free_lists[NCLASSES];
static size_t cached_bytes;
static size_t cache_limit = (size_t)1 << 30;

/* Size classes: STEPS per power of two, each at most 1/STEPS larger than
 * asked.  (A carved block's slack is resident: it shares its huge pages
 * with the next block.  With 4 classes per power of two it was up to 25 %,
 * and the MNIST example peaked 15 MiB higher.) */
static int size_class(size_t n, size_t *rounded) {
    int p = 63 - __builtin_clzll((unsigned long long)(n - 1) | 1);  /* 2^p < n <= 2^(p+1) */
    size_t base = (size_t)1 << p;
    size_t step = base / STEPS;
    size_t k = (n - base + step - 1) / step;                   /* 1..STEPS */
    if (k == 0) k = 1;
    *rounded = base + k * step;
    return p * STEPS + (int)(k - 1);
}

/* The bytes of size class c (the inverse of size_class). */
static size_t class_bytes(int c) {
    size_t base = (size_t)1 << (c / STEPS);
    return base + (size_t)(c % STEPS + 1) * (base / STEPS);
}

/* Whether the blocks of class c are carved from chunks (classes from
 * 2^24 bytes up never are: CH_CARVE_MAX is 16 MiB, and class_bytes of the
 * top classes would overflow). */
static bool carved_class(int c) { return c / STEPS < 24 && ch_chunk_carves(class_bytes(c)); }

/* Unmaps every chunk whose blocks are all in the cache, and takes those
 * blocks off the free lists (under cache_lock).  With `trim`, the cached
 * blocks of the chunks that stay (a live block holds each) give their
 * pages back too, all but the one holding the list link. */
static void release_idle_chunks(bool trim) {
    ch_chunks_count_begin();
    for (int c = 0; c < NCLASSES; c++)
        if (carved_class(c))
            for (block *b = free_lists[c]; b; b = b->next) ch_chunks_count_cached(b);
    for (int c = 0; c < NCLASSES; c++) {
        if (!carved_class(c))
            continue;
        block **link = &free_lists[c];
        while (*link) {
            if (ch_chunk_idle(*link)) {
                *link = (*link)->next;
                cached_bytes -= class_bytes(c);
                continue;
            }
            if (trim) {
                uintptr_t lo = ((uintptr_t)*link + sizeof(block) + PAGE - 1) & ~(uintptr_t)(PAGE - 1);
                uintptr_t hi = ((uintptr_t)*link + class_bytes(c)) & ~(uintptr_t)(PAGE - 1);
                if (hi > lo) madvise((void *)lo, hi - lo, MADV_DONTNEED);
            }
            link = &(*link)->next;
        }
    }
    ch_chunks_unmap_idle();
}

/* Carved blocks cannot go back to glibc one by one: past the cache's
 * limit, idle chunks are unmapped, and if that leaves the cache above it,
 * the next try waits until it has grown by an eighth of the limit. */
static size_t next_release_at;

void *ch_cpu_alloc(size_t nbytes) {
    if (nbytes == 0)
        nbytes = ALIGN;
    if (nbytes < SMALL_MAX)
        return malloc(nbytes);
    size_t want = nbytes;
    if (nbytes >= CACHE_MIN) {
        size_t rounded;
        int c = size_class(nbytes, &rounded);
        if (c < NCLASSES) {
            bool carve = ch_chunk_carves(rounded);
            pthread_mutex_lock(&cache_lock);
            block *b = free_lists[c];
            if (b) {
                free_lists[c] = b->next;
                cached_bytes -= rounded;
            } else if (carve) {
                /* a miss served from a chunk: fresh pages all the same */
                b = ch_chunk_carve(rounded);
                if (b) atomic_fetch_add(&fresh_bytes, (int64_t)rounded);
            }
            pthread_mutex_unlock(&cache_lock);
            if (b || carve)
                return b;   /* (NULL: out of memory) */
            nbytes = rounded;
        }
        /* A miss: these pages are new to the process and fault when first
         * touched.  The Lua side paces its collector on this count, since
         * collecting garbage refills the cache (tensor/core.lua). */
        atomic_fetch_add(&fresh_bytes, (int64_t)nbytes);
    }
    void *p = NULL;
    size_t padded = (nbytes + ALIGN - 1) / ALIGN * ALIGN;
#ifdef MADV_HUGEPAGE
    if (want >= HUGE_MIN) {
        if (posix_memalign(&p, HUGE_MIN, padded) != 0)
            return NULL;
        /* Advice only (without THP the block works the same), and only for
         * the whole 2 MiB ranges of the bytes asked for: the size class's
         * slack after them, never touched, stays off the resident set. */
        madvise(p, want / HUGE_MIN * HUGE_MIN, MADV_HUGEPAGE);
        return p;
    }
#endif
    if (posix_memalign(&p, ALIGN, padded) != 0)
        return NULL;
    return p;
}

void ch_cpu_free(void *p, size_t nbytes) {
    if (!p)
        return;
    if (nbytes == 0)
        nbytes = ALIGN;       /* as ch_cpu_alloc rounded it */
    if (nbytes >= CACHE_MIN) {
        size_t rounded;
        int c = size_class(nbytes, &rounded);
        if (c < NCLASSES) {
            bool carved = ch_chunk_carves(rounded);
            pthread_mutex_lock(&cache_lock);
            if (carved || cached_bytes + rounded <= cache_limit) {
                block *b = p;
                b->next = free_lists[c];
                free_lists[c] = b;
                cached_bytes += rounded;
                p = NULL;
                if (carved && cached_bytes > cache_limit && cached_bytes >= next_release_at) {
                    release_idle_chunks(false);
                    next_release_at = cached_bytes + cache_limit / 8;
                }
            }
            pthread_mutex_unlock(&cache_lock);
            if (!p)
                return;
        }
    }
    free(p);
}

static void cpu_cache_free_all(void) {
    pthread_mutex_lock(&cache_lock);
    for (int c = 0; c < NCLASSES; c++) {
        if (carved_class(c))
            continue;   /* carved blocks: their chunks, below */
        block *b = free_lists[c];
        while (b) {
            block *next = b->next;
            free(b);
            cached_bytes -= class_bytes(c);
            b = next;
        }
        free_lists[c] = NULL;
    }
    release_idle_chunks(true);
    next_release_at = 0;
    pthread_mutex_unlock(&cache_lock);
}

/* Hooks the CUDA backend fills in when it loads. */
void *(*ch_device_alloc_hook)(int device, size_t nbytes) = NULL;
void (*ch_device_free_hook)(int device, void *p, size_t nbytes) = NULL;
void (*ch_device_cache_free_hook)(int device) = NULL;
int64_t (*ch_device_cache_bytes_hook)(int device) = NULL;

void ch_cache_free_all(int device) {
    if (device == CH_CPU) {
        cpu_cache_free_all();
        ch_small_blocks_release();
    } else if (ch_device_cache_free_hook)
        ch_device_cache_free_hook(device);
}

int64_t ch_cache_bytes(int device) {
    if (device != CH_CPU)
        return ch_device_cache_bytes_hook ? ch_device_cache_bytes_hook(device) : 0;
    pthread_mutex_lock(&cache_lock);
    int64_t n = (int64_t)cached_bytes;
    pthread_mutex_unlock(&cache_lock);
    n += (int64_t)ch_small_blocks_cached();
    return n;
}

/* ---- storages ---------------------------------------------------------- */
/* s->owns: CH_OWNS_BORROWED (ch_wrap_buffer), CH_OWNS_BLOCK (a separate
 * block), CH_OWNS_INLINE (data right after the struct: small CPU storages,
 * one block from small_blocks.c when it fits there) or CH_OWNS_HEADER (the
 * storage and its data inside their first tensor's block, tensor.c). */

ch_storage *ch_storage_new_at(ch_local *l, size_t nbytes, int device) {
    if (device == CH_CPU && nbytes < SMALL_MAX) {
        /* sizeof(ch_storage) is a multiple of 16, so the data keeps
         * malloc's 16-byte alignment */
        _Static_assert(sizeof(ch_storage) % 16 == 0, "inline data alignment");
        ch_storage *s = ch_small_alloc_at(l, sizeof *s + (nbytes ? nbytes : 1));
        if (!s)
            return NULL;
        s->data = s + 1;
        s->nbytes = nbytes;
        s->device = device;
        s->owns = CH_OWNS_INLINE;
        s->refcount = 1;
        account(l, device, (int64_t)nbytes);
        return s;
    }
    ch_storage *s = ch_small_alloc_at(l, sizeof *s);
    if (!s)
        return NULL;
    if (device == CH_CPU)
        s->data = ch_cpu_alloc(nbytes);
    else
        s->data = ch_device_alloc_hook ? ch_device_alloc_hook(device, nbytes) : NULL;
    if (!s->data) {
        ch_small_free_at(l, s, sizeof *s);
        return NULL;
    }
    s->nbytes = nbytes;
    s->device = device;
    s->owns = CH_OWNS_BLOCK;
    s->refcount = 1;
    account(l, device, (int64_t)nbytes);
    return s;
}

ch_storage *ch_storage_new(size_t nbytes, int device) { return ch_storage_new_at(ch_here(), nbytes, device); }

void ch_storage_retain(ch_storage *s) {
    if (s)
        __atomic_add_fetch(&s->refcount, s->owns == CH_OWNS_HEADER ? 2 : 1, __ATOMIC_RELAXED);
}

void ch_storage_release_at(ch_local *l, ch_storage *s) {
    if (!s)
        return;
    if (s->owns == CH_OWNS_HEADER) {
        ch_header_block_drop(l, s, 2);
        return;
    }
    /* The last reference needs no atomic decrement: no other thread holds
     * one to add to it (the acquire load pairs with their release). */
    if (__atomic_load_n(&s->refcount, __ATOMIC_ACQUIRE) != 1 &&
        __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (s->owns == CH_OWNS_INLINE) {
        account(l, s->device, -(int64_t)s->nbytes);
    } else if (s->owns == CH_OWNS_BLOCK) {
        if (s->device == CH_CPU)
            ch_cpu_free(s->data, s->nbytes);
        else if (ch_device_free_hook)
            ch_device_free_hook(s->device, s->data, s->nbytes);
        account(l, s->device, -(int64_t)s->nbytes);
    }
    ch_small_free_at(l, s, s->owns == CH_OWNS_INLINE ? sizeof *s + (s->nbytes ? s->nbytes : 1) : sizeof *s);
}

void ch_storage_release(ch_storage *s) { ch_storage_release_at(ch_here(), s); }

/* A CH_OWNS_HEADER storage's count is 2 per user (its tensor while it holds
 * the data, and every view) plus 1 while its tensor's header lives: the
 * bytes stop counting when the users are gone, and the block is freed when
 * the header is gone too.  The header usually goes with the last user (3
 * at once, taken without an atomic by ch_tensor_release when nobody else
 * holds a count; this is the path with views or a freed tensor).  `held` keeps the
 * bytes from being taken off twice (a view made of a freed empty tensor
 * would bring the users back from 0). */
void ch_header_block_drop(ch_local *l, ch_storage *s, int units) {
    int v = __atomic_sub_fetch(&s->refcount, units, __ATOMIC_ACQ_REL);
    if ((v >> 1) == 0 && __atomic_exchange_n(&s->held, 0, __ATOMIC_ACQ_REL))
        ch_count_cpu_bytes(l, -(int64_t)s->nbytes);
    if (v == 0)
        ch_small_free_at(l, (ch_tensor *)s - 1, sizeof(ch_tensor) + sizeof *s + s->nbytes);
}

/*
 * storage.c -- refcounted storages, live-byte accounting and the CPU
 * allocator.
 *
 * Large blocks are cached instead of freed: glibc hands big blocks back to
 * the kernel with munmap and every reuse then pays page faults (PyTorch's
 * per-step LSTM spends most of its time there, see PERFORMANCE.md).  Blocks
 * of at least CACHE_MIN bytes are rounded up to a size class and kept in
 * per-class free lists up to a total of `cache_limit` bytes.
 *
 * The cache keeps only what is asked for again: ch_cache_trim (the Lua
 * layer calls it after each full garbage collection) unmaps the blocks that
 * have sat unused through TRIM_AGE trims.  A training loop asks for the
 * same sizes every step, so its blocks stay; blocks of a phase that is over
 * (the training step's gradients while an evaluation runs, a one-off
 * decode) go back to the OS instead of sitting in the cache for the rest of
 * the run.  One trim of age is not enough: the LSTM LM runs several
 * collections per update and needs some sizes only in one part of it
 * (page faults over 15 updates: 171k at age 1, 63k at age 2, 52k with no
 * trimming).
 *
 * Small blocks (below SMALL_MAX) come from plain malloc: its per-thread
 * cache serves them in a few dozen instructions, where posix_memalign
 * takes the slow path (hundreds of instructions and fragments that later
 * cost malloc_consolidate).  Such blocks are 16-byte aligned, which the
 * kernels accept (they never assume more: views start anywhere).  Medium
 * blocks keep the 64-byte alignment for vector loads.
 */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>

#define MAX_DEVICES 17            /* slot 0 is the CPU, then CUDA 0..15 */
#define ALIGN 64
#define SMALL_MAX 4096
#define CACHE_MIN (64 * 1024)
#define NCLASSES 64 * 4
#define TRIM_AGE 2u               /* trims a cached block survives unused */

static _Atomic int64_t live_bytes[MAX_DEVICES];
static _Atomic int64_t peak_bytes[MAX_DEVICES];
static _Atomic int64_t live_tensors;

static int slot(int device) {
    int s = device + 1;
    return s < 0 || s >= MAX_DEVICES ? 0 : s;
}

static void account(int device, int64_t delta) {
    int s = slot(device);
    int64_t now = atomic_fetch_add(&live_bytes[s], delta) + delta;
    int64_t peak = atomic_load(&peak_bytes[s]);
    while (now > peak && !atomic_compare_exchange_weak(&peak_bytes[s], &peak, now)) {
    }
}

int64_t ch_live_bytes(int device) { return atomic_load(&live_bytes[slot(device)]); }
int64_t ch_peak_bytes(int device) { return atomic_load(&peak_bytes[slot(device)]); }
void ch_reset_peak_bytes(int device) {
    atomic_store(&peak_bytes[slot(device)], atomic_load(&live_bytes[slot(device)]));
}
int64_t ch_live_tensors(void) { return atomic_load(&live_tensors); }
void ch_count_tensor(int delta);
void ch_count_tensor(int delta) { atomic_fetch_add(&live_tensors, delta); }

/* ---- CPU block cache --------------------------------------------------- */
typedef struct block {
    struct block *next;
    uint32_t trim_mark;   /* trims_done when the block entered the cache */
} block;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static block *free_lists[NCLASSES];
static uint32_t trims_done;
static size_t cached_bytes;
static size_t cache_limit = (size_t)1 << 30;

/* Size classes: 4 per power of two (each at most 25% larger than asked). */
static int size_class(size_t n, size_t *rounded) {
    int p = 63 - __builtin_clzll((unsigned long long)(n - 1) | 1);  /* 2^p < n <= 2^(p+1) */
    size_t base = (size_t)1 << p;
    size_t quarter = base / 4;
    size_t k = (n - base + quarter - 1) / quarter;             /* 1..4 */
    if (k == 0) k = 1;
    *rounded = base + k * quarter;
    return p * 4 + (int)(k - 1);
}

/* The block size of class c (the inverse of size_class). */
static size_t class_bytes(int c) {
    size_t base = (size_t)1 << (c / 4);
    return base + (size_t)(c % 4 + 1) * (base / 4);
}

/* Large blocks are mapped from the kernel one by one and unmapped when the
 * cache lets them go, so what the cache gives back really leaves the
 * process.  From glibc's heap they would not: its mmap threshold rises to
 * the size of the largest block freed (up to 32 MiB), after which blocks
 * of that size are carved from the brk heap, and a heap shrinks only from
 * the top (the MNIST example kept ~50 MiB of free heap that way). */
static void *map_block(size_t nbytes) {
    void *p = mmap(NULL, nbytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void *ch_cpu_alloc(size_t nbytes) {
    if (nbytes == 0)
        nbytes = ALIGN;
    if (nbytes < SMALL_MAX)
        return malloc(nbytes);
    if (nbytes >= CACHE_MIN) {
        size_t rounded;
        int c = size_class(nbytes, &rounded);
        pthread_mutex_lock(&cache_lock);
        block *b = free_lists[c];
        if (b) {
            free_lists[c] = b->next;
            cached_bytes -= rounded;
        }
        pthread_mutex_unlock(&cache_lock);
        return b ? (void *)b : map_block(rounded);
    }
    void *p = NULL;
    size_t padded = (nbytes + ALIGN - 1) / ALIGN * ALIGN;
    if (posix_memalign(&p, ALIGN, padded) != 0)
        return NULL;
    return p;
}

void ch_cpu_free(void *p, size_t nbytes) {
    if (!p)
        return;
    if (nbytes == 0)
        nbytes = ALIGN;       /* as ch_cpu_alloc rounded it */
    if (nbytes < CACHE_MIN) {
        free(p);
        return;
    }
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    pthread_mutex_lock(&cache_lock);
    int keep = cached_bytes + rounded <= cache_limit;
    if (keep) {
        block *b = p;
        b->next = free_lists[c];
        b->trim_mark = trims_done;
        free_lists[c] = b;
        cached_bytes += rounded;
    }
    pthread_mutex_unlock(&cache_lock);
    if (!keep)
        munmap(p, rounded);
}

static void cpu_cache_free_all(void) {
    pthread_mutex_lock(&cache_lock);
    for (int c = 0; c < NCLASSES; c++) {
        block *b = free_lists[c];
        while (b) {
            block *next = b->next;
            munmap(b, class_bytes(c));
            b = next;
        }
        free_lists[c] = NULL;
    }
    cached_bytes = 0;
    pthread_mutex_unlock(&cache_lock);
}

/* Unmaps the blocks that have waited in the cache through TRIM_AGE trims. */
static void cpu_cache_trim(void) {
    block *unwanted[NCLASSES] = {0};
    pthread_mutex_lock(&cache_lock);
    for (int c = 0; c < NCLASSES; c++) {
        /* the list runs from the newest block to the oldest */
        block **link = &free_lists[c];
        while (*link && trims_done - (*link)->trim_mark < TRIM_AGE)
            link = &(*link)->next;
        unwanted[c] = *link;
        *link = NULL;
        for (block *b = unwanted[c]; b; b = b->next)
            cached_bytes -= class_bytes(c);
    }
    trims_done++;
    pthread_mutex_unlock(&cache_lock);
    for (int c = 0; c < NCLASSES; c++) {   /* unmapped outside the lock */
        block *b = unwanted[c];
        while (b) {
            block *next = b->next;
            munmap(b, class_bytes(c));
            b = next;
        }
    }
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

void ch_cache_trim(int device) {
    if (device == CH_CPU)
        cpu_cache_trim();
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
/* owns: 0 borrowed memory (ch_wrap_buffer), 1 a separate block, 2 data
 * placed right after the struct (small CPU tensors: one block, from
 * small_blocks.c when it fits there) */
#define OWNS_INLINE 2

ch_storage *ch_storage_new(size_t nbytes, int device) {
    if (device == CH_CPU && nbytes < SMALL_MAX) {
        /* sizeof(ch_storage) is a multiple of 16, so the data keeps
         * malloc's 16-byte alignment */
        _Static_assert(sizeof(ch_storage) % 16 == 0, "inline data alignment");
        ch_storage *s = ch_small_alloc(sizeof *s + (nbytes ? nbytes : 1));
        if (!s)
            return NULL;
        s->data = s + 1;
        s->nbytes = nbytes;
        s->device = device;
        s->owns = OWNS_INLINE;
        s->refcount = 1;
        account(device, (int64_t)nbytes);
        return s;
    }
    ch_storage *s = ch_small_alloc(sizeof *s);
    if (!s)
        return NULL;
    if (device == CH_CPU)
        s->data = ch_cpu_alloc(nbytes);
    else
        s->data = ch_device_alloc_hook ? ch_device_alloc_hook(device, nbytes) : NULL;
    if (!s->data) {
        ch_small_free(s, sizeof *s);
        return NULL;
    }
    s->nbytes = nbytes;
    s->device = device;
    s->owns = 1;
    s->refcount = 1;
    account(device, (int64_t)nbytes);
    return s;
}

void ch_storage_retain(ch_storage *s) {
    if (s)
        __atomic_add_fetch(&s->refcount, 1, __ATOMIC_RELAXED);
}

void ch_storage_release(ch_storage *s) {
    if (!s || __atomic_sub_fetch(&s->refcount, 1, __ATOMIC_ACQ_REL) != 0)
        return;
    if (s->owns == OWNS_INLINE) {
        account(s->device, -(int64_t)s->nbytes);
    } else if (s->owns) {
        if (s->device == CH_CPU)
            ch_cpu_free(s->data, s->nbytes);
        else if (ch_device_free_hook)
            ch_device_free_hook(s->device, s->data, s->nbytes);
        account(s->device, -(int64_t)s->nbytes);
    }
    ch_small_free(s, s->owns == OWNS_INLINE ? sizeof *s + (s->nbytes ? s->nbytes : 1) : sizeof *s);
}

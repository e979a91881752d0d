/*
 * allocator.c -- the caching device allocator, one pool per device.
 *
 * cudaMalloc and cudaFree are slow (cudaFree also synchronises the whole
 * device), so freed blocks are kept in size-class bins and handed out again
 * without calling CUDA.  Sizes are rounded up to 512 bytes and then to one
 * of four classes per power of two (at most 25% slack); a request is served
 * only from its own class, so a bin holds interchangeable blocks.
 *
 * Work runs on the current stream of its device (stream.c), so a block
 * remembers the stream that was current when it was freed and is handed
 * out again only while that stream is current: later work on the same
 * stream runs after the work that used it, and a block freed on the host
 * can be reused at once.  (As in CuPy's pool, a tensor used on a
 * non-blocking stream and freed while another stream is current must be
 * freed only after that stream has been synchronized.)  A destroyed
 * stream's blocks move to the default stream's bins.
 *
 * Out of memory: the pool returns its cached blocks to the driver and tries
 * once more; if that also fails the request fails with the sizes involved.
 */
#include "backend.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define MIN_BLOCK 512
#define NCLASSES (64 * 4)

typedef struct node {
    void *ptr;
    const void *stream;      /* the ch_cuda_stream current at free (NULL: default) */
    struct node *next;
} node;

typedef struct pool {
    pthread_mutex_t lock;
    node *bins[NCLASSES];
    node *spare;             /* recycled list nodes: no malloc on the hot path */
    size_t cached;           /* bytes sitting in bins */
} pool;

static pool pools[CU_MAX_DEVICES];

void cu_alloc_init(void) {
    static int done;
    if (done)
        return;
    for (int d = 0; d < CU_MAX_DEVICES; d++)
        pthread_mutex_init(&pools[d].lock, NULL);
    done = 1;
}

/* Class index and rounded size of a request of n bytes. */
static int size_class(size_t n, size_t *rounded) {
    if (n < MIN_BLOCK)
        n = MIN_BLOCK;
    int p = 63 - __builtin_clzll((unsigned long long)(n - 1)); /* 2^p < n <= 2^(p+1) */
    size_t base = (size_t)1 << p;
    size_t quarter = base / 4;
    size_t k = (n - base + quarter - 1) / quarter; /* 1..4 */
    if (k == 0)
        k = 1;
    *rounded = base + k * quarter;
    return p * 4 + (int)(k - 1);
}

static void release_all(int device, pool *pl) {
    for (int c = 0; c < NCLASSES; c++) {
        node *b = pl->bins[c];
        while (b) {
            node *next = b->next;
            cudaFree(b->ptr);
            b->next = pl->spare;
            pl->spare = b;
            b = next;
        }
        pl->bins[c] = NULL;
    }
    pl->cached = 0;
    (void)device;
}

void *cu_alloc(int device, size_t nbytes) {
    if (device < 0 || device >= cu_device_count) {
        cu_fail(CH_ERR_DEVICE, "alloc: no device cuda:%d (%d GPU%s available)", device, cu_device_count,
                cu_device_count == 1 ? "" : "s");
        return NULL;
    }
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    pool *pl = &pools[device];
    const void *stream = cu_current_stream(device);
    pthread_mutex_lock(&pl->lock);
    node **link = &pl->bins[c];
    while (*link && (*link)->stream != stream)
        link = &(*link)->next;
    node *b = *link;
    if (b) {
        void *p = b->ptr;
        *link = b->next;
        pl->cached -= rounded;
        b->next = pl->spare;
        pl->spare = b;
        pthread_mutex_unlock(&pl->lock);
        return p;
    }
    pthread_mutex_unlock(&pl->lock);

    if (cu_use(device, "alloc") != CH_OK)
        return NULL;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, rounded);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        pthread_mutex_lock(&pl->lock);
        size_t had = pl->cached;
        release_all(device, pl);
        pthread_mutex_unlock(&pl->lock);
        e = cudaMalloc(&p, rounded);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            size_t free_b = 0, total_b = 0;
            cudaMemGetInfo(&free_b, &total_b);
            cu_fail(CH_ERR_MEMORY,
                    "cuda:%d: out of memory allocating %zu bytes (%zu rounded); %zu of %zu bytes free after "
                    "returning %zu cached bytes to the driver",
                    device, nbytes, rounded, free_b, total_b, had);
            return NULL;
        }
    } else if (e != cudaSuccess) {
        cu_check(e, "alloc", "cudaMalloc");
        return NULL;
    }
    return p;
}

void cu_free(int device, void *p, size_t nbytes) {
    if (!p || device < 0 || device >= cu_device_count)
        return;
    size_t rounded;
    int c = size_class(nbytes, &rounded);
    pool *pl = &pools[device];
    pthread_mutex_lock(&pl->lock);
    node *b = pl->spare;
    if (b)
        pl->spare = b->next;
    else
        b = malloc(sizeof *b);
    if (!b) {
        /* no memory for bookkeeping: give the block back instead */
        pthread_mutex_unlock(&pl->lock);
        if (cudaSetDevice(device) == cudaSuccess)
            cudaFree(p);
        return;
    }
    b->ptr = p;
    b->stream = cu_current_stream(device);
    b->next = pl->bins[c];
    pl->bins[c] = b;
    pl->cached += rounded;
    pthread_mutex_unlock(&pl->lock);
}

void cu_cache_free_all(int device) {
    if (device < 0 || device >= cu_device_count)
        return;
    if (cudaSetDevice(device) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    pool *pl = &pools[device];
    pthread_mutex_lock(&pl->lock);
    release_all(device, pl);
    pthread_mutex_unlock(&pl->lock);
}

int64_t cu_cache_bytes(int device) {
    if (device < 0 || device >= cu_device_count)
        return 0;
    pool *pl = &pools[device];
    pthread_mutex_lock(&pl->lock);
    int64_t n = (int64_t)pl->cached;
    pthread_mutex_unlock(&pl->lock);
    return n;
}

void cu_alloc_forget_stream(int device, const void *s) {
    if (device < 0 || device >= CU_MAX_DEVICES)
        return;
    pool *pl = &pools[device];
    pthread_mutex_lock(&pl->lock);
    for (int c = 0; c < NCLASSES; c++)
        for (node *b = pl->bins[c]; b; b = b->next)
            if (b->stream == s)
                b->stream = NULL;
    pthread_mutex_unlock(&pl->lock);
}

#ifdef CU_EMULATE
/* tests/cuda: the emulated device's scratch is host memory. */
void *cu_scratch(int device, size_t nbytes, const char *fn) {
    void *p = malloc(nbytes ? nbytes : 1);
    if (!p)
        cu_fail(CH_ERR_MEMORY, "%s: out of memory for %zu bytes of scratch on cuda:%d", fn, nbytes, device);
    return p;
}

void cu_scratch_release(int device, void *p, size_t nbytes) {
    (void)device, (void)nbytes;
    free(p);
}
#else
/* cu_alloc has already recorded why when this returns NULL. */
void *cu_scratch(int device, size_t nbytes, const char *fn) {
    (void)fn;
    return cu_alloc(device, nbytes);
}

void cu_scratch_release(int device, void *p, size_t nbytes) { cu_free(device, p, nbytes); }
#endif

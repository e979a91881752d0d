/*
 * pinned.c -- host <-> device copies staged through a small cache of pinned
 * (page-locked, cudaHostAlloc) host buffers, on the current stream.
 *
 * A copy from pageable memory makes the driver stage it through its own
 * pinned buffers, synchronously.  Here the backend stages it itself: an
 * upload copies the host data into a pinned buffer and queues the DMA on
 * the current stream, so it returns as soon as the host data may be reused
 * while the transfer runs on; a download queues the DMA into a pinned
 * buffer and copies out when it has arrived, so it returns once the data is
 * on the host.  Copies longer than one buffer (CU_PIN_CHUNK) go in chunks
 * through two buffers, one filled or drained on the host while the other is
 * in flight.  Each buffer carries an event recorded after its last DMA: it
 * is written again only after that event.
 *
 * Up to CU_PIN_SLOTS buffers per device are kept between copies (sizes and
 * choice: plan_pinned.c); cu_pinned_free_all hands the idle ones back, as
 * the memory pool's free_all_blocks does.  When every slot is held by
 * other threads' copies, a copy goes straight from pageable memory on the
 * current stream and waits for it.
 *
 * Under CU_EMULATE (tests/cuda) "device memory" is host memory: the DMA is
 * a memcpy, buffers are malloc'd and events are flags, so the chunking and
 * the reuse of buffers run on the host.
 */
#include "backend.h"
#include "plan_pinned.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct pin_slot {
    char *ptr;
    size_t size;
    int busy;        /* held by a copy in progress */
    int pending;     /* a DMA from or into it may still run (ev recorded) */
    cudaEvent_t ev;
} pin_slot;

static pin_slot slots[CU_MAX_DEVICES][CU_PIN_SLOTS];
static pthread_mutex_t pin_lock = PTHREAD_MUTEX_INITIALIZER;

/* Waits until the slot's last DMA has finished. */
static ch_status settle(pin_slot *s, const char *fn) {
    if (!s->pending)
        return CH_OK;
    s->pending = 0;
#ifdef CU_EMULATE
    (void)fn;
    return CH_OK;
#else
    return cu_check(cudaEventSynchronize(s->ev), fn, "cudaEventSynchronize (pinned buffer)");
#endif
}

static void release_buffer(pin_slot *s) {
    if (!s->ptr)
        return;
#ifdef CU_EMULATE
    free(s->ptr);
#else
    if (cudaFreeHost(s->ptr) != cudaSuccess)
        (void)cudaGetLastError();
#endif
    s->ptr = NULL;
    s->size = 0;
}

static ch_status allocate_buffer(int device, pin_slot *s, size_t size, const char *fn) {
#ifdef CU_EMULATE
    (void)device;
    s->ptr = malloc(size);
    if (!s->ptr)
        return cu_fail(CH_ERR_MEMORY, "%s: out of host memory for a %zu-byte staging buffer", fn, size);
#else
    if (!s->ev)
        CU_TRY(cu_check(cudaEventCreateWithFlags(&s->ev, cudaEventDisableTiming), fn, "cudaEventCreateWithFlags"));
    void *p = NULL;
    CU_TRY(cu_check(cudaHostAlloc(&p, size, cudaHostAllocPortable), fn, "cudaHostAlloc (pinned staging buffer)"));
    s->ptr = p;
    (void)device;
#endif
    s->size = size;
    return CH_OK;
}

/* Takes a slot of the current device with a buffer of at least `size`
 * bytes, marked busy; NULL when every slot is busy (*st CH_OK) or on
 * failure (*st says why). */
static pin_slot *acquire(int device, size_t size, const char *fn, ch_status *st) {
    *st = CH_OK;
    pin_slot *row = slots[device];
    size_t sizes[CU_PIN_SLOTS];
    int busy[CU_PIN_SLOTS];
    pthread_mutex_lock(&pin_lock);
    for (int i = 0; i < CU_PIN_SLOTS; i++)
        sizes[i] = row[i].ptr ? row[i].size : 0, busy[i] = row[i].busy;
    cu_pin_action action;
    int i = cu_pin_pick(sizes, busy, CU_PIN_SLOTS, size, &action);
    if (i >= 0)
        row[i].busy = 1;
    pthread_mutex_unlock(&pin_lock);
    if (i < 0)
        return NULL;
    pin_slot *s = &row[i];
    if (action != CU_PIN_REUSE) {
        if (action == CU_PIN_REPLACE) {
            *st = settle(s, fn);
            release_buffer(s);
        }
        if (*st == CH_OK)
            *st = allocate_buffer(device, s, size, fn);
        if (*st != CH_OK) {
            pthread_mutex_lock(&pin_lock);
            s->busy = 0;
            pthread_mutex_unlock(&pin_lock);
            return NULL;
        }
    }
    return s;
}

static void give_back(pin_slot **held, int n) {
    pthread_mutex_lock(&pin_lock);
    for (int i = 0; i < n; i++)
        if (held[i])
            held[i]->busy = 0;
    pthread_mutex_unlock(&pin_lock);
}

/* The DMA of one chunk on the current stream, then the slot's event. */
static ch_status dma(pin_slot *s, void *dst, const void *src, size_t len, int to_device, const char *fn) {
#ifdef CU_EMULATE
    memcpy(dst, src, len);
    (void)to_device, (void)fn;
#else
    cudaStream_t stream = (cudaStream_t)cu_stream();
    CU_TRY(cu_check(cudaMemcpyAsync(dst, src, len, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                    stream),
                    fn, to_device ? "cudaMemcpyAsync (host to device)" : "cudaMemcpyAsync (device to host)"));
    CU_TRY(cu_check(cudaEventRecord(s->ev, stream), fn, "cudaEventRecord (pinned buffer)"));
#endif
    s->pending = 1;
    return CH_OK;
}

/* Straight from or into pageable memory, waiting for the stream: when no
 * slot is free. */
static ch_status unstaged(void *dst, const void *src, size_t n, int to_device, const char *fn) {
#ifdef CU_EMULATE
    memcpy(dst, src, n);
    (void)to_device, (void)fn;
    return CH_OK;
#else
    cudaStream_t stream = (cudaStream_t)cu_stream();
    CU_TRY(cu_check(cudaMemcpyAsync(dst, src, n, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream),
                    fn, "cudaMemcpyAsync (pageable)"));
    return cu_check(cudaStreamSynchronize(stream), fn, "cudaStreamSynchronize");
#endif
}

/* The plan of a copy of n bytes and its buffers: p->nbuf slots, or none
 * (held[0] NULL) when there is nothing to copy or every slot is busy. */
static ch_status hold(cu_pin_plan *p, size_t n, pin_slot **held, const char *fn) {
    ch_status st = CH_OK;
    held[0] = held[1] = NULL;
    cu_pin_plan_init(p, n, CU_PIN_MIN, CU_PIN_CHUNK);
    for (int b = 0; b < p->nbuf && p->chunks > 0 && st == CH_OK; b++)
        held[b] = acquire(cu_current_device, p->buffer, fn, &st);
    if (st != CH_OK || !held[0] || (p->nbuf == 2 && !held[1])) {
        give_back(held, 2);
        held[0] = held[1] = NULL;
    }
    return st;
}

ch_status cu_upload(void *dev, const void *host, size_t n, const char *fn) {
    cu_pin_plan p;
    pin_slot *held[2];
    CU_TRY(hold(&p, n, held, fn));
    if (!held[0])
        return p.chunks ? unstaged(dev, host, n, 1, fn) : CH_OK;
    ch_status st = CH_OK;
    for (int64_t k = 0; k < p.chunks && st == CH_OK; k++) {
        size_t off, len = cu_pin_chunk(&p, k, &off);
        pin_slot *s = held[k % p.nbuf];
        if ((st = settle(s, fn)) == CH_OK) {
            memcpy(s->ptr, (const char *)host + off, len);
            st = dma(s, (char *)dev + off, s->ptr, len, 1, fn);
        }
    }
    give_back(held, 2);
    return st;
}

ch_status cu_download(void *host, const void *dev, size_t n, const char *fn) {
    cu_pin_plan p;
    pin_slot *held[2];
    CU_TRY(hold(&p, n, held, fn));
    if (!held[0])
        return p.chunks ? unstaged(host, dev, n, 0, fn) : CH_OK;
    ch_status st = CH_OK;
    /* chunk k's DMA is queued before chunk k-1 is copied out */
    for (int64_t k = 0; k <= p.chunks && st == CH_OK; k++) {
        if (k < p.chunks) {
            size_t off, len = cu_pin_chunk(&p, k, &off);
            pin_slot *s = held[k % p.nbuf];
            if ((st = settle(s, fn)) == CH_OK)
                st = dma(s, s->ptr, (const char *)dev + off, len, 0, fn);
        }
        if (k > 0 && st == CH_OK) {
            size_t off, len = cu_pin_chunk(&p, k - 1, &off);
            pin_slot *s = held[(k - 1) % p.nbuf];
            if ((st = settle(s, fn)) == CH_OK)
                memcpy((char *)host + off, s->ptr, len);
        }
    }
    give_back(held, 2);
    return st;
}

int64_t cu_pinned_bytes(int device) {
    if (device < 0 || device >= CU_MAX_DEVICES)
        return 0;
    int64_t total = 0;
    pthread_mutex_lock(&pin_lock);
    for (int i = 0; i < CU_PIN_SLOTS; i++)
        total += slots[device][i].ptr ? (int64_t)slots[device][i].size : 0;
    pthread_mutex_unlock(&pin_lock);
    return total;
}

int64_t cu_pinned_free_count(int device) {
    if (device < 0 || device >= CU_MAX_DEVICES)
        return 0;
    int64_t idle = 0;
    pthread_mutex_lock(&pin_lock);
    for (int i = 0; i < CU_PIN_SLOTS; i++)
        idle += slots[device][i].ptr && !slots[device][i].busy;
    pthread_mutex_unlock(&pin_lock);
    return idle;
}

void cu_pinned_free_all(int device) {
    if (device < 0 || device >= CU_MAX_DEVICES)
        return;
    pthread_mutex_lock(&pin_lock);
    for (int i = 0; i < CU_PIN_SLOTS; i++) {
        pin_slot *s = &slots[device][i];
        if (!s->ptr || s->busy)
            continue;
        if (settle(s, "free_all_blocks") != CH_OK)
            continue; /* a failed DMA: keep the buffer rather than free it under the device */
        release_buffer(s);
    }
    pthread_mutex_unlock(&pin_lock);
}

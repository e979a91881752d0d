/*
 * stream.c -- streams and events: one current stream per device and host
 * thread, which every launch, library call and copy of the backend uses.
 *
 * The current stream starts as the device's legacy default stream (NULL
 * here, 0 to CUDA), so a program that never touches streams runs exactly as
 * before.  ch_cuda_stream_use makes another stream current on the calling
 * thread, as CuPy's Stream.use() does; cu_stream() is what a launch passes
 * (<<<grid, block, 0, cu_stream()>>>), and library handles (cuBLAS, cuDNN,
 * cuSOLVER, cuFFT) are re-bound through cu_stream_rebind when the stream
 * they were last bound to is no longer the current one.
 *
 * Streams are created blocking (they wait for the legacy default stream and
 * it for them) unless asked non_blocking, as Chainer's cuda.Stream.  Events
 * take CuPy's flags: blocking sync, disable_timing, interprocess.
 *
 * The caching allocator keeps freed blocks per stream (allocator.c): a block
 * is reused only by work on the stream that was current when it was freed.
 * Destroying a stream waits for its work and hands its blocks to the
 * default stream.
 *
 * Under CU_EMULATE (tests/cuda) there is no GPU: a stream is an ordering
 * token (all work runs synchronously, so every stream and event is always
 * done), and an event's time is the host's monotonic clock at record.
 *
 * Compiled; the emulated logic is tested in tests/cuda/test_stream.cu; the
 * CUDA calls only by the GPU specs (spec/cuda/stream_gpu_spec.lua).
 */
#define _GNU_SOURCE
#include "backend.h"
#include "cuda_hooks.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <time.h>

struct ch_cuda_stream {
    int device;
    int non_blocking;
    cudaStream_t native; /* never 0: the default stream is a NULL ch_cuda_stream */
};

struct ch_cuda_event {
    int device;
    int timing;          /* created without disable_timing */
    int recorded;
    cudaEvent_t native;
    double emulated_ms;  /* CU_EMULATE: the host clock at record */
};

__thread int cu_current_device;
static __thread ch_cuda_stream *current[CU_MAX_DEVICES];

static ch_status check_device(int device, const char *fn) {
    if (device < 0 || device >= cu_device_count)
        return cu_fail(CH_ERR_DEVICE, "%s: no device cuda:%d (%d GPU%s available)", fn, device, cu_device_count,
                       cu_device_count == 1 ? "" : "s");
    return CH_OK;
}

/* A stream given for `device` must belong to it. */
static ch_status check_stream(int device, const ch_cuda_stream *s, const char *fn) {
    CU_TRY(check_device(device, fn));
    if (s && s->device != device)
        return cu_fail(CH_ERR_DEVICE, "%s: the stream belongs to cuda:%d, not cuda:%d", fn, s->device, device);
    return CH_OK;
}

static cudaStream_t native_of(const ch_cuda_stream *s) { return s ? s->native : (cudaStream_t)0; }

void *cu_stream(void) {
    int d = cu_current_device;
    return d >= 0 && d < CU_MAX_DEVICES ? (void *)native_of(current[d]) : NULL;
}

int cu_stream_rebind(void **bound) {
    void *now = cu_stream();
    if (*bound == now)
        return 0;
    *bound = now;
    return 1;
}

/* ---- streams ------------------------------------------------------------ */

static ch_status stream_create(int device, int non_blocking, ch_cuda_stream **out) {
    *out = NULL;
    CU_TRY(cu_use(device, "Stream"));
    ch_cuda_stream *s = calloc(1, sizeof *s);
    if (!s)
        return cu_fail(CH_ERR_MEMORY, "Stream: out of host memory");
    s->device = device;
    s->non_blocking = non_blocking != 0;
#ifdef CU_EMULATE
    s->native = (cudaStream_t)s; /* a token, never 0 */
#else
    ch_status st = cu_check(cudaStreamCreateWithFlags(&s->native, non_blocking ? cudaStreamNonBlocking
                                                                               : cudaStreamDefault),
                            "Stream", "cudaStreamCreateWithFlags");
    if (st != CH_OK) {
        free(s);
        return st;
    }
#endif
    *out = s;
    return CH_OK;
}

static ch_status stream_synchronize(int device, ch_cuda_stream *s) {
    CU_TRY(check_stream(device, s, "Stream.synchronize"));
    CU_TRY(cu_use(device, "Stream.synchronize"));
#ifdef CU_EMULATE
    return CH_OK;
#else
    return cu_check(cudaStreamSynchronize(native_of(s)), "Stream.synchronize", "cudaStreamSynchronize");
#endif
}

static void stream_destroy(ch_cuda_stream *s) {
    if (!s)
        return;
    int dev = s->device;
    if (cu_use(dev, "Stream.free") == CH_OK) {
#ifndef CU_EMULATE
        if (cudaStreamSynchronize(s->native) != cudaSuccess)
            (void)cudaGetLastError();
        cudaStreamDestroy(s->native);
#endif
        cu_alloc_forget_stream(dev, s);
    }
    if (current[dev] == s)
        current[dev] = NULL;
    free(s);
}

static int stream_device(const ch_cuda_stream *s) { return s ? s->device : -1; }
static void *stream_native(const ch_cuda_stream *s) { return (void *)native_of(s); }

static ch_status stream_use(int device, ch_cuda_stream *s) {
    CU_TRY(check_stream(device, s, "Stream.use"));
    current[device] = s;
    return CH_OK;
}

ch_cuda_stream *cu_current_stream(int device) {
    return device >= 0 && device < CU_MAX_DEVICES ? current[device] : NULL;
}

/* done: 1 when all work queued on the stream has finished. */
static ch_status stream_query(int device, ch_cuda_stream *s, int *done) {
    CU_TRY(check_stream(device, s, "Stream.done"));
    CU_TRY(cu_use(device, "Stream.done"));
    *done = 1;
#ifndef CU_EMULATE
    cudaError_t e = cudaStreamQuery(native_of(s));
    if (e == cudaErrorNotReady) {
        (void)cudaGetLastError();
        *done = 0;
    } else if (e != cudaSuccess) {
        return cu_check(e, "Stream.done", "cudaStreamQuery");
    }
#endif
    return CH_OK;
}

static ch_status stream_wait_event(int device, ch_cuda_stream *s, const ch_cuda_event *e) {
    CU_TRY(check_stream(device, s, "Stream.wait_event"));
    if (!e->recorded)
        return cu_fail(CH_ERR_ARG, "Stream.wait_event: the event has not been recorded on any stream yet");
    CU_TRY(cu_use(device, "Stream.wait_event"));
#ifdef CU_EMULATE
    return CH_OK;
#else
    /* an event of another device is allowed: cross-device ordering */
    return cu_check(cudaStreamWaitEvent(native_of(s), e->native, 0), "Stream.wait_event", "cudaStreamWaitEvent");
#endif
}

/* ---- events ------------------------------------------------------------- */

static ch_status event_create(int device, int blocking, int disable_timing, int interprocess, ch_cuda_event **out) {
    *out = NULL;
    if (interprocess && !disable_timing)
        return cu_fail(CH_ERR_ARG, "Event: an interprocess event must be created with disable_timing");
    CU_TRY(cu_use(device, "Event"));
    ch_cuda_event *e = calloc(1, sizeof *e);
    if (!e)
        return cu_fail(CH_ERR_MEMORY, "Event: out of host memory");
    e->device = device;
    e->timing = !disable_timing;
#ifndef CU_EMULATE
    unsigned flags = (blocking ? cudaEventBlockingSync : 0u) | (disable_timing ? cudaEventDisableTiming : 0u) |
                     (interprocess ? cudaEventInterprocess : 0u);
    ch_status st = cu_check(cudaEventCreateWithFlags(&e->native, flags), "Event", "cudaEventCreateWithFlags");
    if (st != CH_OK) {
        free(e);
        return st;
    }
#else
    (void)blocking;
#endif
    *out = e;
    return CH_OK;
}

static void event_destroy(ch_cuda_event *e) {
    if (!e)
        return;
#ifndef CU_EMULATE
    if (cu_use(e->device, "Event.free") == CH_OK)
        cudaEventDestroy(e->native);
#endif
    free(e);
}

static int event_device(const ch_cuda_event *e) { return e ? e->device : -1; }

#ifdef CU_EMULATE
static double host_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
#endif

static ch_status event_record(ch_cuda_event *e, ch_cuda_stream *s) {
    CU_TRY(check_stream(e->device, s, "Event.record"));
    CU_TRY(cu_use(e->device, "Event.record"));
#ifdef CU_EMULATE
    e->emulated_ms = host_ms();
#else
    CU_TRY(cu_check(cudaEventRecord(e->native, native_of(s)), "Event.record", "cudaEventRecord"));
#endif
    e->recorded = 1;
    return CH_OK;
}

static ch_status event_synchronize(const ch_cuda_event *e) {
    CU_TRY(cu_use(e->device, "Event.synchronize"));
#ifdef CU_EMULATE
    return CH_OK;
#else
    return cu_check(cudaEventSynchronize(e->native), "Event.synchronize", "cudaEventSynchronize");
#endif
}

/* done: 1 when the work before the recorded point has finished (also when
 * never recorded, as CUDA and CuPy answer). */
static ch_status event_query(const ch_cuda_event *e, int *done) {
    CU_TRY(cu_use(e->device, "Event.done"));
    *done = 1;
#ifndef CU_EMULATE
    cudaError_t r = cudaEventQuery(e->native);
    if (r == cudaErrorNotReady) {
        (void)cudaGetLastError();
        *done = 0;
    } else if (r != cudaSuccess) {
        return cu_check(r, "Event.done", "cudaEventQuery");
    }
#endif
    return CH_OK;
}

static ch_status event_elapsed(const ch_cuda_event *a, const ch_cuda_event *b, float *ms) {
    const char *fn = "get_elapsed_time";
    const ch_cuda_event *ev[2] = {a, b};
    const char *name[2] = {"start", "end"};
    for (int i = 0; i < 2; i++) {
        if (!ev[i]->timing)
            return cu_fail(CH_ERR_ARG, "%s: the %s event was created with disable_timing", fn, name[i]);
        if (!ev[i]->recorded)
            return cu_fail(CH_ERR_ARG, "%s: the %s event has not been recorded", fn, name[i]);
    }
    if (a->device != b->device)
        return cu_fail(CH_ERR_DEVICE, "%s: the start event belongs to cuda:%d and the end event to cuda:%d", fn,
                       a->device, b->device);
    CU_TRY(cu_use(a->device, fn));
#ifdef CU_EMULATE
    *ms = (float)(b->emulated_ms - a->emulated_ms);
    return CH_OK;
#else
    cudaError_t r = cudaEventElapsedTime(ms, a->native, b->native);
    if (r == cudaErrorNotReady) {
        (void)cudaGetLastError();
        return cu_fail(CH_ERR_ARG, "%s: an event has not completed yet (call end:synchronize() first)", fn);
    }
    return cu_check(r, fn, "cudaEventElapsedTime");
#endif
}

/* ---- ordering between devices --------------------------------------------- */

ch_status cu_stream_order(int earlier, int later, const char *fn) {
    CU_TRY(cu_use(later, fn));
    if (earlier == later)
        return CH_OK; /* one current stream: already in order */
#ifdef CU_EMULATE
    CU_TRY(cu_use(earlier, fn));
    return cu_use(later, fn);
#else
    CU_TRY(cu_use(earlier, fn));
    cudaEvent_t ev;
    CU_TRY(cu_check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), fn, "cudaEventCreateWithFlags"));
    ch_status st = cu_check(cudaEventRecord(ev, native_of(current[earlier])), fn, "cudaEventRecord");
    if (st == CH_OK && (st = cu_use(later, fn)) == CH_OK)
        st = cu_check(cudaStreamWaitEvent(native_of(current[later]), ev, 0), fn, "cudaStreamWaitEvent");
    cudaEventDestroy(ev); /* released by CUDA once the wait is satisfied */
    if (st == CH_OK)
        st = cu_use(later, fn);
    return st;
#endif
}

const ch_cuda_stream_services cu_stream_services = {
    .create = stream_create,
    .destroy = stream_destroy,
    .device = stream_device,
    .native = stream_native,
    .use = stream_use,
    .current = cu_current_stream,
    .synchronize = stream_synchronize,
    .query = stream_query,
    .wait_event = stream_wait_event,
    .event_create = event_create,
    .event_destroy = event_destroy,
    .event_device = event_device,
    .event_record = event_record,
    .event_synchronize = event_synchronize,
    .event_query = event_query,
    .event_elapsed = event_elapsed,
    .pinned_bytes = cu_pinned_bytes,
    .pinned_free_blocks = cu_pinned_free_count,
    .pinned_free_all = cu_pinned_free_all,
};

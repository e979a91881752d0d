/* test_stream.cu -- streams, events, the allocator's per-stream bins and the
 * pinned staging of host <-> device copies (stream.c, pinned.c,
 * allocator.c), emulated on the host: a stream is an ordering token, the
 * "DMA" a memcpy, so what runs is the bookkeeping (current streams, event
 * checks, which cached block or staging buffer serves a request, the
 * chunking of long copies).  The CUDA calls are checked by
 * spec/cuda/stream_gpu_spec.lua on a GPU.
 * emulates: stream.c pinned.c plan_pinned.c allocator.c staging.c */
#include "cuda_hooks.h"
#include "emulator.h"
#include "plan_pinned.h"

#include <stdlib.h>
#include <string.h>

static const ch_cuda_stream_services *S = &cu_stream_services;

static void test_current_stream(void) {
    CHECK(S->current(0) == NULL); /* the default stream until one is used */
    CHECK_OK(cu_use(0, "test"));
    CHECK(cu_stream() == NULL);
    ch_cuda_stream *s = NULL, *t = NULL;
    CHECK_OK(S->create(0, 0, &s));
    CHECK_OK(S->create(0, 1, &t));
    CHECK(s && t && s != t && S->device(s) == 0 && S->native(s) != NULL);
    CHECK_OK(S->use(0, s));
    CHECK(S->current(0) == s && cu_stream() == S->native(s));
    /* a library handle bound to the default stream is re-bound once */
    void *bound = NULL;
    CHECK(cu_stream_rebind(&bound) == 1 && bound == S->native(s));
    CHECK(cu_stream_rebind(&bound) == 0);
    CHECK_OK(S->use(0, t));
    CHECK(cu_stream_rebind(&bound) == 1 && bound == S->native(t));
    CHECK_OK(S->use(0, NULL));
    CHECK(S->current(0) == NULL && cu_stream() == NULL && cu_stream_rebind(&bound) == 1 && bound == NULL);
    int done = 0;
    CHECK_OK(S->query(0, s, &done));
    CHECK(done == 1);
    CHECK_OK(S->synchronize(0, s));
    CHECK_OK(S->synchronize(0, NULL));
    CHECK_OK(cu_stream_order(0, 0, "test"));
    /* destroying the current stream leaves the default one current */
    CHECK_OK(S->use(0, t));
    S->destroy(t);
    CHECK(S->current(0) == NULL);
    S->destroy(s);
    S->destroy(NULL);
    /* the contract */
    EMU_CHECK_ERR(S->create(1, 0, &s), CH_ERR_DEVICE, "Stream: no device cuda:1 (1 GPU available)");
    CHECK(s == NULL);
    EMU_CHECK_ERR(S->use(2, NULL), CH_ERR_DEVICE, "Stream.use: no device cuda:2");
    EMU_CHECK_ERR(S->synchronize(-1, NULL), CH_ERR_DEVICE, "Stream.synchronize: no device cuda:-1");
}

static void test_events(void) {
    ch_cuda_event *a = NULL, *b = NULL, *untimed = NULL;
    EMU_CHECK_ERR(S->event_create(0, 0, 0, 1, &a), CH_ERR_ARG,
                  "Event: an interprocess event must be created with disable_timing");
    CHECK(a == NULL);
    CHECK_OK(S->event_create(0, 0, 0, 0, &a));
    CHECK_OK(S->event_create(0, 1, 0, 0, &b));
    CHECK_OK(S->event_create(0, 0, 1, 1, &untimed));
    CHECK(S->event_device(a) == 0);
    int done = 0;
    CHECK_OK(S->event_query(a, &done)); /* never recorded: done, as CUDA says */
    CHECK(done == 1);
    float ms = -1;
    EMU_CHECK_ERR(S->event_elapsed(a, b, &ms), CH_ERR_ARG, "get_elapsed_time: the start event has not been recorded");
    ch_cuda_stream *s = NULL;
    CHECK_OK(S->create(0, 0, &s));
    EMU_CHECK_ERR(S->wait_event(0, s, a), CH_ERR_ARG, "Stream.wait_event: the event has not been recorded");
    CHECK_OK(S->event_record(a, NULL));
    EMU_CHECK_ERR(S->event_elapsed(a, b, &ms), CH_ERR_ARG, "get_elapsed_time: the end event has not been recorded");
    CHECK_OK(S->event_record(b, s));
    CHECK_OK(S->wait_event(0, s, a));
    CHECK_OK(S->event_synchronize(b));
    CHECK_OK(S->event_elapsed(a, b, &ms));
    CHECK(ms >= 0);
    CHECK_OK(S->event_record(untimed, s));
    EMU_CHECK_ERR(S->event_elapsed(a, untimed, &ms), CH_ERR_ARG,
                  "get_elapsed_time: the end event was created with disable_timing");
    EMU_CHECK_ERR(S->event_elapsed(untimed, b, &ms), CH_ERR_ARG,
                  "get_elapsed_time: the start event was created with disable_timing");
    S->destroy(s);
    S->event_destroy(a);
    S->event_destroy(b);
    S->event_destroy(untimed);
    S->event_destroy(NULL);
}

/* A freed block is reused only while the stream it was freed on is current;
 * a destroyed stream's blocks go to the default stream. */
static void test_allocator_bins(void) {
    const size_t n = 4096;
    ch_cuda_stream *s = NULL;
    CHECK_OK(S->create(0, 0, &s));
    void *blk = malloc(n); /* stands for a device block: the cache never touches it */
    CHECK_OK(S->use(0, s));
    cu_free(0, blk, n);
    CHECK(cu_cache_bytes(0) == (int64_t)n);
    CHECK_OK(S->use(0, NULL));
    /* on the default stream the block is not handed out (the emulated
     * cudaMalloc then fails, or on a real device returns another block) */
    void *other = cu_alloc(0, n);
    CHECK(other != blk);
    CHECK(cu_cache_bytes(0) == (int64_t)n);
    CHECK_OK(S->use(0, s));
    CHECK(cu_alloc(0, n) == blk);
    CHECK(cu_cache_bytes(0) == 0);
    cu_free(0, blk, n);
    CHECK_OK(S->use(0, NULL));
    S->destroy(s);
    CHECK(cu_alloc(0, n) == blk); /* now a default-stream block */
    CHECK(cu_cache_bytes(0) == 0);
    free(blk);
}

/* Bytes from a 64-bit LCG's top bits: no period that a chunk length divides. */
static void fill_pattern(unsigned char *p, size_t n, unsigned seed) {
    uint64_t x = seed;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        p[i] = (unsigned char)(x >> 56);
    }
}

/* cu_upload / cu_download of n bytes give back the bytes; returns 1 when they match. */
static int round_trip(size_t n, unsigned seed) {
    unsigned char *host = (unsigned char *)malloc(n + 1), *dev = (unsigned char *)malloc(n + 1),
                  *back = (unsigned char *)malloc(n + 1);
    fill_pattern(host, n, seed);
    memset(dev, 0xAB, n + 1);
    memset(back, 0xCD, n + 1);
    CHECK_OK(cu_upload(dev, host, n, "test"));
    CHECK_OK(cu_download(back, dev, n, "test"));
    int ok = memcmp(host, dev, n) == 0 && memcmp(host, back, n) == 0 && dev[n] == 0xAB && back[n] == 0xCD;
    if (!ok)
        fprintf(stderr, "round trip of %zu bytes through the pinned buffers differs\n", n);
    free(host);
    free(dev);
    free(back);
    return ok;
}

static void test_pinned(void) {
    CHECK_OK(cu_use(0, "test"));
    cu_pinned_free_all(0);
    CHECK(cu_pinned_bytes(0) == 0 && cu_pinned_free_count(0) == 0);
    CHECK(round_trip(0, 1));
    CHECK(cu_pinned_bytes(0) == 0); /* nothing to stage: no buffer */
    CHECK(round_trip(8, 2));
    CHECK(cu_pinned_bytes(0) == (int64_t)CU_PIN_MIN && cu_pinned_free_count(0) == 1);
    CHECK(round_trip(1000, 3));     /* the same buffer again */
    CHECK(cu_pinned_bytes(0) == (int64_t)CU_PIN_MIN);
    /* longer than one buffer: 3 chunks through 2 buffers of CU_PIN_CHUNK */
    size_t big = 2 * CU_PIN_CHUNK + 12345;
    CHECK(round_trip(big, 4));
    CHECK(cu_pinned_bytes(0) == (int64_t)(CU_PIN_MIN + 2 * CU_PIN_CHUNK) && cu_pinned_free_count(0) == 3);
    /* an exact multiple of the chunk; one byte past a power of two (an idle
     * buffer large enough is reused before a new one is allocated: no
     * new buffer); longer copies and one just under a chunk reuse the two
     * large buffers */
    CHECK(round_trip(2 * CU_PIN_CHUNK, 5));
    CHECK(round_trip(CU_PIN_MIN + 1, 6));
    CHECK(round_trip(3 * CU_PIN_CHUNK, 7));
    CHECK(round_trip(CU_PIN_CHUNK - 1, 8));
    CHECK(cu_pinned_bytes(0) == (int64_t)(CU_PIN_MIN + 2 * CU_PIN_CHUNK) && cu_pinned_free_count(0) == 3);
    /* staging.c's small transfers go the same way */
    int64_t v = 42, w = 0, d = 0;
    CHECK_OK(cu_to_device(&d, &v, sizeof v, "test"));
    CHECK_OK(cu_to_host(&w, &d, sizeof w, "test"));
    CHECK(w == 42);
    /* handed back */
    cu_pinned_free_all(0);
    CHECK(cu_pinned_bytes(0) == 0 && cu_pinned_free_count(0) == 0);
    CHECK(S->pinned_bytes(0) == 0 && S->pinned_bytes(-1) == 0 && S->pinned_bytes(CU_MAX_DEVICES) == 0);
}

int main(void) {
    test_current_stream();
    test_events();
    test_allocator_bins();
    test_pinned();
    return check_done("test_stream (emulated)");
}

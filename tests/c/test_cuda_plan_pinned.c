/* test_cuda_plan_pinned.c -- the host-side planning of the pinned staging
 * buffers (runtime/cuda/plan_pinned.c): buffer sizes, the chunks of long
 * copies, and which cached buffer serves a request.  Pure C: runs without
 * a GPU or CUDA toolkit. */
#include "check.h"
#include "plan_pinned.h"

#define KB ((size_t)1 << 10)
#define MB ((size_t)1 << 20)

static void test_plan(void) {
    cu_pin_plan p;
    cu_pin_plan_init(&p, 0, CU_PIN_MIN, CU_PIN_CHUNK);
    CHECK(p.chunks == 0);
    /* small copies take the smallest buffer, one chunk, one buffer */
    cu_pin_plan_init(&p, 8, CU_PIN_MIN, CU_PIN_CHUNK);
    CHECK(p.buffer == CU_PIN_MIN && p.chunks == 1 && p.nbuf == 1);
    cu_pin_plan_init(&p, CU_PIN_MIN, CU_PIN_MIN, CU_PIN_CHUNK);
    CHECK(p.buffer == CU_PIN_MIN && p.chunks == 1);
    /* just over a power of two: the next one */
    cu_pin_plan_init(&p, CU_PIN_MIN + 1, CU_PIN_MIN, CU_PIN_CHUNK);
    CHECK(p.buffer == 2 * CU_PIN_MIN && p.chunks == 1 && p.nbuf == 1);
    cu_pin_plan_init(&p, 3 * MB, CU_PIN_MIN, CU_PIN_CHUNK);
    CHECK(p.buffer == 4 * MB && p.chunks == 1);
    /* longer than the largest buffer: chunks through two buffers */
    cu_pin_plan_init(&p, CU_PIN_CHUNK, CU_PIN_MIN, CU_PIN_CHUNK);
    CHECK(p.buffer == CU_PIN_CHUNK && p.chunks == 1 && p.nbuf == 1);
    cu_pin_plan_init(&p, 10 * MB + 3, CU_PIN_MIN, CU_PIN_CHUNK);
    CHECK(p.buffer == 4 * MB && p.chunks == 3 && p.nbuf == 2);
    size_t off, len, covered = 0;
    for (int64_t k = 0; k < p.chunks; k++) {
        len = cu_pin_chunk(&p, k, &off);
        CHECK(off == covered && len > 0 && len <= p.buffer);
        covered += len;
    }
    CHECK(covered == 10 * MB + 3);
    len = cu_pin_chunk(&p, 2, &off);
    CHECK(off == 8 * MB && len == 2 * MB + 3);
    /* an exact multiple ends with a full chunk */
    cu_pin_plan_init(&p, 8 * MB, CU_PIN_MIN, CU_PIN_CHUNK);
    CHECK(p.chunks == 2 && cu_pin_chunk(&p, 1, &off) == 4 * MB && off == 4 * MB);
    /* other limits (the emulated test uses small ones) */
    cu_pin_plan_init(&p, 1000, 64, 256);
    CHECK(p.buffer == 256 && p.chunks == 4 && p.nbuf == 2 && cu_pin_chunk(&p, 3, &off) == 232 && off == 768);
}

static void test_pick(void) {
    cu_pin_action a;
    size_t size[4] = {0, 0, 0, 0};
    int busy[4] = {0, 0, 0, 0};
    /* all empty: the first, allocated */
    CHECK(cu_pin_pick(size, busy, 4, MB, &a) == 0 && a == CU_PIN_ALLOCATE);
    /* the smallest idle buffer large enough */
    size_t s2[4] = {4 * MB, 256 * KB, MB, 0};
    CHECK(cu_pin_pick(s2, busy, 4, 200 * KB, &a) == 1 && a == CU_PIN_REUSE);
    CHECK(cu_pin_pick(s2, busy, 4, MB, &a) == 2 && a == CU_PIN_REUSE);
    CHECK(cu_pin_pick(s2, busy, 4, 4 * MB, &a) == 0 && a == CU_PIN_REUSE);
    /* a busy one is never taken */
    int b2[4] = {0, 1, 0, 0};
    CHECK(cu_pin_pick(s2, b2, 4, 200 * KB, &a) == 2 && a == CU_PIN_REUSE);
    /* nothing large enough: an empty slot before replacing a buffer */
    CHECK(cu_pin_pick(s2, busy, 4, 8 * MB, &a) == 3 && a == CU_PIN_ALLOCATE);
    /* no empty slot: the smallest idle buffer is replaced */
    size_t s3[4] = {4 * MB, 256 * KB, MB, 2 * MB};
    CHECK(cu_pin_pick(s3, busy, 4, 8 * MB, &a) == 1 && a == CU_PIN_REPLACE);
    CHECK(cu_pin_pick(s3, b2, 4, 8 * MB, &a) == 2 && a == CU_PIN_REPLACE);
    /* all busy: none */
    int b3[4] = {1, 1, 1, 1};
    CHECK(cu_pin_pick(s3, b3, 4, KB, &a) == -1);
    CHECK(cu_pin_pick(size, b3, 4, KB, &a) == -1);
}

int main(void) {
    test_plan();
    test_pick();
    return check_done("test_cuda_plan_pinned");
}

/*
 * plan_pinned.h -- the host-side planning of the pinned staging buffers
 * (pinned.c): the size of the buffers a copy of n bytes goes through, its
 * chunks, and which cached buffer serves a request.
 *
 * Plain C with no CUDA headers, so that tests/c/test_cuda_plan_pinned.c
 * checks it without a GPU or toolkit.
 */
#ifndef CHAINLUA_CUDA_PLAN_PINNED_H
#define CHAINLUA_CUDA_PLAN_PINNED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CU_PIN_MIN ((size_t)64 << 10)  /* the smallest staging buffer */
#define CU_PIN_CHUNK ((size_t)4 << 20) /* the largest: longer copies go in chunks */
#define CU_PIN_SLOTS 4                 /* buffers kept per device */

/* A copy of n bytes: through `nbuf` buffers (2 when there are several
 * chunks, so that one is filled or drained on the host while the other is
 * in flight) of `buffer` bytes each, in `chunks` pieces. */
typedef struct cu_pin_plan {
    size_t n, buffer;
    int64_t chunks;
    int nbuf;
} cu_pin_plan;
/* buffer: n rounded up to a power of two, at least min_buf and at most
 * max_buf (both powers of two, min_buf <= max_buf); n == 0 has no chunks. */
void cu_pin_plan_init(cu_pin_plan *p, size_t n, size_t min_buf, size_t max_buf);
/* Chunk k (0 <= k < chunks): its offset in *off, its length returned; it
 * goes through buffer k % nbuf. */
size_t cu_pin_chunk(const cu_pin_plan *p, int64_t k, size_t *off);

/* What cu_pin_pick decided for a slot. */
typedef enum cu_pin_action {
    CU_PIN_REUSE,    /* the slot's buffer is large enough */
    CU_PIN_ALLOCATE, /* the slot is empty: allocate a buffer into it */
    CU_PIN_REPLACE   /* free the slot's (too small) buffer and allocate a larger one */
} cu_pin_action;
/* Which of n slots (size[i] bytes, 0 when empty; busy[i] when another copy
 * holds it) serves a buffer of `need` bytes: the smallest idle one that is
 * large enough, else an empty one, else the smallest idle one (replaced).
 * -1 when every slot is busy. */
int cu_pin_pick(const size_t *size, const int *busy, int n, size_t need, cu_pin_action *action);

#ifdef __cplusplus
}
#endif

#endif

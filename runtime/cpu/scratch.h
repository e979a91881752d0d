/* scratch.h -- per-thread scratch buffers of the CPU kernels.
 *
 * A kernel that needs working memory every call (a convolution's column
 * matrix, the product's packed panels) takes it from a slot of its thread,
 * grown on demand and kept for the thread's life: the same shapes come
 * back every iteration, so after the first call nothing is allocated.  A
 * thread that ends (an OpenMP team shrinking after set_num_threads) frees
 * its slots through a pthread key's destructor.  Each slot belongs to one
 * kernel (below), so a kernel never gets a buffer that one it calls is
 * also using. */
#ifndef CH_CPU_SCRATCH_H
#define CH_CPU_SCRATCH_H

#include <stddef.h>

enum {
    CH_SCRATCH_CONV0,  /* cpu/conv.c: column matrix; Winograd's V */
    CH_SCRATCH_CONV1,  /*   gathered gy, wide output; Winograd's M and gy tiles */
    CH_SCRATCH_CONV2,  /*   the direct kernels' frame, rows and partials */
    CH_SCRATCH_CONV3,  /*   Winograd's transformed filter U, or its gradient dU */
    CH_SCRATCH_GEMM_A, /* cpu/sgemm512.c: A's row panels */
    CH_SCRATCH_GEMM_B, /*   B's column panels */
    CH_SCRATCH_SLOTS
};

/* Slot `slot` of the calling thread, at least nbytes, 64-byte aligned;
 * NULL when out of memory.  Valid until the thread's next call for the
 * same slot. */
void *ch_cpu_scratch(int slot, size_t nbytes);

#endif

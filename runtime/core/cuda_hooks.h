/*
 * cuda_hooks.h -- the table through which libchainlua forwards GPU work to
 * libchainlua_cuda.  The backend's exported chainlua_cuda_init() fills it.
 * Bump CH_CUDA_ABI whenever the layout changes.
 */
#ifndef CHAINLUA_CUDA_HOOKS_H
#define CHAINLUA_CUDA_HOOKS_H

#include "chainlua.h"

#define CH_CUDA_ABI 4

/*
 * One elementwise operation for the backend.  The core has already decided
 * every dtype (runtime/cpu/elementwise.c: the result type, the compute type)
 * and the output shape, allocated or checked `out` on the inputs' device,
 * and copied inputs that partially overlap `out`.  The inputs broadcast to
 * out's shape; the backend works out their strides.
 */
typedef struct ch_cuda_ew {
    const char *name;     /* the op's name, for messages */
    int op;               /* ch_binary_op when nin == 2, ch_unary_op when nin == 1 (CH_NUNARY: clip) */
    int nin;              /* 1 or 2 */
    int ct;               /* compute dtype: CH_FLOAT32 (also for float16), CH_FLOAT64 or CH_INT64 */
    int scalar_pos;       /* -1; or 0/1: that input is the scalar below, not a tensor */
    double scalar_f;      /* the scalar already rounded to the compute type (float ct) */
    int64_t scalar_i;     /* the scalar when ct is CH_INT64 */
    double lo, hi;        /* clip bounds (infinite for no bound) */
    ch_tensor *out;
    const ch_tensor *in[2];
} ch_cuda_ew;

typedef struct ch_cuda_hooks {
    int abi;                       /* set by the core before init */
    int device_count;              /* set by the backend */
    char info[512];                /* versions: CUDA runtime, cuDNN, devices */
    int cudnn_version;             /* cudnnGetVersion(), 0 when cuDNN is unusable */
    /* Set by the core before init: records the message ch_last_error()
     * returns.  The backend reports every failure through it, since it does
     * not link libchainlua (a second copy would have its own error state). */
    ch_status (*fail)(ch_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    void *(*alloc)(int device, size_t nbytes);
    void (*free)(int device, void *p, size_t nbytes);
    void (*cache_free_all)(int device);
    int64_t (*cache_bytes)(int device);
    /* same-shape copy with cast; either side may be the CPU */
    ch_status (*copy)(ch_tensor *dst, const ch_tensor *src);
    ch_status (*fill)(ch_tensor *t, double value);
    ch_status (*synchronize)(int device);
    /* User kernels (runtime/cuda/kernel.c).  compile, image_free and
     * nvrtc_arch are set even when there is no GPU: NVRTC needs none. */
    ch_status (*compile)(const char *src, const char *name, const char *arch, char **image, size_t *size);
    void (*image_free)(void *p);
    int (*nvrtc_arch)(void);
    ch_status (*kernel_load)(int device, const void *image, const char *name, void **kernel);
    ch_status (*launch)(int device, void *kernel, uint32_t blocks, uint32_t threads, uint32_t shmem, void **args);
    int (*device_arch)(int device);
    /* Tensor ops (ABI 4).  All tensors are on one device, checked by the core. */
    ch_status (*elementwise)(const ch_cuda_ew *w);
    /* out = op over the axes flagged in red[0..x->nd) of x; op is CH_SUM,
     * CH_PROD, CH_MAX, CH_MIN, CH_ARGMAX or CH_ARGMIN.  x has its compute
     * dtype (float32, float64 or int64; integer sums and products wrap);
     * out is a new contiguous tensor of x's dtype (int64 for the arg ops)
     * holding the kept axes in order.  The arg ops give the C-order position
     * within the reduced axes. */
    ch_status (*reduce)(int op, const ch_tensor *x, const uint8_t *red, ch_tensor *out);
    /* out = a @ b with NumPy's matmul rules (1-D promotion, broadcast batch
     * axes), transposing the last two axes of a/b when transa/transb; a, b
     * and out share one float dtype and out is contiguous with the result shape. */
    ch_status (*matmul)(const ch_tensor *a, const ch_tensor *b, int transa, int transb, ch_tensor *out);
} ch_cuda_hooks;

typedef int (*ch_cuda_init_fn)(ch_cuda_hooks *hooks);

#endif

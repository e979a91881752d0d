/*
 * cuda_hooks.h -- the table through which libchainlua forwards GPU work to
 * libchainlua_cuda.  The backend's exported chainlua_cuda_init() fills it.
 * Bump CH_CUDA_ABI whenever the layout changes.
 */
#ifndef CHAINLUA_CUDA_HOOKS_H
#define CHAINLUA_CUDA_HOOKS_H

#include "chainlua.h"

#define CH_CUDA_ABI 7

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

/*
 * One fused optimizer update (ABI 5), the GPU twin of the typed loops of
 * runtime/cpu/optimizer_updates.c.  The core has checked shapes, dtypes and
 * aliasing: param, grad and the nstate states are contiguous tensors of one
 * dtype (float32 or float64) on one device.  The fields are Chainer's
 * hyperparameters, already resolved; each kind reads the ones it needs.
 */
typedef enum ch_cuda_opt_kind {
    CH_CUDA_OPT_SGD,        /* p -= lr*g */
    CH_CUDA_OPT_MOMENTUM,   /* v = momentum*v - lr*g; p += v */
    CH_CUDA_OPT_CMOMENTUM,  /* v = momentum*v - g; p += lr*v */
    CH_CUDA_OPT_NESTEROV,   /* v = momentum*v - lr*g; p += momentum^2*v - (1+momentum)*lr*g */
    CH_CUDA_OPT_ADAM        /* Adam / AdamW / AMSGrad / AdaBound (ch_adam_update) */
} ch_cuda_opt_kind;

typedef struct ch_cuda_opt {
    int kind;                      /* ch_cuda_opt_kind */
    double lr, momentum, beta1, beta2, eps, eta, wd, lower, upper;
    int bounded, amsgrad;
    ch_tensor *param;
    const ch_tensor *grad;
    ch_tensor *state[3];           /* v; or m, v, vhat (amsgrad) */
} ch_cuda_opt;

/*
 * Softmax-family rows (ABI 6), the GPU twin of runtime/cpu/softmax.c and
 * softmax_cross_entropy.c.  Every tensor is contiguous, of the compute dtype
 * (float32 or float64) unless noted, on one device, and viewed as (O, N, I):
 * a row is one (o, i) pair, its N elements I apart.
 */
typedef enum ch_cuda_softmax_kind {
    CH_CUDA_SOFTMAX_FWD,   /* out = softmax(x) (log_softmax when log) */
    CH_CUDA_SOFTMAX_BWD,   /* out = gx from x = y (the forward output) and gy */
    CH_CUDA_SOFTMAX_SCE    /* softmax cross-entropy with N the classes, O*I label positions */
} ch_cuda_softmax_kind;

typedef struct ch_cuda_softmax {
    int kind;                      /* ch_cuda_softmax_kind */
    int log;                       /* FWD/BWD: log_softmax */
    int64_t O, N, I;
    const ch_tensor *x;            /* FWD/SCE: the input; BWD: y */
    const ch_tensor *gy;           /* BWD */
    ch_tensor *out;                /* FWD: y; BWD: gx; SCE: the loss per position (O*I) */
    /* SCE: labels (int64, O*I, already checked to be in 0..N-1 or
     * ignore_label), optional class weights (N), optional gradient
     * (softmax - onehot) * weight and softmax (both shaped like x) */
    const ch_tensor *labels, *weight;
    int64_t ignore_label;
    ch_tensor *grad, *prob;
} ch_cuda_softmax;

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
    /* ABI 5: the ops of an MLP training step. */
    /* out = cond ? a : b; cond is bool, a, b and out share one dtype, cond,
     * a and b broadcast to out's shape and none overlaps out partially. */
    ch_status (*where)(const ch_tensor *cond, const ch_tensor *a, const ch_tensor *b, ch_tensor *out);
    /* y = a*x + b*y (b == 0: y is not read); x and y have one float dtype
     * and one shape, any strides, x does not overlap y partially. */
    ch_status (*axpby)(double a, const ch_tensor *x, double b, ch_tensor *y);
    /* c = alpha * op(a) @ op(b) + beta * c for 2-d a, b, c of one float
     * dtype (float32/float64), c contiguous (beta == 0: c is not read). */
    ch_status (*gemm)(int transa, int transb, double alpha, const ch_tensor *a, const ch_tensor *b, double beta,
                      ch_tensor *c);
    ch_status (*opt_update)(const ch_cuda_opt *u);
    /* ABI 6 */
    ch_status (*softmax)(const ch_cuda_softmax *s);
    /* ABI 7: gx = the gradient of activation op (a ch_act_grad_op) from its
     * output y and upstream gy; contiguous tensors of one float dtype
     * (float32/float64) and shape. */
    ch_status (*activation_grad)(int op, const ch_tensor *y, const ch_tensor *gy, ch_tensor *gx);
} ch_cuda_hooks;

typedef int (*ch_cuda_init_fn)(ch_cuda_hooks *hooks);

#endif

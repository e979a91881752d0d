/*
 * conv.c -- the convolution kernels of the table (conv_forward,
 * conv_backward_data, conv_backward_filter) on cuDNN: N-d as the CPU takes
 * them (1 to 3 spatial axes; a 1-d convolution gets a unit axis), groups,
 * dilation, stride and padding.  The front door (runtime/ops/conv.c) has
 * checked the arguments and made every operand contiguous.
 *
 * - What cuDNN is told comes from plan_conv.c.  When Chainer's output
 *   extents are not the ones cuDNN derives (cover_all, a deconvolution's
 *   outsize), x goes through an explicitly padded copy (conv_window.cu)
 *   and the data gradient is cut back out of it.
 * - The algorithm: cuDNN's heuristics (cudnnGet*Algorithm_v7), or its
 *   measurements (cudnnFind*Algorithm) under chainer.config.autotune, as
 *   Chainer does; the first ranked one that succeeds, needs at most
 *   cuda.get_max_workspace_size() (Chainer's 8 MiB unless set; part of the
 *   cache key), is deterministic under
 *   config.cudnn_deterministic and has the allowed math type.  Without
 *   one: IMPLICIT_GEMM forward and ALGO_1 backward (deterministic, Chainer's
 *   deterministic choice).  The choice is cached per key (plan_conv.h: the
 *   pass, device, dtype, math, flags and every extent), so the search runs
 *   once per shape.
 * - Math: float64 and float32 under use_cudnn_tensor_core 'auto' use
 *   cuDNN's default math type, which on Ampere and newer GPUs lets float32
 *   convolutions use TF32 tensor cores (what Chainer gets from cuDNN 8 and
 *   later; NVIDIA_TF32_OVERRIDE=0 turns it off); 'always' asks for tensor
 *   cores; 'never' restricts float32 to FMA kernels (no TF32).
 * - Workspace and padded copies come from the caching allocator
 *   (cu_scratch); one cuDNN handle per device, created on first use, runs
 *   on the current stream (stream.c), like every other kernel of the
 *   backend.
 * - A cuDNN status becomes an error naming the op, the shapes and
 *   cudnnGetErrorString.
 *
 * Compiled only (library calls): the planning is unit-tested without a GPU
 * (tests/c/test_cuda_dnn_plan.c), the padded copy emulated
 * (tests/cuda/test_conv_window.cu); the cuDNN calls are checked only by the
 * GPU specs (spec/cuda/dnn_gpu_spec.lua), which have not yet run.
 */
#include "backend.h"
#include "plan_conv.h"

#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <pthread.h>
#include <string.h>

static cudnnHandle_t handles[CU_MAX_DEVICES];
static void *handle_streams[CU_MAX_DEVICES]; /* the stream each handle is bound to */
static cu_conv_cache algo_cache;
static pthread_mutex_t conv_lock = PTHREAD_MUTEX_INITIALIZER; /* handles and algo_cache */

/* One call: its geometry, plan, descriptors and buffers. */
typedef struct conv_call {
    const char *fn;
    const ch_conv_geom *g;
    cu_conv_plan plan;
    int dev, dt;
    size_t elsize;
    cudnnDataType_t ddt;
    cudnnMathType_t math;
    int only_math; /* the math type the algorithm must have, or -1 */
    cudnnHandle_t h;
    cudnnTensorDescriptor_t xd, yd, bd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    float one_f, zero_f;
    double one_d, zero_d;
} conv_call;

static ch_status dnn_fail(const conv_call *c, cudnnStatus_t s, const char *what) {
    char shapes[320];
    cu_conv_shapes_str(c->g, shapes, sizeof shapes);
    return cu_fail(s == CUDNN_STATUS_ALLOC_FAILED ? CH_ERR_MEMORY : CH_ERR_DEVICE, "%s: cuDNN %s failed for %s: %s",
                   c->fn, what, shapes, cudnnGetErrorString(s));
}

#define DNN(c, call)                                   \
    do {                                               \
        cudnnStatus_t dnn_s_ = (call);                 \
        if (dnn_s_ != CUDNN_STATUS_SUCCESS)            \
            return dnn_fail((c), dnn_s_, #call);       \
    } while (0)

static const void *one(const conv_call *c) { return c->dt == CH_FLOAT32 ? (const void *)&c->one_f : &c->one_d; }
static const void *zero(const conv_call *c) { return c->dt == CH_FLOAT32 ? (const void *)&c->zero_f : &c->zero_d; }

/* The handle of device c->dev (current), created on first use. */
static ch_status get_handle(conv_call *c) {
    cudnnStatus_t s = CUDNN_STATUS_SUCCESS;
    pthread_mutex_lock(&conv_lock);
    if (!handles[c->dev]) {
        cudnnHandle_t fresh;
        s = cudnnCreate(&fresh);
        if (s == CUDNN_STATUS_SUCCESS) {
            s = cudnnSetStream(fresh, 0);
            if (s == CUDNN_STATUS_SUCCESS)
                handles[c->dev] = fresh;
            else
                cudnnDestroy(fresh);
        }
    }
    c->h = handles[c->dev];
    /* follow the current stream (stream.c) */
    if (s == CUDNN_STATUS_SUCCESS && c->h && cu_stream_rebind(&handle_streams[c->dev]))
        if ((s = cudnnSetStream(c->h, (cudaStream_t)cu_stream())) != CUDNN_STATUS_SUCCESS)
            handle_streams[c->dev] = &handle_streams[c->dev]; /* no stream: rebind next time */
    pthread_mutex_unlock(&conv_lock);
    if (s != CUDNN_STATUS_SUCCESS)
        return dnn_fail(c, s, "handle creation or cudnnSetStream");
    return CH_OK;
}

static void release_descs(conv_call *c) {
    if (c->xd)
        cudnnDestroyTensorDescriptor(c->xd);
    if (c->yd)
        cudnnDestroyTensorDescriptor(c->yd);
    if (c->bd)
        cudnnDestroyTensorDescriptor(c->bd);
    if (c->wd)
        cudnnDestroyFilterDescriptor(c->wd);
    if (c->cd)
        cudnnDestroyConvolutionDescriptor(c->cd);
}

/* Checks the backend's contract (the front door's promises), plans, and
 * makes the device current; descriptors are made by describe(). */
static ch_status begin(conv_call *c, const char *fn, const ch_conv_geom *g, const ch_tensor *a, const ch_tensor *b,
                       const ch_tensor *out, int64_t na, int64_t nb, int64_t nout) {
    memset(c, 0, sizeof *c);
    c->fn = fn;
    c->g = g;
    c->one_f = 1.0f, c->one_d = 1.0;
    int dt = a ? a->dt : -1;
    if ((dt != CH_FLOAT32 && dt != CH_FLOAT64) || !cu_dense(a, dt, na, a->dev) || !cu_dense(b, dt, nb, a->dev) ||
        !cu_dense(out, dt, nout, a->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: the operands must be contiguous float32 or float64 tensors of one dtype "
                       "on one device, sized as the geometry says", fn);
    c->dev = a->dev;
    c->dt = dt;
    c->elsize = cu_dtype_size(dt);
    c->ddt = dt == CH_FLOAT32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
    c->math = CUDNN_DEFAULT_MATH;
    c->only_math = -1;
    if (dt == CH_FLOAT32 && g->tensor_core == 0) {
        c->math = CUDNN_FMA_MATH;
        c->only_math = CUDNN_FMA_MATH;
    } else if (dt == CH_FLOAT32 && g->tensor_core == 2) {
        c->math = CUDNN_TENSOR_OP_MATH;
    }
    char err[160];
    if (cu_conv_plan_init(&c->plan, g, err, sizeof err) != 0) {
        char shapes[320];
        cu_conv_shapes_str(g, shapes, sizeof shapes);
        return cu_fail(CH_ERR_UNSUPPORTED, "%s: %s: %s (run it on the CPU)", fn, err, shapes);
    }
    CU_TRY(cu_use(c->dev, fn));
    return get_handle(c);
}

/* The descriptors of x (or its padded copy), W, y and the convolution. */
static ch_status describe(conv_call *c) {
    const cu_conv_plan *p = &c->plan;
    int nd = p->nsp + 2;
    DNN(c, cudnnCreateTensorDescriptor(&c->xd));
    DNN(c, cudnnCreateTensorDescriptor(&c->yd));
    DNN(c, cudnnCreateFilterDescriptor(&c->wd));
    DNN(c, cudnnCreateConvolutionDescriptor(&c->cd));
    DNN(c, cudnnSetTensorNdDescriptor(c->xd, c->ddt, nd, p->xdim, p->xstride));
    DNN(c, cudnnSetTensorNdDescriptor(c->yd, c->ddt, nd, p->ydim, p->ystride));
    DNN(c, cudnnSetFilterNdDescriptor(c->wd, c->ddt, CUDNN_TENSOR_NCHW, nd, p->wdim));
    DNN(c, cudnnSetConvolutionNdDescriptor(c->cd, p->nsp, p->pad, p->stride, p->dilation, CUDNN_CROSS_CORRELATION,
                                           c->ddt));
    DNN(c, cudnnSetConvolutionGroupCount(c->cd, p->groups));
    DNN(c, cudnnSetConvolutionMathType(c->cd, c->math));
    return CH_OK;
}

/* cuDNN's ranked list, as plan_conv's entries. */
#define CONV_PERF_MAX 16
#define TO_PERF(dst, src, n)                                                                   \
    for (int i_ = 0; i_ < (n); i_++) {                                                         \
        (dst)[i_].algo = (int)(src)[i_].algo;                                                  \
        (dst)[i_].ok = (src)[i_].status == CUDNN_STATUS_SUCCESS;                               \
        (dst)[i_].memory = (src)[i_].memory;                                                   \
        (dst)[i_].deterministic = (src)[i_].determinism == CUDNN_DETERMINISTIC;                \
        (dst)[i_].math = (int)(src)[i_].mathType;                                              \
    }

static ch_status rank_algorithms(conv_call *c, int pass, cu_conv_perf *perf, int *n) {
    int autotune = c->g->autotune;
    *n = 0;
    if (pass == CU_CONV_FWD) {
        cudnnConvolutionFwdAlgoPerf_t r[CONV_PERF_MAX];
        if (autotune)
            DNN(c, cudnnFindConvolutionForwardAlgorithm(c->h, c->xd, c->wd, c->cd, c->yd, CONV_PERF_MAX, n, r));
        else
            DNN(c, cudnnGetConvolutionForwardAlgorithm_v7(c->h, c->xd, c->wd, c->cd, c->yd, CONV_PERF_MAX, n, r));
        TO_PERF(perf, r, *n);
    } else if (pass == CU_CONV_BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t r[CONV_PERF_MAX];
        if (autotune)
            DNN(c, cudnnFindConvolutionBackwardDataAlgorithm(c->h, c->wd, c->yd, c->cd, c->xd, CONV_PERF_MAX, n, r));
        else
            DNN(c,
                cudnnGetConvolutionBackwardDataAlgorithm_v7(c->h, c->wd, c->yd, c->cd, c->xd, CONV_PERF_MAX, n, r));
        TO_PERF(perf, r, *n);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t r[CONV_PERF_MAX];
        if (autotune)
            DNN(c,
                cudnnFindConvolutionBackwardFilterAlgorithm(c->h, c->xd, c->yd, c->cd, c->wd, CONV_PERF_MAX, n, r));
        else
            DNN(c, cudnnGetConvolutionBackwardFilterAlgorithm_v7(c->h, c->xd, c->yd, c->cd, c->wd, CONV_PERF_MAX, n,
                                                                 r));
        TO_PERF(perf, r, *n);
    }
    return CH_OK;
}

static ch_status workspace_size(conv_call *c, int pass, int algo, size_t *bytes) {
    if (pass == CU_CONV_FWD)
        DNN(c, cudnnGetConvolutionForwardWorkspaceSize(c->h, c->xd, c->wd, c->cd, c->yd,
                                                       (cudnnConvolutionFwdAlgo_t)algo, bytes));
    else if (pass == CU_CONV_BWD_DATA)
        DNN(c, cudnnGetConvolutionBackwardDataWorkspaceSize(c->h, c->wd, c->yd, c->cd, c->xd,
                                                            (cudnnConvolutionBwdDataAlgo_t)algo, bytes));
    else
        DNN(c, cudnnGetConvolutionBackwardFilterWorkspaceSize(c->h, c->xd, c->yd, c->cd, c->wd,
                                                              (cudnnConvolutionBwdFilterAlgo_t)algo, bytes));
    return CH_OK;
}

/* The algorithm of this pass: from the cache, else ranked, chosen, sized
 * and cached.  Leaves the chosen math type on the convolution descriptor. */
static ch_status choose_algorithm(conv_call *c, int pass, cu_conv_choice *choice) {
    cu_conv_key key;
    cu_conv_key_init(&key, pass, c->dev, c->dt, (int)c->math, c->g->deterministic, c->g->autotune, &c->plan);
    pthread_mutex_lock(&conv_lock);
    int hit = cu_conv_cache_get(&algo_cache, &key, choice);
    pthread_mutex_unlock(&conv_lock);
    if (!hit) {
        cu_conv_perf perf[CONV_PERF_MAX];
        int n;
        CU_TRY(rank_algorithms(c, pass, perf, &n));
        int i = cu_conv_choose(perf, n, c->plan.workspace_limit, c->g->deterministic, c->only_math);
        if (i >= 0) {
            choice->algo = perf[i].algo;
            choice->math = perf[i].math;
        } else {
            /* implicit GEMM forward, ALGO_1 backward: deterministic and
             * available for every shape */
            choice->algo = pass == CU_CONV_FWD ? (int)CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM
                         : pass == CU_CONV_BWD_DATA ? (int)CUDNN_CONVOLUTION_BWD_DATA_ALGO_1
                                                    : (int)CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
            choice->math = (int)c->math;
        }
        DNN(c, cudnnSetConvolutionMathType(c->cd, (cudnnMathType_t)choice->math));
        CU_TRY(workspace_size(c, pass, choice->algo, &choice->workspace));
        pthread_mutex_lock(&conv_lock);
        cu_conv_cache_put(&algo_cache, &key, choice); /* out of memory: just not cached */
        pthread_mutex_unlock(&conv_lock);
        return CH_OK;
    }
    DNN(c, cudnnSetConvolutionMathType(c->cd, (cudnnMathType_t)choice->math));
    return CH_OK;
}

/* A scratch buffer of n bytes (NULL when n is 0). */
static ch_status scratch(const conv_call *c, size_t n, void **p) {
    *p = NULL;
    if (n == 0)
        return CH_OK;
    *p = cu_scratch(c->dev, n, c->fn);
    return *p ? CH_OK : CH_ERR_MEMORY;
}

static ch_status zero_fill(const conv_call *c, ch_tensor *t) {
    return cu_check(cudaMemsetAsync(cu_base(t), 0, (size_t)t->numel * c->elsize, (cudaStream_t)cu_stream()), c->fn,
                    "cudaMemsetAsync");
}

/* x copied into the zero-padded frame of the plan (a scratch buffer). */
static ch_status pad_input(const conv_call *c, const ch_tensor *x, void **xp) {
    const ch_conv_geom *g = c->g;
    CU_TRY(scratch(c, (size_t)c->plan.win_numel * c->elsize, xp));
    int64_t shift[CH_MAX_DIMS];
    for (int a = 0; a < g->nsp; a++)
        shift[a] = -c->plan.win_lo[a];
    ch_status st = cu_conv_window_launch((int)c->elsize, g->nsp, g->N * g->C, g->in, c->plan.win_in, shift,
                                         cu_base(x), (char *)*xp);
    if (st != CH_OK) {
        cu_scratch_release(c->dev, *xp, (size_t)c->plan.win_numel * c->elsize);
        *xp = NULL;
    }
    return st;
}

/* y += b over the channels (b NULL: nothing). */
static ch_status add_bias(conv_call *c, const ch_tensor *b, ch_tensor *y) {
    if (!b)
        return CH_OK;
    int nd = c->plan.nsp + 2, dim[CU_CONV_MAX_ND], stride[CU_CONV_MAX_ND];
    for (int i = 0; i < nd; i++)
        dim[i] = 1, stride[i] = 1;
    dim[1] = c->plan.ydim[1];
    stride[0] = dim[1];
    if (!c->yd) {
        DNN(c, cudnnCreateTensorDescriptor(&c->yd));
        DNN(c, cudnnSetTensorNdDescriptor(c->yd, c->ddt, nd, c->plan.ydim, c->plan.ystride));
    }
    DNN(c, cudnnCreateTensorDescriptor(&c->bd));
    DNN(c, cudnnSetTensorNdDescriptor(c->bd, c->ddt, nd, dim, stride));
    DNN(c, cudnnAddTensor(c->h, one(c), c->bd, cu_base(b), one(c), c->yd, cu_base(y)));
    return CH_OK;
}

/* A pass that reads x (the forward pass with W into y, the filter gradient
 * with gy into gW): x, padded when the plan says so, and the workspace
 * around one cuDNN call. */
static ch_status x_pass(conv_call *c, int pass, const ch_tensor *x, const ch_tensor *other, ch_tensor *out) {
    CU_TRY(describe(c));
    cu_conv_choice ch;
    CU_TRY(choose_algorithm(c, pass, &ch));
    void *xp = NULL, *ws = NULL;
    if (c->plan.window)
        CU_TRY(pad_input(c, x, &xp));
    const void *xin = xp ? xp : cu_base(x);
    ch_status st = scratch(c, ch.workspace, &ws);
    if (st == CH_OK) {
        cudnnStatus_t s =
            pass == CU_CONV_FWD
                ? cudnnConvolutionForward(c->h, one(c), c->xd, xin, c->wd, cu_base(other), c->cd,
                                          (cudnnConvolutionFwdAlgo_t)ch.algo, ws, ch.workspace, zero(c), c->yd,
                                          cu_base(out))
                : cudnnConvolutionBackwardFilter(c->h, one(c), c->xd, xin, c->yd, cu_base(other), c->cd,
                                                 (cudnnConvolutionBwdFilterAlgo_t)ch.algo, ws, ch.workspace, zero(c),
                                                 c->wd, cu_base(out));
        if (s != CUDNN_STATUS_SUCCESS)
            st = dnn_fail(c, s, pass == CU_CONV_FWD ? "cudnnConvolutionForward" : "cudnnConvolutionBackwardFilter");
    }
    if (ws)
        cu_scratch_release(c->dev, ws, ch.workspace);
    if (xp)
        cu_scratch_release(c->dev, xp, (size_t)c->plan.win_numel * c->elsize);
    return st;
}

static ch_status forward(conv_call *c, const ch_tensor *x, const ch_tensor *w, const ch_tensor *b, ch_tensor *y) {
    if (c->plan.empty)
        CU_TRY(zero_fill(c, y));
    else
        CU_TRY(x_pass(c, CU_CONV_FWD, x, w, y));
    return add_bias(c, b, y);
}

static ch_status backward_data(conv_call *c, const ch_tensor *gy, const ch_tensor *w, ch_tensor *gx) {
    if (c->plan.empty)
        return zero_fill(c, gx);
    CU_TRY(describe(c));
    cu_conv_choice ch;
    CU_TRY(choose_algorithm(c, CU_CONV_BWD_DATA, &ch));
    const ch_conv_geom *g = c->g;
    size_t frame = (size_t)c->plan.win_numel * c->elsize;
    void *gxp = NULL, *ws = NULL;
    ch_status st = scratch(c, frame, &gxp);
    if (st == CH_OK)
        st = scratch(c, ch.workspace, &ws);
    if (st == CH_OK) {
        cudnnStatus_t s = cudnnConvolutionBackwardData(c->h, one(c), c->wd, cu_base(w), c->yd, cu_base(gy), c->cd,
                                                       (cudnnConvolutionBwdDataAlgo_t)ch.algo, ws, ch.workspace,
                                                       zero(c), c->xd, gxp ? gxp : cu_base(gx));
        st = s == CUDNN_STATUS_SUCCESS ? CH_OK : dnn_fail(c, s, "cudnnConvolutionBackwardData");
    }
    if (st == CH_OK && gxp) /* cut gx out of the padded frame */
        st = cu_conv_window_launch((int)c->elsize, g->nsp, g->N * g->C, c->plan.win_in, g->in, c->plan.win_lo,
                                   (const char *)gxp, cu_base(gx));
    if (ws)
        cu_scratch_release(c->dev, ws, ch.workspace);
    if (gxp)
        cu_scratch_release(c->dev, gxp, frame);
    return st;
}

static ch_status backward_filter(conv_call *c, const ch_tensor *x, const ch_tensor *gy, ch_tensor *gw) {
    if (c->plan.empty)
        return zero_fill(c, gw);
    return x_pass(c, CU_CONV_BWD_FILTER, x, gy, gw);
}

/* One pass: a and b are (x, W), (gy, W) or (x, gy), out is y, gx or gW. */
static ch_status run_pass(int pass, const ch_conv_geom *g, const ch_tensor *a, const ch_tensor *b,
                          const ch_tensor *bias, ch_tensor *out) {
    static const char *const names[3] = {"convolution", "convolution_backward_data", "convolution_backward_filter"};
    /* element counts of x (N, C, *in), W (Cout, Cg, *k) and y (N, Cout, *out),
     * and which of them a, b and out have in each pass */
    int64_t n[3] = {g->N * g->C * g->Pin, g->Cout * g->Cg * g->Kk, g->N * g->Cout * g->P};
    static const int role[3][3] = {{0, 1, 2}, {2, 1, 0}, {0, 2, 1}};
    const int *r = role[pass];
    conv_call c;
    ch_status st = begin(&c, names[pass], g, a, b, out, n[r[0]], n[r[1]], n[r[2]]);
    if (st == CH_OK && bias && !cu_dense(bias, a->dt, g->Cout, a->dev))
        st = cu_fail(CH_ERR_INTERNAL, "convolution: b must be a contiguous (%lld,) tensor like x", (long long)g->Cout);
    if (st == CH_OK && n[r[2]] > 0)
        st = pass == CU_CONV_FWD ? forward(&c, a, b, bias, out)
           : pass == CU_CONV_BWD_DATA ? backward_data(&c, a, b, out) : backward_filter(&c, a, b, out);
    release_descs(&c);
    return st;
}

ch_status cu_conv_forward(const ch_conv_geom *g, const ch_tensor *x, const ch_tensor *w, const ch_tensor *b,
                          ch_tensor *y) {
    return run_pass(CU_CONV_FWD, g, x, w, b, y);
}

ch_status cu_conv_backward_data(const ch_conv_geom *g, const ch_tensor *gy, const ch_tensor *w, ch_tensor *gx) {
    return run_pass(CU_CONV_BWD_DATA, g, gy, w, NULL, gx);
}

ch_status cu_conv_backward_filter(const ch_conv_geom *g, const ch_tensor *x, const ch_tensor *gy, ch_tensor *gw) {
    return run_pass(CU_CONV_BWD_FILTER, g, x, gy, NULL, gw);
}

/*
 * softmax.cu -- softmax, log_softmax, their gradients and the fused softmax
 * cross-entropy on the GPU, one block per row (a row: the N elements of one
 * (o, i) position, I apart; grid-stride over rows).  The formulas are the
 * CPU's (runtime/cpu/softmax_kernels.h, softmax_cross_entropy.c): sums
 * accumulate in double; softmax keeps exp in the element type,
 * cross-entropy computes in double.  Each thread accumulates a fixed share
 * of the row and a fixed shuffle tree combines the shares, so results are
 * deterministic; they differ from the CPU's in the last bits (summation
 * order, the GPU's exp).
 *
 * Compiled here, but NOT yet executed on a GPU: the GPU specs
 * (spec/cuda/mlp_gpu_spec.lua) compare it with the CPU where one exists.
 */
#include "backend.h"
#include "convert.cuh"

#include <cuda_runtime.h>
#include <math.h>

/* The launch's row parameters. */
struct sm_rows {
    int64_t rows, N, I;
};

__device__ __forceinline__ float sm_exp(float v) { return expf(v); }
__device__ __forceinline__ double sm_exp(double v) { return exp(v); }

/* The max that lets a NaN win (the CPU's strided rule; on its contiguous
 * rows a NaN makes the sum, hence the row, NaN all the same). */
template <typename T> __device__ __forceinline__ T sm_max(T a, T b) { return (b > a || b != b) ? b : a; }

/* Combines v over the block (blockDim.x a multiple of 32, at most 1024)
 * with op, whose identity is id, and hands the result to every thread.
 * sh holds 32 values. */
template <typename T, typename Op> __device__ T sm_block(T v, T *sh, Op op, T id) {
    for (int d = 16; d > 0; d >>= 1)
        v = op(v, __shfl_down_sync(0xffffffffu, v, d));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    __syncthreads();  /* sh may still be read from the previous call */
    if (lane == 0)
        sh[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < nw ? sh[lane] : id;
        for (int d = 16; d > 0; d >>= 1)
            v = op(v, __shfl_down_sync(0xffffffffu, v, d));
        if (lane == 0)
            sh[0] = v;
    }
    __syncthreads();
    return sh[0];
}

struct sm_max_op {
    template <typename T> __device__ T operator()(T a, T b) const { return sm_max(a, b); }
};
/* the cross-entropy's max, in which a NaN never wins (the CPU's rule) */
struct sce_max_op {
    __device__ double operator()(double a, double b) const { return b > a ? b : a; }
};
struct sm_sum_op {
    __device__ double operator()(double a, double b) const { return a + b; }
};

template <typename T> __global__ void softmax_fwd_kernel(sm_rows r, int lg, const T *x, T *y) {
    __shared__ T shm[32];
    __shared__ double shs[32];
    for (int64_t row = blockIdx.x; row < r.rows; row += gridDim.x) {
        int64_t base = (row / r.I) * r.N * r.I + row % r.I;
        const T *xr = x + base;
        T *yr = y + base;
        T m = -INFINITY;
        for (int64_t j = threadIdx.x; j < r.N; j += blockDim.x)
            m = sm_max(m, xr[j * r.I]);
        m = sm_block(m, shm, sm_max_op(), (T)-INFINITY);
        double s = 0;
        for (int64_t j = threadIdx.x; j < r.N; j += blockDim.x) {
            T e = sm_exp(xr[j * r.I] - m);
            if (!lg)
                yr[j * r.I] = e;
            s += e;
        }
        s = sm_block(s, shs, sm_sum_op(), 0.0);
        if (lg) {
            /* (x - m) - log(s): x - m is exact, m + log(s) would round */
            T ls = (T)log(s);
            for (int64_t j = threadIdx.x; j < r.N; j += blockDim.x)
                yr[j * r.I] = (xr[j * r.I] - m) - ls;
        } else {
            T inv = (T)(1.0 / s);
            for (int64_t j = threadIdx.x; j < r.N; j += blockDim.x)
                yr[j * r.I] *= inv;
        }
    }
}

template <typename T> __global__ void softmax_bwd_kernel(sm_rows r, int lg, const T *y, const T *gy, T *gx) {
    __shared__ double shs[32];
    for (int64_t row = blockIdx.x; row < r.rows; row += gridDim.x) {
        int64_t base = (row / r.I) * r.N * r.I + row % r.I;
        double s = 0;
        for (int64_t j = threadIdx.x; j < r.N; j += blockDim.x) {
            int64_t k = base + j * r.I;
            s += lg ? (double)gy[k] : (double)gy[k] * y[k];
        }
        T st = (T)sm_block(s, shs, sm_sum_op(), 0.0);
        for (int64_t j = threadIdx.x; j < r.N; j += blockDim.x) {
            int64_t k = base + j * r.I;
            gx[k] = lg ? gy[k] - sm_exp(y[k]) * st : y[k] * (gy[k] - st);
        }
    }
}

/* Cross-entropy over rows of N classes; labels are in range (checked by the
 * core) or ignore. */
template <typename T>
__global__ void sce_kernel(sm_rows r, const T *x, const int64_t *labels, const T *w, int64_t ignore, T *loss,
                           T *grad, T *prob) {
    __shared__ double shs[32];
    for (int64_t row = blockIdx.x; row < r.rows; row += gridDim.x) {
        int64_t base = (row / r.I) * r.N * r.I + row % r.I;
        const T *xr = x + base;
        double m = -INFINITY;
        for (int64_t j = threadIdx.x; j < r.N; j += blockDim.x) {
            double v = (double)xr[j * r.I];
            if (v > m)  /* the CPU's rule: a NaN never becomes the max */
                m = v;
        }
        m = sm_block(m, shs, sce_max_op(), (double)-INFINITY);
        double s = 0;
        for (int64_t j = threadIdx.x; j < r.N; j += blockDim.x)
            s += exp((double)xr[j * r.I] - m);
        s = sm_block(s, shs, sm_sum_op(), 0.0);
        double lse = m + log(s);
        int64_t lab = labels[row];
        bool valid = lab != ignore;
        double wt = valid ? (w ? (double)w[lab] : 1.0) : 0.0;
        if (threadIdx.x == 0)
            loss[row] = valid ? (T)(-((double)xr[lab * r.I] - lse) * wt) : (T)0;
        if (grad || prob) {
            for (int64_t j = threadIdx.x; j < r.N; j += blockDim.x) {
                double pc = exp((double)xr[j * r.I] - lse);
                if (prob)
                    prob[base + j * r.I] = (T)pc;
                if (grad)
                    grad[base + j * r.I] = (T)((pc - (j == lab ? 1.0 : 0.0)) * wt);
            }
        }
    }
}

template <typename T>
static void launch(int kind, const ch_softmax_args *s, const char *x, const char *gy, char *out, const int64_t *labels,
                   const char *weight, char *grad, char *prob) {
    sm_rows r = {s->O * s->I, s->N, s->I};
    /* a warp for short rows (a classifier's ten classes), up to 256 threads */
    unsigned threads = s->N > 128 ? 256 : s->N > 32 ? 128 : 32;
    unsigned blocks = (unsigned)(r.rows < 65535 ? r.rows : 65535);
    switch (kind) {
    case CU_SOFTMAX_FWD:
        softmax_fwd_kernel<T><<<blocks, threads, 0, (cudaStream_t)cu_stream()>>>(r, s->log, (const T *)x, (T *)out);
        break;
    case CU_SOFTMAX_BWD:
        softmax_bwd_kernel<T><<<blocks, threads, 0, (cudaStream_t)cu_stream()>>>(r, s->log, (const T *)x, (const T *)gy, (T *)out);
        break;
    default:
        sce_kernel<T><<<blocks, threads, 0, (cudaStream_t)cu_stream()>>>(r, (const T *)x, labels, (const T *)weight, s->ignore_label, (T *)out,
                                           (T *)grad, (T *)prob);
        break;
    }
}

extern "C" ch_status cu_softmax_launch(int kind, const ch_softmax_args *s, int dt, const char *x, const char *gy, char *out,
                                       const int64_t *labels, const char *weight, char *grad, char *prob) {
    if (dt == CH_FLOAT32)
        launch<float>(kind, s, x, gy, out, labels, weight, grad, prob);
    else
        launch<double>(kind, s, x, gy, out, labels, weight, grad, prob);
    return cu_check(cudaGetLastError(), "softmax", "kernel launch");
}

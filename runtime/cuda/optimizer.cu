/*
 * optimizer.cu -- the fused optimizer updates of SGD, MomentumSGD (plain,
 * corrected, Nesterov) and Adam (with AdamW's decay, AMSGrad and AdaBound)
 * on the GPU: one grid-stride pass over contiguous float32 or float64 data,
 * reading the gradient and states once and writing the parameter and states
 * once, with the formulas of runtime/cpu/optimizer_updates.c in the
 * parameter's own precision.  This file is compiled with --fmad=false
 * (runtime/cuda/CMakeLists.txt) so that products and sums round separately,
 * as on the CPU.
 *
 * Compiled here, but NOT yet executed on a GPU: the GPU specs
 * (spec/cuda/mlp_gpu_spec.lua) compare it with the CPU where one exists.
 */
#include "backend.h"
#include "convert.cuh"

#include <cuda_runtime.h>

/* The hyperparameters in the element type, as the CPU converts them. */
template <typename T> struct opt_consts {
    T lr, mu, mu2, c, b1, b2, eps, eta, keep, lo, hi;
};

template <typename T> __device__ __forceinline__ T opt_sqrt(T v);
template <> __device__ __forceinline__ float opt_sqrt<float>(float v) { return sqrtf(v); }
template <> __device__ __forceinline__ double opt_sqrt<double>(double v) { return sqrt(v); }

template <typename T>
__global__ void opt_kernel(int kind, int amsgrad, int bounded, opt_consts<T> k, int64_t n, T *P, const T *G, T *S0,
                           T *S1, T *S2) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T g = G[i];
        switch (kind) {
        case CU_OPT_SGD:
            P[i] -= k.lr * g;
            break;
        case CU_OPT_MOMENTUM: {
            T v = k.mu * S0[i] - k.lr * g;
            S0[i] = v;
            P[i] += v;
            break;
        }
        case CU_OPT_CMOMENTUM: {
            T v = k.mu * S0[i] - g;
            S0[i] = v;
            P[i] += k.lr * v;
            break;
        }
        case CU_OPT_NESTEROV: {
            T v = k.mu * S0[i] - k.lr * g;
            S0[i] = v;
            P[i] += k.mu2 * v - k.c * g;
            break;
        }
        default: { /* Adam */
            T m = S0[i] + k.b1 * (g - S0[i]);
            T v = S1[i] + k.b2 * (g * g - S1[i]);
            S0[i] = m;
            S1[i] = v;
            if (amsgrad) {
                T vh = S2[i] > v ? S2[i] : v;
                S2[i] = vh;
                v = vh;
            }
            T step = k.lr / (opt_sqrt(v) + k.eps);
            if (bounded) {
                step = step > k.lo ? step : k.lo;
                step = step < k.hi ? step : k.hi;
            }
            P[i] = k.keep * P[i] - k.eta * step * m;
            break;
        }
        }
    }
}

template <typename T> static opt_consts<T> consts_of(const ch_opt_args *u) {
    opt_consts<T> k;
    k.lr = (T)u->lr;
    k.mu = (T)u->momentum;
    k.mu2 = (T)(u->momentum * u->momentum);
    k.c = (T)((1.0 + u->momentum) * u->lr);
    k.b1 = (T)(1.0 - u->beta1);
    k.b2 = (T)(1.0 - u->beta2);
    k.eps = (T)u->eps;
    k.eta = (T)u->eta;
    k.keep = (T)(1.0 - u->eta * u->wd);
    k.lo = (T)u->lower;
    k.hi = (T)u->upper;
    return k;
}

extern "C" ch_status cu_opt_launch(int kind, const ch_opt_args *u, int dt, int64_t n, char *param, const char *grad, char *s0,
                                   char *s1, char *s2) {
    unsigned blocks = cu_blocks(n);
    int ams = u->amsgrad != 0, bounded = u->bounded != 0;
    if (dt == CH_FLOAT32)
        opt_kernel<float><<<blocks, 256>>>(kind, ams, bounded, consts_of<float>(u), n, (float *)param,
                                           (const float *)grad, (float *)s0, (float *)s1, (float *)s2);
    else
        opt_kernel<double><<<blocks, 256>>>(kind, ams, bounded, consts_of<double>(u), n, (double *)param,
                                            (const double *)grad, (double *)s0, (double *)s1, (double *)s2);
    return cu_check(cudaGetLastError(), "optimizer update", "kernel launch");
}

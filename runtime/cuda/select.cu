/*
 * select.cu -- where and axpby on the GPU, with the CPU's arithmetic
 * (runtime/cpu/elementwise.c):
 *
 *  - where moves raw elements of one size (the core has converted every
 *    operand to the output's dtype and the condition to bool), so four
 *    instantiations cover every dtype;
 *  - axpby computes float32 in float (the CPU's fast path) and float16 and
 *    float64 in double (the CPU's general loop), and does not read y when
 *    b == 0 (BLAS convention: NaN garbage in y is dropped).  Products and
 *    the sum are rounded separately, as on the CPU (no fused multiply-add).
 *
 * The index space comes from plan_elementwise.c: a dense run indexes with 32
 * bits when it fits, other layouts decompose the index over the merged axes.
 *
 * Compiled here, but NOT yet executed on a GPU: the GPU specs
 * (spec/cuda/mlp_gpu_spec.lua) compare it with the CPU where one exists.
 */
#include "backend.h"
#include "convert.cuh"
#include "plan.h"

#include <cuda_runtime.h>

/* Element offsets of linear position i for the first n operands. */
template <int N> __device__ __forceinline__ void sel_offsets(const cu_ew_plan &p, int64_t i, int64_t *o) {
    for (int k = 0; k < N; k++)
        o[k] = 0;
    for (int d = p.nd - 1; d >= 0; d--) {
        int64_t c = i % p.dim[d];
        i /= p.dim[d];
        for (int k = 0; k < N; k++)
            o[k] += c * p.stride[k][d];
    }
}

template <typename T>
__global__ void where_kernel(cu_ew_plan p, T *out, const uint8_t *cond, const T *a, const T *b) {
    if (p.index32) {
        uint32_t n = (uint32_t)p.numel, sc = (uint32_t)p.stride[1][0], sa = (uint32_t)p.stride[2][0],
                 sb = (uint32_t)p.stride[3][0];
        for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
            out[i] = cond[i * sc] ? a[i * sa] : b[i * sb];
        return;
    }
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t o[4];
        if (p.dense)
            o[0] = i, o[1] = i * p.stride[1][0], o[2] = i * p.stride[2][0], o[3] = i * p.stride[3][0];
        else
            sel_offsets<4>(p, i, o);
        out[o[0]] = cond[o[1]] ? a[o[2]] : b[o[3]];
    }
}

extern "C" ch_status cu_where_launch(const cu_ew_plan *p, int size, char *out, const char *cond, const char *a,
                                     const char *b) {
    unsigned blocks = cu_blocks(p->numel);
    const uint8_t *c = (const uint8_t *)cond;
    switch (size) {
    case 1: where_kernel<uint8_t><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, (uint8_t *)out, c, (const uint8_t *)a, (const uint8_t *)b); break;
    case 2: where_kernel<uint16_t><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, (uint16_t *)out, c, (const uint16_t *)a, (const uint16_t *)b); break;
    case 4: where_kernel<uint32_t><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, (uint32_t *)out, c, (const uint32_t *)a, (const uint32_t *)b); break;
    case 8: where_kernel<uint64_t><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, (uint64_t *)out, c, (const uint64_t *)a, (const uint64_t *)b); break;
    default: return cu_fail(CH_ERR_INTERNAL, "where: invalid element size %d", size);
    }
    return cu_check(cudaGetLastError(), "where", "kernel launch");
}

/* Storage T, compute C. */
template <typename T, typename C> __device__ __forceinline__ C ax_load(const T *p, int64_t i) { return (C)p[i]; }
template <> __device__ __forceinline__ double ax_load<__half, double>(const __half *p, int64_t i) {
    return (double)__half2float(p[i]);
}
template <typename T, typename C> __device__ __forceinline__ void ax_store(T *p, int64_t i, C v) {
    p[i] = cu_store<T>::from((double)v);
}

/* a*x + b*y rounded like the CPU's: no fused multiply-add (nvcc contracts
 * a*x + b*y into one by default, which changes the last bit). */
__device__ __forceinline__ float ax_mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double ax_mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float ax_add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double ax_add(double a, double b) { return __dadd_rn(a, b); }

template <typename T, typename C>
__global__ void axpby_kernel(cu_ew_plan p, C a, const T *x, C b, T *y) {
    const bool read_y = b != 0;
    if (p.index32) {
        uint32_t n = (uint32_t)p.numel, sx = (uint32_t)p.stride[1][0];
        for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
            C v = ax_mul(a, ax_load<T, C>(x, i * sx));
            ax_store<T, C>(y, i, read_y ? ax_add(v, ax_mul(b, ax_load<T, C>(y, i))) : v);
        }
        return;
    }
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t o[2];
        if (p.dense)
            o[0] = i, o[1] = i * p.stride[1][0];
        else
            sel_offsets<2>(p, i, o);
        C v = ax_mul(a, ax_load<T, C>(x, o[1]));
        ax_store<T, C>(y, o[0], read_y ? ax_add(v, ax_mul(b, ax_load<T, C>(y, o[0]))) : v);
    }
}

extern "C" ch_status cu_axpby_launch(const cu_ew_plan *p, int dt, double a, const char *x, double b, char *y) {
    unsigned blocks = cu_blocks(p->numel);
    switch (dt) {
    case CH_FLOAT16:
        axpby_kernel<__half, double><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, a, (const __half *)x, b, (__half *)y);
        break;
    case CH_FLOAT32:
        axpby_kernel<float, float><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, (float)a, (const float *)x, (float)b, (float *)y);
        break;
    case CH_FLOAT64:
        axpby_kernel<double, double><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, a, (const double *)x, b, (double *)y);
        break;
    default: return cu_fail(CH_ERR_INTERNAL, "axpby: invalid dtype code %d", dt);
    }
    return cu_check(cudaGetLastError(), "axpby", "kernel launch");
}

/*
 * reduce.cu -- sum, prod, max, min, argmax and argmin over the reduced
 * axes of a cu_reduce_plan (plan_reduce.c), with the CPU's semantics
 * (runtime/cpu/reduce_kernels.h): max/min propagate NaN; argmax/argmin give
 * the first occurrence of the extreme, or of the first NaN; integer sums and
 * products wrap (computed in uint64).
 *
 * TPR threads work on one output row: each accumulates a fixed, strided
 * subset of the row in index order, then the partials meet in a fixed
 * shuffle tree (and, for 256-thread rows, a fixed tree over the warps'
 * partials in shared memory).  The order depends only on the shape, so
 * results are deterministic from run to run; they differ from the CPU's
 * pairwise sums in the last bits.  A row is never split across blocks, so a
 * single very long row uses one SM (splitting it is future work).
 *
 * Compiled here, but NOT yet executed on a GPU.
 */
#include "backend.h"
#include "plan.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <type_traits>

template <typename T> constexpr bool rd_int = std::is_integral<T>::value;

template <typename T> __device__ __forceinline__ bool rd_isnan(T v) { return v != v; }

template <typename T, int OP> __device__ __forceinline__ T rd_identity() {
    if constexpr (OP == CH_SUM)
        return (T)0;
    else if constexpr (OP == CH_PROD)
        return (T)1;
    else if constexpr (rd_int<T>)
        return OP == CH_MAX || OP == CH_ARGMAX ? INT64_MIN : INT64_MAX;
    else
        return OP == CH_MAX || OP == CH_ARGMAX ? (T)-INFINITY : (T)INFINITY;
}

/* Folds (w, j) into the accumulator (v, i). */
template <typename T, int OP> __device__ __forceinline__ void rd_fold(T &v, int64_t &i, T w, int64_t j) {
    if constexpr (OP == CH_SUM) {
        if constexpr (rd_int<T>)
            v = (T)((uint64_t)v + (uint64_t)w);
        else
            v += w;
    } else if constexpr (OP == CH_PROD) {
        if constexpr (rd_int<T>)
            v = (T)((uint64_t)v * (uint64_t)w);
        else
            v *= w;
    } else if constexpr (OP == CH_MAX) {
        if (!rd_isnan(v) && (rd_isnan(w) || w > v))
            v = w;
    } else if constexpr (OP == CH_MIN) {
        if (!rd_isnan(v) && (rd_isnan(w) || w < v))
            v = w;
    } else {
        /* strictly better, the first NaN, or a tie (NaN with NaN too) at a
         * smaller position: symmetric, so the tree order does not matter */
        bool vn = rd_isnan(v), wn = rd_isnan(w);
        bool better = OP == CH_ARGMAX ? w > v : w < v;
        bool take = vn ? (wn && j < i) : (wn || better || (w == v && j < i));
        if (take) {
            v = w;
            i = j;
        }
    }
}

__device__ __forceinline__ int64_t rd_offset(int n, const int64_t *dim, const int64_t *stride, int64_t i) {
    int64_t o = 0;
    for (int k = n - 1; k >= 0; k--) {
        int64_t c = i % dim[k];
        i /= dim[k];
        o += c * stride[k];
    }
    return o;
}

/* Shuffle tree over the 32 lanes; lane 0 ends with the result. */
template <typename T, int OP> __device__ __forceinline__ void rd_warp(T &v, int64_t &i) {
    for (int off = 16; off > 0; off >>= 1) {
        T w = __shfl_down_sync(0xffffffffu, v, off);
        int64_t j = __shfl_down_sync(0xffffffffu, i, off);
        rd_fold<T, OP>(v, i, w, j);
    }
}

template <typename T, int OP, int TPR> __global__ void rd_kernel(cu_reduce_plan p, const T *__restrict__ x, void *out) {
    constexpr int RPB = 256 / TPR;  /* rows per block */
    __shared__ T sv[8];
    __shared__ int64_t si[8];
    const int t = threadIdx.x % TPR, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int64_t row0 = (int64_t)blockIdx.x * RPB; row0 < p.rows; row0 += (int64_t)gridDim.x * RPB) {
        const int64_t row = row0 + threadIdx.x / TPR;
        T v = rd_identity<T, OP>();
        int64_t i = INT64_MAX;
        if (row < p.rows) {
            const T *base = x + rd_offset(p.nk, p.kdim, p.kstride, row);
            if (p.nr <= 1) {
                const int64_t s = p.nr == 1 ? p.rstride[0] : 0;
                for (int64_t r = t; r < p.count; r += TPR)
                    rd_fold<T, OP>(v, i, base[r * s], r);
            } else {
                for (int64_t r = t; r < p.count; r += TPR)
                    rd_fold<T, OP>(v, i, base[rd_offset(p.nr, p.rdim, p.rstride, r)], r);
            }
        }
        rd_warp<T, OP>(v, i);
        if constexpr (TPR == 256) {
            if (lane == 0) {
                sv[warp] = v;
                si[warp] = i;
            }
            __syncthreads();
            if (warp == 0) {
                v = lane < 8 ? sv[lane] : rd_identity<T, OP>();
                i = lane < 8 ? si[lane] : INT64_MAX;
                rd_warp<T, OP>(v, i);
            }
            __syncthreads();  /* sv/si are reused by the next row */
        }
        if (t == 0 && row < p.rows) {
            if constexpr (OP == CH_ARGMAX || OP == CH_ARGMIN)
                ((int64_t *)out)[row] = i;
            else
                ((T *)out)[row] = v;
        }
    }
}

template <typename T, int OP> static void rd_launch(const cu_reduce_plan *p, const char *x, void *out) {
    /* long rows get a block each, short rows a warp each */
    if (p->count > 1024) {
        int64_t blocks = p->rows < 65536 ? p->rows : 65536;
        rd_kernel<T, OP, 256><<<(unsigned)blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, (const T *)x, out);
    } else {
        int64_t blocks = (p->rows + 7) / 8;
        rd_kernel<T, OP, 32><<<(unsigned)(blocks < 65536 ? blocks : 65536), 256, 0, (cudaStream_t)cu_stream()>>>(*p, (const T *)x, out);
    }
}

template <typename T> static bool rd_dispatch_op(int op, const cu_reduce_plan *p, const char *x, void *out) {
    switch (op) {
    case CH_SUM: rd_launch<T, CH_SUM>(p, x, out); return true;
    case CH_PROD: rd_launch<T, CH_PROD>(p, x, out); return true;
    case CH_MAX: rd_launch<T, CH_MAX>(p, x, out); return true;
    case CH_MIN: rd_launch<T, CH_MIN>(p, x, out); return true;
    case CH_ARGMAX: rd_launch<T, CH_ARGMAX>(p, x, out); return true;
    case CH_ARGMIN: rd_launch<T, CH_ARGMIN>(p, x, out); return true;
    default: return false;
    }
}

extern "C" ch_status cu_reduce_launch(const char *fn, int op, int dt, const cu_reduce_plan *p, const char *x,
                                      void *out) {
    if (p->rows == 0)
        return CH_OK;
    bool ok;
    switch (dt) {
    case CH_FLOAT32: ok = rd_dispatch_op<float>(op, p, x, out); break;
    case CH_FLOAT64: ok = rd_dispatch_op<double>(op, p, x, out); break;
    case CH_INT64: ok = rd_dispatch_op<int64_t>(op, p, x, out); break;
    default: ok = false; break;
    }
    if (!ok)
        return cu_fail(CH_ERR_INTERNAL, "%s: no reduction kernel for op %d on dtype code %d", fn, op, dt);
    return cu_check(cudaGetLastError(), fn, "kernel launch");
}

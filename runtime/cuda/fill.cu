/*
 * fill.cu -- sets every element of a (possibly strided) device tensor to a
 * value, converted with the CPU's rules (convert.cuh).  A dense fill with
 * zero is a cudaMemset in copy.c.
 */
#include "backend.h"
#include "convert.cuh"

#include <cuda_runtime.h>
#include <string.h>
#include <type_traits>

template <typename T> __global__ void fill_dense(T *__restrict__ d, double value, int64_t n) {
    const T v = cu_store<T>::from(value);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        d[i] = v;
}

template <typename T> __global__ void fill_strided(T *d, double value, cu_kgeom g, int64_t n) {
    const T v = cu_store<T>::from(value);
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t od, unused;
        cu_offsets(g, i, od, unused);
        d[od] = v;
    }
}

extern "C" ch_status cu_fill_kernel(const cu_geom *g, int dt, void *dst, double value) {
    if (g->numel == 0)
        return CH_OK;
    unsigned blocks = cu_blocks(g->numel);
    bool ok = cu_dispatch(dt, [&](auto *tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        if (g->contiguous) {
            fill_dense<T><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>((T *)dst, value, g->numel);
        } else {
            cu_kgeom k;
            k.nd = g->nd;
            memcpy(k.dim, g->dim, sizeof k.dim);
            memcpy(k.stride, g->stride, sizeof k.stride);
            fill_strided<T><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>((T *)dst, value, k, g->numel);
        }
    });
    if (!ok)
        return cu_fail(CH_ERR_DTYPE, "fill: invalid dtype code %d", dt);
    return cu_check(cudaGetLastError(), "fill", "kernel launch");
}

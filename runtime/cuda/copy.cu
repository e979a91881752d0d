/*
 * copy.cu -- the device copy kernel: dst = cast(src) over a collapsed
 * index space (cu_geom), for every pair of dtypes.  Same-dtype copies move
 * raw bits by element width (as the CPU does, so NaN payloads and odd bool
 * bytes survive); the host side (copy.c) routes dense same-dtype copies to
 * cudaMemcpy before they get here.
 */
#include "backend.h"
#include "convert.cuh"

#include <cuda_runtime.h>
#include <string.h>
#include <type_traits>

template <typename D, typename S> __global__ void copy_dense(D *__restrict__ d, const S *__restrict__ s, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        d[i] = cu_cast<D>(s[i]);
}

template <typename D, typename S> __global__ void copy_strided(D *d, const S *s, cu_kgeom g, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t od, os;
        cu_offsets(g, i, od, os);
        d[od] = cu_cast<D>(s[os]);
    }
}

template <typename T> __global__ void move_dense(T *__restrict__ d, const T *__restrict__ s, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        d[i] = s[i];
}

template <typename T> __global__ void move_strided(T *d, const T *s, cu_kgeom g, int64_t n) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t od, os;
        cu_offsets(g, i, od, os);
        d[od] = s[os];
    }
}

static cu_kgeom kernel_geom(const cu_geom *g) {
    cu_kgeom k;
    k.nd = g->nd;
    memcpy(k.dim, g->dim, sizeof k.dim);
    memcpy(k.stride, g->stride, sizeof k.stride);
    return k;
}

template <typename T> static void launch_move(const cu_geom *g, void *dst, const void *src) {
    unsigned blocks = cu_blocks(g->numel);
    if (g->contiguous)
        move_dense<T><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>((T *)dst, (const T *)src, g->numel);
    else
        move_strided<T><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>((T *)dst, (const T *)src, kernel_geom(g), g->numel);
}

extern "C" ch_status cu_copy_kernel(const cu_geom *g, int dt_dst, void *dst, int dt_src, const void *src) {
    if (g->numel == 0)
        return CH_OK;
    if (dt_dst == dt_src) {
        switch (cu_dtype_size(dt_dst)) {
        case 1: launch_move<uint8_t>(g, dst, src); break;
        case 2: launch_move<uint16_t>(g, dst, src); break;
        case 4: launch_move<uint32_t>(g, dst, src); break;
        case 8: launch_move<uint64_t>(g, dst, src); break;
        default: return cu_fail(CH_ERR_DTYPE, "copy: invalid dtype code %d", dt_dst);
        }
        return cu_check(cudaGetLastError(), "copy", "kernel launch");
    }
    unsigned blocks = cu_blocks(g->numel);
    bool ok = cu_dispatch(dt_dst, [&](auto *dtag) {
        using D = std::remove_pointer_t<decltype(dtag)>;
        cu_dispatch(dt_src, [&](auto *stag) {
            using S = std::remove_pointer_t<decltype(stag)>;
            if constexpr (!std::is_same<D, S>::value) {
                if (g->contiguous)
                    copy_dense<D, S><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>((D *)dst, (const S *)src, g->numel);
                else
                    copy_strided<D, S><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>((D *)dst, (const S *)src, kernel_geom(g), g->numel);
            }
        });
    });
    if (!ok || cu_dtype_size(dt_src) == 0)
        return cu_fail(CH_ERR_DTYPE, "copy: invalid dtype codes %d -> %d", dt_src, dt_dst);
    return cu_check(cudaGetLastError(), "copy", "kernel launch");
}

/*
 * launch.cuh -- the one way this backend launches a kernel whose work
 * splits into independent items, and the host emulation that tests it
 * without a GPU.
 *
 * A kernel body is a functor with `CU_HD void operator()(int64_t i) const`
 * that does item i (an element, a row, an output position).  cu_each(fn, n,
 * body) runs items 0..n-1 in a grid-stride loop on the current stream of
 * the current device (stream.c) and
 * reports a launch failure naming fn.  Compiled with CU_EMULATE (the tests
 * of tests/cuda), the same call runs the items one after another on the
 * host, so the per-item code, and the host side that plans and checks the
 * launch, run on host memory against the CPU kernels in CI, where no GPU
 * exists.  What emulation cannot test (block cooperation, shared memory,
 * races between items, the speed) is left to the GPU specs.
 *
 * Rules for a body: items are independent, except for sums into shared
 * outputs made with cu_atomic_add (emulation adds them in item order);
 * everything it calls is CU_HD; it captures plain pointers and values
 * (it is copied into the kernel's parameter space: keep it under 4 KiB).
 */
#ifndef CHAINLUA_CUDA_LAUNCH_CUH
#define CHAINLUA_CUDA_LAUNCH_CUH

#include <stdint.h>

#include <cuda_runtime.h>

#include "backend.h"

/* Code that runs in a kernel body: on the device, and on the host when emulated. */
#define CU_HD __host__ __device__ __forceinline__

/* Grid for n items: 256 threads, enough blocks to fill any GPU, grid-stride beyond. */
static inline unsigned cu_blocks(int64_t n) {
    int64_t b = (n + 255) / 256;
    return (unsigned)(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

template <typename Body> __global__ void cu_each_kernel(int64_t n, Body body) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        body(i);
}

template <typename Body> static ch_status cu_each(const char *fn, int64_t n, const Body &body) {
    if (n <= 0)
        return CH_OK;
#ifdef CU_EMULATE
    for (int64_t i = 0; i < n; i++)
        body(i);
    return CH_OK;
#else
    cu_each_kernel<Body><<<cu_blocks(n), 256, 0, (cudaStream_t)cu_stream()>>>(n, body);
    return cu_check(cudaGetLastError(), fn, "kernel launch");
#endif
}

/* *p += v from many items at once (float, double, int32, uint64/int64 via
 * unsigned long long on the device). */
template <typename T> CU_HD void cu_atomic_add(T *p, T v) {
#ifdef __CUDA_ARCH__
    atomicAdd(p, v);
#else
    *p += v;
#endif
}
template <> CU_HD void cu_atomic_add<int64_t>(int64_t *p, int64_t v) {
#ifdef __CUDA_ARCH__
    atomicAdd((unsigned long long *)p, (unsigned long long)v);
#else
    *p += v;
#endif
}

#endif

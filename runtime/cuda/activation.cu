/*
 * activation.cu -- the one-pass gradients of relu, sigmoid and tanh from
 * their outputs on the GPU, with the CPU's formulas in the element type
 * (runtime/cpu/activation_grad.c): gy * (y > 0), gy * y * (1 - y) and
 * gy * (1 - y * y).  Compiled with --fmad=false (runtime/cuda/CMakeLists.txt)
 * so that 1 - y * y rounds as on the CPU: results match it bit for bit.
 *
 * Compiled here, but NOT yet executed on a GPU: the GPU specs
 * (spec/cuda/mlp_gpu_spec.lua) compare it with the CPU where one exists.
 */
#include "backend.h"
#include "convert.cuh"

#include <cuda_runtime.h>

template <typename T> __global__ void act_grad_kernel(int op, int64_t n, const T *y, const T *gy, T *gx) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        T a = y[i], g = gy[i];
        switch (op) {
        case CH_ACT_RELU: gx[i] = a > 0 ? g : (T)0; break;
        case CH_ACT_SIGMOID: gx[i] = g * a * ((T)1 - a); break;
        default: gx[i] = g * ((T)1 - a * a); break;
        }
    }
}

extern "C" ch_status cu_activation_grad_launch(int op, int dt, int64_t n, const char *y, const char *gy, char *gx) {
    unsigned blocks = cu_blocks(n);
    if (dt == CH_FLOAT32)
        act_grad_kernel<float><<<blocks, 256>>>(op, n, (const float *)y, (const float *)gy, (float *)gx);
    else
        act_grad_kernel<double><<<blocks, 256>>>(op, n, (const double *)y, (const double *)gy, (double *)gx);
    return cu_check(cudaGetLastError(), "activation_grad", "kernel launch");
}

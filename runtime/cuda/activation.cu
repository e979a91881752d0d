/*
 * activation.cu -- the one-pass gradients of relu, sigmoid and tanh from
 * their outputs on the GPU, with the CPU's formulas in the element type
 * (runtime/cpu/activation_grad.c): gy * (y > 0), gy * y * (1 - y) and
 * gy * (1 - y * y).  Compiled with --fmad=false (runtime/cuda/CMakeLists.txt)
 * so that 1 - y * y rounds as on the CPU: results match it bit for bit.
 *
 * Compiled here, but NOT yet executed on a GPU: tests/cuda/test_activation.cu
 * runs it emulated on the host against the CPU, bit for bit; the GPU specs
 * (spec/cuda/mlp_gpu_spec.lua) compare it with the CPU where a GPU exists.
 */
#include "backend.h"
#include "launch.cuh"

template <typename T> struct act_grad_step {
    int op;
    const T *y, *gy;
    T *gx;

    CU_HD void operator()(int64_t i) const {
        T a = y[i], g = gy[i];
        switch (op) {
        case CH_ACT_RELU: gx[i] = a > 0 ? g : (T)0; break;
        case CH_ACT_SIGMOID: gx[i] = g * a * ((T)1 - a); break;
        default: gx[i] = g * ((T)1 - a * a); break;
        }
    }
};

extern "C" ch_status cu_activation_grad_launch(int op, int dt, int64_t n, const char *y, const char *gy, char *gx) {
    if (dt == CH_FLOAT32)
        return cu_each("activation_grad", n, act_grad_step<float>{op, (const float *)y, (const float *)gy, (float *)gx});
    return cu_each("activation_grad", n,
                   act_grad_step<double>{op, (const double *)y, (const double *)gy, (double *)gx});
}

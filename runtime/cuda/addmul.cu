/*
 * addmul.cu -- acc[i] = acc[i] + x[i] * y[i], one item per element, the
 * product rounded before the add (this file is compiled with --fmad=false),
 * as the CPU's runtime/cpu/addmul.c: the same bits.
 *
 * Compiled here, NOT yet executed on a GPU: tests/cuda/test_addmul.cu runs
 * it emulated on the host against the CPU.
 */
#include "backend.h"
#include "launch.cuh"

template <typename T> struct addmul_item {
    T *acc;
    const T *x, *y;
    CU_HD void operator()(int64_t i) const {
        T p = x[i] * y[i];
        acc[i] = acc[i] + p;
    }
};

extern "C" ch_status cu_addmul_launch(int dt, int64_t n, char *acc, const char *x, const char *y) {
    if (dt == CH_FLOAT32)
        return cu_each("addmul", n, addmul_item<float>{(float *)acc, (const float *)x, (const float *)y});
    return cu_each("addmul", n, addmul_item<double>{(double *)acc, (const double *)x, (const double *)y});
}

/*
 * dispatch.c -- which kernel table serves a device (core/kernels.h): the
 * CPU's own, or the one the CUDA backend handed over when it loaded.
 */
#include "prologue.h"
#include "../core/cuda_hooks.h"

/* every entry NULL: a device whose backend is not loaded */
static const ch_kernel_table no_kernels;

const ch_kernel_table *ch_kernels(int device) {
    if (device == CH_CPU)
        return &ch_cpu_kernels;
    /* a device tensor exists only once the backend is loaded */
    return ch_cuda_table.kernels ? ch_cuda_table.kernels : &no_kernels;
}

ch_status ch_no_kernel(const char *fn, int device) {
    if (device == CH_CPU)
        return ch_fail(CH_ERR_INTERNAL, "%s has no CPU kernel (a build error: see runtime/cpu/kernel_table.c)", fn);
    return ch_fail(CH_ERR_DEVICE, "%s has no kernel for cuda:%d yet; move the tensor with :to_cpu()", fn, device);
}

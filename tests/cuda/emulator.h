/*
 * emulator.h -- running the CUDA backend's kernels without a GPU.
 *
 * Each tests/cuda/test_NAME.cu is linked with the backend files it names on
 * its `emulates:` line, compiled with CU_EMULATE: cu_each (launch.cuh) then
 * runs a kernel's items as a host loop, cu_use accepts device 0, and
 * "device memory" is host memory.  A test builds its operands as CPU
 * tensors with libchainlua, hands the backend device-0 aliases of them
 * (emu_on_device), and compares what the backend wrote with libchainlua's
 * own CPU kernels on the same data.  Block cooperation, races and speed are
 * not tested this way: the GPU specs (spec/cuda) do that on a GPU.
 */
#ifndef CHAINLUA_TESTS_CUDA_EMULATOR_H
#define CHAINLUA_TESTS_CUDA_EMULATOR_H

#include "../c/check.h"
#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* t as the backend sees a tensor on cuda:0: same data, shape and strides. */
ch_tensor emu_on_device(const ch_tensor *t);
/* The message of the backend's last cu_fail. */
const char *emu_last_error(void);
/* Fills t (float32/float64, CPU) with values in [lo, hi) from a fixed stream. */
void emu_fill_uniform(ch_tensor *t, double lo, double hi, uint64_t seed);
/* Number of elements where a and b differ bitwise (same dtype and shape). */
int64_t emu_bit_mismatches(const ch_tensor *a, const ch_tensor *b);

#ifdef __cplusplus
}
#endif

/* expr (a backend call) must fail with `status` and a message containing sub. */
#define EMU_CHECK_ERR(expr, status, sub)                                               \
    do {                                                                               \
        ch_status st_ = (expr);                                                        \
        if (st_ != (status) || !strstr(emu_last_error(), (sub))) {                     \
            fprintf(stderr, "%s:%d: %s returned %d \"%s\", expected %d with \"%s\"\n", \
                    __FILE__, __LINE__, #expr, (int)st_, emu_last_error(), (int)(status), (sub)); \
            check_failures++;                                                          \
        }                                                                              \
    } while (0)

#endif

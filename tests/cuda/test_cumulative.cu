/* test_cumulative.cu -- the GPU's cumsum/cumprod (cumulative.c,
 * cumulative.cu) emulated on the host against the CPU's, bit for bit, along
 * the first, middle and last axis (the CPU's two starting rules), for
 * float32, float64 and wrapping int64.
 * emulates: cumulative.c cumulative.cu */
#include "emulator.h"

static void compare(ch_dtype dt, int prod, int axis) {
    int64_t shape[3] = {3, 50, 7};
    ch_tensor *x, *cpu, *gpu;
    CHECK_OK(ch_empty(dt, 3, shape, CH_CPU, &x));
    if (dt == CH_INT64) {
        for (int64_t k = 0; k < x->numel; k++) /* large values: products wrap */
            ch_set_flat(x, k, (double)((k * 7919) % 200001 - 100000));
    } else {
        emu_fill_uniform(x, prod ? 0.5 : -1.0, prod ? 1.5 : 1.0, 29);
        ch_set_flat(x, 0, -0.0); /* the first element's sign: copied, or 0 + -0 */
    }
    CHECK_OK((prod ? ch_cumprod : ch_cumsum)(x, axis, &cpu));
    CHECK_OK(ch_full(dt, 3, shape, 0.0, CH_CPU, &gpu));
    int64_t O = 1, I = 1;
    for (int a = 0; a < axis; a++)
        O *= shape[a];
    for (int a = axis + 1; a < 3; a++)
        I *= shape[a];
    ch_tensor dx = emu_on_device(x), dout = emu_on_device(gpu);
    CHECK_OK(cu_cumulative(prod, &dx, O, shape[axis], I, &dout));
    int64_t bad = emu_bit_mismatches(cpu, gpu);
    if (bad) {
        fprintf(stderr, "%s %s axis %d: %lld of %lld elements differ from the CPU\n", prod ? "cumprod" : "cumsum",
                cu_dtype_name(dt), axis, (long long)bad, (long long)x->numel);
        check_failures++;
    }
    ch_tensor_release(x);
    ch_tensor_release(cpu);
    ch_tensor_release(gpu);
}

int main(void) {
    ch_dtype dts[3] = {CH_FLOAT32, CH_FLOAT64, CH_INT64};
    for (int d = 0; d < 3; d++)
        for (int prod = 0; prod < 2; prod++)
            for (int axis = 0; axis < 3; axis++)
                compare(dts[d], prod, axis);
    /* the contract: a view that does not cover x; an empty x is a no-op */
    int64_t n = 6, z = 0;
    ch_tensor *x, *e;
    CHECK_OK(ch_full(CH_FLOAT32, 1, &n, 1.0, CH_CPU, &x));
    ch_tensor dx = emu_on_device(x);
    EMU_CHECK_ERR(cu_cumulative(0, &dx, 1, 5, 1, &dx), CH_ERR_INTERNAL, "cumsum: the view (1, 5, 1) does not cover");
    CHECK_OK(ch_empty(CH_FLOAT64, 1, &z, CH_CPU, &e));
    ch_tensor de = emu_on_device(e);
    CHECK_OK(cu_cumulative(1, &de, 1, 0, 1, &de));
    ch_tensor_release(x);
    ch_tensor_release(e);
    return check_done("test_cumulative (emulated)");
}

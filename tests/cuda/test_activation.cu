/* test_activation.cu -- the GPU's activation gradients (activation.c,
 * activation.cu) emulated on the host against the CPU's, bit for bit.
 * emulates: activation.c activation.cu */
#include "emulator.h"

static void compare(int op, ch_dtype dt, const char *what) {
    int64_t shape[2] = {37, 29};
    ch_tensor *y, *gy, *gx_cpu, *gx_gpu;
    CHECK_OK(ch_empty(dt, 2, shape, CH_CPU, &y));
    CHECK_OK(ch_empty(dt, 2, shape, CH_CPU, &gy));
    CHECK_OK(ch_full(dt, 2, shape, 0.0, CH_CPU, &gx_gpu));
    /* relu's output is >= 0 with exact zeros; sigmoid's in (0, 1); tanh's in (-1, 1) */
    emu_fill_uniform(y, op == CH_ACT_TANH ? -1.0 : 0.0, 1.0, 3);
    if (op == CH_ACT_RELU)
        for (int64_t k = 0; k < y->numel; k += 3)
            ch_set_flat(y, k, 0.0);
    emu_fill_uniform(gy, -2.0, 2.0, 5);
    CHECK_OK(ch_activation_grad((ch_act_grad_op)op, y, gy, &gx_cpu));
    ch_tensor dy = emu_on_device(y), dgy = emu_on_device(gy), dgx = emu_on_device(gx_gpu);
    CHECK_OK(cu_activation_grad(op, &dy, &dgy, &dgx));
    int64_t bad = emu_bit_mismatches(gx_cpu, gx_gpu);
    if (bad) {
        fprintf(stderr, "%s %s: %lld of %lld gradients differ from the CPU\n", what,
                dt == CH_FLOAT32 ? "float32" : "float64", (long long)bad, (long long)y->numel);
        check_failures++;
    }
    ch_tensor_release(y);
    ch_tensor_release(gy);
    ch_tensor_release(gx_cpu);
    ch_tensor_release(gx_gpu);
}

int main(void) {
    for (int d = 0; d < 2; d++) {
        ch_dtype dt = d ? CH_FLOAT64 : CH_FLOAT32;
        compare(CH_ACT_RELU, dt, "relu");
        compare(CH_ACT_SIGMOID, dt, "sigmoid");
        compare(CH_ACT_TANH, dt, "tanh");
    }
    int64_t n = 4, m = 5;
    ch_tensor *y, *g;
    CHECK_OK(ch_empty(CH_FLOAT32, 1, &n, CH_CPU, &y));
    CHECK_OK(ch_empty(CH_FLOAT32, 1, &m, CH_CPU, &g));
    ch_tensor dy = emu_on_device(y), dg = emu_on_device(g);
    EMU_CHECK_ERR(cu_activation_grad(CH_ACT_RELU, &dy, &dg, &dy), CH_ERR_INTERNAL, "activation_grad");
    ch_tensor_release(y);
    ch_tensor_release(g);
    return check_done("test_activation (emulated)");
}

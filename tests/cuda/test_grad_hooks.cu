/* test_grad_hooks.cu -- the GPU's gradient hooks (grad_hooks.c,
 * grad_hooks.cu): grad_transform and sqnorm emulated on the host against
 * the CPU's, bit for bit, on contiguous and transposed operands of every
 * float dtype.
 * emulates: grad_hooks.c grad_hooks.cu allocator.c */
#include "emulator.h"

#include <math.h>

static const char *dname(ch_dtype dt) { return dt == CH_FLOAT16 ? "float16" : dt == CH_FLOAT32 ? "float32" : "float64"; }

/* A (37, 29) tensor of dt with values in [lo, hi), or its transpose (a
 * strided view of a contiguous block) when `transposed`; *block is the
 * contiguous tensor behind it. */
static ch_tensor *operand(ch_dtype dt, double lo, double hi, uint64_t seed, int transposed, ch_tensor **block) {
    int64_t shape[2] = {37, 29};
    CHECK_OK(ch_empty(dt, 2, shape, CH_CPU, block));
    emu_fill_uniform(*block, lo, hi, seed);
    for (int64_t k = 0; k < (*block)->numel; k += 7)
        ch_set_flat(*block, k, 0.0); /* Lasso's sign(0) */
    if (!transposed) {
        ch_tensor_retain(*block);
        return *block;
    }
    int32_t axes[2] = {1, 0};
    ch_tensor *t;
    CHECK_OK(ch_permute(*block, axes, &t));
    return t;
}

/* grad_transform on the CPU and the emulated GPU from the same values;
 * param_dt < 0: no parameter. */
static void compare_transform(ch_dtype gdt, int param_dt, int transposed, double scale, double decay, int sign,
                              double lower, double upper, const char *what) {
    ch_tensor *gblock, *gblock2, *pblock = NULL;
    ch_tensor *g = operand(gdt, -1.0, 1.0, 11, transposed, &gblock);
    ch_tensor *g2 = operand(gdt, -1.0, 1.0, 11, transposed, &gblock2);
    ch_tensor *p = param_dt < 0 ? NULL : operand((ch_dtype)param_dt, -2.0, 2.0, 13, transposed, &pblock);
    CHECK_OK(ch_grad_transform(g, p, scale, decay, sign, lower, upper));
    ch_tensor dg = emu_on_device(g2), dp = p ? emu_on_device(p) : dg;
    CHECK_OK(cu_grad_transform(&dg, p ? &dp : NULL, scale, decay, sign, lower, upper));
    int64_t bad = emu_bit_mismatches(gblock, gblock2);
    if (bad) {
        fprintf(stderr, "grad_transform %s, grad %s%s: %lld of %lld elements differ from the CPU\n", what,
                dname(gdt), transposed ? " (transposed)" : "", (long long)bad, (long long)gblock->numel);
        check_failures++;
    }
    ch_tensor *all[] = {g, g2, p, gblock, gblock2, pblock};
    for (int k = 0; k < 6; k++)
        ch_tensor_release(all[k]);
}

static void test_transform(void) {
    ch_dtype dts[3] = {CH_FLOAT16, CH_FLOAT32, CH_FLOAT64};
    for (int d = 0; d < 3; d++) {
        ch_dtype dt = dts[d];
        for (int tr = 0; tr < 2; tr++) {
            compare_transform(dt, -1, tr, 0.37, 0, 0, -INFINITY, INFINITY, "rescale (GradientClipping)");
            compare_transform(dt, -1, tr, 1, 0, 0, -0.25, 0.5, "clip (GradientHardClipping)");
            compare_transform(dt, dt, tr, 1, 1e-2, 0, -INFINITY, INFINITY, "WeightDecay");
            compare_transform(dt, dt, tr, 1, 3e-3, 1, -INFINITY, INFINITY, "Lasso");
            compare_transform(dt, dt, tr, 0.8, 5e-4, 0, -0.3, 0.3, "GradientLARS + clip");
        }
    }
    /* a parameter of another dtype takes the CPU's double path */
    compare_transform(CH_FLOAT32, CH_FLOAT64, 0, 1, 1e-2, 0, -INFINITY, INFINITY, "WeightDecay (float64 param)");
    compare_transform(CH_FLOAT64, CH_FLOAT16, 1, 1, 1e-2, 1, -INFINITY, INFINITY, "Lasso (float16 param)");
}

/* sqnorm of x on both devices: the same double, bit for bit. */
static void compare_sqnorm(ch_dtype dt, int64_t rows, int64_t cols, int transposed) {
    int64_t shape[2] = {rows, cols};
    ch_tensor *block, *x;
    CHECK_OK(ch_empty(dt, 2, shape, CH_CPU, &block));
    emu_fill_uniform(block, -3.0, 3.0, 17);
    if (transposed) {
        int32_t axes[2] = {1, 0};
        CHECK_OK(ch_permute(block, axes, &x));
    } else {
        x = block;
        ch_tensor_retain(x);
    }
    double cpu = -1, gpu = -1;
    CHECK_OK(ch_sqnorm(x, &cpu));
    ch_tensor dx = emu_on_device(x);
    CHECK_OK(cu_sqnorm(&dx, &gpu));
    if (memcmp(&cpu, &gpu, sizeof cpu) != 0) {
        fprintf(stderr, "sqnorm %s (%lld, %lld)%s: GPU %.17g, CPU %.17g\n", dname(dt), (long long)rows,
                (long long)cols, transposed ? " transposed" : "", gpu, cpu);
        check_failures++;
    }
    ch_tensor_release(x);
    ch_tensor_release(block);
}

static void test_sqnorm(void) {
    ch_dtype dts[3] = {CH_FLOAT16, CH_FLOAT32, CH_FLOAT64};
    for (int d = 0; d < 3; d++)
        for (int tr = 0; tr < 2; tr++) {
            compare_sqnorm(dts[d], 211, 97, tr); /* 20467 elements: three blocks, the last partial */
            compare_sqnorm(dts[d], 3, 5, tr);
        }
    compare_sqnorm(CH_FLOAT32, 0, 5, 0);
}

/* The backend's own contract: a parameter of another shape is refused
 * before anything is written; an empty gradient is a no-op. */
static void test_contract(void) {
    int64_t n = 8, m = 7;
    ch_tensor *g, *p, *e;
    CHECK_OK(ch_full(CH_FLOAT32, 1, &n, 1.0, CH_CPU, &g));
    CHECK_OK(ch_full(CH_FLOAT32, 1, &m, 1.0, CH_CPU, &p));
    ch_tensor dg = emu_on_device(g), dp = emu_on_device(p);
    EMU_CHECK_ERR(cu_grad_transform(&dg, &dp, 1, 0.1, 0, -INFINITY, INFINITY), CH_ERR_INTERNAL,
                  "grad_transform: the parameter must be");
    CHECK(at(g, 0) == 1.0);
    ch_tensor ig = emu_on_device(g);
    ig.dt = CH_INT32;
    double r = 0;
    EMU_CHECK_ERR(cu_sqnorm(&ig, &r), CH_ERR_INTERNAL, "sqnorm: x must be a float tensor");
    int64_t z = 0;
    CHECK_OK(ch_empty(CH_FLOAT64, 1, &z, CH_CPU, &e));
    ch_tensor de = emu_on_device(e);
    CHECK_OK(cu_grad_transform(&de, NULL, 2, 0, 0, -1, 1));
    ch_tensor_release(g);
    ch_tensor_release(p);
    ch_tensor_release(e);
}

int main(void) {
    test_transform();
    test_sqnorm();
    test_contract();
    return check_done("test_grad_hooks (emulated)");
}

/* test_batch_norm.cu -- the GPU's batch normalization (batch_norm.c,
 * batch_norm.cu) emulated on the host against the CPU's, bit for bit: the
 * statistics, y, and the gradients gx, ggamma, gbeta, with and without
 * gamma / beta, some outputs not asked for, and empty batches.
 * emulates: batch_norm.c batch_norm.cu allocator.c */
#include "emulator.h"


static ch_tensor *make(ch_dtype dt, int nd, const int64_t *dim, double lo, double hi, uint64_t seed) {
    ch_tensor *t;
    CHECK_OK(ch_empty(dt, nd, dim, CH_CPU, &t));
    if (t->numel)
        emu_fill_uniform(t, lo, hi, seed);
    return t;
}

static ch_tensor *zeros_like(const ch_tensor *t) {
    ch_tensor *r;
    CHECK_OK(ch_full((ch_dtype)t->dt, t->nd, t->dim, 9.0, CH_CPU, &r));
    return r;
}

static void expect_same(const ch_tensor *cpu, const ch_tensor *gpu, const char *what, ch_dtype dt, const int64_t *d,
                        int with_gamma) {
    int64_t bad = emu_bit_mismatches(cpu, gpu);
    if (bad) {
        fprintf(stderr, "batch_norm %s %s (%lld, %lld, %lld)%s: %lld values differ from the CPU\n", what,
                ch_dtype_name(dt), (long long)d[0], (long long)d[1], (long long)d[2], with_gamma ? "" : " no gamma",
                (long long)bad);
        check_failures++;
    }
}

static void compare(ch_dtype dt, const int64_t *d, int with_gamma) {
    int64_t C = d[1];
    /* a large offset checks the two-pass variance */
    ch_tensor *x = make(dt, 3, d, 95.0, 105.0, 3), *gy = make(dt, 3, d, -1.0, 1.0, 4);
    /* the front door takes gamma and beta in x's dtype and hands the
     * kernel float64 copies */
    ch_tensor *gamma_x = with_gamma ? make(dt, 1, &C, 0.5, 1.5, 5) : NULL;
    ch_tensor *beta_x = with_gamma ? make(dt, 1, &C, -1.0, 1.0, 6) : NULL;
    ch_tensor *gamma = NULL, *beta = NULL;
    if (with_gamma) {
        CHECK_OK(ch_astype(gamma_x, CH_FLOAT64, &gamma));
        CHECK_OK(ch_astype(beta_x, CH_FLOAT64, &beta));
    }
    ch_tensor *y_c, *m_c, *v_c, *s_c;
    CHECK_OK(ch_batch_norm_forward(x, gamma_x, beta_x, 2e-5, &y_c, &m_c, &v_c, &s_c));
    ch_tensor *y = zeros_like(y_c), *m = zeros_like(m_c), *v = zeros_like(v_c), *s = zeros_like(s_c);
    ch_tensor dx = emu_on_device(x), dy = emu_on_device(y), dm = emu_on_device(m), dv = emu_on_device(v),
              ds = emu_on_device(s);
    ch_tensor dg, db;
    if (gamma)
        dg = emu_on_device(gamma), db = emu_on_device(beta);
    CHECK_OK(cu_batch_norm_forward(&dx, gamma ? &dg : NULL, beta ? &db : NULL, 2e-5, &dy, &dm, &dv, &ds));
    expect_same(y_c, y, "y", dt, d, with_gamma);
    expect_same(m_c, m, "mean", dt, d, with_gamma);
    expect_same(v_c, v, "var", dt, d, with_gamma);
    expect_same(s_c, s, "inv_std", dt, d, with_gamma);
    /* statistics only (y not asked for), as the running averages need */
    ch_tensor *m2 = zeros_like(m_c), dm2 = emu_on_device(m2);
    CHECK_OK(cu_batch_norm_forward(&dx, NULL, NULL, 2e-5, NULL, &dm2, NULL, NULL));
    expect_same(m_c, m2, "mean alone", dt, d, with_gamma);

    /* backward from the forward's statistics (the kernel gets them as
     * float64, as the front door hands them on) */
    ch_tensor *m64, *s64;
    CHECK_OK(ch_astype(m_c, CH_FLOAT64, &m64));
    CHECK_OK(ch_astype(s_c, CH_FLOAT64, &s64));
    ch_tensor *gx_c, *gg_c, *gb_c;
    CHECK_OK(ch_batch_norm_backward(x, gamma_x, gy, m_c, s_c, &gx_c, &gg_c, &gb_c));
    ch_tensor *gx = zeros_like(gx_c), *gg = zeros_like(gg_c), *gb = zeros_like(gb_c);
    ch_tensor dgy = emu_on_device(gy), dm64 = emu_on_device(m64), ds64 = emu_on_device(s64), dgx = emu_on_device(gx),
              dgg = emu_on_device(gg), dgb = emu_on_device(gb);
    CHECK_OK(cu_batch_norm_backward(&dx, gamma ? &dg : NULL, &dgy, &dm64, &ds64, &dgx, &dgg, &dgb));
    expect_same(gx_c, gx, "gx", dt, d, with_gamma);
    expect_same(gg_c, gg, "ggamma", dt, d, with_gamma);
    expect_same(gb_c, gb, "gbeta", dt, d, with_gamma);
    ch_tensor *all[] = {x, gy, gamma_x, beta_x, gamma, beta, y_c, m_c, v_c, s_c, y, m, v, s, m2, m64, s64, gx_c, gg_c, gb_c, gx, gg, gb};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i])
            ch_tensor_release(all[i]);
}

int main(void) {
    static const int64_t shapes[][3] = {{4, 3, 5}, {1, 6, 7}, {8, 2, 1}, {0, 3, 4}};
    for (int d = 0; d < 2; d++)
        for (int s = 0; s < 4; s++)
            for (int g = 0; g < 2; g++)
                compare(d ? CH_FLOAT64 : CH_FLOAT32, shapes[s], g);
    /* contract: gamma must be float64 */
    int64_t d3[3] = {2, 3, 2}, c = 3;
    ch_tensor *x, *g32, *y;
    CHECK_OK(ch_full(CH_FLOAT32, 3, d3, 1.0, CH_CPU, &x));
    CHECK_OK(ch_full(CH_FLOAT32, 1, &c, 1.0, CH_CPU, &g32));
    CHECK_OK(ch_full(CH_FLOAT32, 3, d3, 1.0, CH_CPU, &y));
    ch_tensor dx = emu_on_device(x), dg = emu_on_device(g32), dy = emu_on_device(y);
    EMU_CHECK_ERR(cu_batch_norm_forward(&dx, &dg, NULL, 1e-5, &dy, NULL, NULL, NULL), CH_ERR_INTERNAL,
                  "batch_normalization");
    ch_tensor_release(x);
    ch_tensor_release(g32);
    ch_tensor_release(y);
    return check_done("test_batch_norm (emulated)");
}

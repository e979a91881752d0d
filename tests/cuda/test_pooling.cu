/* test_pooling.cu -- the GPU's max and average pooling and their scatter /
 * gather kernels (pooling.c, pooling.cu) emulated on the host against the
 * CPU's, bit for bit: 1-, 2- and 3-d, padding, cover_all extents, windows
 * reaching past the input, every average divisor, and window positions
 * that name cells outside the input.
 * emulates: pooling.c pooling.cu */
#include "emulator.h"

typedef struct pcase {
    int nsp;
    int64_t n, c, in[3], k[3], s[3], p[3], out[3];
} pcase;

/* The geometry as ops/pooling.c fills it. */
static ch_pool_geom geom_of(const pcase *t) {
    ch_pool_geom g;
    int off = 3 - t->nsp;
    for (int a = 0; a < 3; a++)
        g.in[a] = g.out[a] = g.k[a] = g.s[a] = 1, g.p[a] = 0;
    for (int a = 0; a < t->nsp; a++) {
        g.in[off + a] = t->in[a], g.out[off + a] = t->out[a];
        g.k[off + a] = t->k[a], g.s[off + a] = t->s[a], g.p[off + a] = t->p[a];
    }
    g.planes = t->n * t->c;
    g.in_n = g.in[0] * g.in[1] * g.in[2];
    g.out_n = g.out[0] * g.out[1] * g.out[2];
    g.kn = g.k[0] * g.k[1] * g.k[2];
    return g;
}

static ch_tensor *planes(ch_dtype dt, const pcase *t, const int64_t *sp, double fill) {
    int64_t dim[5] = {t->n, t->c};
    for (int a = 0; a < t->nsp; a++)
        dim[2 + a] = sp[a];
    ch_tensor *r;
    CHECK_OK(ch_full(dt, 2 + t->nsp, dim, fill, CH_CPU, &r));
    return r;
}

static void report(int64_t bad, const char *what, ch_dtype dt, const pcase *t) {
    if (!bad)
        return;
    fprintf(stderr, "%s %s nsp=%d in0=%lld k0=%lld s0=%lld p0=%lld out0=%lld: %lld values differ from the CPU\n", what,
            ch_dtype_name(dt), t->nsp, (long long)t->in[0], (long long)t->k[0], (long long)t->s[0],
            (long long)t->p[0], (long long)t->out[0], (long long)bad);
    check_failures++;
}

static void compare(ch_dtype dt, const pcase *t) {
    ch_pool_geom g = geom_of(t);
    ch_tensor *x = planes(dt, t, t->in, 0.0);
    emu_fill_uniform(x, -4.0, 4.0, 17);
    /* ties: every 5th value repeats its neighbour, so the first maximum matters */
    for (int64_t i = 1; i < x->numel; i += 5) {
        double v;
        CHECK_OK(ch_get_flat(x, i - 1, &v));
        CHECK_OK(ch_set_flat(x, i, v));
    }
    ch_tensor dx = emu_on_device(x);

    /* max forward: values and window positions */
    ch_tensor *y_cpu, *ix_cpu;
    CHECK_OK(ch_max_pool_forward(x, t->nsp, t->k, t->s, t->p, t->out, &y_cpu, &ix_cpu));
    ch_tensor *y = planes(dt, t, t->out, 9.0), *ix = planes(CH_INT32, t, t->out, 77.0);
    ch_tensor dy = emu_on_device(y), dix = emu_on_device(ix);
    CHECK_OK(cu_max_pool_forward(&g, &dx, &dy, &dix));
    report(emu_bit_mismatches(y_cpu, y) + emu_bit_mismatches(ix_cpu, ix), "max_pool_forward", dt, t);

    /* window positions, some naming cells outside the input or no cell */
    for (int64_t i = 0; i < ix_cpu->numel; i += 3)
        CHECK_OK(ch_set_flat(ix_cpu, i, (double)((i * 7) % (g.kn + 2)) - 1.0));
    ch_tensor dixc = emu_on_device(ix_cpu);

    /* gather */
    ch_tensor *gath_cpu;
    CHECK_OK(ch_max_pool_gather(x, ix_cpu, t->nsp, t->k, t->s, t->p, &gath_cpu));
    ch_tensor *gath = planes(dt, t, t->out, 9.0), dgath = emu_on_device(gath);
    CHECK_OK(cu_max_pool_gather(&g, &dx, &dixc, &dgath));
    report(emu_bit_mismatches(gath_cpu, gath), "max_pool_gather", dt, t);

    /* scatter */
    ch_tensor *gy = planes(dt, t, t->out, 0.0);
    emu_fill_uniform(gy, -2.0, 2.0, 23);
    ch_tensor dgy = emu_on_device(gy);
    ch_tensor *sc_cpu;
    CHECK_OK(ch_max_pool_scatter(gy, ix_cpu, t->nsp, t->k, t->s, t->p, t->in, &sc_cpu));
    ch_tensor *sc = planes(dt, t, t->in, 9.0), dsc = emu_on_device(sc);
    CHECK_OK(cu_max_pool_scatter(&g, &dgy, &dixc, &dsc));
    report(emu_bit_mismatches(sc_cpu, sc), "max_pool_scatter", dt, t);

    /* average forward and backward, every divisor */
    for (int mode = 0; mode < 3; mode++) {
        ch_tensor *a_cpu, *b_cpu;
        CHECK_OK(ch_avg_pool_forward(x, t->nsp, t->k, t->s, t->p, t->out, mode, &a_cpu));
        ch_tensor *a = planes(dt, t, t->out, 9.0), da = emu_on_device(a);
        CHECK_OK(cu_avg_pool_forward(&g, mode, &dx, &da));
        report(emu_bit_mismatches(a_cpu, a), mode == 0 ? "avg_pool_forward (window)"
                                             : mode == 1 ? "avg_pool_forward (inside)" : "avg_pool_forward (sum)",
               dt, t);
        CHECK_OK(ch_avg_pool_backward(gy, t->nsp, t->k, t->s, t->p, t->in, mode, &b_cpu));
        ch_tensor *b = planes(dt, t, t->in, 9.0), db = emu_on_device(b);
        CHECK_OK(cu_avg_pool_backward(&g, mode, &dgy, &db));
        report(emu_bit_mismatches(b_cpu, b), mode == 0 ? "avg_pool_backward (window)"
                                             : mode == 1 ? "avg_pool_backward (inside)" : "avg_pool_backward (sum)",
               dt, t);
        ch_tensor *all[] = {a_cpu, a, b_cpu, b};
        for (int i = 0; i < 4; i++)
            ch_tensor_release(all[i]);
    }
    ch_tensor *all[] = {x, y_cpu, ix_cpu, y, ix, gath_cpu, gath, gy, sc_cpu, sc};
    for (int i = 0; i < 10; i++)
        ch_tensor_release(all[i]);
}

int main(void) {
    static const pcase cases[] = {
        /* 2-d 2x2 stride 2 (the common layer) */
        {2, 2, 3, {6, 8}, {2, 2}, {2, 2}, {0, 0}, {3, 4}},
        /* 3x3 stride 2 pad 1, cover_all: one more output than plain */
        {2, 2, 2, {7, 6}, {3, 3}, {2, 2}, {1, 1}, {5, 4}},
        /* overlapping windows (stride 1), padding on one axis only */
        {2, 1, 2, {5, 5}, {3, 2}, {1, 1}, {1, 0}, {5, 4}},
        /* windows wholly outside the input (pad >= k) */
        {2, 1, 1, {3, 3}, {2, 2}, {2, 2}, {2, 2}, {4, 4}},
        /* 1-d and 3-d */
        {1, 3, 2, {11}, {3}, {2}, {1}, {6}},
        {3, 1, 2, {4, 5, 3}, {2, 3, 2}, {2, 1, 2}, {0, 1, 1}, {2, 5, 2}},
        /* empty batch */
        {2, 0, 3, {4, 4}, {2, 2}, {2, 2}, {0, 0}, {2, 2}},
    };
    for (int d = 0; d < 2; d++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            compare(d ? CH_FLOAT64 : CH_FLOAT32, &cases[i]);

    /* contract: positions must be int32, dtypes one float dtype */
    pcase t = {2, 1, 1, {4, 4}, {2, 2}, {2, 2}, {0, 0}, {2, 2}};
    ch_pool_geom g = geom_of(&t);
    ch_tensor *x = planes(CH_FLOAT32, &t, t.in, 1.0), *y = planes(CH_FLOAT32, &t, t.out, 0.0);
    ch_tensor *ix64 = planes(CH_INT64, &t, t.out, 0.0), *y64 = planes(CH_FLOAT64, &t, t.out, 0.0);
    ch_tensor dx = emu_on_device(x), dy = emu_on_device(y), di = emu_on_device(ix64), dy64 = emu_on_device(y64);
    EMU_CHECK_ERR(cu_max_pool_forward(&g, &dx, &dy, &di), CH_ERR_INTERNAL, "max_pooling");
    EMU_CHECK_ERR(cu_avg_pool_forward(&g, 0, &dx, &dy64), CH_ERR_INTERNAL, "average_pooling");
    EMU_CHECK_ERR(cu_avg_pool_forward(&g, 3, &dx, &dy), CH_ERR_INTERNAL, "unknown average mode");
    ch_tensor *all[] = {x, y, ix64, y64};
    for (int i = 0; i < 4; i++)
        ch_tensor_release(all[i]);
    return check_done("test_pooling (emulated)");
}

/* test_lstm.cu -- the GPU's LSTM cell (lstm.c, lstm.cu) emulated on the host
 * against the CPU's (runtime/cpu/lstm.c), bit for bit: forward, gradient
 * and the gradient's gradient, float32 and float64, with a c_prev of more
 * rows than x, trailing axes, absent gradients and empty tensors.
 * emulates: lstm.c lstm.cu */
#include "emulator.h"

typedef struct cell_case {
    const char *what;
    int nd;
    int64_t cdim[3]; /* c_prev (Bc, U, S...) */
    int64_t B;       /* x's batch */
    int has_gc, has_gh, has_ggc, has_ggx;
} cell_case;

static ch_tensor *filled(ch_dtype dt, int nd, const int64_t *dim, double lo, double hi, uint64_t seed) {
    ch_tensor *t = NULL;
    CHECK_OK(ch_empty(dt, nd, dim, CH_CPU, &t));
    emu_fill_uniform(t, lo, hi, seed);
    return t;
}

/* A zero-filled CPU tensor shaped like ref, which the emulated GPU fills. */
static ch_tensor *like(const ch_tensor *ref) {
    ch_tensor *t = NULL;
    CHECK_OK(ch_full((ch_dtype)ref->dt, ref->nd, ref->dim, 0.0, CH_CPU, &t));
    return t;
}

static void expect_same(const cell_case *k, ch_dtype dt, const char *out, const ch_tensor *cpu, const ch_tensor *gpu) {
    int64_t bad = emu_bit_mismatches(cpu, gpu);
    if (bad) {
        fprintf(stderr, "lstm %s %s: %s differs from the CPU in %lld of %lld elements\n", k->what,
                dt == CH_FLOAT32 ? "float32" : "float64", out, (long long)bad, (long long)cpu->numel);
        check_failures++;
    }
}

static ch_tensor dev_or_null(const ch_tensor *t, ch_tensor *slot, const ch_tensor **p) {
    *slot = t ? emu_on_device(t) : ch_tensor{};
    *p = t ? slot : NULL;
    return *slot;
}

static void compare(const cell_case *k, ch_dtype dt) {
    int nd = k->nd;
    int64_t xdim[3], hdim[3];
    for (int d = 0; d < nd; d++)
        xdim[d] = hdim[d] = k->cdim[d];
    xdim[0] = hdim[0] = k->B;
    xdim[1] = 4 * k->cdim[1];
    /* gate inputs on both sides of rnn_tanhf's small-argument branch */
    ch_tensor *cp = filled(dt, nd, k->cdim, -2, 2, 1), *x = filled(dt, nd, xdim, -4, 4, 2);
    ch_tensor *gc = k->has_gc ? filled(dt, nd, k->cdim, -1, 1, 3) : NULL;
    ch_tensor *gh = k->has_gh ? filled(dt, nd, hdim, -1, 1, 4) : NULL;
    ch_tensor *ggc = k->has_ggc ? filled(dt, nd, k->cdim, -1, 1, 5) : NULL;
    ch_tensor *ggx = k->has_ggx ? filled(dt, nd, xdim, -1, 1, 6) : NULL;

    ch_tensor slots[6];
    const ch_tensor *dgc, *dgh, *dggc, *dggx, *unused;
    ch_tensor dcp = dev_or_null(cp, &slots[0], &unused), dx = dev_or_null(x, &slots[1], &unused);
    dev_or_null(gc, &slots[2], &dgc);
    dev_or_null(gh, &slots[3], &dgh);
    dev_or_null(ggc, &slots[4], &dggc);
    dev_or_null(ggx, &slots[5], &dggx);

    /* forward */
    ch_tensor *c, *h;
    CHECK_OK(ch_lstm_forward(cp, x, &c, &h));
    ch_tensor *c2 = like(c), *h2 = like(h);
    ch_tensor dc = emu_on_device(c2), dh = emu_on_device(h2);
    CHECK_OK(cu_lstm_forward(&dcp, &dx, &dc, &dh));
    expect_same(k, dt, "c", c, c2);
    expect_same(k, dt, "h", h, h2);

    /* gradient */
    ch_tensor *gcp, *gx;
    CHECK_OK(ch_lstm_backward(cp, x, gc, gh, &gcp, &gx));
    ch_tensor *gcp2 = like(gcp), *gx2 = like(gx);
    ch_tensor dgcp = emu_on_device(gcp2), dgx = emu_on_device(gx2);
    CHECK_OK(cu_lstm_backward(&dcp, &dx, dgc, dgh, &dgcp, &dgx));
    expect_same(k, dt, "gc_prev", gcp, gcp2);
    expect_same(k, dt, "gx", gx, gx2);

    /* the gradient's gradient */
    ch_tensor *o[4], *o2[4], d[4];
    CHECK_OK(ch_lstm_grad_grad(cp, x, gc, gh, ggc, ggx, &o[0], &o[1], &o[2], &o[3]));
    for (int i = 0; i < 4; i++) {
        o2[i] = like(o[i]);
        d[i] = emu_on_device(o2[i]);
    }
    CHECK_OK(cu_lstm_grad_grad(&dcp, &dx, dgc, dgh, dggc, dggx, &d[0], &d[1], &d[2], &d[3]));
    const char *names[4] = {"g_c_prev", "g_x", "g_gc", "g_gh"};
    for (int i = 0; i < 4; i++)
        expect_same(k, dt, names[i], o[i], o2[i]);

    ch_tensor *all[] = {cp, x, gc, gh, ggc, ggx, c, h, c2, h2, gcp, gx, gcp2, gx2, o[0], o[1], o[2], o[3],
                        o2[0], o2[1], o2[2], o2[3]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i])
            ch_tensor_release(all[i]);
}

/* The backend's own contract: an h output of the wrong size is refused with
 * the op's name before anything is written. */
static void test_contract(void) {
    int64_t cd[2] = {2, 3}, xd[2] = {2, 12}, bad[2] = {1, 3};
    ch_tensor *cp, *x, *c, *h;
    CHECK_OK(ch_full(CH_FLOAT32, 2, cd, 0.5, CH_CPU, &cp));
    CHECK_OK(ch_full(CH_FLOAT32, 2, xd, 0.5, CH_CPU, &x));
    CHECK_OK(ch_full(CH_FLOAT32, 2, cd, 7.0, CH_CPU, &c));
    CHECK_OK(ch_full(CH_FLOAT32, 2, bad, 7.0, CH_CPU, &h));
    ch_tensor dcp = emu_on_device(cp), dx = emu_on_device(x), dc = emu_on_device(c), dh = emu_on_device(h);
    EMU_CHECK_ERR(cu_lstm_forward(&dcp, &dx, &dc, &dh), CH_ERR_INTERNAL, "lstm: c and h");
    CHECK(at(c, 0) == 7.0);
    /* x of another dtype than c_prev */
    ch_tensor *x64;
    CHECK_OK(ch_full(CH_FLOAT64, 2, xd, 0.5, CH_CPU, &x64));
    ch_tensor dx64 = emu_on_device(x64);
    EMU_CHECK_ERR(cu_lstm_backward(&dcp, &dx64, NULL, NULL, &dc, &dx), CH_ERR_INTERNAL, "lstm (backward)");
    ch_tensor *all[] = {cp, x, c, h, x64};
    for (int i = 0; i < 5; i++)
        ch_tensor_release(all[i]);
}

int main(void) {
    static const cell_case cases[] = {
        {"2-d", 2, {6, 5}, 6, 1, 1, 1, 1},
        {"c_prev longer than x", 2, {7, 3}, 4, 1, 1, 1, 1},
        {"trailing axis", 3, {3, 4, 5}, 2, 1, 1, 1, 1},
        {"no gc, no ggx", 2, {5, 4}, 3, 0, 1, 1, 0},
        {"no gh, no ggc_prev", 3, {4, 2, 3}, 4, 1, 0, 0, 1},
        {"no gradients", 2, {3, 3}, 3, 0, 0, 0, 0},
        {"x empty", 2, {3, 2}, 0, 1, 0, 1, 1},
        {"all empty", 2, {0, 4}, 0, 1, 1, 1, 1},
    };
    for (int d = 0; d < 2; d++)
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            compare(&cases[i], d ? CH_FLOAT64 : CH_FLOAT32);
    test_contract();
    return check_done("test_lstm (emulated)");
}

/* test_im2col.cu -- the GPU's im2col and col2im (im2col.c, im2col.cu)
 * emulated on the host against the CPU's front doors, bit for bit: 1-, 2-
 * and 3-d, strides, padding, dilation, an empty batch, and the contract
 * check.
 * emulates: im2col.c im2col.cu */
#include "emulator.h"

typedef struct case_t {
    int nsp;
    int64_t N, C, in[3], k[3], s[3], p[3], d[3];
} case_t;

/* The geometry the front door builds (ops/conv.c) for im2col/col2im. */
static ch_conv_geom geometry(const case_t *c) {
    ch_conv_geom g;
    memset(&g, 0, sizeof g);
    g.nsp = c->nsp;
    g.N = c->N, g.C = c->C, g.Cout = 1, g.groups = 1, g.Coutg = 1, g.Cg = c->C;
    g.Kk = g.Pin = g.P = 1;
    for (int a = 0; a < c->nsp; a++) {
        g.in[a] = c->in[a], g.k[a] = c->k[a], g.s[a] = c->s[a], g.p[a] = c->p[a], g.d[a] = c->d[a];
        g.out[a] = (c->in[a] + 2 * c->p[a] - c->d[a] * (c->k[a] - 1) - 1) / c->s[a] + 1;
        g.Kk *= g.k[a], g.Pin *= g.in[a], g.P *= g.out[a];
    }
    g.Kg = g.C * g.Kk;
    return g;
}

static void compare(const case_t *c, ch_dtype dt, const char *what) {
    ch_conv_geom g = geometry(c);
    int64_t xdim[5] = {c->N, c->C}, cdim[8] = {c->N, c->C};
    for (int a = 0; a < c->nsp; a++) {
        xdim[2 + a] = c->in[a];
        cdim[2 + a] = c->k[a];
        cdim[2 + c->nsp + a] = g.out[a];
    }
    ch_tensor *x, *col_cpu, *col_gpu, *rcol, *x_cpu, *x_gpu;
    CHECK_OK(ch_empty(dt, 2 + c->nsp, xdim, CH_CPU, &x));
    emu_fill_uniform(x, -1, 1, 7);
    CHECK_OK(ch_conv_im2col(x, c->nsp, c->k, c->s, c->p, c->d, g.out, &col_cpu));
    CHECK_OK(ch_full(dt, 2 + 2 * c->nsp, cdim, 9.0, CH_CPU, &col_gpu));
    ch_tensor dx = emu_on_device(x), dcol = emu_on_device(col_gpu);
    CHECK_OK(cu_im2col(&g, &dx, &dcol));
    int64_t bad = emu_bit_mismatches(col_cpu, col_gpu);
    if (bad) {
        fprintf(stderr, "im2col %s %s: %lld of %lld differ from the CPU\n", what, cu_dtype_name(dt), (long long)bad,
                (long long)col_cpu->numel);
        check_failures++;
    }
    /* col2im of a random column tensor: overlapping windows sum */
    CHECK_OK(ch_empty(dt, 2 + 2 * c->nsp, cdim, CH_CPU, &rcol));
    emu_fill_uniform(rcol, -1, 1, 8);
    CHECK_OK(ch_conv_col2im(rcol, c->nsp, c->s, c->p, c->d, c->in, &x_cpu));
    CHECK_OK(ch_full(dt, 2 + c->nsp, xdim, 9.0, CH_CPU, &x_gpu));
    ch_tensor drcol = emu_on_device(rcol), dxg = emu_on_device(x_gpu);
    CHECK_OK(cu_col2im(&g, &drcol, &dxg));
    bad = emu_bit_mismatches(x_cpu, x_gpu);
    if (bad) {
        fprintf(stderr, "col2im %s %s: %lld of %lld differ from the CPU\n", what, cu_dtype_name(dt), (long long)bad,
                (long long)x_cpu->numel);
        check_failures++;
    }
    ch_tensor *list[] = {x, col_cpu, col_gpu, rcol, x_cpu, x_gpu};
    for (int k = 0; k < 6; k++)
        ch_tensor_release(list[k]);
}

static void test_contract(void) {
    case_t c = {2, 1, 2, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}};
    ch_conv_geom g = geometry(&c);
    int64_t xdim[4] = {1, 2, 5, 5}, wrong[6] = {1, 2, 3, 3, 5, 4};
    ch_tensor *x, *col;
    CHECK_OK(ch_full(CH_FLOAT32, 4, xdim, 1.0, CH_CPU, &x));
    CHECK_OK(ch_full(CH_FLOAT32, 6, wrong, 7.0, CH_CPU, &col));
    ch_tensor dx = emu_on_device(x), dcol = emu_on_device(col);
    EMU_CHECK_ERR(cu_im2col(&g, &dx, &dcol), CH_ERR_INTERNAL, "im2col: x (N, C, *in) and col");
    CHECK(at(col, 0) == 7.0);
    ch_tensor_release(x);
    ch_tensor_release(col);
}

int main(void) {
    const case_t cases[] = {
        {1, 2, 3, {11}, {3}, {2}, {1}, {1}},
        {2, 2, 3, {7, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
        {2, 1, 2, {9, 8}, {3, 2}, {2, 3}, {2, 0}, {2, 1}},
        {2, 1, 1, {4, 4}, {5, 5}, {1, 1}, {2, 2}, {1, 1}}, /* window larger than the image */
        {3, 1, 2, {5, 4, 6}, {2, 3, 2}, {2, 1, 3}, {1, 0, 1}, {1, 2, 1}},
        {2, 0, 3, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},   /* empty batch */
    };
    const char *names[] = {"1-d stride 2", "2-d 3x3 pad 1", "2-d strides, dilation", "2-d big window", "3-d",
                           "empty"};
    for (int k = 0; k < 6; k++) {
        compare(&cases[k], CH_FLOAT32, names[k]);
        compare(&cases[k], CH_FLOAT64, names[k]);
    }
    test_contract();
    return check_done("test_im2col (emulated)");
}

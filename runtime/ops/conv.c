/*
 * conv.c -- front doors of N-d convolution (kernels: runtime/cpu/conv.c):
 * forward, data gradient (also the transposed convolution), filter
 * gradient, and Chainer-layout im2col/col2im.  Each checks its arguments,
 * fills the geometry (ch_conv_geom, core/kernels.h), makes the operands
 * contiguous in the input's dtype, allocates the output on the input's
 * device and runs one kernel.
 */
#include "prologue.h"

#include <string.h>

/* chainer.config's cuDNN settings (ch_set_cudnn_config), copied into every
 * geometry.  One process-wide copy: a LuaJIT state is single-threaded and
 * config.lua sets them whenever the configuration changes. */
static int cudnn_deterministic, cudnn_tensor_core = 1, cudnn_autotune;

void ch_set_cudnn_config(int deterministic, int tensor_core, int autotune) {
    cudnn_deterministic = deterministic != 0;
    cudnn_tensor_core = tensor_core < 0 || tensor_core > 2 ? 1 : tensor_core;
    cudnn_autotune = autotune != 0;
}

void ch_get_cudnn_config(int *deterministic, int *tensor_core, int *autotune) {
    *deterministic = cudnn_deterministic;
    *tensor_core = cudnn_tensor_core;
    *autotune = cudnn_autotune;
}

/* Chainer's cuda.set_max_workspace_size: 8 MiB unless set (negative: 0). */
static int64_t cudnn_workspace_limit = (int64_t)8 << 20;

void ch_set_cudnn_workspace_limit(int64_t bytes) { cudnn_workspace_limit = bytes < 0 ? 0 : bytes; }

int64_t ch_get_cudnn_workspace_limit(void) { return cudnn_workspace_limit; }

static ch_status check_float(const ch_tensor *t, const char *fn, const char *arg) {
    if (t->dt != CH_FLOAT32 && t->dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: %s has dtype %s; expected float32 or float64", fn, arg,
                       ch_dtype_name((ch_dtype)t->dt));
    return CH_OK;
}

static ch_status check_same_dtype(const ch_tensor *a, const ch_tensor *b, const char *fn, const char *an,
                                  const char *bn) {
    if (a->dt != b->dt)
        return ch_fail(CH_ERR_DTYPE, "%s: %s and %s have different dtypes (%s and %s)", fn, an, bn,
                       ch_dtype_name((ch_dtype)a->dt), ch_dtype_name((ch_dtype)b->dt));
    return CH_OK;
}

/* nsp, the number of spatial axes, is 1..max. */
static ch_status check_nsp(const char *fn, int nsp, int max) {
    if (nsp < 1 || nsp > max)
        return ch_fail(CH_ERR_ARG, "%s: the number of spatial axes must be 1..%d (got %d)", fn, max, nsp);
    return CH_OK;
}

/* Fills the geometry common to all entry points; sizes are checked. */
static ch_status geom_init(ch_conv_geom *g, const char *fn, int nsp, int64_t N, int64_t C, int64_t Cout, int groups,
                           const int64_t *in, const int64_t *out, const int64_t *k, const int64_t *stride,
                           const int64_t *pad, const int64_t *dilate) {
    CH_TRY(check_nsp(fn, nsp, CH_MAX_DIMS - 2));
    if (groups < 1)
        return ch_fail(CH_ERR_ARG, "%s: groups must be positive (got %d)", fn, groups);
    if (C % groups != 0 || Cout % groups != 0)
        return ch_fail(CH_ERR_SHAPE, "%s: channels (%lld in, %lld out) must be divisible by groups=%d", fn,
                       (long long)C, (long long)Cout, groups);
    memset(g, 0, sizeof *g);
    g->nsp = nsp;
    g->N = N;
    g->C = C;
    g->Cout = Cout;
    g->groups = groups;
    g->Cg = C / groups;
    g->Coutg = Cout / groups;
    g->Kk = 1;
    g->Pin = 1;
    g->P = 1;
    bool direct = true;
    for (int a = 0; a < nsp; a++) {
        if (stride[a] < 1)
            return ch_fail(CH_ERR_ARG, "%s: stride must be positive (got %lld on spatial axis %d)", fn,
                           (long long)stride[a], a);
        if (dilate[a] < 1)
            return ch_fail(CH_ERR_ARG, "%s: dilate must be positive (got %lld on spatial axis %d)", fn,
                           (long long)dilate[a], a);
        if (pad[a] < 0)
            return ch_fail(CH_ERR_ARG, "%s: pad must be non-negative (got %lld on spatial axis %d)", fn,
                           (long long)pad[a], a);
        if (k[a] < 1 || in[a] < 0 || out[a] < 0)
            return ch_fail(CH_ERR_SHAPE, "%s: bad extents on spatial axis %d (input %lld, kernel %lld, output %lld)",
                           fn, a, (long long)in[a], (long long)k[a], (long long)out[a]);
        g->in[a] = in[a];
        g->out[a] = out[a];
        g->k[a] = k[a];
        g->s[a] = stride[a];
        g->p[a] = pad[a];
        g->d[a] = dilate[a];
        g->Kk *= k[a];
        g->Pin *= in[a];
        g->P *= out[a];
        if (k[a] != 1 || stride[a] != 1 || pad[a] != 0 || out[a] != in[a])
            direct = false;
    }
    g->Kg = g->Cg * g->Kk;
    g->direct = direct;
    g->deterministic = cudnn_deterministic;
    g->tensor_core = cudnn_tensor_core;
    g->autotune = cudnn_autotune;
    g->workspace_limit = cudnn_workspace_limit;
    if ((g->C * g->Kk) * g->P > INT32_MAX || g->Cout * g->Kg > INT32_MAX)
        return ch_fail(CH_ERR_SHAPE, "%s: the problem is too large for one BLAS call", fn);
    return CH_OK;
}

static ch_status need_nd(const ch_tensor *t, int nd, const char *fn, const char *arg) {
    if (t->nd != nd) {
        char buf[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "%s: %s must be %d-d (N, C, spatial...), got shape %s", fn, arg, nd,
                       ch_shape_str(buf, sizeof buf, t->nd, t->dim));
    }
    return CH_OK;
}

/* The operands of a convolution pass (a and b: x and W, gy and W, or x and
 * gy): a float32 or float64, b (and the bias, when there is one) of a's
 * dtype, nsp spatial axes, and (N, C, spatial...) shapes. */
static ch_status check_operands(const char *fn, int nsp, const ch_tensor *a, const char *an, const ch_tensor *b,
                                const char *bn, const ch_tensor *bias) {
    CH_TRY(check_float(a, fn, an));
    CH_TRY(check_same_dtype(a, b, fn, an, bn));
    if (bias)
        CH_TRY(check_same_dtype(a, bias, fn, an, "b"));
    CH_TRY(check_nsp(fn, nsp, CH_MAX_DIMS - 2));
    CH_TRY(need_nd(a, nsp + 2, fn, an));
    return need_nd(b, nsp + 2, fn, bn);
}

/* dim = (d0, d1, *spatial): an (N, C, ...) or (Cout, Cg, ...) shape. */
static void batch_shape(int64_t *dim, int64_t d0, int64_t d1, int nsp, const int64_t *spatial) {
    dim[0] = d0;
    dim[1] = d1;
    memcpy(dim + 2, spatial, (size_t)nsp * sizeof *spatial);
}

/* The end of every front door: releases the n contiguous operands, and the
 * output on failure; hands the output over on success. */
static ch_status finish(ch_status st, ch_tensor **c, int n, ch_tensor *out, ch_tensor **result) {
    ch_release_all(c, n);
    return ch_hand_over(st, out, result);
}

ch_status ch_conv_forward(const ch_tensor *x, const ch_tensor *w, const ch_tensor *b, int nsp, const int64_t *stride,
                          const int64_t *pad, const int64_t *dilate, const int64_t *out_size, int groups,
                          ch_tensor **result) {
    static const char *fn = "convolution";
    CH_CHECK_ARG(x, fn, "x");
    CH_TRY(ch_check_tensor(w, fn, "W"));
    CH_TRY(ch_same_device(fn, "x", x, "W", w));
    if (b) {
        CH_TRY(ch_check_tensor(b, fn, "b"));
        CH_TRY(ch_same_device(fn, "x", x, "b", b));
    }
    if (!result || !stride || !pad || !dilate || !out_size)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    CH_TRY(check_operands(fn, nsp, x, "x", w, "W", b));
    if (groups < 1 || x->dim[1] != w->dim[1] * groups)
        return ch_fail(CH_ERR_SHAPE, "%s: x has %lld channels but W expects %lld (W.shape[1]=%lld x groups=%d)", fn,
                       (long long)x->dim[1], (long long)(w->dim[1] * groups), (long long)w->dim[1], groups);
    if (b && (b->nd != 1 || b->dim[0] != w->dim[0]))
        return ch_fail(CH_ERR_SHAPE, "%s: b must have shape (%lld,) to match W's output channels", fn,
                       (long long)w->dim[0]);
    ch_conv_geom g;
    CH_TRY(geom_init(&g, fn, nsp, x->dim[0], x->dim[1], w->dim[0], groups, x->dim + 2, out_size, w->dim + 2, stride,
                     pad, dilate));
    CH_KERNEL(kernel, conv_forward, x->dev, fn);
    int64_t ydim[CH_MAX_DIMS];
    batch_shape(ydim, g.N, g.Cout, nsp, out_size);
    const ch_tensor *in[3] = {x, w, b};
    ch_tensor *c[3], *y = NULL;
    CH_TRY(ch_contiguous_all(in, b ? 3 : 2, (ch_dtype)x->dt, c));
    if (!b)
        c[2] = NULL;
    ch_status st = ch_tensor_new((ch_dtype)x->dt, nsp + 2, ydim, x->dev, &y);
    if (st == CH_OK)
        st = kernel(&g, c[0], c[1], c[2], y);
    return finish(st, c, 3, y, result);
}

/* Both gradients' kernels: out from a and b (gy and W, or x and gy). */
typedef ch_status gradient_kernel(const ch_conv_geom *g, const ch_tensor *a, const ch_tensor *b, ch_tensor *out);

/* Runs a gradient kernel on a and b made contiguous, into a new tensor of
 * shape dim (nd axes) on a's device. */
static ch_status run_gradient(const ch_conv_geom *g, gradient_kernel *kernel, const ch_tensor *a, const ch_tensor *b,
                              int nd, const int64_t *dim, ch_tensor **result) {
    const ch_tensor *in[2] = {a, b};
    ch_tensor *c[2], *out = NULL;
    CH_TRY(ch_contiguous_all(in, 2, (ch_dtype)a->dt, c));
    ch_status st = ch_tensor_new((ch_dtype)a->dt, nd, dim, a->dev, &out);
    if (st == CH_OK)
        st = kernel(g, c[0], c[1], out);
    return finish(st, c, 2, out, result);
}

ch_status ch_conv_backward_data(const ch_tensor *gy, const ch_tensor *w, int nsp, const int64_t *stride,
                                const int64_t *pad, const int64_t *dilate, const int64_t *in_size, int groups,
                                ch_tensor **result) {
    static const char *fn = "convolution_backward_data";
    CH_TRY(ch_check_pair(fn, "gy", gy, "W", w));
    if (!result || !stride || !pad || !dilate || !in_size)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    CH_TRY(check_operands(fn, nsp, gy, "gy", w, "W", NULL));
    if (gy->dim[1] != w->dim[0])
        return ch_fail(CH_ERR_SHAPE, "%s: gy has %lld channels but W.shape[0] is %lld", fn, (long long)gy->dim[1],
                       (long long)w->dim[0]);
    ch_conv_geom g;
    CH_TRY(geom_init(&g, fn, nsp, gy->dim[0], w->dim[1] * groups, w->dim[0], groups, in_size, gy->dim + 2,
                     w->dim + 2, stride, pad, dilate));
    CH_KERNEL(kernel, conv_backward_data, gy->dev, fn);
    int64_t xdim[CH_MAX_DIMS];
    batch_shape(xdim, g.N, g.C, nsp, in_size);
    return run_gradient(&g, kernel, gy, w, nsp + 2, xdim, result);
}

ch_status ch_conv_backward_filter(const ch_tensor *x, const ch_tensor *gy, int nsp, const int64_t *stride,
                                  const int64_t *pad, const int64_t *dilate, const int64_t *ksize, int groups,
                                  ch_tensor **result) {
    static const char *fn = "convolution_backward_filter";
    CH_TRY(ch_check_pair(fn, "x", x, "gy", gy));
    if (!result || !stride || !pad || !dilate || !ksize)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    CH_TRY(check_operands(fn, nsp, x, "x", gy, "gy", NULL));
    if (x->dim[0] != gy->dim[0])
        return ch_fail(CH_ERR_SHAPE, "%s: x and gy have different batch sizes (%lld and %lld)", fn,
                       (long long)x->dim[0], (long long)gy->dim[0]);
    ch_conv_geom g;
    CH_TRY(geom_init(&g, fn, nsp, x->dim[0], x->dim[1], gy->dim[1], groups, x->dim + 2, gy->dim + 2, ksize, stride,
                     pad, dilate));
    CH_KERNEL(kernel, conv_backward_filter, x->dev, fn);
    int64_t wdim[CH_MAX_DIMS];
    batch_shape(wdim, g.Cout, g.Cg, nsp, ksize);
    return run_gradient(&g, kernel, x, gy, nsp + 2, wdim, result);
}

ch_status ch_conv_im2col(const ch_tensor *x, int nsp, const int64_t *ksize, const int64_t *stride, const int64_t *pad,
                         const int64_t *dilate, const int64_t *out_size, ch_tensor **result) {
    static const char *fn = "im2col";
    CH_CHECK_ARG(x, fn, "x");
    if (!result || !ksize || !stride || !pad || !dilate || !out_size)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    CH_TRY(check_float(x, fn, "x"));
    CH_TRY(check_nsp(fn, nsp, (CH_MAX_DIMS - 2) / 2));
    CH_TRY(need_nd(x, nsp + 2, fn, "x"));
    ch_conv_geom g;
    CH_TRY(geom_init(&g, fn, nsp, x->dim[0], x->dim[1], 1, 1, x->dim + 2, out_size, ksize, stride, pad, dilate));
    CH_KERNEL(kernel, im2col, x->dev, fn);
    int64_t cdim[CH_MAX_DIMS];
    cdim[0] = g.N;
    cdim[1] = g.C;
    for (int a = 0; a < nsp; a++) {
        cdim[2 + a] = ksize[a];
        cdim[2 + nsp + a] = out_size[a];
    }
    ch_tensor *xc = NULL, *col = NULL;
    CH_TRY(ch_contiguous_as(x, (ch_dtype)x->dt, &xc));
    ch_status st = ch_tensor_new((ch_dtype)x->dt, 2 + 2 * nsp, cdim, x->dev, &col);
    if (st == CH_OK)
        st = kernel(&g, xc, col);
    return finish(st, &xc, 1, col, result);
}

ch_status ch_conv_col2im(const ch_tensor *col, int nsp, const int64_t *stride, const int64_t *pad,
                         const int64_t *dilate, const int64_t *in_size, ch_tensor **result) {
    static const char *fn = "col2im";
    CH_CHECK_ARG(col, fn, "col");
    if (!result || !stride || !pad || !dilate || !in_size)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    CH_TRY(check_float(col, fn, "col"));
    CH_TRY(check_nsp(fn, nsp, (CH_MAX_DIMS - 2) / 2));
    if (col->nd != 2 + 2 * nsp)
        return ch_fail(CH_ERR_SHAPE, "%s: col must be %d-d (N, C, *k, *out), got %d-d", fn, 2 + 2 * nsp, col->nd);
    ch_conv_geom g;
    CH_TRY(geom_init(&g, fn, nsp, col->dim[0], col->dim[1], 1, 1, in_size, col->dim + 2 + nsp, col->dim + 2, stride,
                     pad, dilate));
    CH_KERNEL(kernel, col2im, col->dev, fn);
    int64_t xdim[CH_MAX_DIMS];
    batch_shape(xdim, g.N, g.C, nsp, in_size);
    ch_tensor *cc = NULL, *x = NULL;
    CH_TRY(ch_contiguous_as(col, (ch_dtype)col->dt, &cc));
    ch_status st = ch_tensor_new((ch_dtype)col->dt, nsp + 2, xdim, col->dev, &x);
    if (st == CH_OK)
        st = kernel(&g, cc, x);
    return finish(st, &cc, 1, x, result);
}

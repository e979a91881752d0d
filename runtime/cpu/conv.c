/* conv.c -- N-d convolution on the CPU: forward, data gradient (which is
 * also the transposed convolution), filter gradient, and Chainer-layout
 * im2col/col2im.
 *
 * im2col + gemm: each image's column matrix (C*k, P) is built in a
 * per-thread scratch buffer that lives as long as the thread (no malloc per
 * call), and one gemm per group writes straight into the (N, Cout, *out)
 * output.  1x1 convolutions with stride 1 and no padding use x itself as
 * the column matrix.  The batch is spread over OpenMP threads; BLAS runs
 * single-threaded inside them (OpenBLAS's OpenMP build detects the parallel
 * region), and gets all threads when the batch is too small to split.
 */
#include "../core/internal.h"

#include <cblas.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct conv_geom {
    int nsp;
    int64_t N, C, Cout, groups, Coutg, Cg;
    int64_t in[CH_MAX_DIMS], out[CH_MAX_DIMS], k[CH_MAX_DIMS];
    int64_t s[CH_MAX_DIMS], p[CH_MAX_DIMS], d[CH_MAX_DIMS];
    int64_t Kk;  /* prod k */
    int64_t Pin; /* prod in */
    int64_t P;   /* prod out */
    int64_t Kg;  /* Cg * Kk: the column rows of one group */
    bool direct; /* 1x1, stride 1, no padding: the column matrix is x */
} conv_geom;

/* ---- per-thread scratch ------------------------------------------------ */
/* Three slots per thread (column matrix, gathered gy; the direct
 * kernels' frame, output rows and data-gradient partials), grown on demand and
 * kept for the thread's life: convolutions run every iteration with the
 * same shapes, so after the first call no allocation happens. */
static _Thread_local void *scratch_buf[3];
static _Thread_local size_t scratch_cap[3];

static void *conv_scratch(int slot, size_t nbytes) {
    if (nbytes > scratch_cap[slot]) {
        free(scratch_buf[slot]);
        size_t cap = (nbytes + 63) & ~(size_t)63;
        scratch_buf[slot] = aligned_alloc(64, cap);
        scratch_cap[slot] = scratch_buf[slot] ? cap : 0;
    }
    return scratch_buf[slot];
}

/* Filter-gradient chunking: chunks of cn images, at most 8 MB of column
 * matrix each and at least min(N, CONV_WAVE) chunks so both cores work.
 * Depends only on the shapes (never on the thread count). */
#define CONV_WAVE 8
#define CONV_CHUNK_BYTES ((int64_t)8 << 20)

static void conv_chunking(const conv_geom *g, size_t esz, int64_t *cn, int64_t *nch) {
    int64_t N = g->N;
    int64_t per = g->C * g->Kk * g->P * (int64_t)esz;
    int64_t c = per > 0 ? CONV_CHUNK_BYTES / per : N;
    int64_t cap = (N + CONV_WAVE - 1) / CONV_WAVE;
    if (c > cap)
        c = cap;
    if (c < 1)
        c = 1;
    *cn = c;
    *nch = N > 0 ? (N + c - 1) / c : 0;
}

/* Images per gemm in the forward and data gradient: enough for a gemm
 * at least CONV_MIN_WIDE columns wide when images are small, while leaving
 * at least CONV_WAVE chunks to spread over threads.  Shapes only. */
#define CONV_MIN_WIDE 256

static int64_t conv_group_size(const conv_geom *g) {
    int64_t c = g->P > 0 ? (CONV_MIN_WIDE + g->P - 1) / g->P : 1;
    int64_t cap = (g->N + CONV_WAVE - 1) / CONV_WAVE;
    int64_t lim = g->P > 0 ? CONV_CHUNK_BYTES / ((g->C * g->Kk + g->Cout) * g->P * 8 + 1) : 1;
    if (c > cap)
        c = cap;
    if (c > lim)
        c = lim;
    return c < 1 ? 1 : c;
}

#define CV_T float
#define CV_NAME(n) n##_f32
#define CV_GEMM cblas_sgemm
#include "conv_kernels.h"
#undef CV_T
#undef CV_NAME
#undef CV_GEMM

#define CV_T double
#define CV_NAME(n) n##_f64
#define CV_GEMM cblas_dgemm
#include "conv_kernels.h"
#undef CV_T
#undef CV_NAME
#undef CV_GEMM

#include "conv_direct.h"

/* ---- argument checks --------------------------------------------------- */
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

/* Fills the geometry common to all entry points; sizes are checked. */
static ch_status geom_init(conv_geom *g, const char *fn, int nsp, int64_t N, int64_t C, int64_t Cout, int groups,
                           const int64_t *in, const int64_t *out, const int64_t *k, const int64_t *stride,
                           const int64_t *pad, const int64_t *dilate) {
    if (nsp < 1 || nsp > CH_MAX_DIMS - 2)
        return ch_fail(CH_ERR_ARG, "%s: the number of spatial axes must be 1..%d (got %d)", fn, CH_MAX_DIMS - 2,
                       nsp);
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

/* ---- entry points ------------------------------------------------------ */
ch_status ch_conv_forward(const ch_tensor *x, const ch_tensor *w, const ch_tensor *b, int nsp, const int64_t *stride,
                          const int64_t *pad, const int64_t *dilate, const int64_t *out_size, int groups,
                          ch_tensor **result) {
    static const char *fn = "convolution";
    CH_CHECK_CPU(x, fn, "x");
    CH_CHECK_CPU(w, fn, "W");
    if (b)
        CH_CHECK_CPU(b, fn, "b");
    if (!result || !stride || !pad || !dilate || !out_size)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    CH_TRY(check_float(x, fn, "x"));
    CH_TRY(check_same_dtype(x, w, fn, "x", "W"));
    if (b)
        CH_TRY(check_same_dtype(x, b, fn, "x", "b"));
    if (nsp < 1 || nsp > CH_MAX_DIMS - 2)
        return ch_fail(CH_ERR_ARG, "%s: the number of spatial axes must be 1..%d (got %d)", fn, CH_MAX_DIMS - 2,
                       nsp);
    CH_TRY(need_nd(x, nsp + 2, fn, "x"));
    CH_TRY(need_nd(w, nsp + 2, fn, "W"));
    if (groups < 1 || x->dim[1] != w->dim[1] * groups)
        return ch_fail(CH_ERR_SHAPE, "%s: x has %lld channels but W expects %lld (W.shape[1]=%lld x groups=%d)", fn,
                       (long long)x->dim[1], (long long)(w->dim[1] * groups), (long long)w->dim[1], groups);
    if (b && (b->nd != 1 || b->dim[0] != w->dim[0]))
        return ch_fail(CH_ERR_SHAPE, "%s: b must have shape (%lld,) to match W's output channels", fn,
                       (long long)w->dim[0]);
    conv_geom g;
    CH_TRY(geom_init(&g, fn, nsp, x->dim[0], x->dim[1], w->dim[0], groups, x->dim + 2, out_size, w->dim + 2, stride,
                     pad, dilate));
    int64_t ydim[CH_MAX_DIMS];
    ydim[0] = g.N;
    ydim[1] = g.Cout;
    for (int a = 0; a < nsp; a++)
        ydim[2 + a] = out_size[a];
    ch_tensor *xc = NULL, *wc = NULL, *bc = NULL, *y = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_contiguous_as(w, (ch_dtype)x->dt, &wc);
    if (st == CH_OK && b)
        st = ch_contiguous_as(b, (ch_dtype)x->dt, &bc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, nsp + 2, ydim, CH_CPU, &y);
    if (st == CH_OK && y->numel > 0) {
        int bad;
        if (g.Kg == 0) { /* no input channels: y = b */
            memset(y->data, 0, (size_t)y->numel * ch_dtype_size((ch_dtype)y->dt));
            bad = 0;
            if (bc)
                for (int64_t n = 0; n < g.N; n++)
                    for (int64_t co = 0; co < g.Cout; co++)
                        for (int64_t j = 0; j < g.P; j++) {
                            if (x->dt == CH_FLOAT32)
                                ((float *)y->data)[(n * g.Cout + co) * g.P + j] = ((float *)ch_base(bc))[co];
                            else
                                ((double *)y->data)[(n * g.Cout + co) * g.P + j] = ((double *)ch_base(bc))[co];
                        }
        } else if (x->dt == CH_FLOAT32) {
            bad = cd_conv_forward(&g, (const float *)ch_base(xc), (const float *)ch_base(wc),
                                                     bc ? (const float *)ch_base(bc) : NULL, (float *)y->data);
            if (bad < 0)
                bad = forward_f32(&g, (const float *)ch_base(xc), (const float *)ch_base(wc),
                                  bc ? (const float *)ch_base(bc) : NULL, (float *)y->data);
        } else
            bad = forward_f64(&g, (const double *)ch_base(xc), (const double *)ch_base(wc),
                              bc ? (const double *)ch_base(bc) : NULL, (double *)y->data);
        if (bad)
            st = ch_fail(CH_ERR_MEMORY, "%s: out of memory for the column buffer", fn);
    }
    ch_tensor_release(xc);
    ch_tensor_release(wc);
    ch_tensor_release(bc);
    if (st != CH_OK) {
        ch_tensor_release(y);
        return st;
    }
    *result = y;
    return CH_OK;
}

ch_status ch_conv_backward_data(const ch_tensor *gy, const ch_tensor *w, int nsp, const int64_t *stride,
                                const int64_t *pad, const int64_t *dilate, const int64_t *in_size, int groups,
                                ch_tensor **result) {
    static const char *fn = "convolution_backward_data";
    CH_CHECK_CPU(gy, fn, "gy");
    CH_CHECK_CPU(w, fn, "W");
    if (!result || !stride || !pad || !dilate || !in_size)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    CH_TRY(check_float(gy, fn, "gy"));
    CH_TRY(check_same_dtype(gy, w, fn, "gy", "W"));
    if (nsp < 1 || nsp > CH_MAX_DIMS - 2)
        return ch_fail(CH_ERR_ARG, "%s: the number of spatial axes must be 1..%d (got %d)", fn, CH_MAX_DIMS - 2,
                       nsp);
    CH_TRY(need_nd(gy, nsp + 2, fn, "gy"));
    CH_TRY(need_nd(w, nsp + 2, fn, "W"));
    if (gy->dim[1] != w->dim[0])
        return ch_fail(CH_ERR_SHAPE, "%s: gy has %lld channels but W.shape[0] is %lld", fn, (long long)gy->dim[1],
                       (long long)w->dim[0]);
    conv_geom g;
    CH_TRY(geom_init(&g, fn, nsp, gy->dim[0], w->dim[1] * groups, w->dim[0], groups, in_size, gy->dim + 2,
                     w->dim + 2, stride, pad, dilate));
    int64_t xdim[CH_MAX_DIMS];
    xdim[0] = g.N;
    xdim[1] = g.C;
    for (int a = 0; a < nsp; a++)
        xdim[2 + a] = in_size[a];
    ch_tensor *gc = NULL, *wc = NULL, *gx = NULL;
    ch_status st = ch_contiguous_as(gy, (ch_dtype)gy->dt, &gc);
    if (st == CH_OK)
        st = ch_contiguous_as(w, (ch_dtype)gy->dt, &wc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)gy->dt, nsp + 2, xdim, CH_CPU, &gx);
    if (st == CH_OK && gx->numel > 0) {
        int bad;
        if (g.Cout == 0 || g.P == 0) {
            memset(gx->data, 0, (size_t)gx->numel * ch_dtype_size((ch_dtype)gx->dt));
            bad = 0;
        } else if (gy->dt == CH_FLOAT32) {
            bad = cd_conv_backward_data(&g, (const float *)ch_base(gc), (const float *)ch_base(wc),
                                                           (float *)gx->data);
            if (bad < 0)
                bad = backward_data_f32(&g, (const float *)ch_base(gc), (const float *)ch_base(wc),
                                        (float *)gx->data);
        } else
            bad = backward_data_f64(&g, (const double *)ch_base(gc), (const double *)ch_base(wc),
                                    (double *)gx->data);
        if (bad)
            st = ch_fail(CH_ERR_MEMORY, "%s: out of memory for the column buffer", fn);
    }
    ch_tensor_release(gc);
    ch_tensor_release(wc);
    if (st != CH_OK) {
        ch_tensor_release(gx);
        return st;
    }
    *result = gx;
    return CH_OK;
}

ch_status ch_conv_backward_filter(const ch_tensor *x, const ch_tensor *gy, int nsp, const int64_t *stride,
                                  const int64_t *pad, const int64_t *dilate, const int64_t *ksize, int groups,
                                  ch_tensor **result) {
    static const char *fn = "convolution_backward_filter";
    CH_CHECK_CPU(x, fn, "x");
    CH_CHECK_CPU(gy, fn, "gy");
    if (!result || !stride || !pad || !dilate || !ksize)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    CH_TRY(check_float(x, fn, "x"));
    CH_TRY(check_same_dtype(x, gy, fn, "x", "gy"));
    if (nsp < 1 || nsp > CH_MAX_DIMS - 2)
        return ch_fail(CH_ERR_ARG, "%s: the number of spatial axes must be 1..%d (got %d)", fn, CH_MAX_DIMS - 2,
                       nsp);
    CH_TRY(need_nd(x, nsp + 2, fn, "x"));
    CH_TRY(need_nd(gy, nsp + 2, fn, "gy"));
    if (x->dim[0] != gy->dim[0])
        return ch_fail(CH_ERR_SHAPE, "%s: x and gy have different batch sizes (%lld and %lld)", fn,
                       (long long)x->dim[0], (long long)gy->dim[0]);
    conv_geom g;
    CH_TRY(geom_init(&g, fn, nsp, x->dim[0], x->dim[1], gy->dim[1], groups, x->dim + 2, gy->dim + 2, ksize, stride,
                     pad, dilate));
    int64_t wdim[CH_MAX_DIMS];
    wdim[0] = g.Cout;
    wdim[1] = g.Cg;
    for (int a = 0; a < nsp; a++)
        wdim[2 + a] = ksize[a];
    ch_tensor *xc = NULL, *gc = NULL, *gw = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_contiguous_as(gy, (ch_dtype)x->dt, &gc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, nsp + 2, wdim, CH_CPU, &gw);
    if (st == CH_OK && gw->numel > 0) {
        int bad;
        if (g.P == 0 || g.N == 0) {
            memset(gw->data, 0, (size_t)gw->numel * ch_dtype_size((ch_dtype)gw->dt));
            bad = 0;
        } else if (x->dt == CH_FLOAT32) {
            bad = cd_conv_backward_filter(&g, (const float *)ch_base(xc),
                                                             (const float *)ch_base(gc), (float *)gw->data);
            if (bad < 0)
                bad = backward_filter_f32(&g, (const float *)ch_base(xc), (const float *)ch_base(gc),
                                          (float *)gw->data);
        } else
            bad = backward_filter_f64(&g, (const double *)ch_base(xc), (const double *)ch_base(gc),
                                      (double *)gw->data);
        if (bad)
            st = ch_fail(CH_ERR_MEMORY, "%s: out of memory for the column buffer", fn);
    }
    ch_tensor_release(xc);
    ch_tensor_release(gc);
    if (st != CH_OK) {
        ch_tensor_release(gw);
        return st;
    }
    *result = gw;
    return CH_OK;
}

ch_status ch_conv_im2col(const ch_tensor *x, int nsp, const int64_t *ksize, const int64_t *stride, const int64_t *pad,
                         const int64_t *dilate, const int64_t *out_size, ch_tensor **result) {
    static const char *fn = "im2col";
    CH_CHECK_CPU(x, fn, "x");
    if (!result || !ksize || !stride || !pad || !dilate || !out_size)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    CH_TRY(check_float(x, fn, "x"));
    if (nsp < 1 || nsp > (CH_MAX_DIMS - 2) / 2)
        return ch_fail(CH_ERR_ARG, "%s: the number of spatial axes must be 1..%d (got %d)", fn,
                       (CH_MAX_DIMS - 2) / 2, nsp);
    CH_TRY(need_nd(x, nsp + 2, fn, "x"));
    conv_geom g;
    CH_TRY(geom_init(&g, fn, nsp, x->dim[0], x->dim[1], 1, 1, x->dim + 2, out_size, ksize, stride, pad, dilate));
    int64_t cdim[CH_MAX_DIMS];
    cdim[0] = g.N;
    cdim[1] = g.C;
    for (int a = 0; a < nsp; a++) {
        cdim[2 + a] = ksize[a];
        cdim[2 + nsp + a] = out_size[a];
    }
    ch_tensor *xc = NULL, *col = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 2 + 2 * nsp, cdim, CH_CPU, &col);
    if (st == CH_OK && col->numel > 0) {
        if (x->dt == CH_FLOAT32)
            im2col_batch_f32(&g, (const float *)ch_base(xc), (float *)col->data);
        else
            im2col_batch_f64(&g, (const double *)ch_base(xc), (double *)col->data);
    }
    ch_tensor_release(xc);
    if (st != CH_OK) {
        ch_tensor_release(col);
        return st;
    }
    *result = col;
    return CH_OK;
}

ch_status ch_conv_col2im(const ch_tensor *col, int nsp, const int64_t *stride, const int64_t *pad,
                         const int64_t *dilate, const int64_t *in_size, ch_tensor **result) {
    static const char *fn = "col2im";
    CH_CHECK_CPU(col, fn, "col");
    if (!result || !stride || !pad || !dilate || !in_size)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    CH_TRY(check_float(col, fn, "col"));
    if (nsp < 1 || nsp > (CH_MAX_DIMS - 2) / 2)
        return ch_fail(CH_ERR_ARG, "%s: the number of spatial axes must be 1..%d (got %d)", fn,
                       (CH_MAX_DIMS - 2) / 2, nsp);
    if (col->nd != 2 + 2 * nsp)
        return ch_fail(CH_ERR_SHAPE, "%s: col must be %d-d (N, C, *k, *out), got %d-d", fn, 2 + 2 * nsp, col->nd);
    conv_geom g;
    CH_TRY(geom_init(&g, fn, nsp, col->dim[0], col->dim[1], 1, 1, in_size, col->dim + 2 + nsp, col->dim + 2, stride,
                     pad, dilate));
    int64_t xdim[CH_MAX_DIMS];
    xdim[0] = g.N;
    xdim[1] = g.C;
    for (int a = 0; a < nsp; a++)
        xdim[2 + a] = in_size[a];
    ch_tensor *cc = NULL, *x = NULL;
    ch_status st = ch_contiguous_as(col, (ch_dtype)col->dt, &cc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)col->dt, nsp + 2, xdim, CH_CPU, &x);
    if (st == CH_OK && x->numel > 0) {
        if (col->dt == CH_FLOAT32)
            col2im_batch_f32(&g, (const float *)ch_base(cc), (float *)x->data);
        else
            col2im_batch_f64(&g, (const double *)ch_base(cc), (double *)x->data);
    }
    ch_tensor_release(cc);
    if (st != CH_OK) {
        ch_tensor_release(x);
        return st;
    }
    *result = x;
    return CH_OK;
}

/* conv.c -- N-d convolution on the CPU: forward, data gradient (which is
 * also the transposed convolution), filter gradient, and Chainer-layout
 * im2col/col2im.
 *
 * im2col + gemm: each image's column matrix (C*k, P) is built in a
 * per-thread scratch buffer that lives as long as the thread (no malloc per
 * call), and one gemm per group writes straight into the (N, Cout, *out)
 * output.  1x1 convolutions with stride 1 and no padding use x itself as
 * the column matrix.  The batch is spread over OpenMP threads, each
 * product a single-threaded BLAS call; when the batch is too small to split,
 * the products are cut into row bands (cpu/gemm.h), so that no result
 * depends on the thread count.
 * float32 picks per shape: Winograd for 3x3 stride-1 layers of 32+
 * channels (all three passes; F(4x4, 3x3) for maps of 8 x 8 and up,
 * F(2x2, 3x3) below, conv_winograd.h), the direct
 * AVX2 kernels for short reductions (conv_direct.h), else im2col + gemm.
 * Front doors (checks, geometry, contiguous operands, outputs):
 * runtime/ops/conv.c.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include "gemm.h"
#include "scratch.h"
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

typedef ch_conv_geom conv_geom; /* core/kernels.h; filled and checked by ops/conv.c */

/* ---- per-thread scratch ------------------------------------------------ */
/* The convolutions' three slots of cpu/scratch.h (column matrix, gathered
 * gy; the direct kernels' frame, output rows and data-gradient partials). */
static void *conv_scratch(int slot, size_t nbytes) { return ch_cpu_scratch(CH_SCRATCH_CONV0 + slot, nbytes); }

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
#define CV_GEMM ch_cpu_sgemm
#include "conv_kernels.h"
#undef CV_T
#undef CV_NAME
#undef CV_GEMM

#define CV_T double
#define CV_NAME(n) n##_f64
#define CV_GEMM ch_cpu_dgemm
#include "conv_kernels.h"
#undef CV_T
#undef CV_NAME
#undef CV_GEMM

#include "conv_direct.h"
#include "conv_winograd.h"

/* ---- kernels ----------------------------------------------------------- */
static ch_status no_memory(const char *fn) {
    return ch_fail(CH_ERR_MEMORY, "%s: out of memory for the column buffer", fn);
}

ch_status ch_cpu_conv_forward(const ch_conv_geom *g, const ch_tensor *x, const ch_tensor *w, const ch_tensor *b,
                              ch_tensor *y) {
    if (y->numel == 0)
        return CH_OK;
    int bad;
    if (g->Kg == 0) { /* no input channels: y = b */
        memset(y->data, 0, (size_t)y->numel * ch_dtype_size((ch_dtype)y->dt));
        bad = 0;
        if (b)
            for (int64_t n = 0; n < g->N; n++)
                for (int64_t co = 0; co < g->Cout; co++)
                    for (int64_t j = 0; j < g->P; j++) {
                        if (x->dt == CH_FLOAT32)
                            ((float *)y->data)[(n * g->Cout + co) * g->P + j] = ((const float *)ch_base(b))[co];
                        else
                            ((double *)y->data)[(n * g->Cout + co) * g->P + j] = ((const double *)ch_base(b))[co];
                    }
    } else if (x->dt == CH_FLOAT32) {
        bad = wg_conv_forward(g, (const float *)ch_base(x), (const float *)ch_base(w),
                              b ? (const float *)ch_base(b) : NULL, (float *)y->data);
        if (bad < 0)
            bad = cd_conv_forward(g, (const float *)ch_base(x), (const float *)ch_base(w),
                                  b ? (const float *)ch_base(b) : NULL, (float *)y->data);
        if (bad < 0)
            bad = forward_f32(g, (const float *)ch_base(x), (const float *)ch_base(w),
                              b ? (const float *)ch_base(b) : NULL, (float *)y->data);
    } else
        bad = forward_f64(g, (const double *)ch_base(x), (const double *)ch_base(w),
                          b ? (const double *)ch_base(b) : NULL, (double *)y->data);
    return bad ? no_memory("convolution") : CH_OK;
}

ch_status ch_cpu_conv_backward_data(const ch_conv_geom *g, const ch_tensor *gy, const ch_tensor *w, ch_tensor *gx) {
    if (gx->numel == 0)
        return CH_OK;
    int bad;
    if (g->Cout == 0 || g->P == 0) {
        memset(gx->data, 0, (size_t)gx->numel * ch_dtype_size((ch_dtype)gx->dt));
        bad = 0;
    } else if (gy->dt == CH_FLOAT32) {
        bad = wg_conv_backward_data(g, (const float *)ch_base(gy), (const float *)ch_base(w), (float *)gx->data);
        if (bad < 0)
            bad = cd_conv_backward_data(g, (const float *)ch_base(gy), (const float *)ch_base(w), (float *)gx->data);
        if (bad < 0)
            bad = backward_data_f32(g, (const float *)ch_base(gy), (const float *)ch_base(w), (float *)gx->data);
    } else
        bad = backward_data_f64(g, (const double *)ch_base(gy), (const double *)ch_base(w), (double *)gx->data);
    return bad ? no_memory("convolution_backward_data") : CH_OK;
}

ch_status ch_cpu_conv_backward_filter(const ch_conv_geom *g, const ch_tensor *x, const ch_tensor *gy, ch_tensor *gw) {
    if (gw->numel == 0)
        return CH_OK;
    int bad;
    if (g->P == 0 || g->N == 0) {
        memset(gw->data, 0, (size_t)gw->numel * ch_dtype_size((ch_dtype)gw->dt));
        bad = 0;
    } else if (x->dt == CH_FLOAT32) {
        bad = wg_conv_backward_filter(g, (const float *)ch_base(x), (const float *)ch_base(gy), (float *)gw->data);
        if (bad < 0)
            bad = cd_conv_backward_filter(g, (const float *)ch_base(x), (const float *)ch_base(gy),
                                          (float *)gw->data);
        if (bad < 0)
            bad = backward_filter_f32(g, (const float *)ch_base(x), (const float *)ch_base(gy), (float *)gw->data);
    } else
        bad = backward_filter_f64(g, (const double *)ch_base(x), (const double *)ch_base(gy), (double *)gw->data);
    return bad ? no_memory("convolution_backward_filter") : CH_OK;
}

ch_status ch_cpu_im2col(const ch_conv_geom *g, const ch_tensor *x, ch_tensor *col) {
    if (col->numel == 0)
        return CH_OK;
    if (x->dt == CH_FLOAT32)
        im2col_batch_f32(g, (const float *)ch_base(x), (float *)col->data);
    else
        im2col_batch_f64(g, (const double *)ch_base(x), (double *)col->data);
    return CH_OK;
}

ch_status ch_cpu_col2im(const ch_conv_geom *g, const ch_tensor *col, ch_tensor *x) {
    if (x->numel == 0)
        return CH_OK;
    if (col->dt == CH_FLOAT32)
        col2im_batch_f32(g, (const float *)ch_base(col), (float *)x->data);
    else
        col2im_batch_f64(g, (const double *)ch_base(col), (double *)x->data);
    return CH_OK;
}

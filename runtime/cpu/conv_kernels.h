/*
 * conv_kernels.h -- the typed inner loops of conv.c, written once and
 * instantiated for float and double (conv.c includes this file twice with
 * CV_T, CV_NAME and CV_GEMM set).
 *
 * Layout: one image is (C, *in) contiguous; its column matrix has one row
 * per (c, k_0, ..., k_{nsp-1}) and one column per output position, rows
 * `ld` elements apart (ld >= P lets several images share one wide matrix).
 * Along the last spatial axis the valid output range of a row is computed
 * once, so the interior is a straight (strided) copy with no bounds tests.
 */
#ifndef CV_T
#error "define CV_T, CV_NAME and CV_GEMM before including conv_kernels.h"
#endif

/* Along one axis of n outputs with stride s over W inputs, where output j
 * reads input j*s + o: the outputs [lo, hi) that read inside the input. */
static inline void CV_NAME(valid_range)(int64_t o, int64_t s, int64_t W, int64_t n, int64_t *lo, int64_t *hi) {
    int64_t l = o >= 0 ? 0 : (-o + s - 1) / s;
    int64_t h = (W - o) <= 0 ? 0 : (W - o + s - 1) / s;
    if (h > n)
        h = n;
    if (l > h)
        l = h;
    *lo = l;
    *hi = h;
}

/* For one column row: per spatial axis, the input offset of output 0
 * (k*d - p) and, on the last axis, the valid output range [lo, hi). */
static inline void CV_NAME(row_setup)(const conv_geom *g, int64_t r, int64_t *c, int64_t *off, int64_t *lo,
                                      int64_t *hi) {
    int nsp = g->nsp;
    int64_t kidx = r % g->Kk;
    *c = r / g->Kk;
    for (int a = nsp - 1; a >= 0; a--) {
        int64_t ka = kidx % g->k[a];
        kidx /= g->k[a];
        off[a] = ka * g->d[a] - g->p[a];
    }
    int L = nsp - 1;
    CV_NAME(valid_range)(off[L], g->s[L], g->in[L], g->out[L], lo, hi);
}

/* The 2-d case with tight loops (the common one: LeNet-sized images have
 * output rows of a few elements, where loop overhead decides the speed). */
static void CV_NAME(im2col_2d)(const conv_geom *g, const CV_T *restrict x, CV_T *restrict col, int64_t ld) {
    const int64_t H = g->in[0], W = g->in[1], OH = g->out[0], OW = g->out[1];
    const int64_t KH = g->k[0], KW = g->k[1], sy = g->s[0], sx = g->s[1];
    const int64_t py = g->p[0], px = g->p[1], dy = g->d[0], dx = g->d[1];
    CV_T *dst = col;
    for (int64_t c = 0; c < g->C; c++) {
        const CV_T *xc = x + c * H * W;
        for (int64_t ki = 0; ki < KH; ki++)
            for (int64_t kj = 0; kj < KW; kj++, dst += ld) {
                int64_t offx = kj * dx - px, lo, hi;
                CV_NAME(valid_range)(offx, sx, W, OW, &lo, &hi);
                CV_T *d = dst;
                for (int64_t oy = 0; oy < OH; oy++, d += OW) {
                    int64_t iy = oy * sy - py + ki * dy;
                    if (iy < 0 || iy >= H) {
                        for (int64_t j = 0; j < OW; j++)
                            d[j] = 0;
                        continue;
                    }
                    const CV_T *src = xc + iy * W + offx;
                    for (int64_t j = 0; j < lo; j++)
                        d[j] = 0;
                    if (sx == 1)
                        for (int64_t j = lo; j < hi; j++)
                            d[j] = src[j];
                    else
                        for (int64_t j = lo; j < hi; j++)
                            d[j] = src[j * sx];
                    for (int64_t j = hi; j < OW; j++)
                        d[j] = 0;
                }
            }
    }
}

/* The N-d paths walk the output positions o of all but the last spatial
 * axis L (the "outer" positions) in order; off is a kernel row's offsets
 * (row_setup).  input_row gives the input row (over the first nsp-1 axes)
 * that o reads into *base, false when it lies in the padding; next_outer
 * steps o to the next outer position. */
static inline bool CV_NAME(input_row)(const conv_geom *g, int L, const int64_t *o, const int64_t *off,
                                      int64_t *base) {
    int64_t b = 0;
    for (int a = 0; a < L; a++) {
        int64_t i = o[a] * g->s[a] + off[a];
        if (i < 0 || i >= g->in[a])
            return false;
        b = b * g->in[a] + i;
    }
    *base = b;
    return true;
}

static inline void CV_NAME(next_outer)(const conv_geom *g, int L, int64_t *o) {
    for (int a = L - 1; a >= 0; a--) {
        if (++o[a] < g->out[a])
            break;
        o[a] = 0;
    }
}

/* col rows [0, C*Kk) of one image x into col (row stride ld). */
static void CV_NAME(im2col)(const conv_geom *g, const CV_T *x, CV_T *col, int64_t ld) {
    if (g->nsp == 2) {
        CV_NAME(im2col_2d)(g, x, col, ld);
        return;
    }
    int nsp = g->nsp, L = nsp - 1;
    int64_t rows = g->C * g->Kk;
    int64_t n_last = g->out[L], s_last = g->s[L];
    int64_t outer = g->P / (n_last ? n_last : 1);
    if (n_last == 0)
        return;
    for (int64_t r = 0; r < rows; r++) {
        int64_t c, off[CH_MAX_DIMS], lo, hi;
        CV_NAME(row_setup)(g, r, &c, off, &lo, &hi);
        const CV_T *xc = x + c * g->Pin;
        CV_T *dst = col + r * ld;
        int64_t o[CH_MAX_DIMS] = {0};
        for (int64_t q = 0; q < outer; q++, dst += n_last) {
            int64_t base;
            if (!CV_NAME(input_row)(g, L, o, off, &base) || lo >= hi) {
                for (int64_t j = 0; j < n_last; j++)
                    dst[j] = 0;
            } else {
                const CV_T *src = xc + base * g->in[L] + off[L];
                int64_t j = 0;
                for (; j < lo; j++)
                    dst[j] = 0;
                if (s_last == 1) {
                    /* runs are short in small images: a plain loop beats a
                     * memcpy call there */
                    if (hi - lo >= 64)
                        memcpy(dst + lo, src + lo, (size_t)(hi - lo) * sizeof(CV_T));
                    else
                        for (j = lo; j < hi; j++)
                            dst[j] = src[j];
                } else {
                    for (j = lo; j < hi; j++)
                        dst[j] = src[j * s_last];
                }
                for (j = hi; j < n_last; j++)
                    dst[j] = 0;
            }
            CV_NAME(next_outer)(g, L, o);
        }
    }
}

/* Adds the column matrix back into one image x (the adjoint of im2col);
 * x must already hold zeros (or what the sum should start from). */
static void CV_NAME(col2im)(const conv_geom *g, const CV_T *col, int64_t ld, CV_T *x) {
    int nsp = g->nsp, L = nsp - 1;
    int64_t rows = g->C * g->Kk;
    int64_t n_last = g->out[L], s_last = g->s[L];
    if (n_last == 0)
        return;
    int64_t outer = g->P / n_last;
    for (int64_t r = 0; r < rows; r++) {
        int64_t c, off[CH_MAX_DIMS], lo, hi;
        CV_NAME(row_setup)(g, r, &c, off, &lo, &hi);
        if (lo >= hi)
            continue;
        CV_T *xc = x + c * g->Pin;
        const CV_T *srcrow = col + r * ld;
        int64_t o[CH_MAX_DIMS] = {0};
        for (int64_t q = 0; q < outer; q++) {
            int64_t base;
            if (CV_NAME(input_row)(g, L, o, off, &base)) {
                CV_T *dst = xc + base * g->in[L] + off[L];
                const CV_T *src = srcrow + q * n_last;
                if (s_last == 1) {
                    for (int64_t j = lo; j < hi; j++)
                        dst[j] += src[j];
                } else {
                    for (int64_t j = lo; j < hi; j++)
                        dst[j * s_last] += src[j];
                }
            }
            CV_NAME(next_outer)(g, L, o);
        }
    }
}

/* The column matrix (C*Kk, cn*P) of the images [n0, n0 + cn): x itself
 * for one image of a 1x1 convolution (g->direct), else built by im2col in
 * scratch slot 0.  NULL when out of memory. */
static const CV_T *CV_NAME(col_wide)(const conv_geom *g, const CV_T *x, int64_t n0, int64_t cn) {
    int64_t P = g->P, wide = cn * P;
    if (cn == 1 && g->direct)
        return x + n0 * g->C * g->Pin;
    CV_T *buf = (CV_T *)conv_scratch(0, (size_t)(g->C * g->Kk) * (size_t)wide * sizeof(CV_T));
    if (!buf)
        return NULL;
    for (int64_t i = 0; i < cn; i++)
        CV_NAME(im2col)(g, x + (n0 + i) * g->C * g->Pin, buf + i * P, wide);
    return buf;
}

/* y = W @ col(x) + b for the images [n0, n0 + cn).  With one image the
 * gemm writes straight into y; small images (few output positions) are
 * grouped so the gemm sees a wide matrix, then its (Cout, cn*P) result is
 * copied out to the (N, Cout, P) layout. */
static int CV_NAME(forward_chunk)(const conv_geom *g, const CV_T *x, const CV_T *w, const CV_T *b, CV_T *y,
                                  int64_t n0, int64_t cn) {
    int64_t P = g->P, Kg = g->Kg, Cog = g->Coutg, wide = cn * P;
    const CV_T *col = CV_NAME(col_wide)(g, x, n0, cn);
    if (!col)
        return 1;
    CV_T *out;
    int64_t ldo;
    if (cn == 1) {
        out = y + n0 * g->Cout * P;
        ldo = P;
    } else {
        out = (CV_T *)conv_scratch(1, (size_t)g->Cout * (size_t)wide * sizeof(CV_T));
        if (!out)
            return 1;
        ldo = wide;
    }
    CV_T beta = 0;
    if (b && cn == 1) {
        for (int64_t co = 0; co < g->Cout; co++)
            for (int64_t j = 0; j < P; j++)
                out[co * P + j] = b[co];
        beta = 1;
    }
    for (int64_t gi = 0; gi < g->groups; gi++)
        CV_GEMM(CblasNoTrans, CblasNoTrans, (int)Cog, (int)wide, (int)Kg, 1, w + gi * Cog * Kg,
                (int)Kg, col + gi * Kg * wide, (int)wide, beta, out + gi * Cog * ldo, (int)ldo);
    if (cn > 1) {
        for (int64_t i = 0; i < cn; i++)
            for (int64_t co = 0; co < g->Cout; co++) {
                CV_T *dst = y + ((n0 + i) * g->Cout + co) * P;
                const CV_T *src = out + co * wide + i * P;
                CV_T bv = b ? b[co] : 0;
                for (int64_t j = 0; j < P; j++)
                    dst[j] = src[j] + bv;
            }
    }
    return 0;
}

/* gy of the images [n0, n0 + cn) as one (Cout, cn*P) matrix: gy itself
 * for one image, else gathered into scratch slot 1.  NULL when out of
 * memory. */
static const CV_T *CV_NAME(gy_wide)(const conv_geom *g, const CV_T *gy, int64_t n0, int64_t cn) {
    int64_t P = g->P, wide = cn * P;
    if (cn == 1)
        return gy + n0 * g->Cout * P;
    CV_T *buf = (CV_T *)conv_scratch(1, (size_t)g->Cout * (size_t)wide * sizeof(CV_T));
    if (!buf)
        return NULL;
    for (int64_t i = 0; i < cn; i++)
        for (int64_t co = 0; co < g->Cout; co++)
            memcpy(buf + co * wide + i * P, gy + ((n0 + i) * g->Cout + co) * P, (size_t)P * sizeof(CV_T));
    return buf;
}

/* gx = col2im(W^T @ gy) for the images [n0, n0 + cn), grouped like the
 * forward. */
static int CV_NAME(data_chunk)(const conv_geom *g, const CV_T *gy, const CV_T *w, CV_T *gx, int64_t n0,
                               int64_t cn) {
    int64_t P = g->P, Kg = g->Kg, Cog = g->Coutg, wide = cn * P;
    const CV_T *gyc = CV_NAME(gy_wide)(g, gy, n0, cn);
    if (!gyc)
        return 1;
    if (cn == 1 && g->direct) {
        CV_T *gxn = gx + n0 * g->C * g->Pin;
        for (int64_t gi = 0; gi < g->groups; gi++)
            CV_GEMM(CblasTrans, CblasNoTrans, (int)Kg, (int)P, (int)Cog, 1, w + gi * Cog * Kg, (int)Kg,
                    gyc + gi * Cog * P, (int)P, 0, gxn + gi * Kg * P, (int)P);
        return 0;
    }
    CV_T *col = (CV_T *)conv_scratch(0, (size_t)(g->C * g->Kk) * (size_t)wide * sizeof(CV_T));
    if (!col)
        return 1;
    for (int64_t gi = 0; gi < g->groups; gi++)
        CV_GEMM(CblasTrans, CblasNoTrans, (int)Kg, (int)wide, (int)Cog, 1, w + gi * Cog * Kg, (int)Kg,
                gyc + gi * Cog * wide, (int)wide, 0, col + gi * Kg * wide, (int)wide);
    for (int64_t i = 0; i < cn; i++) {
        CV_T *gxn = gx + (n0 + i) * g->C * g->Pin;
        memset(gxn, 0, (size_t)(g->C * g->Pin) * sizeof(CV_T));
        CV_NAME(col2im)(g, col + i * P, wide, gxn);
    }
    return 0;
}

/* Runs body(chunk) over the batch cut into chunks of conv_group_size
 * images: over OpenMP threads when there are several chunks (each thread
 * with its own scratch, BLAS single-threaded inside), otherwise on this
 * thread, the product cut into row bands over the threads (cpu/gemm.h). */
static int CV_NAME(forward)(const conv_geom *g, const CV_T *x, const CV_T *w, const CV_T *b, CV_T *y) {
    int64_t cn = conv_group_size(g), N = g->N, nch = (N + cn - 1) / cn;
    int failed = 0;
    CH_PAR_FOR(nch >= 2 && ch_threads() > 1, int64_t c = 0; c < nch; c++, {
        int64_t n0 = c * cn, k = N - n0 < cn ? N - n0 : cn;
        if (!failed && CV_NAME(forward_chunk)(g, x, w, b, y, n0, k)) {
            ch_flag_set(&failed);
        }
    });
    return failed;
}

static int CV_NAME(backward_data)(const conv_geom *g, const CV_T *gy, const CV_T *w, CV_T *gx) {
    int64_t cn = conv_group_size(g), N = g->N, nch = (N + cn - 1) / cn;
    int failed = 0;
    CH_PAR_FOR(nch >= 2 && ch_threads() > 1, int64_t c = 0; c < nch; c++, {
        int64_t n0 = c * cn, k = N - n0 < cn ? N - n0 : cn;
        if (!failed && CV_NAME(data_chunk)(g, gy, w, gx, n0, k)) {
            ch_flag_set(&failed);
        }
    });
    return failed;
}

/* gW for the images [n0, n0 + cn) into dst (Cout, Kg): one wide column
 * matrix (C*Kk, cn*P) and gy gathered to (Cout, cn*P), then one gemm per
 * group with a long inner dimension. */
static int CV_NAME(filter_chunk)(const conv_geom *g, const CV_T *x, const CV_T *gy, int64_t n0, int64_t cn,
                                 CV_T *dst) {
    int64_t P = g->P, Kg = g->Kg, Cog = g->Coutg, wide = cn * P;
    const CV_T *col = CV_NAME(col_wide)(g, x, n0, cn);
    if (!col)
        return 1;
    const CV_T *gyc = CV_NAME(gy_wide)(g, gy, n0, cn);
    if (!gyc)
        return 1;
    for (int64_t gi = 0; gi < g->groups; gi++)
        CV_GEMM(CblasNoTrans, CblasTrans, (int)Cog, (int)Kg, (int)wide, 1, gyc + gi * Cog * wide,
                (int)wide, col + gi * Kg * wide, (int)wide, 0, dst + gi * Cog * Kg, (int)Kg);
    return 0;
}

/* gW = sum over images of gy_n @ col_n^T.  The batch is cut into chunks
 * whose size depends only on the shapes; chunks run in waves of CONV_WAVE,
 * each into its own partial buffer, and the partials are added in chunk
 * order, so the result does not depend on the thread count. */
static int CV_NAME(backward_filter)(const conv_geom *g, const CV_T *x, const CV_T *gy, CV_T *gw) {
    int64_t N = g->N, Wn = g->Cout * g->Kg;
    int64_t cn, nch;
    conv_chunking(g, sizeof(CV_T), &cn, &nch);
    if (nch <= 1) {
        if (N == 0) {
            memset(gw, 0, (size_t)Wn * sizeof(CV_T));
            return 0;
        }
        return CV_NAME(filter_chunk)(g, x, gy, 0, N, gw);
    }
    int64_t nwave = nch < CONV_WAVE ? nch : CONV_WAVE;
    CV_T *part = (CV_T *)ch_cpu_alloc((size_t)(nwave * Wn) * sizeof(CV_T));
    if (!part)
        return 1;
    int failed = 0;
    memset(gw, 0, (size_t)Wn * sizeof(CV_T));
    for (int64_t c0 = 0; c0 < nch; c0 += CONV_WAVE) {
        int64_t m = nch - c0 < CONV_WAVE ? nch - c0 : CONV_WAVE;
        CH_PAR_FOR(m >= 2 && ch_threads() > 1, int64_t j = 0; j < m; j++, {
            int64_t n0 = (c0 + j) * cn;
            int64_t k = N - n0 < cn ? N - n0 : cn;
            if (CV_NAME(filter_chunk)(g, x, gy, n0, k, part + j * Wn)) {
                ch_flag_set(&failed);
            }
        });
        if (failed)
            break;
        CH_PAR_FOR(Wn * m >= CH_PARALLEL_GRAIN && ch_threads() > 1, int64_t e = 0; e < Wn; e++, {
            CV_T s = gw[e];
            for (int64_t j = 0; j < m; j++)
                s += part[j * Wn + e];
            gw[e] = s;
        });
    }
    ch_cpu_free(part, (size_t)(nwave * Wn) * sizeof(CV_T));
    return failed;
}

/* Chainer-layout im2col for a whole batch: (N, C, *k, *out). */
static int CV_NAME(im2col_batch)(const conv_geom *g, const CV_T *x, CV_T *col) {
    int64_t per = g->C * g->Kk * g->P;
    CH_PAR_FOR(g->N >= 2 && per * g->N >= CH_PARALLEL_GRAIN && ch_threads() > 1, int64_t n = 0; n < g->N; n++, {
        CV_NAME(im2col)(g, x + n * g->C * g->Pin, col + n * per, g->P);
    });
    return 0;
}

static int CV_NAME(col2im_batch)(const conv_geom *g, const CV_T *col, CV_T *x) {
    int64_t per = g->C * g->Kk * g->P;
    CH_PAR_FOR(g->N >= 2 && per * g->N >= CH_PARALLEL_GRAIN && ch_threads() > 1, int64_t n = 0; n < g->N; n++, {
        memset(x + n * g->C * g->Pin, 0, (size_t)(g->C * g->Pin) * sizeof(CV_T));
        CV_NAME(col2im)(g, col + n * per, g->P, x + n * g->C * g->Pin);
    });
    return 0;
}

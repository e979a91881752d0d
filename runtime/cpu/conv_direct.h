/*
 * conv_direct.h -- direct (im2col-free) float32 convolution kernels for
 * stride-1 convolutions on small images, with AVX2+FMA (included by
 * conv.c after conv_geom; chosen at run time when the CPU has AVX2 and FMA).
 *
 * Why: on LeNet-sized images (8x8 outputs, 5x5 kernels) the column matrix
 * is 25x the input and building it costs as much as the gemm itself.  Here
 * the output is cut into "units" of 8 consecutive outputs along the last
 * axis (one AVX register; rows are rounded up to a multiple of 8), and a
 * register tile of R_ units x Q_ output channels (12 accumulators) runs
 * over the whole reduction (input channel, kernel position): per step R_
 * unaligned loads of the input at a precomputed offset, Q_ broadcasts of
 * the filter, R_*Q_ FMAs.  Padding and ragged rows are handled by copying
 * the image into a zero-padded buffer wide enough for the rounded rows, so
 * the inner loop has no bounds tests.
 *
 * - forward: the tile kernel above, bias added on the store.
 * - data gradient: the same kernel on gy padded by (k-1)*d - p with the
 *   filter transposed (Cin <-> Cout) and flipped, i.e. the "full"
 *   correlation, so no col2im scatter either.
 * - filter gradient: tiles of Q_ output channels x J_ kernel positions,
 *   accumulating 8-wide partial sums over every unit of every image of a
 *   chunk, reduced horizontally once per chunk.  Chunks depend on the shapes
 *   only and their partials are added in chunk order, so results do not
 *   depend on the thread count.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define CONV_HAVE_DIRECT 1
#include <immintrin.h>

#define CD_TARGET __attribute__((target("avx2,fma")))
#define CD_INLINE static inline __attribute__((always_inline, target("avx2,fma")))
#define CD_R 4 /* units per forward tile */
#define CD_Q 3 /* output channels per tile */
#define CD_J 4 /* kernel positions per filter-gradient tile */
#define CD_MAX_REDUCTION 1280 /* channels x kernel positions; longer goes to im2col + gemm */
#define CD_L1_FLOATS 4096 /* the part of a frame one reduction block reads */

/* The step of both register tiles: one loaded vector v times three others,
 * added to three accumulators (acc_i += v * s_i). */
#define CD_FMA3(v, s0, s1, s2, acc0, acc1, acc2)                                                                     \
    do {                                                                                                             \
        __m256 v_ = (v);                                                                                             \
        acc0 = _mm256_fmadd_ps(v_, s0, acc0);                                                                        \
        acc1 = _mm256_fmadd_ps(v_, s1, acc1);                                                                        \
        acc2 = _mm256_fmadd_ps(v_, s2, acc2);                                                                        \
    } while (0)

/* One forward tile: 4 units x 3 channels over the reduction length K.
 * in + ioff[r] + off[k] is unit r's input at reduction step k; wp holds
 * the filter as [k][3]; the result goes to out[q * ostride + ooff[r]] for
 * q < Q.  Written out register by register: GCC keeps an accumulator
 * array in memory (a store per FMA), which runs at a third of the speed.
 * Fewer than 4 units repeat the last one (the same value is stored twice);
 * fewer than 3 channels use zero filter rows. */
static CD_TARGET void cd_fwd_tile(int Q, const float *in, const int32_t *ioff, const int32_t *off, const float *wp,
                                  int64_t K, const float *bias, bool accum, float *out, int64_t ostride,
                                  const int32_t *ooff) {
    const float *b0 = in + ioff[0], *b1 = in + ioff[1], *b2 = in + ioff[2], *b3 = in + ioff[3];
    __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a10 = a00, a11 = a00, a12 = a00;
    __m256 a20 = a00, a21 = a00, a22 = a00, a30 = a00, a31 = a00, a32 = a00;
    for (int64_t k = 0; k < K; k++, wp += CD_Q) {
        int64_t o = off[k];
        __m256 w0 = _mm256_broadcast_ss(wp), w1 = _mm256_broadcast_ss(wp + 1), w2 = _mm256_broadcast_ss(wp + 2);
        CD_FMA3(_mm256_loadu_ps(b0 + o), w0, w1, w2, a00, a01, a02);
        CD_FMA3(_mm256_loadu_ps(b1 + o), w0, w1, w2, a10, a11, a12);
        CD_FMA3(_mm256_loadu_ps(b2 + o), w0, w1, w2, a20, a21, a22);
        CD_FMA3(_mm256_loadu_ps(b3 + o), w0, w1, w2, a30, a31, a32);
    }
/* channel q's four units: plus its bias, or plus what `out` holds (accum) */
#define CD_STORE(o, r, a) _mm256_storeu_ps(o + ooff[r], _mm256_add_ps(a, accum ? _mm256_loadu_ps(o + ooff[r]) : bv))
#define CD_STORE_CHANNEL(q, u0, u1, u2, u3)                                                                          \
    do {                                                                                                             \
        float *o = out + (q) * ostride;                                                                              \
        __m256 bv = _mm256_set1_ps(bias ? bias[q] : 0.0f);                                                           \
        CD_STORE(o, 0, u0);                                                                                          \
        CD_STORE(o, 1, u1);                                                                                          \
        CD_STORE(o, 2, u2);                                                                                          \
        CD_STORE(o, 3, u3);                                                                                          \
    } while (0)
    CD_STORE_CHANNEL(0, a00, a10, a20, a30);
    if (Q > 1)
        CD_STORE_CHANNEL(1, a01, a11, a21, a31);
    if (Q > 2)
        CD_STORE_CHANNEL(2, a02, a12, a22, a32);
#undef CD_STORE_CHANNEL
#undef CD_STORE
}

/* A stride-1 "valid" correlation problem on a padded image: Ci channels of
 * Hi x Wi placed at (py, px) inside a zero Hp x Wp frame, Co outputs of
 * OH x OW (rows computed OWr = round8(OW) wide), kernel KH x KW with
 * dilation (dy, dx). */
typedef struct cd_prob {
    int64_t Ci, Hi, Wi, py, px, Hp, Wp;
    int64_t Co, OH, OW, OWr, KH, KW, dy, dx, K;
    bool copy_in; /* false: the image already is the frame (no padding) */
    bool copy_out; /* false: OWr == OW, write straight into the output */
} cd_prob;

static bool cd_prob_init(cd_prob *p, int64_t Ci, int64_t Hi, int64_t Wi, int64_t py, int64_t px, int64_t Co,
                         int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t dy, int64_t dx) {
    if (py < 0 || px < 0 || OH < 1 || OW < 1)
        return false;
    p->Ci = Ci, p->Hi = Hi, p->Wi = Wi, p->py = py, p->px = px;
    p->Co = Co, p->OH = OH, p->OW = OW, p->KH = KH, p->KW = KW, p->dy = dy, p->dx = dx;
    p->OWr = (OW + 7) & ~(int64_t)7;
    p->K = Ci * KH * KW;
    int64_t hp = Hi + 2 * py, wp = Wi + 2 * px;
    int64_t hneed = OH + (KH - 1) * dy, wneed = p->OWr + (KW - 1) * dx;
    p->Hp = hp > hneed ? hp : hneed;
    p->Wp = wp > wneed ? wp : wneed;
    p->copy_in = !(py == 0 && px == 0 && p->Hp == Hi && p->Wp == Wi);
    p->copy_out = p->OWr != OW;
    /* keep one image (and the offsets) comfortably inside L2 and int32 */
    if (Ci * p->Hp * p->Wp > (64 << 10) || p->K > (1 << 20))
        return false;
    return true;
}

/* The zero-padded frame of one image (Ci, Hi, Wi) -> (Ci, Hp, Wp). */
static void cd_pad_image(const cd_prob *p, const float *src, float *dst) {
    memset(dst, 0, (size_t)(p->Ci * p->Hp * p->Wp) * sizeof(float));
    for (int64_t c = 0; c < p->Ci; c++)
        for (int64_t i = 0; i < p->Hi; i++)
            memcpy(dst + (c * p->Hp + i + p->py) * p->Wp + p->px, src + (c * p->Hi + i) * p->Wi,
                   (size_t)p->Wi * sizeof(float));
}

/* Offsets of every reduction step (c, ki, kj) inside the frame. */
static int32_t *cd_offsets(const cd_prob *p) {
    int32_t *off = (int32_t *)malloc((size_t)p->K * sizeof(int32_t));
    if (!off)
        return NULL;
    int64_t k = 0;
    for (int64_t c = 0; c < p->Ci; c++)
        for (int64_t i = 0; i < p->KH; i++)
            for (int64_t j = 0; j < p->KW; j++)
                off[k++] = (int32_t)((c * p->Hp + i * p->dy) * p->Wp + j * p->dx);
    return off;
}

/* The filter as blocks of CD_Q output channels, each [K][q] (rows past
 * Co stay zero).  rows_mode false: W (Co, Ci, KH, KW) itself.  rows_mode
 * true (data gradient): w is the forward filter (Ci, C, KH, wkw) and
 * output channel co = (c, kj) at step k = (ci, ki) takes
 * w[ci, c, KH-1-ki, kj]: the y-flipped column kj of the filter. */
static float *cd_pack(const cd_prob *p, const float *w, bool rows_mode, int64_t wkw) {
    int64_t Co = p->Co, K = p->K;
    int64_t Cop = (Co + CD_Q - 1) / CD_Q * CD_Q;
    float *wp = (float *)calloc((size_t)(Cop * K), sizeof(float));
    if (!wp)
        return NULL;
    int64_t KH = p->KH, C = Co / wkw;
    for (int64_t c0 = 0; c0 < Co; c0 += CD_Q) {
        int64_t q_n = Co - c0 < CD_Q ? Co - c0 : CD_Q;
        float *dst = wp + c0 * K;
        for (int64_t k = 0; k < K; k++)
            for (int64_t q = 0; q < q_n; q++) {
                int64_t co = c0 + q;
                float v;
                if (!rows_mode) {
                    v = w[co * K + k];
                } else {
                    int64_t c = co / wkw, kj = co % wkw, ci = k / KH, ki = k % KH;
                    v = w[((ci * C + c) * KH + (KH - 1 - ki)) * wkw + kj];
                }
                dst[k * CD_Q + q] = v;
            }
    }
    return wp;
}

/* Runs the problem on images [n0, n1): in (N, Ci, Hi, Wi) -> out (N, Co,
 * OH, OW).  wp/off from cd_pack/cd_offsets; bias may be NULL. */
static CD_TARGET int cd_forward_images(const cd_prob *p, const float *in, const float *wp, const int32_t *off,
                                       const float *bias, float *out, int64_t n0, int64_t n1) {
    int64_t nxb = p->OWr / 8, nu = p->OH * nxb, OHW = p->OH * p->OW, OHWr = p->OH * p->OWr;
    float *frame = NULL, *obuf = NULL;
    if (p->copy_in && !(frame = (float *)conv_scratch(0, (size_t)(p->Ci * p->Hp * p->Wp) * sizeof(float))))
        return 1;
    if (p->copy_out && !(obuf = (float *)conv_scratch(1, (size_t)(p->Co * OHWr) * sizeof(float))))
        return 1;
    int32_t ioff[CD_R], ooff[CD_R];
    int64_t KK = p->KH * p->KW, cc = CD_L1_FLOATS / (p->Hp * p->Wp);
    int64_t kc = (cc < 1 ? 1 : cc) * KK;
    for (int64_t n = n0; n < n1; n++) {
        const float *img = in + n * p->Ci * p->Hi * p->Wi;
        if (p->copy_in) {
            cd_pad_image(p, img, frame);
            img = frame;
        }
        float *dst = p->copy_out ? obuf : out + n * p->Co * OHW;
        int64_t ostride = p->copy_out ? OHWr : OHW;
        /* the reduction in blocks of whole input channels whose part of
         * the frame stays in L1; later blocks add to the output */
        for (int64_t k0 = 0; k0 < p->K; k0 += kc)
        for (int64_t c0 = 0; c0 < p->Co; c0 += CD_Q) {
            int q_n = (int)(p->Co - c0 < CD_Q ? p->Co - c0 : CD_Q);
            int64_t kn = p->K - k0 < kc ? p->K - k0 : kc;
            const float *wb = wp + c0 * p->K + k0 * CD_Q;
            const float *bb = bias && k0 == 0 ? bias + c0 : NULL;
            for (int64_t u0 = 0; u0 < nu; u0 += CD_R) {
                for (int r = 0; r < CD_R; r++) {
                    int64_t u = u0 + r < nu ? u0 + r : nu - 1, oy = u / nxb, xb = (u % nxb) * 8;
                    ioff[r] = (int32_t)(oy * p->Wp + xb);
                    ooff[r] = (int32_t)(oy * (p->copy_out ? p->OWr : p->OW) + xb);
                }
                cd_fwd_tile(q_n, img, ioff, off + k0, wb, kn, bb, k0 > 0, dst + c0 * ostride, ostride, ooff);
            }
        }
        if (p->copy_out) {
            float *o = out + n * p->Co * OHW;
            for (int64_t c = 0; c < p->Co; c++)
                for (int64_t i = 0; i < p->OH; i++)
                    memcpy(o + (c * p->OH + i) * p->OW, obuf + (c * p->OH + i) * p->OWr,
                           (size_t)p->OW * sizeof(float));
        }
    }
    return 0;
}

/* Runs a prepared problem over the batch, images spread over threads (each
 * output is computed by one thread in a fixed order). */
static int cd_forward_batch(const cd_prob *p, int64_t N, const float *in, const float *w, const float *bias,
                            float *out) {
    float *wp = cd_pack(p, w, false, 1);
    int32_t *off = cd_offsets(p);
    int failed = !wp || !off;
    if (!failed) {
        CH_PAR_FOR(N >= 2 && ch_threads() > 1, int64_t n = 0; n < N; n++, {
            if (!failed && cd_forward_images(p, in, wp, off, bias, out, n, n + 1))
                ch_flag_set(&failed);
        });
    }
    free(wp);
    free(off);
    return failed;
}

/* Is the direct path right for this geometry?  Stride 1, one group, 1-d or
 * 2-d, small images; 1x1 without padding stays on BLAS (no im2col there).
 * The same answer for the three passes of one geometry. */
static bool cd_usable(const conv_geom *g) {
    if (!ch_cpu_avx2_fma() || g->groups != 1 || g->direct || g->nsp > 2 || g->N < 1)
        return false;
    /* Where it pays: short reductions (LeNet: 20x5x5, and 50x5x5 for the
     * data gradient), whose column matrix costs as much as the gemm.  Long
     * ones (ResNet's 256x3x3 on 8x8, 512x3x3 on 4x4) stream the packed filter
     * once per tile, and 4-wide rows fill half of each unit: 25 GFLOP/s
     * against 60 for im2col + gemm (bench/cnn_profile.lua). */
    int64_t red = (g->C > g->Cout ? g->C : g->Cout) * g->Kk;
    if (red > CD_MAX_REDUCTION)
        return false;
    for (int a = 0; a < g->nsp; a++)
        if (g->s[a] != 1)
            return false;
    return true;
}

/* The 2-d view of a 1-d or 2-d geometry: (H, W, OH, OW, KH, KW, py, px, dy, dx). */
static void cd_dims(const conv_geom *g, int64_t v[10]) {
    int a = g->nsp - 1;
    bool two = g->nsp == 2;
    v[0] = two ? g->in[0] : 1;
    v[1] = g->in[a];
    v[2] = two ? g->out[0] : 1;
    v[3] = g->out[a];
    v[4] = two ? g->k[0] : 1;
    v[5] = g->k[a];
    v[6] = two ? g->p[0] : 0;
    v[7] = g->p[a];
    v[8] = two ? g->d[0] : 1;
    v[9] = g->d[a];
}

/* The forward's problem (x -> y), also the filter gradient's; false when
 * the direct path does not apply. */
static bool cd_forward_problem(const conv_geom *g, cd_prob *p) {
    if (!cd_usable(g))
        return false;
    int64_t v[10];
    cd_dims(g, v);
    return cd_prob_init(p, g->C, v[0], v[1], v[6], v[7], g->Cout, v[2], v[3], v[4], v[5], v[8], v[9]);
}

/* Forward: returns -1 when the direct path does not apply, else 0/1 (ok/oom). */
static int cd_conv_forward(const conv_geom *g, const float *x, const float *w, const float *b, float *y) {
    cd_prob p;
    if (!cd_forward_problem(g, &p))
        return -1;
    return cd_forward_batch(&p, g->N, x, w, b, y);
}

/* Data gradient.  The full correlation of gy with the flipped filter
 * would spend most FMAs on the zero border of small images (2.25x the
 * work for 8x8 -> 12x12), so only y is done that way: with gy padded in
 * y alone, the forward kernel computes for every (c, kj)
 *   T[c, kj, iy, ox] = sum_{co, ki} W[co, c, ki, kj] gy[co, iy + py - ki*dy, ox]
 * and then gx[c, iy, ix] = sum_kj T[c, kj, iy, ix + px - kj*dx] (shifted
 * row adds, kj in order). */
static int cd_conv_backward_data(const conv_geom *g, const float *gy, const float *w, float *gx) {
    if (!cd_usable(g))
        return -1;
    int64_t v[10];
    cd_dims(g, v);
    int64_t H = v[0], W = v[1], OH = v[2], OW = v[3], KH = v[4], KW = v[5], py = v[6], px = v[7];
    int64_t dy = v[8], dx = v[9];
    int64_t ey = (KH - 1) * dy - py;
    /* only the consistent output size (what stride 1 gives) */
    if (ey < 0 || OH + 2 * ey != H + (KH - 1) * dy || OW + (KW - 1) * dx != W + 2 * px)
        return -1;
    int64_t C = g->C, Co2 = C * KW;
    cd_prob p;
    if (!cd_prob_init(&p, g->Cout, OH, OW, ey, 0, Co2, H, OW, KH, 1, dy, 1))
        return -1;
    float *wp = cd_pack(&p, w, true, KW);
    int32_t *off = cd_offsets(&p);
    int64_t tsize = Co2 * H * OW, N = g->N;
    int failed = !wp || !off;
    if (!failed) {
        CH_PAR_FOR(N >= 2 && ch_threads() > 1, int64_t n = 0; n < N; n++, {
            float *t = failed ? NULL : (float *)conv_scratch(2, (size_t)tsize * sizeof(float));
            if (!t || cd_forward_images(&p, gy + n * g->Cout * OH * OW, wp, off, NULL, t, 0, 1)) {
                ch_flag_set(&failed);
                continue;
            }
            float *dst = gx + n * C * H * W;
            for (int64_t c = 0; c < C; c++)
                for (int64_t iy = 0; iy < H; iy++) {
                    float *row = dst + (c * H + iy) * W;
                    memset(row, 0, (size_t)W * sizeof(float));
                    for (int64_t kj = 0; kj < KW; kj++) {
                        const float *tr = t + ((c * KW + kj) * H + iy) * OW;
                        int64_t sh = px - kj * dx; /* ix reads T at ix + sh */
                        int64_t lo = sh < 0 ? -sh : 0, hi = OW - sh < W ? OW - sh : W;
                        for (int64_t ix = lo; ix < hi; ix++)
                            row[ix] += tr[ix + sh];
                    }
                }
        });
    }
    free(wp);
    free(off);
    return failed;
}

/* ---- filter gradient --------------------------------------------------- */

static inline CD_TARGET float cd_hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* One tile: 3 output channels x 4 reduction steps, summed over nu units.
 * Unit u reads gy at gyb + gu[u] (+ q * gstride) and the input frame at
 * xb + xu[u] + off[j]; the sums are added to acc_out[q * K + j] for q < Q,
 * j < J (missing channels and steps repeat the last one, unused). */
static CD_TARGET void cd_filt_tile(int Q, int J, const float *gyb, int64_t gstride, const int32_t *gu,
                                   const float *xb, const int32_t *xu, const int32_t *off, int64_t nu,
                                   float *acc_out, int64_t K) {
    const float *x0 = xb + off[0], *x1 = xb + off[J > 1 ? 1 : 0], *x2 = xb + off[J > 2 ? 2 : 0],
                *x3 = xb + off[J > 3 ? 3 : 0];
    int64_t s1 = Q > 1 ? gstride : 0, s2 = Q > 2 ? 2 * gstride : 0;
    __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00, a13 = a00;
    __m256 a20 = a00, a21 = a00, a22 = a00, a23 = a00;
    for (int64_t u = 0; u < nu; u++) {
        const float *gp = gyb + gu[u];
        int64_t xo = xu[u];
        __m256 g0 = _mm256_loadu_ps(gp), g1 = _mm256_loadu_ps(gp + s1), g2 = _mm256_loadu_ps(gp + s2);
        CD_FMA3(_mm256_loadu_ps(x0 + xo), g0, g1, g2, a00, a10, a20);
        CD_FMA3(_mm256_loadu_ps(x1 + xo), g0, g1, g2, a01, a11, a21);
        CD_FMA3(_mm256_loadu_ps(x2 + xo), g0, g1, g2, a02, a12, a22);
        CD_FMA3(_mm256_loadu_ps(x3 + xo), g0, g1, g2, a03, a13, a23);
    }
    float r[CD_Q][CD_J] = {{cd_hsum(a00), cd_hsum(a01), cd_hsum(a02), cd_hsum(a03)},
                           {cd_hsum(a10), cd_hsum(a11), cd_hsum(a12), cd_hsum(a13)},
                           {cd_hsum(a20), cd_hsum(a21), cd_hsum(a22), cd_hsum(a23)}};
    for (int q = 0; q < Q; q++)
        for (int j = 0; j < J; j++)
            acc_out[q * K + j] += r[q][j];
}

/* Images per filter-gradient chunk: shapes only (8 chunks for a batch of
 * 64, fewer images when they are large so a chunk stays in L2). */
static int64_t cd_filter_chunk(const cd_prob *p, int64_t N) {
    int64_t per = (p->Ci * p->Hp * p->Wp + p->Co * p->OH * p->OWr) * (int64_t)sizeof(float);
    int64_t c = (N + CONV_WAVE - 1) / CONV_WAVE;
    int64_t lim = ((int64_t)256 << 10) / (per > 0 ? per : 1);
    if (c > lim)
        c = lim;
    return c < 1 ? 1 : c;
}

/* gW (Co, K) partial sums of images [n0, n0 + cn) into dst. */
static CD_TARGET int cd_filter_images(const cd_prob *p, const float *x, const float *gy, const int32_t *off,
                                      int64_t n0, int64_t cn, float *dst) {
    int64_t nxb = p->OWr / 8, nuimg = p->OH * nxb, nu = cn * nuimg;
    int64_t fr = p->Ci * p->Hp * p->Wp, OHWr = p->OH * p->OWr, OHW = p->OH * p->OW;
    const float *xb, *gyb;
    int64_t gimg, ximg, gstride;
    if (p->copy_in) {
        float *buf = (float *)conv_scratch(0, (size_t)(cn * fr) * sizeof(float));
        if (!buf)
            return 1;
        for (int64_t i = 0; i < cn; i++)
            cd_pad_image(p, x + (n0 + i) * p->Ci * p->Hi * p->Wi, buf + i * fr);
        xb = buf;
    } else {
        xb = x + n0 * fr;
    }
    ximg = fr;
    if (p->copy_out) { /* gy rows padded to OWr with zeros */
        float *buf = (float *)conv_scratch(1, (size_t)(cn * p->Co * OHWr) * sizeof(float));
        if (!buf)
            return 1;
        memset(buf, 0, (size_t)(cn * p->Co * OHWr) * sizeof(float));
        for (int64_t i = 0; i < cn; i++)
            for (int64_t c = 0; c < p->Co; c++)
                for (int64_t r = 0; r < p->OH; r++)
                    memcpy(buf + ((i * p->Co + c) * p->OH + r) * p->OWr, gy + (((n0 + i) * p->Co + c) * p->OH + r) * p->OW,
                           (size_t)p->OW * sizeof(float));
        gyb = buf;
        gstride = OHWr;
    } else {
        gyb = gy + n0 * p->Co * OHW;
        gstride = OHW;
    }
    gimg = p->Co * gstride;
    int32_t *units = (int32_t *)malloc((size_t)(2 * nu) * sizeof(int32_t));
    if (!units)
        return 1;
    int32_t *gu = units, *xu = units + nu;
    for (int64_t i = 0, u = 0; i < cn; i++)
        for (int64_t oy = 0; oy < p->OH; oy++)
            for (int64_t b = 0; b < nxb; b++, u++) {
                gu[u] = (int32_t)(i * gimg + oy * (p->copy_out ? p->OWr : p->OW) + b * 8);
                xu[u] = (int32_t)(i * ximg + oy * p->Wp + b * 8);
            }
    memset(dst, 0, (size_t)(p->Co * p->K) * sizeof(float));
    for (int64_t c0 = 0; c0 < p->Co; c0 += CD_Q) {
        int q_n = (int)(p->Co - c0 < CD_Q ? p->Co - c0 : CD_Q);
        for (int64_t k0 = 0; k0 < p->K; k0 += CD_J) {
            int j_n = (int)(p->K - k0 < CD_J ? p->K - k0 : CD_J);
            cd_filt_tile(q_n, j_n, gyb + c0 * gstride, gstride, gu, xb, xu, off + k0, nu, dst + c0 * p->K + k0,
                             p->K);
        }
    }
    free(units);
    return 0;
}

static int cd_conv_backward_filter(const conv_geom *g, const float *x, const float *gy, float *gw) {
    cd_prob p;
    if (!cd_forward_problem(g, &p))
        return -1;
    int64_t N = g->N, Wn = p.Co * p.K, cn = cd_filter_chunk(&p, N), nch = (N + cn - 1) / cn;
    /* the unit offsets of one chunk must fit int32 */
    if (cn * (p.Ci * p.Hp * p.Wp + p.Co * p.OH * p.OWr) > INT32_MAX)
        return -1;
    int32_t *off = cd_offsets(&p);
    int64_t nwave = nch < CONV_WAVE ? nch : CONV_WAVE;
    float *part = (float *)ch_cpu_alloc((size_t)(nwave * Wn) * sizeof(float));
    int failed = !off || !part;
    if (!failed)
        memset(gw, 0, (size_t)Wn * sizeof(float));
    for (int64_t c0 = 0; !failed && c0 < nch; c0 += CONV_WAVE) {
        int64_t m = nch - c0 < CONV_WAVE ? nch - c0 : CONV_WAVE;
        CH_PAR_FOR(m >= 2 && ch_threads() > 1, int64_t j = 0; j < m; j++, {
            int64_t n0 = (c0 + j) * cn, k = N - n0 < cn ? N - n0 : cn;
            if (cd_filter_images(&p, x, gy, off, n0, k, part + j * Wn)) {
                ch_flag_set(&failed);
            }
        });
        if (failed)
            break;
        for (int64_t e = 0; e < Wn; e++) {
            float s = gw[e];
            for (int64_t j = 0; j < m; j++)
                s += part[j * Wn + e];
            gw[e] = s;
        }
    }
    free(off);
    if (part)
        ch_cpu_free(part, (size_t)(nwave * Wn) * sizeof(float));
    return failed;
}

#else
/* no AVX2 kernels on this compiler/architecture: conv.c's im2col path */
#define CONV_HAVE_DIRECT 0
static int cd_conv_forward(const conv_geom *g, const float *x, const float *w, const float *b, float *y) { return -1; }
static int cd_conv_backward_data(const conv_geom *g, const float *gy, const float *w, float *gx) { return -1; }
static int cd_conv_backward_filter(const conv_geom *g, const float *x, const float *gy, float *gw) { return -1; }
#endif

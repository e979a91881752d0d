/*
 * conv_winograd.h -- Winograd F(2x2, 3x3) for float32 3x3 convolutions with
 * stride 1 and no dilation (included by conv.c after conv_geom and
 * conv_scratch).
 *
 * Why: a 2x2 block of outputs costs 16 products per (input, output channel)
 * pair instead of 36, so the 3x3 layers of ResNet/VGG-sized nets (64-512
 * channels) need 2.25x fewer multiply-adds than im2col + gemm, and the
 * products are still one gemm per transform position (16 of them), which
 * OpenBLAS runs near its peak.  Per chunk of images:
 *   V[xi][c][t]  = (B^T d B)[xi] of each 4x4 input tile t (zero outside),
 *   U[xi][o][c]  = (G g G^T)[xi] of each 3x3 filter,
 *   M[xi]        = U[xi] (O x C) . V[xi] (C x T)   (16 gemms),
 *   y tile       = A^T M A (2x2), plus the bias, clipped to the output.
 * The data gradient is the same computation on gy with the filter
 * transposed (C <-> Cout) and flipped, padded by 2 - pad (the full
 * correlation).  The filter gradient is its adjoint in U:
 *   dU[xi] = sum over chunks of (A gy A^T)[xi] (O x T) . V[xi]^T (T x C),
 *   gW     = G^T dU G.
 * Used when both channel counts are at least WG_MIN_CHANNELS (below that
 * the gemms are too thin and the transforms dominate).
 *
 * The same driver runs F(4x4, 3x3) (6x6 tiles, 36 positions; its
 * transforms are in conv_winograd_f43.h) for every pass whose output map
 * is at least 8 x 8: 2.25 products per output instead of 4, and V, M and
 * the gy tiles smaller by as much.  Below 8 x 8 its tiles would be mostly
 * padding and the products too narrow for the packing they cost.
 */
#define WG_MIN_CHANNELS 32
#define WG_CHUNK_BYTES ((int64_t)16 << 20) /* V and M of one chunk of images */
#define WG_MAX_ROW 1024 /* widest padded row the transforms buffer (on the stack) */

/* Distance between the 16 transform positions' matrices in V, M and the
 * gy tiles: rows * T floats plus one cache line.  Without the line, for
 * T a multiple of 1024 (8 images of 16x16 tiles) the 16 matrices start a
 * multiple of 4 KiB apart, and the transforms, which write (or read) all
 * 16 of them at once, hit the same L1 and L2 sets 16 times over. */
#define WG_SKEW 16
static inline int64_t wg_xs(int64_t rows, int64_t T) { return rows * T + WG_SKEW; }

/* On AVX-512 the forward and data-gradient transforms write V straight
 * into the panels of the product's B (cpu/sgemm512.c), WG_PANEL tiles
 * wide, rows padded to whole panels: the product then copies nothing
 * (it copied all of V, a third of its own time, for 64 channels). */
#define WG_PANEL CH_SGEMM512_PANEL
static inline int64_t wg_padded(int64_t T) { return (T + WG_PANEL - 1) / WG_PANEL * WG_PANEL; }
static bool wg_panels(void) {
#if CONV_HAVE_DIRECT
    return ch_cpu_avx512f() && ch_cpu_sgemm512_ok();
#else
    return false;
#endif
}

/* 3x3 stride-1 2-d convolution, one group, pad <= 2 (so the data gradient's
 * pad 2 - p is >= 0), the usual output size, channels wide enough. */
static bool wg_usable(const conv_geom *g) {
    if (g->nsp != 2 || g->groups != 1 || g->N < 1 || g->C < WG_MIN_CHANNELS || g->Cout < WG_MIN_CHANNELS)
        return false;
    for (int a = 0; a < 2; a++)
        if (g->k[a] != 3 || g->s[a] != 1 || g->d[a] != 1 || g->p[a] > 2 || g->out[a] != g->in[a] + 2 * g->p[a] - 2 ||
            g->out[a] < 1)
            return false;
    if (g->in[1] + 4 > WG_MAX_ROW || g->out[1] + 4 > WG_MAX_ROW) /* the row buffers of both passes */
        return false;
    return true;
}

/* U[xi][o][i] = G g G^T for every (o, i).  flip: g[a][b] = w[i][o][2-a][2-b]
 * (w of shape (Ci, Co, 3, 3): the data gradient's transposed filter).
 * wg_filter (after both tile sizes) runs the F(2x2) pieces here or the
 * F(4x4) ones of conv_winograd_f43.h. */

/* The 9 taps of filter (o, i), flipped for the data gradient. */
static inline void wg_filter_taps(const float *w, int64_t Co, int64_t Ci, bool flip, int64_t o, int64_t i,
                                  float k[9]) {
    for (int j = 0; j < 9; j++)
        k[j] = flip ? w[(i * Co + o) * 9 + 8 - j] : w[(o * Ci + i) * 9 + j];
}

/* F(2x2, 3x3)'s U of one filter. */
static inline void wg2_filter_one(const float k[9], float *U, int64_t Co, int64_t Ci, int64_t o, int64_t i) {
    float t[4][3]; /* G g */
    for (int b = 0; b < 3; b++) {
        t[0][b] = k[b];
        t[1][b] = 0.5f * (k[b] + k[3 + b] + k[6 + b]);
        t[2][b] = 0.5f * (k[b] - k[3 + b] + k[6 + b]);
        t[3][b] = k[6 + b];
    }
    for (int a = 0; a < 4; a++) { /* (G g) G^T */
        float u[4] = { t[a][0], 0.5f * (t[a][0] + t[a][1] + t[a][2]), 0.5f * (t[a][0] - t[a][1] + t[a][2]),
                       t[a][2] };
        for (int b = 0; b < 4; b++)
            U[((int64_t)(a * 4 + b) * Co + o) * Ci + i] = u[b];
    }
}

#if CONV_HAVE_DIRECT
#define WG_TARGET512 __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma")))

/* The 9 taps of filters (o, i0 ... i0 + 15) gathered into k, one vector a
 * tap (lanes past Ci zero); returns the mask of live lanes. */
static WG_TARGET512 inline __mmask16 wg_filter_taps512(const float *w, int64_t Co, int64_t Ci, bool flip, int64_t o,
                                                      int64_t i0, __m512 k[9]) {
    __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i step = _mm512_mullo_epi32(lane, _mm512_set1_epi32(flip ? (int)(Co * 9) : 9));
    int n = Ci - i0 < 16 ? (int)(Ci - i0) : 16;
    __mmask16 m = (__mmask16)((1u << n) - 1);
    for (int j = 0; j < 9; j++) {
        const float *base = flip ? w + (i0 * Co + o) * 9 + 8 - j : w + (o * Ci + i0) * 9 + j;
        k[j] = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, step, base, 4);
    }
    return m;
}

/* Row o of U (all i) on AVX-512, 16 input channels at a time: the same
 * operations in the same order as wg2_filter_one (same bits), 16
 * contiguous stores of U instead of 16 scattered ones per (o, i). */
static WG_TARGET512 void wg_filter_row512(const float *w, int64_t Co, int64_t Ci, bool flip, int64_t o, float *U) {
    const __m512 half = _mm512_set1_ps(0.5f);
    for (int64_t i0 = 0; i0 < Ci; i0 += 16) {
        __m512 k[9];
        __mmask16 m = wg_filter_taps512(w, Co, Ci, flip, o, i0, k);
        __m512 t[4][3]; /* G g */
        for (int b = 0; b < 3; b++) {
            t[0][b] = k[b];
            t[1][b] = _mm512_mul_ps(half, _mm512_add_ps(_mm512_add_ps(k[b], k[3 + b]), k[6 + b]));
            t[2][b] = _mm512_mul_ps(half, _mm512_add_ps(_mm512_sub_ps(k[b], k[3 + b]), k[6 + b]));
            t[3][b] = k[6 + b];
        }
        for (int a = 0; a < 4; a++) { /* (G g) G^T */
            __m512 u[4] = { t[a][0],
                            _mm512_mul_ps(half, _mm512_add_ps(_mm512_add_ps(t[a][0], t[a][1]), t[a][2])),
                            _mm512_mul_ps(half, _mm512_add_ps(_mm512_sub_ps(t[a][0], t[a][1]), t[a][2])),
                            t[a][2] };
            for (int b = 0; b < 4; b++)
                _mm512_mask_storeu_ps(U + ((int64_t)(a * 4 + b) * Co + o) * Ci + i0, m, u[b]);
        }
    }
}
#endif

/* One problem: in (N, Ci, H, W) -> out (N, Co, OH, OW), pad (py, px), in
 * m x m output tiles (2: F(2x2, 3x3); 4: F(4x4, 3x3)), TH x TW of them. */
typedef struct {
    int64_t Ci, Co, H, W, OH, OW, py, px, m, TH, TW;
} wg_prob;

static int wg_positions(const wg_prob *p) { return (int)((p->m + 2) * (p->m + 2)); }

/* V for images [n0, n0 + nb): V[xi][c][t], T tiles in all.  A band of
 * tile rows at a time: the band's input rows zero-padded into a buffer,
 * then for each row of tiles B^T down the columns of the whole row and B
 * along it, tiles innermost, so the loops vectorize (AVX2 when the CPU has
 * it: the library is built for x86-64-v2).  The band is filled before any
 * of it is read: reading each padded row right after writing it (memset,
 * then memcpy at the pad's offset) stalled every vector load on store
 * forwarding, 58 % of the transform's samples (perf, ResNet-18). */
#define WG_BAND_FLOATS 8192 /* the band buffer (on the stack): 2 to 30 tile rows */

/* The band's rows: input rows step * ty0 - py ... (nrows of them), each
 * zero-padded to Wp floats (px zeros on the left); step is the tiles'
 * stride, 2 here, 4 for F(4x4, 3x3). */
static inline void wg_band_fill(const float *img, int64_t H, int64_t W, int64_t py, int64_t px, int64_t Wp,
                                int64_t step, int64_t ty0, int64_t nrows, float *band) {
    int64_t cnt = W < Wp - px ? W : Wp - px;
    memset(band, 0, (size_t)(nrows * Wp) * sizeof(float));
    for (int64_t r = 0; r < nrows; r++) {
        int64_t y = step * ty0 - py + r;
        if (y >= 0 && y < H)
            memcpy(band + r * Wp + px, img + y * W, (size_t)cnt * sizeof(float));
    }
}

#define WG_INPUT_PLANE_BODY                                                                                    \
    {                                                                                                          \
        float band[WG_BAND_FLOATS], t[4][WG_MAX_ROW];                                                          \
        int64_t Wp = 2 * TW + 2;                                                                               \
        int64_t per = (WG_BAND_FLOATS / Wp - 2) / 2; /* tile rows per band */                                  \
        for (int64_t ty0 = 0; ty0 < TH; ty0 += per) {                                                          \
            int64_t ty1 = ty0 + per < TH ? ty0 + per : TH, nrows = 2 * (ty1 - ty0) + 2;                        \
            wg_band_fill(img, H, W, py, px, Wp, 2, ty0, nrows, band);                                             \
            for (int64_t ty = ty0; ty < ty1; ty++) {                                                           \
                const float *r0 = band + 2 * (ty - ty0) * Wp, *r1 = r0 + Wp, *r2 = r1 + Wp, *r3 = r2 + Wp;     \
                for (int64_t x = 0; x < Wp; x++) { /* B^T d, whole row */                                      \
                    t[0][x] = r0[x] - r2[x];                                                                   \
                    t[1][x] = r1[x] + r2[x];                                                                   \
                    t[2][x] = r2[x] - r1[x];                                                                   \
                    t[3][x] = r1[x] - r3[x];                                                                   \
                }                                                                                              \
                float *restrict v = V + ty * TW;                                                               \
                for (int q = 0; q < 4; q++) { /* (B^T d) B */                                                  \
                    float *restrict v0 = v + (q * 4) * xs, *restrict v1 = v0 + xs, *restrict v2 = v1 + xs,    \
                                    *restrict v3 = v2 + xs;                                                    \
                    const float *tq = t[q];                                                                    \
                    for (int64_t tx = 0; tx < TW; tx++) {                                                      \
                        v0[tx] = tq[2 * tx] - tq[2 * tx + 2];                                                  \
                        v1[tx] = tq[2 * tx + 1] + tq[2 * tx + 2];                                              \
                        v2[tx] = tq[2 * tx + 2] - tq[2 * tx + 1];                                              \
                        v3[tx] = tq[2 * tx + 1] - tq[2 * tx + 3];                                              \
                    }                                                                                          \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }

/* One (image, channel) plane; V points at its first tile of position 0. */
static void wg_input_plane(const float *img, int64_t H, int64_t W, int64_t py, int64_t px, int64_t TH,
                           int64_t TW, int64_t xs, float *V) WG_INPUT_PLANE_BODY
#if CONV_HAVE_DIRECT
static CD_TARGET void wg_input_plane_avx2(const float *img, int64_t H, int64_t W, int64_t py, int64_t px,
                                          int64_t TH, int64_t TW, int64_t xs, float *V) WG_INPUT_PLANE_BODY
#endif

#if CONV_HAVE_DIRECT
/* The same transform on AVX-512, 16 tiles at a time and in registers: each
 * of the tile row's four input rows is loaded as its even and odd columns
 * (and those two shifted by one tile), so d[a][b] of 16 tiles are 16
 * vectors, and B^T d B is then the same additions, in the same order, as
 * above (same bits).  Above, the loop along the row read back what the loop
 * down the columns had just stored, at another alignment: a store-forwarding
 * stall on most of its loads. */
/* Where the 512-bit transform writes tile t of channel c: row-major
 * (V[xi][c][t], as the transforms above) or, for the AVX-512 product, in
 * its column panels (cpu/sgemm512.c: V[xi] is the product's B, and the
 * transform writes it where the product would otherwise copy it to). */
typedef struct {
    float *V;           /* position 0 */
    int64_t xs;         /* from one position to the next */
    int64_t c, Ci, T;   /* the plane's channel, the channels, the tiles (row length) */
    int64_t t0;         /* the plane's first tile */
    bool panels;
} wg_dest;

/* v's first n lanes to tiles t .. t + n of position `pos`. */
static WG_TARGET512 inline void wg_store_tiles(const wg_dest *d, int pos, int64_t t, int n, __m512 v) {
    float *base = d->V + pos * d->xs;
    __mmask16 all = (__mmask16)((1u << n) - 1);
    if (!d->panels) {
        _mm512_mask_storeu_ps(base + d->c * d->T + t, all, v);
        return;
    }
    int64_t q = t / WG_PANEL, r = t % WG_PANEL;
    int first = WG_PANEL - r < n ? (int)(WG_PANEL - r) : n;
    float *row = base + (q * d->Ci + d->c) * WG_PANEL; /* panel q, channel c */
    _mm512_mask_storeu_ps(row + r, (__mmask16)((1u << first) - 1), v);
    if (first < n) /* the rest opens panel q + 1: lane j lands at j - first */
        _mm512_mask_storeu_ps(row + d->Ci * WG_PANEL - first, all & (__mmask16)~((1u << first) - 1), v);
}

static WG_TARGET512 void wg_input_plane512(const float *img, int64_t H, int64_t W, int64_t py, int64_t px,
                                           int64_t TH, int64_t TW, const wg_dest *dst) {
    float band[WG_BAND_FLOATS];
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    int64_t Wp = 2 * TW + 2;
    int64_t per = (WG_BAND_FLOATS / Wp - 2) / 2;
    for (int64_t ty0 = 0; ty0 < TH; ty0 += per) {
        int64_t ty1 = ty0 + per < TH ? ty0 + per : TH, nrows = 2 * (ty1 - ty0) + 2;
        wg_band_fill(img, H, W, py, px, Wp, 2, ty0, nrows, band);
        for (int64_t ty = ty0; ty < ty1; ty++) {
            const float *row = band + 2 * (ty - ty0) * Wp;
            for (int64_t tx = 0; tx < TW; tx += 16) {
                int n = TW - tx < 16 ? (int)(TW - tx) : 16;
                int cnt = 2 * n + 2; /* the row's floats these tiles read, from 2 tx on */
                __mmask16 lo = (__mmask16)((1u << (cnt < 16 ? cnt : 16)) - 1);
                __mmask16 hi = cnt > 16 ? (__mmask16)((1u << (cnt - 16 < 16 ? cnt - 16 : 16)) - 1) : 0;
                __mmask16 lo2 = (__mmask16)((1u << (2 * n < 16 ? 2 * n : 16)) - 1);
                __mmask16 hi2 = 2 * n > 16 ? (__mmask16)((1u << (2 * n - 16)) - 1) : 0;
                __m512 d[4][4]; /* d[a][b]: row a, column b of each tile */
                for (int a = 0; a < 4; a++) {
                    const float *r = row + a * Wp + 2 * tx;
                    __m512 l = _mm512_maskz_loadu_ps(lo, r), h = _mm512_maskz_loadu_ps(hi, r + 16);
                    __m512 l2 = _mm512_maskz_loadu_ps(lo2, r + 2), h2 = _mm512_maskz_loadu_ps(hi2, r + 18);
                    d[a][0] = _mm512_permutex2var_ps(l, even, h);
                    d[a][1] = _mm512_permutex2var_ps(l, odd, h);
                    d[a][2] = _mm512_permutex2var_ps(l2, even, h2);
                    d[a][3] = _mm512_permutex2var_ps(l2, odd, h2);
                }
                int64_t t0 = dst->t0 + ty * TW + tx;
                for (int q = 0; q < 4; q++) {
                    __m512 t[4]; /* B^T d: row q of it, columns b */
                    for (int b = 0; b < 4; b++)
                        t[b] = q == 0   ? _mm512_sub_ps(d[0][b], d[2][b])
                               : q == 1 ? _mm512_add_ps(d[1][b], d[2][b])
                               : q == 2 ? _mm512_sub_ps(d[2][b], d[1][b])
                                        : _mm512_sub_ps(d[1][b], d[3][b]);
                    wg_store_tiles(dst, q * 4, t0, n, _mm512_sub_ps(t[0], t[2]));
                    wg_store_tiles(dst, q * 4 + 1, t0, n, _mm512_add_ps(t[1], t[2]));
                    wg_store_tiles(dst, q * 4 + 2, t0, n, _mm512_sub_ps(t[2], t[1]));
                    wg_store_tiles(dst, q * 4 + 3, t0, n, _mm512_sub_ps(t[1], t[3]));
                }
            }
        }
    }
}
#endif

#include "conv_winograd_f43.h"
#include "conv_winograd_gather.h"

/* U for F(m x m, 3x3) (m 2 or 4): a row of U per piece on AVX-512, one
 * filter per piece otherwise. */
static void wg_filter(int64_t m, const float *w, int64_t Co, int64_t Ci, bool flip, float *U) {
#if CONV_HAVE_DIRECT
    if (ch_cpu_avx512f() && Ci * Co * 9 < ((int64_t)1 << 31)) { /* gather offsets are int32 */
        CH_PAR_FOR_DYNAMIC(Co * Ci >= 4096 && ch_threads() > 1, 1, int64_t o = 0; o < Co; o++, {
            if (m == 4)
                wg4_filter_row512(w, Co, Ci, flip, o, U);
            else
                wg_filter_row512(w, Co, Ci, flip, o, U);
        });
        return;
    }
#endif
    CH_PAR_FOR(Co * Ci >= 4096 && ch_threads() > 1, int64_t oi = 0; oi < Co * Ci; oi++, {
        int64_t o = oi / Ci, i = oi % Ci;
        float k[9];
        wg_filter_taps(w, Co, Ci, flip, o, i, k);
        if (m == 4)
            wg4_filter_one(k, U, Co, Ci, o, i);
        else
            wg2_filter_one(k, U, Co, Ci, o, i);
    });
}

/* V for images [n0, n0 + nb) (T tiles), row-major, or in the AVX-512
 * product's panels (`panels`, only where wg_panels() says so; rows then
 * WG_PANEL-padded: V[xi] is Ci x wg_padded(T)). */
static void wg_input(const wg_prob *p, const float *in, int64_t n0, int64_t nb, int64_t T, bool panels, float *V) {
    int64_t Ci = p->Ci, H = p->H, W = p->W, TH = p->TH, TW = p->TW;
#if CONV_HAVE_DIRECT
    if (wg_gather_suits(p, nb)) { /* small maps: 16 tiles across images, per channel */
        int64_t groups = (T + 15) / 16, Tr = panels ? wg_padded(T) : T;
        const float *first = in + n0 * Ci * H * W;
        CH_PAR_FOR_DYNAMIC(Ci * groups >= 2 && ch_threads() > 1, ch_dynamic_chunk(Ci * groups),
                           int64_t cg = 0; cg < Ci * groups; cg++, {
            int64_t c = cg / groups, t0 = cg % groups * 16;
            wg_dest d = { V, wg_xs(Ci, Tr), c, Ci, Tr, 0, panels };
            wg_input_gather16(p, first, c, t0, T - t0 < 16 ? (int)(T - t0) : 16, &d);
        });
        return;
    }
    bool avx2 = ch_cpu_avx2_fma(), avx512 = ch_cpu_avx512f();
#else
    bool avx2 = false, avx512 = false;
#endif
    CH_PAR_FOR_DYNAMIC(nb * Ci >= 2 && ch_threads() > 1, ch_dynamic_chunk(nb * Ci), int64_t nc = 0; nc < nb * Ci; nc++, {
        int64_t n = nc / Ci, c = nc % Ci;
        const float *img = in + ((n0 + n) * Ci + c) * H * W;
        float *v = V + c * T + n * TH * TW;
#if CONV_HAVE_DIRECT
        if (avx512) {
            int64_t Tr = panels ? wg_padded(T) : T;
            wg_dest d = { V, wg_xs(Ci, Tr), c, Ci, Tr, n * TH * TW, panels };
            if (p->m == 4 && TW % 4 == 0)
                wg4_input_plane512_rows4(img, H, W, p->py, p->px, TH, TW, &d);
            else if (p->m == 4)
                wg4_input_plane512(img, H, W, p->py, p->px, TH, TW, &d);
            else
                wg_input_plane512(img, H, W, p->py, p->px, TH, TW, &d);
        } else if (avx2 && p->m == 2)
            wg_input_plane_avx2(img, H, W, p->py, p->px, TH, TW, wg_xs(Ci, T), v);
        else
#endif
        if (p->m == 4)
            wg4_input_plane(img, H, W, p->py, p->px, TH, TW, wg_xs(Ci, T), v);
        else
            wg_input_plane(img, H, W, p->py, p->px, TH, TW, wg_xs(Ci, T), v);
        (void)avx2, (void)avx512;
    });
}

/* out tiles from M[xi][o][t] for images [n0, n0 + nb), plus the bias: a row
 * of tiles at a time into two full-width rows, then copied to the output. */
static void wg2_output(const wg_prob *p, const float *M, const float *bias, int64_t n0, int64_t nb, int64_t T,
                       float *out) {
    int64_t Co = p->Co, OH = p->OH, OW = p->OW, TH = p->TH, TW = p->TW;
    CH_PAR_FOR_DYNAMIC(nb * Co >= 2 && ch_threads() > 1, ch_dynamic_chunk(nb * Co), int64_t no = 0; no < nb * Co; no++, {
        int64_t n = no / Co, o = no % Co;
        float *dst = out + ((n0 + n) * Co + o) * OH * OW;
        float b0 = bias ? bias[o] : 0.0f;
        int64_t xs = wg_xs(Co, T);
        float rows[2][WG_MAX_ROW];
        for (int64_t ty = 0; ty < TH; ty++) {
            const float *restrict mp = M + o * T + (n * TH + ty) * TW;
            for (int64_t tx = 0; tx < TW; tx++) {
                float s[2][4]; /* A^T m */
                for (int b = 0; b < 4; b++) {
                    s[0][b] = mp[b * xs + tx] + mp[(4 + b) * xs + tx] + mp[(8 + b) * xs + tx];
                    s[1][b] = mp[(4 + b) * xs + tx] - mp[(8 + b) * xs + tx] - mp[(12 + b) * xs + tx];
                }
                for (int a = 0; a < 2; a++) { /* (A^T m) A */
                    rows[a][2 * tx] = s[a][0] + s[a][1] + s[a][2] + b0;
                    rows[a][2 * tx + 1] = s[a][1] - s[a][2] - s[a][3] + b0;
                }
            }
            for (int a = 0; a < 2 && 2 * ty + a < OH; a++)
                memcpy(dst + (2 * ty + a) * OW, rows[a], (size_t)OW * sizeof(float));
        }
    });
}

/* The whole problem over the batch, U already transformed.  0 ok, 1 oom. */
static int wg_run(const wg_prob *p, int64_t N, const float *in, const float *U, const float *bias, float *out) {
    int64_t tiles = p->TH * p->TW, npos = wg_positions(p);
    int64_t per = npos * (p->Ci + p->Co) * tiles * (int64_t)sizeof(float);
    int64_t nb = per > 0 ? WG_CHUNK_BYTES / per : N;
    if (nb < 1)
        nb = 1;
    if (nb > N)
        nb = N;
    bool panels = wg_panels();
    float *V = (float *)conv_scratch(0, (size_t)(npos * wg_xs(p->Ci, wg_padded(nb * tiles))) * sizeof(float));
    float *M = (float *)conv_scratch(1, (size_t)(npos * wg_xs(p->Co, nb * tiles)) * sizeof(float));
    if (!V || !M)
        return 1;
    for (int64_t n0 = 0; n0 < N; n0 += nb) {
        int64_t cb = N - n0 < nb ? N - n0 : nb, T = cb * tiles, Tp = wg_padded(T);
        wg_input(p, in, n0, cb, T, panels, V);
        if (panels && Tp > T) /* the last panel's columns past T: zeros, not stale floats */
            for (int xi = 0; xi < npos; xi++)
                for (int64_t c = 0; c < p->Ci; c++)
                    memset(V + xi * wg_xs(p->Ci, Tp) + ((Tp / WG_PANEL - 1) * p->Ci + c) * WG_PANEL + T % WG_PANEL,
                           0, (size_t)(Tp - T) * sizeof(float));
        /* npos independent gemms: one per thread at a time, single-threaded
         * inside the parallel region */
        int failed = 0;
        CH_PAR_FOR_DYNAMIC(ch_threads() > 1, 1, int xi = 0; xi < npos; xi++, {
            const float *Ux = U + (int64_t)xi * p->Co * p->Ci;
            float *Mx = M + xi * wg_xs(p->Co, T);
            if (panels) {
                if (!ch_cpu_sgemm512_panels(p->Co, T, p->Ci, Ux, p->Ci, V + xi * wg_xs(p->Ci, Tp), Mx, T))
                    ch_flag_set(&failed);
            } else
                ch_cpu_sgemm(CblasNoTrans, CblasNoTrans, (int)p->Co, (int)T, (int)p->Ci, 1.0f, Ux, (int)p->Ci,
                            V + xi * wg_xs(p->Ci, T), (int)T, 0.0f, Mx, (int)T);
        });
        if (failed)
            return 1;
#if CONV_HAVE_DIRECT
        if (p->m == 4 && wg_gather_suits(p, cb)) { /* small maps: 16 tiles across images */
            int64_t groups = (T + 15) / 16;
            float *first = out + n0 * p->Co * p->OH * p->OW;
            CH_PAR_FOR_DYNAMIC(p->Co * groups >= 2 && ch_threads() > 1, ch_dynamic_chunk(p->Co * groups),
                               int64_t og = 0; og < p->Co * groups; og++, {
                int64_t o = og / groups, t0 = og % groups * 16;
                wg4_output_scatter16(p, M, T, bias ? bias[o] : 0.0f, o, t0, T - t0 < 16 ? (int)(T - t0) : 16, first);
            });
            continue;
        }
#endif
        if (p->m == 4)
            wg4_output(p, M, bias, n0, cb, T, out);
        else
            wg2_output(p, M, bias, n0, cb, T, out);
    }
    return 0;
}

/* G[xi][o][t] = (A g A^T)[xi] of each 2x2 tile of gy (zero past the
 * output), for images [n0, n0 + nb).  As the input transform, a row of
 * tiles at a time: the two gy rows zero-padded to the tiles' width, A down
 * the columns of the whole row (t[q] = m0, m0 + m1, m0 - m1, -m1), then A
 * along it, tiles innermost, so the loops vectorize (AVX2 where the CPU
 * has it).  The same additions in the same order as one tile at a time, so
 * the results are the same bit for bit. */
#define WG_GRAD_OUTPUT_PLANE_BODY                                                                              \
    {                                                                                                          \
        float rows[2][WG_MAX_ROW], t[4][WG_MAX_ROW];                                                           \
        int64_t Wt = 2 * TW, cnt = OW < Wt ? OW : Wt;                                                          \
        for (int64_t ty = 0; ty < TH; ty++) {                                                                  \
            for (int a = 0; a < 2; a++) {                                                                      \
                int64_t y = 2 * ty + a;                                                                        \
                memset(rows[a], 0, (size_t)Wt * sizeof(float));                                               \
                if (y < OH)                                                                                    \
                    memcpy(rows[a], src + y * OW, (size_t)cnt * sizeof(float));                                \
            }                                                                                                  \
            for (int64_t x = 0; x < Wt; x++) { /* A m, whole row */                                            \
                t[0][x] = rows[0][x];                                                                          \
                t[1][x] = rows[0][x] + rows[1][x];                                                             \
                t[2][x] = rows[0][x] - rows[1][x];                                                             \
                t[3][x] = -rows[1][x];                                                                         \
            }                                                                                                  \
            float *restrict g = G + ty * TW;                                                                   \
            for (int q = 0; q < 4; q++) { /* (A m) A^T */                                                      \
                float *restrict g0 = g + (q * 4) * xs, *restrict g1 = g0 + xs, *restrict g2 = g1 + xs,        \
                                *restrict g3 = g2 + xs;                                                        \
                const float *tq = t[q];                                                                        \
                for (int64_t tx = 0; tx < TW; tx++) {                                                          \
                    g0[tx] = tq[2 * tx];                                                                       \
                    g1[tx] = tq[2 * tx] + tq[2 * tx + 1];                                                      \
                    g2[tx] = tq[2 * tx] - tq[2 * tx + 1];                                                      \
                    g3[tx] = -tq[2 * tx + 1];                                                                  \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }

/* One (image, output channel) plane of gy; G points at its first tile of
 * position 0. */
static void wg_grad_output_plane(const float *src, int64_t OH, int64_t OW, int64_t TH, int64_t TW, int64_t xs,
                                 float *G) WG_GRAD_OUTPUT_PLANE_BODY
#if CONV_HAVE_DIRECT
static CD_TARGET void wg_grad_output_plane_avx2(const float *src, int64_t OH, int64_t OW, int64_t TH, int64_t TW,
                                                int64_t xs, float *G) WG_GRAD_OUTPUT_PLANE_BODY
#endif

static void wg_grad_output(const wg_prob *p, const float *gy, int64_t n0, int64_t nb, int64_t T, float *G) {
    int64_t Co = p->Co, OH = p->OH, OW = p->OW, TH = p->TH, TW = p->TW;
#if CONV_HAVE_DIRECT
    bool avx2 = ch_cpu_avx2_fma(), avx512 = ch_cpu_avx512f();
#else
    bool avx2 = false, avx512 = false;
#endif
    CH_PAR_FOR_DYNAMIC(nb * Co >= 2 && ch_threads() > 1, ch_dynamic_chunk(nb * Co), int64_t no = 0; no < nb * Co; no++, {
        int64_t n = no / Co, o = no % Co;
        const float *src = gy + ((n0 + n) * Co + o) * OH * OW;
        float *g = G + o * T + n * TH * TW;
#if CONV_HAVE_DIRECT
        if (avx512 && p->m == 4 && TW % 4 == 0)
            wg4_grad_output_plane512_rows4(src, OH, OW, TH, TW, wg_xs(Co, T), g);
        else if (avx2 && p->m == 4)
            wg4_grad_output_plane_avx2(src, OH, OW, TH, TW, wg_xs(Co, T), g);
        else if (avx2)
            wg_grad_output_plane_avx2(src, OH, OW, TH, TW, wg_xs(Co, T), g);
        else
#endif
        if (p->m == 4)
            wg4_grad_output_plane(src, OH, OW, TH, TW, wg_xs(Co, T), g);
        else
            wg_grad_output_plane(src, OH, OW, TH, TW, wg_xs(Co, T), g);
        (void)avx2, (void)avx512;
    });
}

/* Transforms the filter (flipped and transposed for the data gradient) and
 * runs the problem: 0 ok, 1 oom. */
static int wg_conv(const wg_prob *p, int64_t N, const float *in, const float *w, bool flip, const float *bias,
                   float *out) {
    /* the calling thread's slot, not malloc: F(4x4, 3x3)'s U of 512 x 512
     * channels is 38 MB, which glibc maps afresh every call (over its 32 MB
     * mmap threshold), a page fault per 4 KiB, 60 ms a call on a VM */
    float *U = (float *)conv_scratch(3, (size_t)(wg_positions(p) * p->Co * p->Ci) * sizeof(float));
    if (!U)
        return 1;
    wg_filter(p->m, w, p->Co, p->Ci, flip, U);
    return wg_run(p, N, in, U, bias, out);
}

/* A pass takes F(4x4, 3x3) when the map it writes (y, gx, or for the
 * filter gradient the gy it reads) is at least 8 x 8.  At 4 x 4 (ResNet's
 * 512-channel stage) F(4x4) is one tile per image: its products are a
 * quarter as wide and repack 36 filter matrices instead of 16 for them,
 * and its filter transform writes 2.25x the bytes.  There it measured
 * 0-7 % faster than F(2x2) (forward; the gradients the same), which does
 * not pay for its 20x larger rounding error (bench/README.md, session 16). */
static wg_prob wg_problem(int64_t Ci, int64_t Co, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t py,
                          int64_t px) {
    int64_t m = OH >= 8 && OW >= 8 ? 4 : 2;
    wg_prob p = { Ci, Co, H, W, OH, OW, py, px, m, (OH + m - 1) / m, (OW + m - 1) / m };
    return p;
}

/* Forward: -1 when Winograd does not apply, else 0/1 (ok/oom). */
static int wg_conv_forward(const conv_geom *g, const float *x, const float *w, const float *b, float *y) {
    if (!wg_usable(g))
        return -1;
    wg_prob p = wg_problem(g->C, g->Cout, g->in[0], g->in[1], g->out[0], g->out[1], g->p[0], g->p[1]);
    return wg_conv(&p, g->N, x, w, false, b, y);
}

/* Data gradient: gy (N, Cout, OH, OW) correlated with the flipped,
 * transposed filter, padded by 2 - p, gives gx (N, C, H, W). */
static int wg_conv_backward_data(const conv_geom *g, const float *gy, const float *w, float *gx) {
    if (!wg_usable(g))
        return -1;
    wg_prob p = wg_problem(g->Cout, g->C, g->out[0], g->out[1], g->in[0], g->in[1], 2 - g->p[0], 2 - g->p[1]);
    return wg_conv(&p, g->N, gy, w, true, NULL, gx);
}

/* Filter gradient: dU accumulated over chunks of images, then gW = G^T dU G. */
static int wg_conv_backward_filter(const conv_geom *g, const float *x, const float *gy, float *gw) {
    if (!wg_usable(g))
        return -1;
    wg_prob p = wg_problem(g->C, g->Cout, g->in[0], g->in[1], g->out[0], g->out[1], g->p[0], g->p[1]);
    int64_t N = g->N, Co = p.Co, Ci = p.Ci, tiles = p.TH * p.TW, npos = wg_positions(&p);
    int64_t per = npos * (Ci + Co) * tiles * (int64_t)sizeof(float);
    int64_t nb = per > 0 ? WG_CHUNK_BYTES / per : N;
    if (nb < 1)
        nb = 1;
    if (nb > N)
        nb = N;
    float *V = (float *)conv_scratch(0, (size_t)(npos * wg_xs(Ci, nb * tiles)) * sizeof(float));
    float *Gt = (float *)conv_scratch(1, (size_t)(npos * wg_xs(Co, nb * tiles)) * sizeof(float));
    float *dU = (float *)conv_scratch(3, (size_t)(npos * Co * Ci) * sizeof(float));
    if (!V || !Gt || !dU)
        return 1;
    for (int64_t n0 = 0; n0 < N; n0 += nb) {
        int64_t cb = N - n0 < nb ? N - n0 : nb, T = cb * tiles;
        float beta = n0 == 0 ? 0.0f : 1.0f; /* chunks added in order: no dependence on threads */
        wg_input(&p, x, n0, cb, T, false, V);
        wg_grad_output(&p, gy, n0, cb, T, Gt);
        CH_PAR_FOR_DYNAMIC(ch_threads() > 1, 1, int xi = 0; xi < npos; xi++, {
            ch_cpu_sgemm(CblasNoTrans, CblasTrans, (int)Co, (int)Ci, (int)T, 1.0f,
                        Gt + xi * wg_xs(Co, T), (int)T, V + xi * wg_xs(Ci, T), (int)T, beta,
                        dU + (int64_t)xi * Co * Ci, (int)Ci);
        });
    }
    if (p.m == 4) {
        wg4_filter_grad(dU, Co, Ci, gw);
        return 0;
    }
    /* gW[o][i] = G^T dU[.][o][i] G, G^T = [[1, .5, .5, 0], [0, .5, -.5, 0], [0, .5, .5, 1]] */
    CH_PAR_FOR(Co * Ci >= 4096 && ch_threads() > 1, int64_t oi = 0; oi < Co * Ci; oi++, {
        float u[4][4], t[3][4];
        for (int xi = 0; xi < 16; xi++)
            u[xi / 4][xi % 4] = dU[(int64_t)xi * Co * Ci + oi];
        for (int b = 0; b < 4; b++) {
            t[0][b] = u[0][b] + 0.5f * (u[1][b] + u[2][b]);
            t[1][b] = 0.5f * (u[1][b] - u[2][b]);
            t[2][b] = 0.5f * (u[1][b] + u[2][b]) + u[3][b];
        }
        float *dst = gw + oi * 9;
        for (int a = 0; a < 3; a++) {
            dst[a * 3 + 0] = t[a][0] + 0.5f * (t[a][1] + t[a][2]);
            dst[a * 3 + 1] = 0.5f * (t[a][1] - t[a][2]);
            dst[a * 3 + 2] = 0.5f * (t[a][1] + t[a][2]) + t[a][3];
        }
    });
    return 0;
}

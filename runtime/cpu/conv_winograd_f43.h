/*
 * conv_winograd_f43.h -- the transforms of Winograd F(4x4, 3x3), which the
 * forward and the data gradient use for maps of 4 x 4 and up (included by
 * conv_winograd.h, whose driver runs the 36 products between them).
 *
 * Why: F(2x2, 3x3) spends 16 products per 2 x 2 outputs (4 per output),
 * F(4x4, 3x3) 36 per 4 x 4 (2.25 per output).  Its V and M are smaller by
 * the same factor, and for 64-channel 32 x 32 layers moving V and M in and
 * out of L2 cost as much as the products (bench/README.md, session 15).
 * The price is accuracy: the interpolation points 0, +-1, +-2 bring factors
 * up to 8 (A) and 5 (B), so a float32 result is a few ulps of the largest
 * term worse than F(2x2, 3x3)'s; spec/functions/connection/
 * convolution_winograd_spec.lua bounds it against float64.
 *
 * The matrices (Lavin & Gray, "Fast algorithms for convolutional neural
 * networks", 2016), correlation form, y = A^T [(G g G^T) . (B^T d B)] A:
 *   B^T = [4  0 -5  0 1 0;  0 -4 -4  1 1 0;  0 4 -4 -1 1 0;
 *          0 -2 -1  2 1 0;  0  2 -1 -2 1 0;  0 4  0 -5 0 1]
 *   G   = [1/4 0 0; -1/6 -1/6 -1/6; -1/6 1/6 -1/6;
 *          1/24 1/12 1/6; 1/24 -1/12 1/6; 0 0 1]
 *   A^T = [1 1 1 1 1 0;  0 1 -1 2 -2 0;  0 1 1 4 4 0;  0 1 -1 8 -8 1]
 * Each is applied as the short sequences below (shared sums first), one
 * macro text for the scalar and the AVX-512 code.  The compiler fuses some
 * multiply-adds in the AVX-512 code (GNU C contracts), so the two paths
 * agree to rounding, not bit for bit; on one machine the results do not
 * depend on the thread count.
 */
#define WG4_POS 36 /* transform positions: 6 x 6 */

/* One 6-vector through B^T (input), G (filter: 3 in, 6 out) and A^T
 * (output: 6 in, 4 out).  T is float or __m512; the operations are macros
 * so that one text serves both. */
#define WG4_BT(T, ADD, SUB, MUL, d, v)                                                                         \
    do {                                                                                                       \
        T k4_ = WG4_SPLAT(T, 4.0f), k5_ = WG4_SPLAT(T, 5.0f), k2_ = WG4_SPLAT(T, 2.0f);              \
        T a_ = SUB(d[4], MUL(k4_, d[2])), b_ = SUB(d[3], MUL(k4_, d[1]));                                      \
        T c_ = SUB(d[4], d[2]), e_ = MUL(k2_, SUB(d[3], d[1]));                                                \
        v[0] = ADD(MUL(k4_, d[0]), SUB(d[4], MUL(k5_, d[2])));                                                 \
        v[1] = ADD(a_, b_);                                                                                    \
        v[2] = SUB(a_, b_);                                                                                    \
        v[3] = ADD(c_, e_);                                                                                    \
        v[4] = SUB(c_, e_);                                                                                    \
        v[5] = ADD(MUL(k4_, d[1]), SUB(d[5], MUL(k5_, d[3])));                                                 \
    } while (0)

#define WG4_G(T, ADD, SUB, MUL, g, u)                                                                          \
    do {                                                                                                       \
        T q_ = WG4_SPLAT(T, 0.25f), h_ = WG4_SPLAT(T, 0.5f);                                             \
        T s6_ = WG4_SPLAT(T, 1.0f / 6.0f), m6_ = WG4_SPLAT(T, -1.0f / 6.0f);                             \
        T o_ = ADD(g[0], g[2]), p_ = ADD(MUL(q_, g[0]), g[2]), h1_ = MUL(h_, g[1]);                            \
        u[0] = MUL(q_, g[0]);                                                                                  \
        u[1] = MUL(m6_, ADD(o_, g[1]));                                                                        \
        u[2] = MUL(m6_, SUB(o_, g[1]));                                                                        \
        u[3] = MUL(s6_, ADD(p_, h1_));                                                                         \
        u[4] = MUL(s6_, SUB(p_, h1_));                                                                         \
        u[5] = g[2];                                                                                           \
    } while (0)

#define WG4_AT(T, ADD, SUB, MUL, m, s)                                                                         \
    do {                                                                                                       \
        T k2_ = WG4_SPLAT(T, 2.0f), k4_ = WG4_SPLAT(T, 4.0f), k8_ = WG4_SPLAT(T, 8.0f);              \
        T p_ = ADD(m[1], m[2]), q_ = SUB(m[1], m[2]), r_ = ADD(m[3], m[4]), t_ = SUB(m[3], m[4]);              \
        s[0] = ADD(ADD(m[0], p_), r_);                                                                         \
        s[1] = ADD(q_, MUL(k2_, t_));                                                                          \
        s[2] = ADD(p_, MUL(k4_, r_));                                                                          \
        s[3] = ADD(ADD(q_, MUL(k8_, t_)), m[5]);                                                               \
    } while (0)

/* The filter gradient's transforms, the adjoints of the above: A (4 in,
 * 6 out) for the gy tiles, G^T (6 in, 3 out) for the summed products. */
#define WG4_A(T, ADD, SUB, MUL, g, u)                                                                          \
    do {                                                                                                       \
        T k2_ = WG4_SPLAT(T, 2.0f), k4_ = WG4_SPLAT(T, 4.0f), k8_ = WG4_SPLAT(T, 8.0f);                       \
        T e_ = ADD(g[0], g[2]), o_ = ADD(g[1], g[3]);                                                          \
        T e2_ = ADD(g[0], MUL(k4_, g[2])), o2_ = ADD(MUL(k2_, g[1]), MUL(k8_, g[3]));                          \
        u[0] = g[0];                                                                                           \
        u[1] = ADD(e_, o_);                                                                                    \
        u[2] = SUB(e_, o_);                                                                                    \
        u[3] = ADD(e2_, o2_);                                                                                  \
        u[4] = SUB(e2_, o2_);                                                                                  \
        u[5] = g[3];                                                                                           \
    } while (0)

#define WG4_GT(T, ADD, SUB, MUL, u, r)                                                                         \
    do {                                                                                                       \
        T q_ = WG4_SPLAT(T, 0.25f), s6_ = WG4_SPLAT(T, 1.0f / 6.0f), s12_ = WG4_SPLAT(T, 1.0f / 12.0f);       \
        T s24_ = WG4_SPLAT(T, 1.0f / 24.0f);                                                                   \
        T p12_ = ADD(u[1], u[2]), m12_ = SUB(u[2], u[1]), p34_ = ADD(u[3], u[4]), m34_ = SUB(u[3], u[4]);      \
        r[0] = ADD(SUB(MUL(q_, u[0]), MUL(s6_, p12_)), MUL(s24_, p34_));                                       \
        r[1] = ADD(MUL(s6_, m12_), MUL(s12_, m34_));                                                           \
        r[2] = ADD(MUL(s6_, SUB(p34_, p12_)), u[5]);                                                           \
    } while (0)

/* scalar operations */
#define WG4_SPLAT(T, x) WG4_SPLAT_##T(x)
#define WG4_SPLAT_float(x) (x)
#define WG4_FADD(a, b) ((a) + (b))
#define WG4_FSUB(a, b) ((a) - (b))
#define WG4_FMUL(a, b) ((a) * (b))

/* ---- filter: U[xi][o][i] = G g G^T, xi = 6 a + b ----------------------- */
/* (wg_filter in conv_winograd.h runs these, with the taps read by
 * wg_filter_taps / wg_filter_taps512, flipped for the data gradient.) */
static inline void wg4_filter_one(const float k[9], float *U, int64_t Co, int64_t Ci, int64_t o, int64_t i) {
    float t[6][3]; /* G g */
    for (int c = 0; c < 3; c++) {
        float g[3] = { k[c], k[3 + c], k[6 + c] }, u[6];
        WG4_G(float, WG4_FADD, WG4_FSUB, WG4_FMUL, g, u);
        for (int a = 0; a < 6; a++)
            t[a][c] = u[a];
    }
    for (int a = 0; a < 6; a++) { /* (G g) G^T */
        float u[6];
        WG4_G(float, WG4_FADD, WG4_FSUB, WG4_FMUL, t[a], u);
        for (int b = 0; b < 6; b++)
            U[((int64_t)(a * 6 + b) * Co + o) * Ci + i] = u[b];
    }
}

#if CONV_HAVE_DIRECT
#define WG4_SPLAT___m512(x) _mm512_set1_ps(x)
#define WG4_VADD(a, b) _mm512_add_ps(a, b)
#define WG4_VSUB(a, b) _mm512_sub_ps(a, b)
#define WG4_VMUL(a, b) _mm512_mul_ps(a, b)

/* Row o of U on AVX-512, 16 input channels at a time (taps gathered), as
 * wg_filter_row512 does for F(2x2, 3x3). */
static WG_TARGET512 void wg4_filter_row512(const float *w, int64_t Co, int64_t Ci, bool flip, int64_t o, float *U) {
    for (int64_t i0 = 0; i0 < Ci; i0 += 16) {
        __m512 k[9];
        __mmask16 m = wg_filter_taps512(w, Co, Ci, flip, o, i0, k);
        __m512 t[6][3];
        for (int c = 0; c < 3; c++) {
            __m512 g[3] = { k[c], k[3 + c], k[6 + c] }, u[6];
            WG4_G(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, g, u);
            for (int a = 0; a < 6; a++)
                t[a][c] = u[a];
        }
        for (int a = 0; a < 6; a++) {
            __m512 u[6];
            WG4_G(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, t[a], u);
            for (int b = 0; b < 6; b++)
                _mm512_mask_storeu_ps(U + ((int64_t)(a * 6 + b) * Co + o) * Ci + i0, m, u[b]);
        }
    }
}
#endif

/* ---- input: V[xi][c][t] = B^T d B of each 6 x 6 tile (stride 4) -------- */
/* The band buffer holds whole tile rows of zero-padded input rows, as for
 * F(2x2, 3x3) (wg_band_fill); its rows are Wp = 4 TW + 2 floats, and
 * WG4_SLACK zeros follow the last one, so the AVX-512 code below may load
 * whole vectors past a row's end (lanes of tiles it does not store). */
#define WG4_SLACK 96

/* One (image, channel) plane, one tile at a time; V points at its first
 * tile of position 0, positions xs floats apart. */
static void wg4_input_plane(const float *img, int64_t H, int64_t W, int64_t py, int64_t px, int64_t TH, int64_t TW,
                            int64_t xs, float *V) {
    float band[WG_BAND_FLOATS];
    int64_t Wp = 4 * TW + 2, per = (WG_BAND_FLOATS / Wp - 2) / 4;
    for (int64_t ty0 = 0; ty0 < TH; ty0 += per) {
        int64_t ty1 = ty0 + per < TH ? ty0 + per : TH;
        wg_band_fill(img, H, W, py, px, Wp, 4, ty0, 4 * (ty1 - ty0) + 2, band);
        for (int64_t ty = ty0; ty < ty1; ty++)
            for (int64_t tx = 0; tx < TW; tx++) {
                const float *d0 = band + 4 * (ty - ty0) * Wp + 4 * tx;
                float t[6][6]; /* B^T d, column by column */
                for (int b = 0; b < 6; b++) {
                    float d[6], v[6];
                    for (int a = 0; a < 6; a++)
                        d[a] = d0[a * Wp + b];
                    WG4_BT(float, WG4_FADD, WG4_FSUB, WG4_FMUL, d, v);
                    for (int q = 0; q < 6; q++)
                        t[q][b] = v[q];
                }
                for (int q = 0; q < 6; q++) { /* (B^T d) B */
                    float v[6];
                    WG4_BT(float, WG4_FADD, WG4_FSUB, WG4_FMUL, t[q], v);
                    for (int k = 0; k < 6; k++)
                        V[(q * 6 + k) * xs + ty * TW + tx] = v[k];
                }
            }
    }
}

#if CONV_HAVE_DIRECT
/* The same on AVX-512, 16 tiles at a time: B^T down the columns on whole
 * vectors of the band's six rows (that step does not care where tiles
 * start), then, from each result row's 66 floats, the six columns of the
 * 16 tiles (elements 4 j + b, j < 16) and B along them.  Columns 0-3 are
 * the 64 floats' stride-4 deinterleave, two rounds of two-source permutes
 * (even/odd of pairs, then even/odd of those); columns 4 and 5 are columns
 * 0 and 1 one tile on, so a one-lane shift that brings in floats 64, 65. */
static WG_TARGET512 void wg4_input_plane512(const float *img, int64_t H, int64_t W, int64_t py, int64_t px,
                                            int64_t TH, int64_t TW, const wg_dest *dst) {
    float band[WG_BAND_FLOATS + WG4_SLACK];
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    int64_t Wp = 4 * TW + 2, per = (WG_BAND_FLOATS / Wp - 2) / 4;
    for (int64_t ty0 = 0; ty0 < TH; ty0 += per) {
        int64_t ty1 = ty0 + per < TH ? ty0 + per : TH, nrows = 4 * (ty1 - ty0) + 2;
        wg_band_fill(img, H, W, py, px, Wp, 4, ty0, nrows, band);
        memset(band + nrows * Wp, 0, WG4_SLACK * sizeof(float));
        for (int64_t ty = ty0; ty < ty1; ty++) {
            const float *row = band + 4 * (ty - ty0) * Wp;
            for (int64_t tx = 0; tx < TW; tx += 16) {
                int n = TW - tx < 16 ? (int)(TW - tx) : 16;
                int64_t t0 = dst->t0 + ty * TW + tx;
                const float *r0 = row + 4 * tx;
                __m512 raw[6][5]; /* raw[q][s]: (B^T d)[q], floats 16 s ... 16 s + 15 from 4 tx */
                for (int s = 0; s < 5; s++) {
                    __m512 d[6], v[6];
                    for (int a = 0; a < 6; a++)
                        d[a] = _mm512_loadu_ps(r0 + a * Wp + 16 * s);
                    WG4_BT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, d, v);
                    for (int q = 0; q < 6; q++)
                        raw[q][s] = v[q];
                }
                for (int q = 0; q < 6; q++) {
                    const __m512 *r = raw[q];
                    __m512 e01 = _mm512_permutex2var_ps(r[0], even, r[1]), o01 = _mm512_permutex2var_ps(r[0], odd, r[1]);
                    __m512 e23 = _mm512_permutex2var_ps(r[2], even, r[3]), o23 = _mm512_permutex2var_ps(r[2], odd, r[3]);
                    __m512 c[6];
                    c[0] = _mm512_permutex2var_ps(e01, even, e23);
                    c[2] = _mm512_permutex2var_ps(e01, odd, e23);
                    c[1] = _mm512_permutex2var_ps(o01, even, o23);
                    c[3] = _mm512_permutex2var_ps(o01, odd, o23);
                    __m512i r4 = _mm512_castps_si512(r[4]);
                    c[4] = _mm512_castsi512_ps(_mm512_alignr_epi32(r4, _mm512_castps_si512(c[0]), 1));
                    c[5] = _mm512_castsi512_ps(
                        _mm512_alignr_epi32(_mm512_alignr_epi32(r4, r4, 1), _mm512_castps_si512(c[1]), 1));
                    __m512 v[6];
                    WG4_BT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, c, v);
                    for (int k = 0; k < 6; k++)
                        wg_store_tiles(dst, q * 6 + k, t0, n, v[k]);
                }
            }
        }
    }
}

/* The same for planes whose rows are a multiple of 4 tiles (TW % 4 == 0:
 * maps 16, 32, 64 ... wide), 16 tiles in t order at a time, which may span
 * tile rows: above, a 32 x 32 map (8 tiles a row) filled half of each
 * vector and a 16 x 16 map a quarter.  A segment is 4 tiles of one tile
 * row, whose columns 0-3 lie in 16 floats at stride 4; a vector is 4
 * segments.  B^T runs on each segment's 16 floats and on the 16 floats 4
 * further on (columns 4 and 5 are columns 0 and 1 of those), then the
 * two-round deinterleave of the first function, where the pairs of
 * vectors are now segments (lanes 0-7 from segments 0 and 1, 8-15 from 2
 * and 3).  The same operations per element as above. */
static WG_TARGET512 void wg4_input_plane512_rows4(const float *img, int64_t H, int64_t W, int64_t py, int64_t px,
                                                  int64_t TH, int64_t TW, const wg_dest *dst) {
    float band[WG_BAND_FLOATS + WG4_SLACK];
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    int64_t Wp = 4 * TW + 2, per = (WG_BAND_FLOATS / Wp - 2) / 4;
    per = per >= 4 ? per / 4 * 4 : per; /* whole groups of 16 tiles per band where TW == 4 */
    for (int64_t ty0 = 0; ty0 < TH; ty0 += per) {
        int64_t ty1 = ty0 + per < TH ? ty0 + per : TH, nrows = 4 * (ty1 - ty0) + 2;
        wg_band_fill(img, H, W, py, px, Wp, 4, ty0, nrows, band);
        memset(band + nrows * Wp, 0, WG4_SLACK * sizeof(float));
        int64_t t_end = (ty1 - ty0) * TW; /* the band's tiles, from tile row ty0 */
        for (int64_t t = 0; t < t_end; t += 16) {
            int n = t_end - t < 16 ? (int)(t_end - t) : 16;
            __m512 raw[6][4], sh[6][4]; /* [q][segment]: B^T on columns 0-3, and 4 floats on */
            for (int g = 0; g < 4; g++) {
                int64_t tg = t + 4 * g < t_end ? t + 4 * g : t; /* a missing segment repeats the first */
                const float *r0 = band + 4 * (tg / TW) * Wp + 4 * (tg % TW);
                __m512 d[6], e[6], v[6], w[6];
                for (int a = 0; a < 6; a++) {
                    d[a] = _mm512_loadu_ps(r0 + a * Wp);
                    e[a] = _mm512_loadu_ps(r0 + a * Wp + 4);
                }
                WG4_BT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, d, v);
                WG4_BT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, e, w);
                for (int q = 0; q < 6; q++) {
                    raw[q][g] = v[q];
                    sh[q][g] = w[q];
                }
            }
            int64_t t0 = dst->t0 + ty0 * TW + t;
            for (int q = 0; q < 6; q++) {
                const __m512 *r = raw[q], *h = sh[q];
                __m512 e01 = _mm512_permutex2var_ps(r[0], even, r[1]), o01 = _mm512_permutex2var_ps(r[0], odd, r[1]);
                __m512 e23 = _mm512_permutex2var_ps(r[2], even, r[3]), o23 = _mm512_permutex2var_ps(r[2], odd, r[3]);
                __m512 f01 = _mm512_permutex2var_ps(h[0], even, h[1]), p01 = _mm512_permutex2var_ps(h[0], odd, h[1]);
                __m512 f23 = _mm512_permutex2var_ps(h[2], even, h[3]), p23 = _mm512_permutex2var_ps(h[2], odd, h[3]);
                __m512 c[6];
                c[0] = _mm512_permutex2var_ps(e01, even, e23);
                c[2] = _mm512_permutex2var_ps(e01, odd, e23);
                c[1] = _mm512_permutex2var_ps(o01, even, o23);
                c[3] = _mm512_permutex2var_ps(o01, odd, o23);
                c[4] = _mm512_permutex2var_ps(f01, even, f23);
                c[5] = _mm512_permutex2var_ps(p01, even, p23);
                __m512 v[6];
                WG4_BT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, c, v);
                for (int k = 0; k < 6; k++)
                    wg_store_tiles(dst, q * 6 + k, t0, n, v[k]);
            }
        }
    }
}
#endif

/* ---- output: y tile = A^T M A, plus the bias --------------------------- */
/* A row of tiles at a time into four full-width rows, then copied out. */
static void wg4_output_plane(const float *mp, float b0, int64_t OH, int64_t OW, int64_t TH, int64_t TW, int64_t xs,
                             float *dst) {
    float rows[4][WG_MAX_ROW];
    for (int64_t ty = 0; ty < TH; ty++, mp += TW) {
        for (int64_t tx = 0; tx < TW; tx++) {
            float s[4][6]; /* A^T m */
            for (int b = 0; b < 6; b++) {
                float m[6], r[4];
                for (int a = 0; a < 6; a++)
                    m[a] = mp[(a * 6 + b) * xs + tx];
                WG4_AT(float, WG4_FADD, WG4_FSUB, WG4_FMUL, m, r);
                for (int a = 0; a < 4; a++)
                    s[a][b] = r[a];
            }
            for (int a = 0; a < 4; a++) { /* (A^T m) A */
                float r[4];
                WG4_AT(float, WG4_FADD, WG4_FSUB, WG4_FMUL, s[a], r);
                for (int b = 0; b < 4; b++)
                    rows[a][4 * tx + b] = r[b] + b0;
            }
        }
        for (int a = 0; a < 4 && 4 * ty + a < OH; a++)
            memcpy(dst + (4 * ty + a) * OW, rows[a], (size_t)OW * sizeof(float));
    }
}

#if CONV_HAVE_DIRECT
/* The same on AVX-512, 16 tiles at a time: the 36 positions of 16 tiles
 * are 36 vectors, A^T m A the same operations as above; output row a of
 * the 16 tiles is then four vectors (column b of each tile) interleaved
 * into four segments of 4 tiles x 4 columns, by unpacks, in-lane shuffles
 * and a 4 x 4 transpose of 128-bit lanes, each stored straight into its
 * output row (masked at the row's end).  Where rows are a multiple of 4
 * tiles, the 16 tiles are taken in t order across tile rows (as
 * wg4_input_plane512_rows4 does), else along one tile row. */
static WG_TARGET512 void wg4_output_plane512(const float *mp, float b0, int64_t OH, int64_t OW, int64_t TH,
                                             int64_t TW, int64_t xs, float *dst) {
    const __m512 bias = _mm512_set1_ps(b0);
    bool rows4 = TW % 4 == 0;
    for (int64_t ty = 0, tx = 0; ty < TH;) {
        int64_t t = ty * TW + tx, left = rows4 ? TH * TW - t : TW - tx;
        int n = left < 16 ? (int)left : 16;
        __mmask16 ld = (__mmask16)((1u << n) - 1);
        __m512 s[4][6];
        for (int b = 0; b < 6; b++) {
            __m512 m[6], r[4];
            for (int a = 0; a < 6; a++)
                m[a] = _mm512_maskz_loadu_ps(ld, mp + (a * 6 + b) * xs + t);
            WG4_AT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, m, r);
            for (int a = 0; a < 4; a++)
                s[a][b] = r[a];
        }
        for (int a = 0; a < 4; a++) {
            __m512 y[4];
            WG4_AT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, s[a], y);
            for (int b = 0; b < 4; b++)
                y[b] = _mm512_add_ps(y[b], bias);
            __m512 t0 = _mm512_unpacklo_ps(y[0], y[1]), t1 = _mm512_unpackhi_ps(y[0], y[1]);
            __m512 t2 = _mm512_unpacklo_ps(y[2], y[3]), t3 = _mm512_unpackhi_ps(y[2], y[3]);
            /* u[k], 128-bit lane l: the four outputs of tile 4 l + k */
            __m512 u0 = _mm512_shuffle_ps(t0, t2, 0x44), u1 = _mm512_shuffle_ps(t0, t2, 0xEE);
            __m512 u2 = _mm512_shuffle_ps(t1, t3, 0x44), u3 = _mm512_shuffle_ps(t1, t3, 0xEE);
            __m512 v0 = _mm512_shuffle_f32x4(u0, u1, 0x44), v1 = _mm512_shuffle_f32x4(u2, u3, 0x44);
            __m512 v2 = _mm512_shuffle_f32x4(u0, u1, 0xEE), v3 = _mm512_shuffle_f32x4(u2, u3, 0xEE);
            __m512 out[4] = { _mm512_shuffle_f32x4(v0, v1, 0x88), _mm512_shuffle_f32x4(v0, v1, 0xDD),
                              _mm512_shuffle_f32x4(v2, v3, 0x88), _mm512_shuffle_f32x4(v2, v3, 0xDD) };
            for (int k = 0; 4 * k < n; k++) { /* segment k: tiles t + 4k ... */
                int64_t tk = t + 4 * k, yk = tk / TW, xk = tk % TW;
                if (4 * yk + a >= OH)
                    continue;
                int64_t c = OW - 4 * xk, tiles = n - 4 * k; /* columns left in the row; tiles in the segment */
                if (c > 4 * tiles)
                    c = 4 * tiles;
                if (c > 16)
                    c = 16;
                _mm512_mask_storeu_ps(dst + (4 * yk + a) * OW + 4 * xk, (__mmask16)((1u << c) - 1), out[k]);
            }
        }
        if (rows4) {
            ty = (t + 16) / TW;
            tx = (t + 16) % TW;
        } else if ((tx += 16) >= TW) {
            ty++;
            tx = 0;
        }
    }
}
#endif

static void wg4_output(const wg_prob *p, const float *M, const float *bias, int64_t n0, int64_t nb, int64_t T,
                       float *out) {
    int64_t Co = p->Co, OH = p->OH, OW = p->OW, TH = p->TH, TW = p->TW;
#if CONV_HAVE_DIRECT
    bool avx512 = ch_cpu_avx512f();
#else
    bool avx512 = false;
#endif
    CH_PAR_FOR_DYNAMIC(nb * Co >= 2 && ch_threads() > 1, ch_dynamic_chunk(nb * Co), int64_t no = 0; no < nb * Co; no++, {
        int64_t n = no / Co, o = no % Co;
        const float *mp = M + o * T + n * TH * TW;
        float *dst = out + ((n0 + n) * Co + o) * OH * OW;
        float b0 = bias ? bias[o] : 0.0f;
#if CONV_HAVE_DIRECT
        if (avx512)
            wg4_output_plane512(mp, b0, OH, OW, TH, TW, wg_xs(Co, T), dst);
        else
#endif
            wg4_output_plane(mp, b0, OH, OW, TH, TW, wg_xs(Co, T), dst);
        (void)avx512;
    });
}

/* ---- filter gradient -------------------------------------------------- */
/* G[xi][o][t] = (A g A^T)[xi] of each 4 x 4 tile of gy (zero past the
 * output), one (image, output channel) plane; G points at its first tile
 * of position 0.  As the input transform, a row of tiles at a time: the
 * four gy rows zero-padded to the tiles' width, A down the columns of the
 * whole row, then A along it, tiles innermost (so it vectorizes). */
#define WG4_GRAD_OUTPUT_PLANE_BODY                                                                             \
    {                                                                                                          \
        float rows[4][WG_MAX_ROW], t[6][WG_MAX_ROW];                                                           \
        int64_t Wt = 4 * TW, cnt = OW < Wt ? OW : Wt;                                                          \
        for (int64_t ty = 0; ty < TH; ty++) {                                                                  \
            for (int a = 0; a < 4; a++) {                                                                      \
                int64_t y = 4 * ty + a;                                                                        \
                memset(rows[a], 0, (size_t)Wt * sizeof(float));                                               \
                if (y < OH)                                                                                    \
                    memcpy(rows[a], src + y * OW, (size_t)cnt * sizeof(float));                                \
            }                                                                                                  \
            for (int64_t x = 0; x < Wt; x++) { /* A m, whole row */                                            \
                float g[4] = { rows[0][x], rows[1][x], rows[2][x], rows[3][x] }, u[6];                         \
                WG4_A(float, WG4_FADD, WG4_FSUB, WG4_FMUL, g, u);                                              \
                for (int q = 0; q < 6; q++)                                                                    \
                    t[q][x] = u[q];                                                                            \
            }                                                                                                  \
            float *restrict gq = G + ty * TW;                                                                  \
            for (int q = 0; q < 6; q++) /* (A m) A^T */                                                        \
                for (int64_t tx = 0; tx < TW; tx++) {                                                          \
                    float g[4] = { t[q][4 * tx], t[q][4 * tx + 1], t[q][4 * tx + 2], t[q][4 * tx + 3] }, u[6]; \
                    WG4_A(float, WG4_FADD, WG4_FSUB, WG4_FMUL, g, u);                                          \
                    for (int k = 0; k < 6; k++)                                                                \
                        gq[(q * 6 + k) * xs + tx] = u[k];                                                      \
                }                                                                                              \
        }                                                                                                      \
    }

static void wg4_grad_output_plane(const float *src, int64_t OH, int64_t OW, int64_t TH, int64_t TW, int64_t xs,
                                  float *G) WG4_GRAD_OUTPUT_PLANE_BODY
#if CONV_HAVE_DIRECT
static CD_TARGET void wg4_grad_output_plane_avx2(const float *src, int64_t OH, int64_t OW, int64_t TH, int64_t TW,
                                                 int64_t xs, float *G) WG4_GRAD_OUTPUT_PLANE_BODY
#endif

#if CONV_HAVE_DIRECT
/* The same on AVX-512 for rows of a multiple of 4 tiles, 16 tiles in t
 * order at a time (segments of 4 tiles of one tile row, as
 * wg4_input_plane512_rows4): A down the columns on each segment's four gy
 * rows (16 floats each, zero past the output), then the stride-4
 * deinterleave and A along the tiles. */
static WG_TARGET512 void wg4_grad_output_plane512_rows4(const float *src, int64_t OH, int64_t OW, int64_t TH,
                                                        int64_t TW, int64_t xs, float *G) {
    const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
    for (int64_t t = 0; t < TH * TW; t += 16) {
        int n = TH * TW - t < 16 ? (int)(TH * TW - t) : 16;
        __m512 raw[6][4];
        for (int k = 0; k < 4; k++) {
            int64_t tk = t + 4 * k, yk = tk / TW, xk = tk % TW, cols = OW - 4 * xk;
            __mmask16 m = 4 * k >= n || cols <= 0 ? 0 : (__mmask16)((1u << (cols < 16 ? cols : 16)) - 1);
            __m512 g[4], u[6];
            for (int a = 0; a < 4; a++)
                g[a] = 4 * yk + a < OH ? _mm512_maskz_loadu_ps(m, src + (4 * yk + a) * OW + 4 * xk)
                                       : _mm512_setzero_ps();
            WG4_A(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, g, u);
            for (int q = 0; q < 6; q++)
                raw[q][k] = u[q];
        }
        __mmask16 st = (__mmask16)((1u << n) - 1);
        for (int q = 0; q < 6; q++) {
            const __m512 *r = raw[q];
            __m512 e01 = _mm512_permutex2var_ps(r[0], even, r[1]), o01 = _mm512_permutex2var_ps(r[0], odd, r[1]);
            __m512 e23 = _mm512_permutex2var_ps(r[2], even, r[3]), o23 = _mm512_permutex2var_ps(r[2], odd, r[3]);
            __m512 c[4] = { _mm512_permutex2var_ps(e01, even, e23), _mm512_permutex2var_ps(o01, even, o23),
                            _mm512_permutex2var_ps(e01, odd, e23), _mm512_permutex2var_ps(o01, odd, o23) };
            __m512 v[6];
            WG4_A(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, c, v);
            for (int k = 0; k < 6; k++)
                _mm512_mask_storeu_ps(G + (q * 6 + k) * xs + t, st, v[k]);
        }
    }
}
#endif

/* gW[o][i] = G^T dU[.][o][i] G for every (o, i). */
static void wg4_filter_grad(const float *dU, int64_t Co, int64_t Ci, float *gw) {
    CH_PAR_FOR(Co * Ci >= 4096 && ch_threads() > 1, int64_t oi = 0; oi < Co * Ci; oi++, {
        float t[3][6];
        for (int b = 0; b < 6; b++) { /* G^T u, column b */
            float u[6], r[3];
            for (int a = 0; a < 6; a++)
                u[a] = dU[(int64_t)(a * 6 + b) * Co * Ci + oi];
            WG4_GT(float, WG4_FADD, WG4_FSUB, WG4_FMUL, u, r);
            for (int a = 0; a < 3; a++)
                t[a][b] = r[a];
        }
        for (int a = 0; a < 3; a++) { /* (G^T u) G */
            float r[3];
            WG4_GT(float, WG4_FADD, WG4_FSUB, WG4_FMUL, t[a], r);
            for (int b = 0; b < 3; b++)
                gw[oi * 9 + a * 3 + b] = r[b];
        }
    });
}

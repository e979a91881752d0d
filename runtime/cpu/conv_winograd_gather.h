/*
 * conv_winograd_gather.h -- the Winograd input (and F(4x4, 3x3) output)
 * transforms of small maps on AVX-512, 16 tiles at a time in t order
 * across images (included by conv_winograd.h after both tile sizes'
 * transforms).
 *
 * Why: the plane-at-a-time transforms put the tiles of one tile row in a
 * vector's lanes.  A map 2 tiles wide (ResNet's 8 x 8 maps under
 * F(4x4, 3x3), its 4 x 4 maps under F(2x2, 3x3)) fills 2 lanes of 16, and
 * those stages spent more time in the transform than in their products.
 * Here lane j is tile t0 + j of the chunk, whatever image and tile row it
 * lies in (t = image * TH * TW + ty * TW + tx), and each of its input taps
 * d[a][b] is gathered from x, masked to zero outside the image (the
 * padding).  Then B^T down the columns and B along the rows, the same
 * operations in the same order as the row-wise transforms.
 */
#if CONV_HAVE_DIRECT

/* Lane offsets (floats from x's first image of the chunk, channel 0) and
 * the rows/columns of the 16 tiles' top-left taps; lanes past n repeat
 * the first tile. */
static WG_TARGET512 void wg_gather_lanes(const wg_prob *p, int64_t t0, int n, __m512i *base, __m512i *row,
                                         __m512i *col) {
    int32_t b[16], r[16], c[16];
    int64_t tiles = p->TH * p->TW, plane = p->Ci * p->H * p->W;
    for (int j = 0; j < 16; j++) {
        int64_t t = t0 + (j < n ? j : 0), img = t / tiles, k = t % tiles;
        r[j] = (int32_t)(p->m * (k / p->TW) - p->py);
        c[j] = (int32_t)(p->m * (k % p->TW) - p->px);
        b[j] = (int32_t)(img * plane + r[j] * p->W + c[j]);
    }
    *base = _mm512_loadu_si512(b);
    *row = _mm512_loadu_si512(r);
    *col = _mm512_loadu_si512(c);
}

/* Tap (a, b) of the 16 tiles of channel plane `src`, zero outside. */
static WG_TARGET512 inline __m512 wg_gather_tap(const float *src, __m512i base, __mmask16 rows_ok, __mmask16 cols_ok,
                                               int64_t W, int a, int b) {
    __m512i at = _mm512_add_epi32(base, _mm512_set1_epi32((int32_t)(a * W + b)));
    return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), (__mmask16)(rows_ok & cols_ok), at, src, 4);
}

/* Masks of the lanes whose tap row (col) row + k lies inside [0, len). */
static WG_TARGET512 inline __mmask16 wg_inside(__m512i row, int k, int64_t len) {
    __m512i v = _mm512_add_epi32(row, _mm512_set1_epi32(k));
    return (__mmask16)(_mm512_cmpge_epi32_mask(v, _mm512_setzero_si512()) &
                       _mm512_cmplt_epi32_mask(v, _mm512_set1_epi32((int32_t)len)));
}

/* F(2x2, 3x3)'s B^T on one column (or row) of 16 tiles, the additions of
 * wg_input_plane512 in its order. */
static WG_TARGET512 inline void wg2_bt512(const __m512 d[4], __m512 v[4]) {
    v[0] = _mm512_sub_ps(d[0], d[2]);
    v[1] = _mm512_add_ps(d[1], d[2]);
    v[2] = _mm512_sub_ps(d[2], d[1]);
    v[3] = _mm512_sub_ps(d[1], d[3]);
}

/* V of channel c for tiles [t0, t0 + n) of the chunk whose first image is
 * `in` (x's image n0), into dst. */
static WG_TARGET512 void wg_input_gather16(const wg_prob *p, const float *in, int64_t c, int64_t t0, int n,
                                           const wg_dest *dst) {
    __m512i base, row, col;
    wg_gather_lanes(p, t0, n, &base, &row, &col);
    const float *src = in + c * p->H * p->W;
    int w = (int)p->m + 2; /* the tile's width: 4 or 6 */
    __mmask16 rows_ok[6], cols_ok[6];
    for (int k = 0; k < w; k++) {
        rows_ok[k] = wg_inside(row, k, p->H);
        cols_ok[k] = wg_inside(col, k, p->W);
    }
    __m512 t[6][6]; /* t[q][b]: (B^T d)[q][b] */
    for (int b = 0; b < w; b++) {
        __m512 d[6], v[6];
        for (int a = 0; a < w; a++)
            d[a] = wg_gather_tap(src, base, rows_ok[a], cols_ok[b], p->W, a, b);
        if (p->m == 4)
            WG4_BT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, d, v);
        else
            wg2_bt512(d, v);
        for (int q = 0; q < w; q++)
            t[q][b] = v[q];
    }
    for (int q = 0; q < w; q++) {
        __m512 v[6];
        if (p->m == 4)
            WG4_BT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, t[q], v);
        else
            wg2_bt512(t[q], v);
        for (int k = 0; k < w; k++)
            wg_store_tiles(dst, q * w + k, t0, n, v[k]);
    }
}

/* The F(4x4, 3x3) output transform of the same groups: the 36 positions
 * of 16 tiles of output channel o are 36 contiguous vectors of M, A^T m A
 * as wg4_output_plane512, and each of the 16 outputs of a tile is
 * scattered to its image, masked to the output map. */
static WG_TARGET512 void wg4_output_scatter16(const wg_prob *p, const float *M, int64_t T, float b0, int64_t o,
                                              int64_t t0, int n, float *out) {
    __m512i base, row, col;
    /* the output's geometry: no padding, Co channels, tiles m apart */
    wg_prob q = *p;
    q.Ci = p->Co, q.H = p->OH, q.W = p->OW, q.py = 0, q.px = 0;
    wg_gather_lanes(&q, t0, n, &base, &row, &col);
    __mmask16 live = (__mmask16)((1u << n) - 1);
    const float *mp = M + o * T + t0;
    int64_t xs = wg_xs(p->Co, T);
    const __m512 bias = _mm512_set1_ps(b0);
    __m512 s[4][6];
    for (int b = 0; b < 6; b++) {
        __m512 m[6], r[4];
        for (int a = 0; a < 6; a++)
            m[a] = _mm512_maskz_loadu_ps(live, mp + (a * 6 + b) * xs);
        WG4_AT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, m, r);
        for (int a = 0; a < 4; a++)
            s[a][b] = r[a];
    }
    float *dst = out + o * p->OH * p->OW;
    for (int a = 0; a < 4; a++) {
        __m512 y[4];
        WG4_AT(__m512, WG4_VADD, WG4_VSUB, WG4_VMUL, s[a], y);
        __mmask16 rows_ok = (__mmask16)(wg_inside(row, a, p->OH) & live);
        for (int b = 0; b < 4; b++) {
            __m512i at = _mm512_add_epi32(base, _mm512_set1_epi32((int32_t)(a * p->OW + b)));
            _mm512_mask_i32scatter_ps(dst, (__mmask16)(rows_ok & wg_inside(col, b, p->OW)), at,
                                      _mm512_add_ps(y[b], bias), 4);
        }
    }
}

/* Whether the gathers serve this problem: maps too narrow for the
 * row-wise transforms, offsets within int32. */
static bool wg_gather_suits(const wg_prob *p, int64_t nb) {
    if (!ch_cpu_avx512f())
        return false;
    bool narrow = p->m == 4 ? p->TW % 4 != 0 && p->TW < 8 : p->TW < 8;
    return narrow && nb * p->Ci * p->H * p->W < ((int64_t)1 << 31) && nb * p->Co * p->OH * p->OW < ((int64_t)1 << 31);
}
#endif

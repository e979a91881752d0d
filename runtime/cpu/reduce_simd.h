/*
 * reduce_simd.h -- AVX2 versions of the float32 reductions of a contiguous
 * run (included by reduce.c; used when the CPU has AVX2, see
 * ch_cpu_avx2_fma).  Each returns exactly what the portable kernel of
 * reduce_kernels.h returns, bit for bit; they only run faster.
 *
 * Sum.  The portable pairwise sum splits a run in halves down to leaves of
 * at most RK_LEAF elements, each summed in 8 interleaved lanes: one 256-bit
 * vector.  One leaf alone is a chain of dependent adds (add latency bound,
 * about 26 GB/s on one Zen core); here the two or four leaves under one
 * node of the tree are summed side by side, each in its own vector, so the
 * adds overlap.  Leaves interleaved this way read 2-4 short streams, which
 * the hardware prefetcher follows badly from DRAM: the loop prefetches the
 * data RS_PREFETCH floats ahead in address order.
 *
 * Max and min.  The portable loop keeps NaN (a NaN anywhere gives NaN) and
 * returns, among equal extremes, the first in its lane order, which only
 * shows for +0 and -0.  The vector loop takes plain maxima over 4
 * accumulators and gives up (returns false, the caller runs the portable
 * loop) when it saw a NaN or when the extreme is a zero.
 *
 * Row sums.  The leaves of the pairwise sum over rows (at most 8 rows) add
 * each column in row order; 32 columns at a time stay in registers.
 *
 * Argmax and argmin.  The first position of the extreme is one answer
 * whatever the order of the search: lanes keep positions, and a NaN again
 * leaves the answer to the portable loop.  Over rows, each column keeps its
 * order; eight rows pass through registers per read of the accumulators.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define RS_HAVE 1
#include <immintrin.h>

#define RS_TARGET __attribute__((target("avx2")))
#define RS_PREFETCH 4096   /* floats: 16 KiB ahead */

/* ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)): the portable leaf's order */
static RS_TARGET inline float rs_hsum(__m256 v) {
    __m256 h = _mm256_hadd_ps(v, v);
    h = _mm256_hadd_ps(h, h);
    return _mm_cvtss_f32(_mm_add_ss(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1)));
}

/* The rest of a leaf after its first `from` elements (from a multiple of 8)
 * accumulated in r: the remaining whole vectors, the lanes' sum, then the
 * last n % 8 elements one by one. */
static RS_TARGET inline float rs_leaf_finish(const float *x, int64_t from, int64_t n, __m256 r) {
    int64_t i = from;
    for (; i + 8 <= n; i += 8)
        r = _mm256_add_ps(r, _mm256_loadu_ps(x + i));
    float s = rs_hsum(r);
    for (; i < n; i++)
        s += x[i];
    return s;
}

/* Whole vectors of all of a group's leaves, side by side. */
static inline int64_t rs_common(int64_t a, int64_t b) { return (a < b ? a : b) & ~(int64_t)7; }

/* Two neighbouring leaves x[0, n0) and x[n0, n0 + n1), each of 8..RK_LEAF. */
static RS_TARGET float rs_leaves2(const float *x, int64_t n0, int64_t n1) {
    const float *y = x + n0;
    __m256 r0 = _mm256_loadu_ps(x), r1 = _mm256_loadu_ps(y);
    int64_t m = rs_common(n0, n1), i;
    for (i = 8; i < m; i += 8) {
        _mm_prefetch((const char *)(x + RS_PREFETCH + 2 * i), _MM_HINT_T0);
        r0 = _mm256_add_ps(r0, _mm256_loadu_ps(x + i));
        r1 = _mm256_add_ps(r1, _mm256_loadu_ps(y + i));
    }
    return rs_leaf_finish(x, i, n0, r0) + rs_leaf_finish(y, i, n1, r1);
}

/* Four neighbouring leaves of lengths n0..n3 (each 8..RK_LEAF): the sum
 * (leaf0 + leaf1) + (leaf2 + leaf3), as the pairwise tree adds them. */
static RS_TARGET float rs_leaves4(const float *x, int64_t n0, int64_t n1, int64_t n2, int64_t n3) {
    const float *x1 = x + n0, *x2 = x1 + n1, *x3 = x2 + n2;
    __m256 r0 = _mm256_loadu_ps(x), r1 = _mm256_loadu_ps(x1), r2 = _mm256_loadu_ps(x2), r3 = _mm256_loadu_ps(x3);
    int64_t m = rs_common(rs_common(n0, n1), rs_common(n2, n3)), i;
    _mm_prefetch((const char *)(x + RS_PREFETCH), _MM_HINT_T0);
    _mm_prefetch((const char *)(x + RS_PREFETCH + 16), _MM_HINT_T0);
    for (i = 8; i < m; i += 8) {
        /* two cache lines per step: the group's 4 * m floats over m / 8 steps */
        _mm_prefetch((const char *)(x + RS_PREFETCH + 4 * i), _MM_HINT_T0);
        _mm_prefetch((const char *)(x + RS_PREFETCH + 4 * i + 16), _MM_HINT_T0);
        r0 = _mm256_add_ps(r0, _mm256_loadu_ps(x + i));
        r1 = _mm256_add_ps(r1, _mm256_loadu_ps(x1 + i));
        r2 = _mm256_add_ps(r2, _mm256_loadu_ps(x2 + i));
        r3 = _mm256_add_ps(r3, _mm256_loadu_ps(x3 + i));
    }
    float s0 = rs_leaf_finish(x, i, n0, r0), s1 = rs_leaf_finish(x1, i, n1, r1);
    float s2 = rs_leaf_finish(x2, i, n2, r2), s3 = rs_leaf_finish(x3, i, n3, r3);
    return (s0 + s1) + (s2 + s3);
}

/* The pairwise sum of reduce_kernels.h's sum_run (same split, same leaves). */
static RS_TARGET float rs_sum_run(const float *x, int64_t n, int64_t leaf) {
    if (n < 8) {
        float s = 0;
        for (int64_t i = 0; i < n; i++)
            s += x[i];
        return s;
    }
    if (n <= leaf)
        return rs_leaf_finish(x, 8, n, _mm256_loadu_ps(x));
    int64_t h = (n / 2) & ~(int64_t)7, n1 = n - h;
    if (h <= leaf && n1 <= leaf)
        return rs_leaves2(x, h, n1);
    if (h > leaf && n1 > leaf) {
        int64_t ha = (h / 2) & ~(int64_t)7, hb = (n1 / 2) & ~(int64_t)7;
        if (h - ha <= leaf && n1 - hb <= leaf)
            return rs_leaves4(x, ha, h - ha, hb, n1 - hb);
    }
    return rs_sum_run(x, h, leaf) + rs_sum_run(x + h, n1, leaf);
}

/* A leaf of the pairwise row sum: acc[0, w) = the sum of nrows <= 8 rows
 * (leading dimension ld), added in row order to 0 as the portable leaf
 * does, but 32 columns at a time in registers: one pass over the rows
 * instead of a read and a write of acc for every two rows. */
static RS_TARGET void rs_sum_rows(const float *x, int64_t nrows, int64_t ld, int64_t w, float *acc) {
    int64_t j = 0;
    for (; j + 32 <= w; j += 32) {
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t r = 0; r < nrows; r++) {
            const float *row = x + r * ld + j;
            a0 = _mm256_add_ps(a0, _mm256_loadu_ps(row));
            a1 = _mm256_add_ps(a1, _mm256_loadu_ps(row + 8));
            a2 = _mm256_add_ps(a2, _mm256_loadu_ps(row + 16));
            a3 = _mm256_add_ps(a3, _mm256_loadu_ps(row + 24));
        }
        _mm256_storeu_ps(acc + j, a0), _mm256_storeu_ps(acc + j + 8, a1);
        _mm256_storeu_ps(acc + j + 16, a2), _mm256_storeu_ps(acc + j + 24, a3);
    }
    for (; j < w; j++) {
        float s = 0;
        for (int64_t r = 0; r < nrows; r++)
            s += x[r * ld + j];
        acc[j] = s;
    }
}

/* The rows kernel of argmax/argmin (reduce_kernels.h's arg_rows): for each
 * column, the (value, position) of its extreme over nrows rows, the first
 * one in row order, a NaN sticking.  Eight rows at a time pass through
 * registers before the accumulators are read and written again. */
static RS_TARGET void rs_arg_rows(const float *x, int64_t nrows, int64_t ld, int64_t w, bool ismax, int64_t base,
                                  float *accv, int64_t *acci) {
    for (int64_t j = 0; j < w; j++) {
        accv[j] = x[j];
        acci[j] = base;
    }
    for (int64_t r0 = 1; r0 < nrows; r0 += 8) {
        int nr = nrows - r0 < 8 ? (int)(nrows - r0) : 8;
        const float *rows = x + r0 * ld;
        __m256i at = _mm256_set1_epi64x(base + r0);
        int64_t j = 0;
        for (; j + 8 <= w; j += 8) {
            __m256 b = _mm256_loadu_ps(accv + j);
            __m256 took = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
            for (int k = 0; k < nr; k++) {
                __m256 v = _mm256_loadu_ps(rows + k * ld + j);
                __m256 better = ismax ? _mm256_cmp_ps(v, b, _CMP_GT_OQ) : _mm256_cmp_ps(v, b, _CMP_LT_OQ);
                __m256 take = _mm256_andnot_ps(_mm256_cmp_ps(b, b, _CMP_UNORD_Q),
                                               _mm256_or_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q), better));
                b = _mm256_blendv_ps(b, v, take);
                took = _mm256_blendv_ps(took, _mm256_castsi256_ps(_mm256_set1_epi32(k)), take);
            }
            _mm256_storeu_ps(accv + j, b);
            /* positions where a row of this group won: base + r0 + k */
            __m256i t = _mm256_castps_si256(took);
            __m256i lo = _mm256_cvtepi32_epi64(_mm256_castsi256_si128(t));
            __m256i hi = _mm256_cvtepi32_epi64(_mm256_extracti128_si256(t, 1));
            __m256i none = _mm256_set1_epi64x(-1);
            _mm256_maskstore_epi64((long long *)(acci + j), _mm256_xor_si256(_mm256_cmpeq_epi64(lo, none), none),
                                   _mm256_add_epi64(lo, at));
            _mm256_maskstore_epi64((long long *)(acci + j + 4), _mm256_xor_si256(_mm256_cmpeq_epi64(hi, none), none),
                                   _mm256_add_epi64(hi, at));
        }
        for (; j < w; j++)
            for (int k = 0; k < nr; k++) {
                float v = rows[k * ld + j], b = accv[j];
                if (b == b && (v != v || (ismax ? v > b : v < b))) {
                    accv[j] = v;
                    acci[j] = base + r0 + k;
                }
            }
    }
}

/* max (ismax) or min of x[0, n) into *out; false when a NaN or a zero
 * extreme needs the portable loop's exact rules. */
static RS_TARGET bool rs_extreme_run(const float *x, int64_t n, bool ismax, float *out) {
    if (n < 32)
        return false;
    __m256 init = _mm256_set1_ps(ismax ? -INFINITY : INFINITY);
    __m256 a0 = init, a1 = init, a2 = init, a3 = init, nan = _mm256_setzero_ps();
    int64_t i;
    for (i = 0; i + 32 <= n; i += 32) {
        __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
        nan = _mm256_or_ps(nan, _mm256_or_ps(_mm256_cmp_ps(v0, v1, _CMP_UNORD_Q), _mm256_cmp_ps(v2, v3, _CMP_UNORD_Q)));
        if (ismax) {
            a0 = _mm256_max_ps(a0, v0), a1 = _mm256_max_ps(a1, v1);
            a2 = _mm256_max_ps(a2, v2), a3 = _mm256_max_ps(a3, v3);
        } else {
            a0 = _mm256_min_ps(a0, v0), a1 = _mm256_min_ps(a1, v1);
            a2 = _mm256_min_ps(a2, v2), a3 = _mm256_min_ps(a3, v3);
        }
    }
    if (_mm256_movemask_ps(nan))
        return false;
    float lanes[8];
    _mm256_storeu_ps(lanes, ismax ? _mm256_max_ps(_mm256_max_ps(a0, a1), _mm256_max_ps(a2, a3))
                                  : _mm256_min_ps(_mm256_min_ps(a0, a1), _mm256_min_ps(a2, a3)));
    float m = lanes[0];
    for (int k = 1; k < 8; k++)
        m = ismax ? (lanes[k] > m ? lanes[k] : m) : (lanes[k] < m ? lanes[k] : m);
    for (; i < n; i++) {
        float v = x[i];
        if (v != v)
            return false;
        m = ismax ? (v > m ? v : m) : (v < m ? v : m);
    }
    if (m == 0)
        return false;
    *out = m;
    return true;
}

/* argmax (ismax) or argmin of x[0, n): the first position of the extreme,
 * into *bi, and its value into *bv; false (the portable loop decides) when
 * there is a NaN, whose first position is the answer.  Two sets of 8 lanes
 * keep, each, the first position of their own extreme (a strict compare);
 * the answer is the smallest position holding the overall extreme. */
static RS_TARGET bool rs_arg_run(const float *x, int64_t n, bool ismax, float *bv, int64_t *bi) {
    if (n < 16 || n > INT32_MAX - 16)
        return false;
    __m256 v0 = _mm256_loadu_ps(x), v1 = _mm256_loadu_ps(x + 8);
    __m256i i0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), i1 = _mm256_add_epi32(i0, _mm256_set1_epi32(8));
    __m256i p0 = i0, p1 = i1, step = _mm256_set1_epi32(16);
    __m256 nan = _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q);
    int64_t i;
    for (i = 16; i + 16 <= n; i += 16) {
        __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
        p0 = _mm256_add_epi32(p0, step), p1 = _mm256_add_epi32(p1, step);
        nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
        __m256 ma = ismax ? _mm256_cmp_ps(a, v0, _CMP_GT_OQ) : _mm256_cmp_ps(a, v0, _CMP_LT_OQ);
        __m256 mb = ismax ? _mm256_cmp_ps(b, v1, _CMP_GT_OQ) : _mm256_cmp_ps(b, v1, _CMP_LT_OQ);
        v0 = _mm256_blendv_ps(v0, a, ma), v1 = _mm256_blendv_ps(v1, b, mb);
        i0 = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(i0), _mm256_castsi256_ps(p0), ma));
        i1 = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(i1), _mm256_castsi256_ps(p1), mb));
    }
    if (_mm256_movemask_ps(nan))
        return false;
    float val[16];
    int32_t pos[16];
    _mm256_storeu_ps(val, v0), _mm256_storeu_ps(val + 8, v1);
    _mm256_storeu_si256((__m256i *)pos, i0), _mm256_storeu_si256((__m256i *)(pos + 8), i1);
    float best = val[0];
    int64_t at = pos[0];
    for (int k = 1; k < 16; k++) {
        bool better = ismax ? val[k] > best : val[k] < best;
        if (better || (val[k] == best && pos[k] < at))
            best = val[k], at = pos[k];
    }
    for (; i < n; i++) {
        float v = x[i];
        if (v != v)
            return false;
        if (ismax ? v > best : v < best)
            best = v, at = i;
    }
    *bv = x[at];
    *bi = at;
    return true;
}
#endif

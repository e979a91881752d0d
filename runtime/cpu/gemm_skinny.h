/*
 * gemm_skinny.h -- float32 products with one short side, without packing
 * (included by blas.c).
 *
 * A recurrent language model multiplies a (20, 200) batch by a (10000, 200)
 * output layer at every step: forward y = x W^T, backward gx = gy W and
 * gW += gy^T x.  OpenBLAS packs the big operand (W, or gW's panels) for
 * every call, and with only 20 rows to share that copy its cost is close to
 * the arithmetic: the three products ran at 31-37 GFLOP/s against 90 for a
 * large square one (1 thread).  These kernels read the big operand in
 * place (where they are used and what they gain: SK_DOT_MIN_N below):
 *   dot:   C[i][j] = dot(A[i,:], B[j,:])       A (M, K), B (N, K), M small
 *   axpy:  C[i][:] = sum_k A[i][k] B[k][:]     A (M, K), B (K, N), M small
 *   outer: C[m][:] = sum_k A[k][m] B[k][:]     A (K, M), B (K, N), K small
 * then C = alpha * sum + beta * C.  Tiles are spelled out register by
 * register (GCC keeps accumulator arrays in memory, see conv_direct.h).
 * Every element is summed in the same order whatever tile or thread computes
 * it (dot: 8 lanes over k then a fixed horizontal sum; axpy and outer:
 * sequential over k), so results do not depend on the thread count.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define SKINNY_HAVE 1
#include <immintrin.h>
#include <math.h>

#define SK_TARGET __attribute__((target("avx2,fma")))

/* The horizontal sum in the order of the tile's hadd tree:
 * ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)). */
static SK_TARGET inline float sk_hsum(__m256 v) {
    __m256 h = _mm256_hadd_ps(v, v);
    h = _mm256_hadd_ps(h, h);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    return _mm_cvtss_f32(s);
}

/* The eight sums of s0..s7, same order as sk_hsum, as one vector. */
static SK_TARGET inline __m256 sk_hsum8(__m256 s0, __m256 s1, __m256 s2, __m256 s3, __m256 s4, __m256 s5,
                                        __m256 s6, __m256 s7) {
    __m256 a = _mm256_hadd_ps(_mm256_hadd_ps(s0, s1), _mm256_hadd_ps(s2, s3));
    __m256 b = _mm256_hadd_ps(_mm256_hadd_ps(s4, s5), _mm256_hadd_ps(s6, s7));
    return _mm256_add_ps(_mm256_permute2f128_ps(a, b, 0x20), _mm256_permute2f128_ps(a, b, 0x31));
}

static inline void sk_store(float *c, float sum, float alpha, float beta) {
    *c = beta == 0.0f ? alpha * sum : alpha * sum + beta * *c;
}

/* C[0..nr)[0..8*nv) = alpha * acc + beta * C for a tile held in registers */
static SK_TARGET inline void sk_store_vec(float *c, __m256 v, float alpha, float beta) {
    /* one explicit FMA: the AVX-512 tiles store the same way, and the
     * compiler cannot contract the two forms differently */
    v = _mm256_mul_ps(_mm256_set1_ps(alpha), v);
    if (beta != 0.0f) v = _mm256_fmadd_ps(_mm256_set1_ps(beta), _mm256_loadu_ps(c), v);
    _mm256_storeu_ps(c, v);
}

/* ---- dot: C[i][j] = dot(A[i,:], B[j,:]) ---------------------------------- */

/* one (i, j) pair: the reference order every tile reproduces */
static SK_TARGET float sk_dot1(const float *a, const float *b, int64_t K) {
    __m256 s = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) s = _mm256_fmadd_ps(_mm256_loadu_ps(a + k), _mm256_loadu_ps(b + k), s);
    float r = sk_hsum(s);
    for (; k < K; k++) r += a[k] * b[k];
    return r;
}

/* Keeps a loaded vector in a register: GCC otherwise folds the load into
 * every FMA that uses it (memory operands), and the loop becomes bound by
 * loads (12 per 8 FMAs instead of 6). */
#define SK_KEEP(v) __asm__("" : "+x"(v))

/* rows i, i+1 of A against rows j..j+3 of B: 8 accumulators; the results
 * of one row of C are 4 neighbours, stored as one 128-bit vector */
static SK_TARGET void sk_dot_tile(const float *A, int64_t lda, const float *B, int64_t ldb, int64_t K, float alpha,
                                  float beta, float *C, int64_t ldc) {
    const float *a0 = A, *a1 = A + lda;
    const float *b0 = B, *b1 = B + ldb, *b2 = B + 2 * ldb, *b3 = B + 3 * ldb;
    __m256 s00 = _mm256_setzero_ps(), s01 = s00, s02 = s00, s03 = s00, s10 = s00, s11 = s00, s12 = s00, s13 = s00;
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 x0 = _mm256_loadu_ps(a0 + k), x1 = _mm256_loadu_ps(a1 + k);
        SK_KEEP(x0);
        SK_KEEP(x1);
        __m256 w = _mm256_loadu_ps(b0 + k);
        s00 = _mm256_fmadd_ps(x0, w, s00), s10 = _mm256_fmadd_ps(x1, w, s10);
        w = _mm256_loadu_ps(b1 + k);
        s01 = _mm256_fmadd_ps(x0, w, s01), s11 = _mm256_fmadd_ps(x1, w, s11);
        w = _mm256_loadu_ps(b2 + k);
        s02 = _mm256_fmadd_ps(x0, w, s02), s12 = _mm256_fmadd_ps(x1, w, s12);
        w = _mm256_loadu_ps(b3 + k);
        s03 = _mm256_fmadd_ps(x0, w, s03), s13 = _mm256_fmadd_ps(x1, w, s13);
    }
    __m256 r = sk_hsum8(s00, s01, s02, s03, s10, s11, s12, s13);
    if (k == K) {
        __m128 va = _mm_set1_ps(alpha), vb = _mm_set1_ps(beta);
        __m128 v0 = _mm_mul_ps(va, _mm256_castps256_ps128(r)), v1 = _mm_mul_ps(va, _mm256_extractf128_ps(r, 1));
        if (beta != 0.0f) {
            v0 = _mm_add_ps(v0, _mm_mul_ps(vb, _mm_loadu_ps(C)));
            v1 = _mm_add_ps(v1, _mm_mul_ps(vb, _mm_loadu_ps(C + ldc)));
        }
        _mm_storeu_ps(C, v0);
        _mm_storeu_ps(C + ldc, v1);
        return;
    }
    float t[8];
    _mm256_storeu_ps(t, r);
    const float *as[2] = {a0, a1}, *bs[4] = {b0, b1, b2, b3};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            float v = t[4 * i + j];
            for (int64_t kk = k; kk < K; kk++) v += as[i][kk] * bs[j][kk];
            sk_store(C + i * ldc + j, v, alpha, beta);
        }
}

/* one row of A against rows j..j+3 of B (a batch-1 layer, or the odd row
 * of a batch): 4 chains, each in sk_dot1's order */
static SK_TARGET void sk_dot_row4(const float *a, const float *B, int64_t ldb, int64_t K, float alpha, float beta,
                                  float *C) {
    const float *b0 = B, *b1 = B + ldb, *b2 = B + 2 * ldb, *b3 = B + 3 * ldb;
    __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
        __m256 x = _mm256_loadu_ps(a + k);
        SK_KEEP(x);
        s0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b0 + k), s0);
        s1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b1 + k), s1);
        s2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b2 + k), s2);
        s3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(b3 + k), s3);
    }
    float r[4] = {sk_hsum(s0), sk_hsum(s1), sk_hsum(s2), sk_hsum(s3)};
    const float *bs[4] = {b0, b1, b2, b3};
    for (int j = 0; j < 4; j++) {
        float v = r[j];
        for (int64_t kk = k; kk < K; kk++) v += a[kk] * bs[j][kk];
        sk_store(C + j, v, alpha, beta);
    }
}

/* columns [j0, j1) of C (j0 a multiple of 4) */
static SK_TARGET void sk_dot_cols(const float *A, int64_t lda, const float *B, int64_t ldb, int64_t M, int64_t K,
                                  int64_t j0, int64_t j1, float alpha, float beta, float *C, int64_t ldc) {
    int64_t i2 = M / 2 * 2, j4 = j0 + (j1 - j0) / 4 * 4;
    for (int64_t j = j0; j < j4; j += 4) {
        /* B streams from L3 (the output layer's W is 8 MB): ask for the
         * rows two blocks ahead while this block's tiles run from L1 */
        for (int64_t r = j + 8; r < j + 12 && r < j1; r++)
            for (int64_t off = 0; off < K; off += 16) __builtin_prefetch(B + r * ldb + off, 0, 3);
        for (int64_t i = 0; i < i2; i += 2)
            sk_dot_tile(A + i * lda, lda, B + j * ldb, ldb, K, alpha, beta, C + i * ldc + j, ldc);
    }
    if (i2 < M)
        for (int64_t j = j0; j < j4; j += 4) sk_dot_row4(A + i2 * lda, B + j * ldb, ldb, K, alpha, beta, C + i2 * ldc + j);
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = j4; j < j1; j++) sk_store(C + i * ldc + j, sk_dot1(A + i * lda, B + j * ldb, K), alpha, beta);
}

/* ---- shared by axpy and outer: 4 rows x 16 or 8 columns ------------------ */

/* acc[r][0..8*NV) += sum over k in [k0, k1) of a_r[k * as] * B[k][0..8*NV),
 * rows r < 4 (rows past nrows repeat the last one and are not stored).
 * S rows (stride lds) hold the running sums; in and out through S. */
#define SK_ROWS_SETUP                                                                                   \
    int64_t o1 = nrows > 1 ? 1 : 0, o2 = nrows > 2 ? 2 : o1, o3 = nrows > 3 ? 3 : o2;                  \
    const float *a0 = A, *a1 = A + o1 * ra, *a2 = A + o2 * ra, *a3 = A + o3 * ra;                       \
    float *r0 = S, *r1 = S + o1 * lds, *r2 = S + o2 * lds, *r3 = S + o3 * lds;

static SK_TARGET void sk_rank_tile2(const float *A, int64_t ra, int64_t ka, const float *B, int64_t ldb, int64_t K,
                                    int nrows, float *S, int64_t lds) {
    SK_ROWS_SETUP
    __m256 s00 = _mm256_loadu_ps(r0), s01 = _mm256_loadu_ps(r0 + 8), s10 = _mm256_loadu_ps(r1);
    __m256 s11 = _mm256_loadu_ps(r1 + 8), s20 = _mm256_loadu_ps(r2), s21 = _mm256_loadu_ps(r2 + 8);
    __m256 s30 = _mm256_loadu_ps(r3), s31 = _mm256_loadu_ps(r3 + 8);
    for (int64_t k = 0; k < K; k++) {
        const float *b = B + k * ldb;
        __m256 w0 = _mm256_loadu_ps(b), w1 = _mm256_loadu_ps(b + 8);
        SK_KEEP(w0);
        SK_KEEP(w1);
        __m256 x = _mm256_broadcast_ss(a0 + k * ka);
        s00 = _mm256_fmadd_ps(x, w0, s00), s01 = _mm256_fmadd_ps(x, w1, s01);
        x = _mm256_broadcast_ss(a1 + k * ka);
        s10 = _mm256_fmadd_ps(x, w0, s10), s11 = _mm256_fmadd_ps(x, w1, s11);
        x = _mm256_broadcast_ss(a2 + k * ka);
        s20 = _mm256_fmadd_ps(x, w0, s20), s21 = _mm256_fmadd_ps(x, w1, s21);
        x = _mm256_broadcast_ss(a3 + k * ka);
        s30 = _mm256_fmadd_ps(x, w0, s30), s31 = _mm256_fmadd_ps(x, w1, s31);
    }
    /* last row first: a repeated row then ends with the real row's value */
    _mm256_storeu_ps(r3, s30), _mm256_storeu_ps(r3 + 8, s31), _mm256_storeu_ps(r2, s20);
    _mm256_storeu_ps(r2 + 8, s21), _mm256_storeu_ps(r1, s10), _mm256_storeu_ps(r1 + 8, s11);
    _mm256_storeu_ps(r0, s00), _mm256_storeu_ps(r0 + 8, s01);
}

static SK_TARGET void sk_rank_tile1(const float *A, int64_t ra, int64_t ka, const float *B, int64_t ldb, int64_t K,
                                    int nrows, float *S, int64_t lds) {
    SK_ROWS_SETUP
    __m256 s0 = _mm256_loadu_ps(r0), s1 = _mm256_loadu_ps(r1), s2 = _mm256_loadu_ps(r2), s3 = _mm256_loadu_ps(r3);
    for (int64_t k = 0; k < K; k++) {
        __m256 w = _mm256_loadu_ps(B + k * ldb);
        SK_KEEP(w);
        s0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a0 + k * ka), w, s0);
        s1 = _mm256_fmadd_ps(_mm256_broadcast_ss(a1 + k * ka), w, s1);
        s2 = _mm256_fmadd_ps(_mm256_broadcast_ss(a2 + k * ka), w, s2);
        s3 = _mm256_fmadd_ps(_mm256_broadcast_ss(a3 + k * ka), w, s3);
    }
    _mm256_storeu_ps(r3, s3), _mm256_storeu_ps(r2, s2), _mm256_storeu_ps(r1, s1), _mm256_storeu_ps(r0, s0);
}

/* S[r][0..w) += sum over k < K of A[r * ra + k * ka] * B[k][0..w) for
 * rows r < nr (at most 4): 16- and 8-column tiles, then the last w % 8
 * columns with k outermost (independent sums, each still in k order). */
static SK_TARGET void sk_rank_rows(const float *A, int64_t ra, int64_t ka, const float *B, int64_t ldb, int64_t K,
                                   int nr, int64_t w, float *S, int64_t lds) {
    int64_t c = 0;
    for (; c + 16 <= w; c += 16) sk_rank_tile2(A, ra, ka, B + c, ldb, K, nr, S + c, lds);
    for (; c + 8 <= w; c += 8) sk_rank_tile1(A, ra, ka, B + c, ldb, K, nr, S + c, lds);
    if (c < w)
        for (int64_t k = 0; k < K; k++)
            for (int r = 0; r < nr; r++) {
                float a = A[r * ra + k * ka];
                for (int64_t cc = c; cc < w; cc++) S[r * lds + cc] = fmaf(a, B[k * ldb + cc], S[r * lds + cc]);
            }
}

/* ---- axpy: C[i][:] = sum_k A[i][k] B[k][:] ------------------------------- */

#define SK_KB 256 /* rows of B per block (a block of 256 x 200 floats stays in L2) */

/* S[i][c..w) += A[i][0..kb) B[0..kb)[c..w) for all M rows (S is M x w):
 * 16-column strips of 4-row tiles, then the last columns */
static SK_TARGET void sk_axpy_strips(const float *A, int64_t lda, const float *Bk, int64_t ldb, int64_t M, int64_t kb,
                                     int64_t c, int64_t w, float *S) {
    for (; c + 16 <= w; c += 16)
        for (int64_t i = 0; i < M; i += 4)
            sk_rank_tile2(A + i * lda, lda, 1, Bk + c, ldb, kb, M - i < 4 ? (int)(M - i) : 4, S + i * w + c, w);
    for (int64_t i = 0; i < M; i += 4)
        sk_rank_rows(A + i * lda, lda, 1, Bk + c, ldb, kb, M - i < 4 ? (int)(M - i) : 4, w - c, S + i * w + c, w);
}

/* columns [c0, c1) of C; S: M x (c1 - c0) scratch */
static SK_TARGET void sk_axpy_cols(const float *A, int64_t lda, const float *B, int64_t ldb, int64_t M, int64_t K,
                                   int64_t c0, int64_t c1, float alpha, float beta, float *C, int64_t ldc, float *S) {
    int64_t w = c1 - c0;
    memset(S, 0, (size_t)(M * w) * sizeof *S);
    for (int64_t k0 = 0; k0 < K; k0 += SK_KB) {
        int64_t kb = k0 + SK_KB < K ? SK_KB : K - k0;
        /* column strips outside, rows inside: a strip of the block (kb
         * rows x 16 columns) stays in L1 for all the row tiles */
        sk_axpy_strips(A + k0, lda, B + k0 * ldb + c0, ldb, M, kb, 0, w, S);
    }
    for (int64_t i = 0; i < M; i++) {
        int64_t c = 0;
        for (; c + 8 <= w; c += 8) sk_store_vec(C + i * ldc + c0 + c, _mm256_loadu_ps(S + i * w + c), alpha, beta);
        for (; c < w; c++) sk_store(C + i * ldc + c0 + c, S[i * w + c], alpha, beta);
    }
}

/* ---- outer: C[m][:] = sum_k A[k][m] B[k][:] ------------------------------- */

/* rows m..m+3 (nr of them) x 16 columns of C: the K (<= 32) rank-one
 * updates in registers from zero, then C = alpha * acc + beta * C */
static SK_TARGET void sk_outer_tile2(const float *A, int64_t lda, const float *B, int64_t ldb, int64_t K, int nr,
                                     float alpha, float beta, float *C, int64_t ldc) {
    int64_t o1 = nr > 1 ? 1 : 0, o2 = nr > 2 ? 2 : o1, o3 = nr > 3 ? 3 : o2;
    __m256 s00 = _mm256_setzero_ps(), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00, s30 = s00, s31 = s00;
    for (int64_t k = 0; k < K; k++) {
        const float *b = B + k * ldb, *a = A + k * lda;
        __m256 w0 = _mm256_loadu_ps(b), w1 = _mm256_loadu_ps(b + 8);
        SK_KEEP(w0);
        SK_KEEP(w1);
        __m256 x = _mm256_broadcast_ss(a);
        s00 = _mm256_fmadd_ps(x, w0, s00), s01 = _mm256_fmadd_ps(x, w1, s01);
        x = _mm256_broadcast_ss(a + o1);
        s10 = _mm256_fmadd_ps(x, w0, s10), s11 = _mm256_fmadd_ps(x, w1, s11);
        x = _mm256_broadcast_ss(a + o2);
        s20 = _mm256_fmadd_ps(x, w0, s20), s21 = _mm256_fmadd_ps(x, w1, s21);
        x = _mm256_broadcast_ss(a + o3);
        s30 = _mm256_fmadd_ps(x, w0, s30), s31 = _mm256_fmadd_ps(x, w1, s31);
    }
    sk_store_vec(C, s00, alpha, beta), sk_store_vec(C + 8, s01, alpha, beta);
    if (nr > 1) sk_store_vec(C + ldc, s10, alpha, beta), sk_store_vec(C + ldc + 8, s11, alpha, beta);
    if (nr > 2) sk_store_vec(C + 2 * ldc, s20, alpha, beta), sk_store_vec(C + 2 * ldc + 8, s21, alpha, beta);
    if (nr > 3) sk_store_vec(C + 3 * ldc, s30, alpha, beta), sk_store_vec(C + 3 * ldc + 8, s31, alpha, beta);
}

/* rows m..m+nr-1 (nr <= 4), columns [c0, N) of C (c0 a multiple of 16);
 * S: 4 x (N - c0) scratch for the columns past the last multiple of 16 */
static SK_TARGET void sk_outer_block(const float *A, int64_t lda, const float *B, int64_t ldb, int64_t N, int64_t K,
                                     int64_t m, int nr, int64_t c0, float alpha, float beta, float *C, int64_t ldc,
                                     float *S) {
    int64_t n16 = c0 + (N - c0) / 16 * 16, w = N - n16;
    for (int64_t c = c0; c < n16; c += 16) sk_outer_tile2(A + m, lda, B + c, ldb, K, nr, alpha, beta, C + m * ldc + c, ldc);
    if (w > 0) {
        memset(S, 0, (size_t)(4 * w) * sizeof *S);
        sk_rank_rows(A + m, 1, lda, B + n16, ldb, K, nr, w, S, w);
        for (int r = 0; r < nr; r++)
            for (int64_t j = 0; j < w; j++) sk_store(C + (m + r) * ldc + n16 + j, S[r * w + j], alpha, beta);
    }
}

/* rows [m0, m1) of C, four at a time; S: 4 x N scratch for the columns
 * past the last multiple of 16 */
static SK_TARGET void sk_outer_rows(const float *A, int64_t lda, const float *B, int64_t ldb, int64_t N, int64_t K,
                                    int64_t m0, int64_t m1, float alpha, float beta, float *C, int64_t ldc, float *S) {
    for (int64_t m = m0; m < m1; m += 4) {
        int nr = m1 - m < 4 ? (int)(m1 - m) : 4;
        /* C is read and written once (gW: 8 MB from L3): fetch the next
         * four rows for writing while these are computed */
        for (int64_t r = m + 4; r < m + 8 && r < m1; r++)
            for (int64_t j = 0; j < N; j += 16) __builtin_prefetch(C + r * ldc + j, 1, 3);
        sk_outer_block(A, lda, B, ldb, N, K, m, nr, 0, alpha, beta, C, ldc, S);
    }
}

#include "gemm_skinny512.h"

/* Where these kernels beat OpenBLAS (1 thread, interleaved A/B on the
 * 2-core Zen 3 VM): with a big operand of thousands of rows (the output
 * layer's 10000 x 200) by 5-25 %; with an LSTM's 800 x 200 weights OpenBLAS
 * is as fast or faster (its packed copy stays in L2), so those stay there. */
#define SK_DOT_MIN_N 2048   /* rows of B in x W^T */
#define SK_AXPY_MIN_K 2048  /* rows of B in gy W */
#define SK_OUTER_MIN_M 4096 /* rows of C in gy^T x */

/* Runs the product here when it has one of the three skinny forms and is
 * large enough to matter; returns false to leave it to BLAS. */
static bool gemm_skinny(CBLAS_TRANSPOSE ta, int64_t lda, const float *A, CBLAS_TRANSPOSE tb, int64_t ldb,
                        const float *B, int64_t M, int64_t N, int64_t K, float alpha, float beta, float *C,
                        int64_t ldc) {
    if (M * N * K < ((int64_t)1 << 18) || !ch_cpu_avx2_fma()) return false;
#ifdef _OPENMP
    int threads = omp_in_parallel() ? 1 : ch_threads();
#else
    int threads = 1;
#endif
    int par = threads > 1 && M * N * K >= GEMM_PAR_MIN;
    bool wide = sk_avx512();
    if (ta == CblasNoTrans && tb == CblasTrans && M <= 32 && N >= SK_DOT_MIN_N && K >= 32) {
        if (par) {
            int64_t parts = threads;
#pragma omp parallel for schedule(static) num_threads(threads)
            for (int64_t q = 0; q < parts; q++) {
                int64_t j0 = N * q / parts / 4 * 4, j1 = q + 1 == parts ? N : N * (q + 1) / parts / 4 * 4;
                if (j1 > j0) sk_dot_cols(A, lda, B, ldb, M, K, j0, j1, alpha, beta, C, ldc);
            }
        } else {
            sk_dot_cols(A, lda, B, ldb, M, K, 0, N, alpha, beta, C, ldc); /* one part: every column */
        }
        return true;
    }
    if (ta == CblasNoTrans && tb == CblasNoTrans && M <= 32 && N >= 16 && K >= SK_AXPY_MIN_K) {
        int64_t parts = par && N >= 32 ? threads : 1;
        float *S = malloc((size_t)(M * N) * sizeof *S);
        if (!S) return false;
        if (parts > 1) {
#pragma omp parallel for schedule(static) num_threads(threads)
            for (int64_t q = 0; q < parts; q++) {
                int64_t c0 = N * q / parts / 16 * 16, c1 = q + 1 == parts ? N : N * (q + 1) / parts / 16 * 16;
                if (c1 > c0) (wide ? sk_axpy_cols512 : sk_axpy_cols)(A, lda, B, ldb, M, K, c0, c1, alpha, beta, C, ldc, S + M * c0);
            }
        } else {
            (wide ? sk_axpy_cols512 : sk_axpy_cols)(A, lda, B, ldb, M, K, 0, N, alpha, beta, C, ldc, S); /* one part */
        }
        free(S);
        return true;
    }
    if (ta == CblasTrans && tb == CblasNoTrans && K <= 32 && M >= SK_OUTER_MIN_M && N >= 16) {
        int64_t parts = par ? threads : 1;
        float *S = malloc((size_t)(4 * N * parts) * sizeof *S);
        if (!S) return false;
        if (par) {
#pragma omp parallel for schedule(static) num_threads(threads)
            for (int64_t q = 0; q < parts; q++) {
                int64_t m0 = M * q / parts / 4 * 4, m1 = q + 1 == parts ? M : M * (q + 1) / parts / 4 * 4;
                if (m1 > m0) (wide ? sk_outer_rows512 : sk_outer_rows)(A, lda, B, ldb, N, K, m0, m1, alpha, beta, C, ldc, S + 4 * N * q);
            }
        } else {
            (wide ? sk_outer_rows512 : sk_outer_rows)(A, lda, B, ldb, N, K, 0, M, alpha, beta, C, ldc, S); /* one part */
        }
        free(S);
        return true;
    }
    return false;
}
#endif

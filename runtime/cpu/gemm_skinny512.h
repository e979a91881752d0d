/*
 * gemm_skinny512.h -- AVX-512 tiles of the skinny float32 products
 * (included by gemm_skinny.h, after the AVX2 tiles it falls back on).
 *
 * On a CPU with AVX-512 (the Zen 5 bench machine) a 512-bit FMA does twice
 * the work of the AVX2 tiles' and 32 registers hold tiles twice as large,
 * so each load of the big operand (the output layer's W or gW, streaming
 * from L3) feeds twice the multiply-adds.  The tiles cover the bulk; the
 * remainders (rows past a multiple of the tile height, columns past a
 * multiple of 32) run the AVX2 tiles above.
 *
 * Summation order: every element is summed sequentially over k with one
 * FMA per term and stored with the same rounding as the AVX2 tiles, so the
 * results are the same bits whichever tile or thread computes an element.
 *
 * Only the rank updates (axpy gy W, outer gW += gy^T x) are here: they
 * measured 1.5-1.9x faster (1 thread, (20, 10000) x (10000, 200)).  A
 * 4 x 4 dot tile for x W^T, with 512-bit and with 256-bit vectors, was no
 * faster than the AVX2 2 x 4 tile (the horizontal sums eat the gain), so
 * that product stays there.
 */

#define SK_TARGET512 __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma")))

/* The CPU runs AVX-512 (F, VL, DQ) and the OS saves its registers. */
static bool sk_avx512(void) {
    static int ok = -1;
    if (ok < 0) {
        __builtin_cpu_init();
        ok = ch_cpu_avx512f() && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512dq") && ch_cpu_avx2_fma();
    }
    return ok;
}

#define SK_KEEP512(v) __asm__("" : "+v"(v))

/* C[0..16) = alpha * v + beta * C, rounded as sk_store_vec */
static SK_TARGET512 inline void sk_store16(float *c, __m512 v, float alpha, float beta) {
    v = _mm512_mul_ps(_mm512_set1_ps(alpha), v);
    if (beta != 0.0f) v = _mm512_fmadd_ps(_mm512_set1_ps(beta), _mm512_loadu_ps(c), v);
    _mm512_storeu_ps(c, v);
}

/* ---- rank updates: 8 rows x 32 columns, 16 accumulators ----------------- */

/* S[r][0..32) += sum over k < K of a_r[k * ka] * B[k][0..32) for rows r <
 * 8 (a_r = A + r * ra; rows past nrows repeat the last one, which is
 * stored last) */
static SK_TARGET512 void sk_rank_tile512(const float *A, int64_t ra, int64_t ka, const float *B, int64_t ldb,
                                         int64_t K, int nrows, float *S, int64_t lds) {
    int64_t o[8];
    for (int r = 0; r < 8; r++) o[r] = r < nrows ? r : nrows - 1;
    const float *a0 = A + o[0] * ra, *a1 = A + o[1] * ra, *a2 = A + o[2] * ra, *a3 = A + o[3] * ra;
    const float *a4 = A + o[4] * ra, *a5 = A + o[5] * ra, *a6 = A + o[6] * ra, *a7 = A + o[7] * ra;
#define SK_ROW(r) float *q##r = S + o[r] * lds
    SK_ROW(0); SK_ROW(1); SK_ROW(2); SK_ROW(3); SK_ROW(4); SK_ROW(5); SK_ROW(6); SK_ROW(7);
#undef SK_ROW
    __m512 s00 = _mm512_loadu_ps(q0), s01 = _mm512_loadu_ps(q0 + 16), s10 = _mm512_loadu_ps(q1);
    __m512 s11 = _mm512_loadu_ps(q1 + 16), s20 = _mm512_loadu_ps(q2), s21 = _mm512_loadu_ps(q2 + 16);
    __m512 s30 = _mm512_loadu_ps(q3), s31 = _mm512_loadu_ps(q3 + 16), s40 = _mm512_loadu_ps(q4);
    __m512 s41 = _mm512_loadu_ps(q4 + 16), s50 = _mm512_loadu_ps(q5), s51 = _mm512_loadu_ps(q5 + 16);
    __m512 s60 = _mm512_loadu_ps(q6), s61 = _mm512_loadu_ps(q6 + 16), s70 = _mm512_loadu_ps(q7);
    __m512 s71 = _mm512_loadu_ps(q7 + 16);
    for (int64_t k = 0; k < K; k++) {
        const float *b = B + k * ldb;
        __m512 w0 = _mm512_loadu_ps(b), w1 = _mm512_loadu_ps(b + 16);
        SK_KEEP512(w0);
        SK_KEEP512(w1);
        int64_t kk = k * ka;
        __m512 x = _mm512_set1_ps(a0[kk]);
        s00 = _mm512_fmadd_ps(x, w0, s00), s01 = _mm512_fmadd_ps(x, w1, s01);
        x = _mm512_set1_ps(a1[kk]);
        s10 = _mm512_fmadd_ps(x, w0, s10), s11 = _mm512_fmadd_ps(x, w1, s11);
        x = _mm512_set1_ps(a2[kk]);
        s20 = _mm512_fmadd_ps(x, w0, s20), s21 = _mm512_fmadd_ps(x, w1, s21);
        x = _mm512_set1_ps(a3[kk]);
        s30 = _mm512_fmadd_ps(x, w0, s30), s31 = _mm512_fmadd_ps(x, w1, s31);
        x = _mm512_set1_ps(a4[kk]);
        s40 = _mm512_fmadd_ps(x, w0, s40), s41 = _mm512_fmadd_ps(x, w1, s41);
        x = _mm512_set1_ps(a5[kk]);
        s50 = _mm512_fmadd_ps(x, w0, s50), s51 = _mm512_fmadd_ps(x, w1, s51);
        x = _mm512_set1_ps(a6[kk]);
        s60 = _mm512_fmadd_ps(x, w0, s60), s61 = _mm512_fmadd_ps(x, w1, s61);
        x = _mm512_set1_ps(a7[kk]);
        s70 = _mm512_fmadd_ps(x, w0, s70), s71 = _mm512_fmadd_ps(x, w1, s71);
    }
    /* last row first: a repeated row then ends with the real row's value */
    _mm512_storeu_ps(q7, s70), _mm512_storeu_ps(q7 + 16, s71), _mm512_storeu_ps(q6, s60);
    _mm512_storeu_ps(q6 + 16, s61), _mm512_storeu_ps(q5, s50), _mm512_storeu_ps(q5 + 16, s51);
    _mm512_storeu_ps(q4, s40), _mm512_storeu_ps(q4 + 16, s41), _mm512_storeu_ps(q3, s30);
    _mm512_storeu_ps(q3 + 16, s31), _mm512_storeu_ps(q2, s20), _mm512_storeu_ps(q2 + 16, s21);
    _mm512_storeu_ps(q1, s10), _mm512_storeu_ps(q1 + 16, s11), _mm512_storeu_ps(q0, s00);
    _mm512_storeu_ps(q0 + 16, s01);
}

/* axpy (as sk_axpy_cols): 32-column strips of 8-row tiles, the rest of the
 * columns by the AVX2 tiles; every element summed in k order into S */
static SK_TARGET512 void sk_axpy_cols512(const float *A, int64_t lda, const float *B, int64_t ldb, int64_t M,
                                         int64_t K, int64_t c0, int64_t c1, float alpha, float beta, float *C,
                                         int64_t ldc, float *S) {
    int64_t w = c1 - c0, w32 = w / 32 * 32;
    memset(S, 0, (size_t)(M * w) * sizeof *S);
    for (int64_t k0 = 0; k0 < K; k0 += SK_KB) {
        int64_t kb = k0 + SK_KB < K ? SK_KB : K - k0;
        const float *Bk = B + k0 * ldb + c0;
        for (int64_t c = 0; c < w32; c += 32)
            for (int64_t i = 0; i < M; i += 8)
                sk_rank_tile512(A + i * lda + k0, lda, 1, Bk + c, ldb, kb, M - i < 8 ? (int)(M - i) : 8,
                                S + i * w + c, w);
        sk_axpy_strips(A + k0, lda, Bk, ldb, M, kb, w32, w, S);
    }
    for (int64_t i = 0; i < M; i++) {
        int64_t c = 0;
        for (; c + 16 <= w; c += 16) sk_store16(C + i * ldc + c0 + c, _mm512_loadu_ps(S + i * w + c), alpha, beta);
        for (; c < w; c++) sk_store(C + i * ldc + c0 + c, S[i * w + c], alpha, beta);
    }
}

/* outer (as sk_outer_rows): rows in eights, 32-column tiles from zero in
 * registers, then C = alpha * acc + beta * C; the remaining columns and
 * rows by the AVX2 code.  T: 8 x 32 scratch. */
static SK_TARGET512 void sk_outer_rows512(const float *A, int64_t lda, const float *B, int64_t ldb, int64_t N,
                                          int64_t K, int64_t m0, int64_t m1, float alpha, float beta, float *C,
                                          int64_t ldc, float *S) {
    int64_t n32 = N / 32 * 32;
    float T[8 * 32];
    int64_t m = m0;
    for (; m + 8 <= m1; m += 8) {
        for (int64_t r = m + 8; r < m + 16 && r < m1; r++)
            for (int64_t j = 0; j < N; j += 16) __builtin_prefetch(C + r * ldc + j, 1, 3);
        for (int64_t c = 0; c < n32; c += 32) {
            memset(T, 0, sizeof T);
            sk_rank_tile512(A + m, 1, lda, B + c, ldb, K, 8, T, 32);
            for (int r = 0; r < 8; r++) {
                float *cr = C + (m + r) * ldc + c;
                sk_store16(cr, _mm512_loadu_ps(T + r * 32), alpha, beta);
                sk_store16(cr + 16, _mm512_loadu_ps(T + r * 32 + 16), alpha, beta);
            }
        }
        if (n32 < N) {
            sk_outer_block(A, lda, B, ldb, N, K, m, 4, n32, alpha, beta, C, ldc, S);
            sk_outer_block(A, lda, B, ldb, N, K, m + 4, 4, n32, alpha, beta, C, ldc, S);
        }
    }
    if (m < m1) sk_outer_rows(A, lda, B, ldb, N, K, m, m1, alpha, beta, C, ldc, S);
}

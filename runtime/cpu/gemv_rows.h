/*
 * gemv_rows.h -- float32 y = alpha W x + beta y with W read row by row
 * (included by blas.c).
 *
 * A Linear layer at batch 1 is this product with W its (out, in) weight:
 * every y[j] is the dot product of row j of W with x.  The call is bound by
 * reading W (7.2 MB for the bench's 784-1000-1000-10 MLP, from L3), so what
 * counts is streaming W at the cache's rate.  OpenBLAS's sgemv (its Haswell
 * kernel, 8 lanes) read the bench MLP's three layers in 85 us on one core of
 * the Zen 4 VM; this kernel, 16 lanes over eight rows at a time with x loaded
 * once per eight rows, in 75-77 us (96 GB/s, best of 2000; bench/README.md,
 * session 8).  Rows are handed to the threads in blocks of 64 in one OpenMP
 * region (dynamic schedule: session 12).
 *
 * Every y[j] is summed in one order whatever thread computes it (16 lanes
 * over k, the tail masked, then _mm512_reduce_add_ps), so results do not
 * depend on the thread count.  CPUs without AVX-512 keep OpenBLAS's sgemv.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define GEMV_ROWS_HAVE 1
#include <immintrin.h>

#define GV_TARGET __attribute__((target("avx512f,fma")))

/* Products below this many multiply-adds stay on one thread (a fork/join
 * costs about what reading 128 KB of W does). */
#define GEMV_PAR_MIN ((int64_t)1 << 16)

/* Rows per block of the parallel split: a multiple of the 8-row tile, so
 * every row is computed by the same tile as on one thread. */
#define GEMV_BLOCK 64

static inline void gv_store(float *y, float dot, float alpha, float beta) {
    *y = beta == 0.0f ? alpha * dot : alpha * dot + beta * *y;
}

/* y[j0..j1) from rows j0..j1 of W (leading dimension ldw) and x (K floats) */
static GV_TARGET void gemv_rows_range(const float *W, int64_t ldw, const float *x, int64_t K, float alpha,
                                      float beta, float *y, int64_t j0, int64_t j1) {
    const int64_t Kv = K & ~(int64_t)15;
    const __mmask16 tail = (__mmask16)((1u << (K & 15)) - 1);
    int64_t j = j0;
    for (; j + 8 <= j1; j += 8) {
        const float *w0 = W + j * ldw, *w1 = w0 + ldw, *w2 = w1 + ldw, *w3 = w2 + ldw;
        const float *w4 = w3 + ldw, *w5 = w4 + ldw, *w6 = w5 + ldw, *w7 = w6 + ldw;
        __m512 s0 = _mm512_setzero_ps(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
        int64_t k = 0;
        for (; k < Kv; k += 16) {
            __m512 xv = _mm512_loadu_ps(x + k);
            s0 = _mm512_fmadd_ps(_mm512_loadu_ps(w0 + k), xv, s0);
            s1 = _mm512_fmadd_ps(_mm512_loadu_ps(w1 + k), xv, s1);
            s2 = _mm512_fmadd_ps(_mm512_loadu_ps(w2 + k), xv, s2);
            s3 = _mm512_fmadd_ps(_mm512_loadu_ps(w3 + k), xv, s3);
            s4 = _mm512_fmadd_ps(_mm512_loadu_ps(w4 + k), xv, s4);
            s5 = _mm512_fmadd_ps(_mm512_loadu_ps(w5 + k), xv, s5);
            s6 = _mm512_fmadd_ps(_mm512_loadu_ps(w6 + k), xv, s6);
            s7 = _mm512_fmadd_ps(_mm512_loadu_ps(w7 + k), xv, s7);
        }
        if (tail) {
            __m512 xv = _mm512_maskz_loadu_ps(tail, x + k);
            s0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w0 + k), xv, s0);
            s1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w1 + k), xv, s1);
            s2 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w2 + k), xv, s2);
            s3 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w3 + k), xv, s3);
            s4 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w4 + k), xv, s4);
            s5 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w5 + k), xv, s5);
            s6 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w6 + k), xv, s6);
            s7 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w7 + k), xv, s7);
        }
        gv_store(y + j, _mm512_reduce_add_ps(s0), alpha, beta);
        gv_store(y + j + 1, _mm512_reduce_add_ps(s1), alpha, beta);
        gv_store(y + j + 2, _mm512_reduce_add_ps(s2), alpha, beta);
        gv_store(y + j + 3, _mm512_reduce_add_ps(s3), alpha, beta);
        gv_store(y + j + 4, _mm512_reduce_add_ps(s4), alpha, beta);
        gv_store(y + j + 5, _mm512_reduce_add_ps(s5), alpha, beta);
        gv_store(y + j + 6, _mm512_reduce_add_ps(s6), alpha, beta);
        gv_store(y + j + 7, _mm512_reduce_add_ps(s7), alpha, beta);
    }
    /* the last rows one at a time, in the same order as the tile above */
    for (; j < j1; j++) {
        const float *w = W + j * ldw;
        __m512 s = _mm512_setzero_ps();
        int64_t k = 0;
        for (; k < Kv; k += 16) s = _mm512_fmadd_ps(_mm512_loadu_ps(w + k), _mm512_loadu_ps(x + k), s);
        if (tail) s = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(tail, w + k), _mm512_maskz_loadu_ps(tail, x + k), s);
        gv_store(y + j, _mm512_reduce_add_ps(s), alpha, beta);
    }
}

/* y(N) = alpha W(N x K, ldw) x(K) + beta y, x and y contiguous.  Returns
 * false (nothing done) where the CPU lacks AVX-512: the caller uses BLAS. */
static bool gemv_rows(const float *W, int64_t ldw, const float *x, int64_t N, int64_t K, float alpha, float beta,
                      float *y) {
    if (!ch_cpu_avx512f()) return false;
#ifdef _OPENMP
    int threads = omp_in_parallel() ? 1 : ch_threads();
#else
    int threads = 1;
#endif
    int64_t pieces = N / 64;   /* at least 64 rows a thread */
    if (pieces > threads) pieces = threads;
    if (pieces < 2 || N * K < GEMV_PAR_MIN) {
        gemv_rows_range(W, ldw, x, K, alpha, beta, y, 0, N);
        return true;
    }
#ifdef _OPENMP
    /* Blocks of GEMV_BLOCK rows handed out as threads come free, not a
     * fixed half each: a thread that starts late (a worker woken from its
     * futex, or sharing its core with another process) takes fewer blocks
     * instead of holding the region's end back. */
    int64_t blocks = (N + GEMV_BLOCK - 1) / GEMV_BLOCK;
#pragma omp parallel for schedule(dynamic, 1) num_threads((int)pieces)
    for (int64_t q = 0; q < blocks; q++) {
        int64_t lo = q * GEMV_BLOCK, hi = lo + GEMV_BLOCK < N ? lo + GEMV_BLOCK : N;
        gemv_rows_range(W, ldw, x, K, alpha, beta, y, lo, hi);
    }
#endif
    return true;
}
#endif

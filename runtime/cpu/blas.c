/* blas.c -- the CPU's matrix-product kernels (matmul, gemm); their front
 * doors, and dot, tensordot, outer, trace and linear composed from them,
 * are in runtime/ops/blas.c.
 *
 * float32 products run on our own AVX-512 kernel where the CPU has it
 * (cpu/sgemm512.c), else, as float64, on OpenBLAS.  Operands are described by their logical
 * (rows, cols, row stride, col stride) after the optional transposition, and
 * handed to BLAS as they lie in memory whenever one of the two BLAS layouts
 * (row-major, or row-major transposed) fits: transposed views cost no copy.
 * One-row or one-column products go to gemv, which is several times faster
 * than gemm there (batch-1 inference).  Other dtypes take a plain loop in
 * int64 (integers, bool) or go through float32 (float16).
 */
#include "../core/internal.h"
#include "../core/kernels.h"
#include "gemm.h"

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>

/* The BLAS line of chainer.print_runtime_info(): OpenBLAS's build and
 * threading, and whether float32 products run on our own kernel. */
const char *ch_blas_info(void) {
    static char buf[256];
    const char *par = "sequential";
    switch (openblas_get_parallel()) {
    case 1: par = "pthreads"; break;
    case 2: par = "OpenMP"; break;
    }
    snprintf(buf, sizeof buf, "%s (%s)%s", openblas_get_config(), par,
             ch_cpu_sgemm512_ok() ? "; float32 products on chainlua's AVX-512 kernel" : "");
    return buf;
}

/* One operand seen as a batch of matrices over the output's batch axes. */
typedef struct mat_desc {
    const char *base;
    int64_t R, C;                   /* logical rows, cols (after transposition) */
    int64_t rs, cs;                 /* logical strides */
    int64_t bstride[CH_MAX_DIMS];   /* strides over the output batch axes (0: broadcast) */
    CBLAS_TRANSPOSE trans;          /* how BLAS sees the memory */
    int64_t ld;
} mat_desc;

/* x itself (retained, any layout) when it already has dtype dt, else a
 * contiguous cast copy: BLAS takes strided operands as they are. */
static ch_status ch_contiguous_as_if(const ch_tensor *x, ch_dtype dt, ch_tensor **out) {
    if (x->dt == (int)dt) {
        ch_tensor_retain((ch_tensor *)x);
        *out = (ch_tensor *)x;
        return CH_OK;
    }
    return ch_astype(x, dt, out);
}

/* Picks the BLAS layout for a (R x C) matrix with strides (rs, cs).
 * Returns false when neither layout fits (then the caller copies). */
static bool blas_layout(mat_desc *m) {
    int64_t rs = m->rs, cs = m->cs;
    /* strides of size-1 axes are meaningless: normalise them */
    if (m->C == 1)
        cs = 1;
    if (m->R == 1)
        rs = (cs == 1) ? (m->C > 1 ? m->C : 1) : 1;
    if (cs == 1 && rs >= (m->C > 1 ? m->C : 1)) {
        m->trans = CblasNoTrans;
        m->ld = rs;
        m->rs = rs;
        m->cs = 1;
        return true;
    }
    if (rs == 1 && cs >= (m->R > 1 ? m->R : 1)) {
        m->trans = CblasTrans;
        m->ld = cs;
        m->rs = 1;
        m->cs = cs;
        return true;
    }
    return false;
}

/* Results of at least this many elements are cleared by memset (see mm_kernel). */
#define ZERO_OURSELVES 4096

/* Products of at most this many multiply-adds skip BLAS. */
#define TINY_PRODUCT 512
#define TINY_MM(T)                                                                          \
    do {                                                                                    \
        const T *a_ = (const T *)A, *b_ = (const T *)B;                                     \
        int64_t ai = ta == CblasNoTrans ? lda : 1, ak = ta == CblasNoTrans ? 1 : lda;       \
        int64_t bk = tb == CblasNoTrans ? ldb : 1, bj = tb == CblasNoTrans ? 1 : ldb;       \
        for (int64_t i = 0; i < M; i++)                                                     \
            for (int64_t j = 0; j < N; j++) {                                               \
                T acc = 0;                                                                  \
                for (int64_t k = 0; k < K; k++) acc += a_[i * ai + k * ak] * b_[k * bk + j * bj]; \
                T *c_ = (T *)Cp + i * ldc + j;                                              \
                *c_ = beta == 0.0 ? (T)(alpha * acc) : (T)(alpha * acc + beta * *c_);       \
            }                                                                               \
    } while (0)

/* One single-threaded BLAS gemm on the block C[i0:i0+m, j0:j0+n]. */
static void gemm_block(bool f32, CBLAS_TRANSPOSE ta, int64_t lda, const void *A, CBLAS_TRANSPOSE tb, int64_t ldb,
                       const void *B, int64_t i0, int64_t m, int64_t j0, int64_t n, int64_t K, double alpha,
                       double beta, void *Cp, int64_t ldc) {
    size_t z = f32 ? 4 : 8;
    const void *a = (const char *)A + (size_t)(ta == CblasNoTrans ? i0 * lda : i0) * z;
    const void *b = (const char *)B + (size_t)(tb == CblasNoTrans ? j0 : j0 * ldb) * z;
    void *c = (char *)Cp + (size_t)(i0 * ldc + j0) * z;
    if (f32 && ch_cpu_sgemm512(ta == CblasTrans, tb == CblasTrans, m, n, K, (float)alpha, (const float *)a, lda,
                               (const float *)b, ldb, (float)beta, (float *)c, ldc))
        return;
    if (f32)
        cblas_sgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)K, (float)alpha, a, (blasint)lda, b,
                    (blasint)ldb, (float)beta, c, (blasint)ldc);
    else
        cblas_dgemm(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)K, alpha, a, (blasint)lda, b,
                    (blasint)ldb, beta, c, (blasint)ldc);
}

/* Row split points of C are multiples of GEMM_ALIGN (2^4 * 3: a multiple of
 * the register-tile heights of the BLAS kernels, 4, 6, 8, 12, 16, 24). */
#define GEMM_ALIGN 48
/* Products below this many multiply-adds stay on one thread. */
#define GEMM_PAR_MIN ((int64_t)1 << 21)
/* Short products (fewer rows than COL_SPLIT_ROWS: a batch against a layer's
 * weights) are cut into column pieces instead, COL_SPLIT_COLS columns or
 * more each, at multiples of COL_ALIGN. */
#define COL_SPLIT_ROWS 192
#define COL_SPLIT_COLS 384
#define COL_ALIGN 64

/* Clears C[i0:i0+m, j0:j0+n] (for a beta = 0 product run with beta = 1). */
static void clear_block(bool f32, void *Cp, int64_t ldc, int64_t i0, int64_t m, int64_t j0, int64_t n) {
    size_t z = f32 ? 4 : 8;
    char *c = (char *)Cp + (size_t)(i0 * ldc + j0) * z;
    if (n == ldc)
        memset(c, 0, (size_t)(m * n) * z);
    else
        for (int64_t i = 0; i < m; i++) memset(c + (size_t)(i * ldc) * z, 0, (size_t)n * z);
}

/* One block of a product cut into pieces: piece q of `pieces`, by rows or by
 * columns; cleared first when `clear` (each thread clears the part it
 * computes, so the clearing runs in parallel and leaves the block in that
 * thread's cache). */
static void gemm_piece(bool f32, CBLAS_TRANSPOSE ta, int64_t lda, const void *A, CBLAS_TRANSPOSE tb, int64_t ldb,
                       const void *B, int64_t M, int64_t N, int64_t K, double alpha, double beta, bool clear,
                       void *Cp, int64_t ldc, bool by_cols, int64_t pieces, int64_t q) {
    int64_t len = by_cols ? N : M, align = by_cols ? COL_ALIGN : GEMM_ALIGN;
    /* cut points at the multiple of align nearest to an even share: N = 1000
     * in two column pieces is 512 + 488, not 448 + 552 (a thread idle for
     * a fifth of the product) */
    int64_t lo = (len * q / pieces + align / 2) / align * align;
    int64_t hi = q + 1 == pieces ? len : (len * (q + 1) / pieces + align / 2) / align * align;
    if (hi > len) hi = len;
    if (hi <= lo) return;
    int64_t i0 = by_cols ? 0 : lo, m = by_cols ? M : hi - lo, j0 = by_cols ? lo : 0, n = by_cols ? hi - lo : N;
    if (clear) clear_block(f32, Cp, ldc, i0, m, j0, n);
    gemm_block(f32, ta, lda, A, tb, ldb, B, i0, m, j0, n, K, alpha, beta, Cp, ldc);
}

/* gemm through BLAS with results independent of the thread count.
 * OpenBLAS's own threading cuts C at points that depend on the number of
 * threads, which moves the remainder tiles (computed by other kernels) and
 * so changes the rounding: the MLP's gradients differed in the last bits
 * between 1 and 2 threads.  Here BLAS always runs single-threaded: with one
 * thread as one call; with several, C is cut into bands of rows at
 * multiples of GEMM_ALIGN, where the kernels' tile grid of the whole product
 * lies too, so every element is computed by the same kernel with the same
 * summation as in the single call (checked bit for bit against 1 thread for
 * 2 and 3 threads, float32/float64, all transpositions, by
 * spec/functions/connection/linear_threads_spec.lua; cutting columns
 * instead changed float32 results at every alignment tried).  The blocks run in one OpenMP region: one fork/join
 * per product instead of OpenBLAS's spin-waits between its threads, which on
 * a busy machine waited out a descheduled worker again and again (a
 * 1000x1000x100 product took 36 ms with 2 threads instead of 2.4 ms).
 *
 * Short products (M < COL_SPLIT_ROWS, N >= 2 * COL_SPLIT_COLS: a batch of
 * 100 against a 1000-wide layer) are cut into column pieces instead: every
 * band of rows would pack all of B (the layer's weights) again for a few
 * rows, where a column piece packs only its share of B and repacks the
 * short A.  Column cuts do change the rounding, so these products are cut
 * at the same points on any thread count, one thread included (the pieces
 * depend on N only: an even count of about COL_SPLIT_COLS columns or more).
 * `clear`: a beta = 0 product whose C the pieces clear themselves.
 *
 * All of this is for BLAS.  A float32 product on the AVX-512 kernel sums
 * each element in blocks of K alone, wherever C is cut, so on several
 * threads it goes to ch_cpu_sgemm512_team, whose units even out unequal
 * cores. */
static void gemm_blocks(bool f32, CBLAS_TRANSPOSE ta, int64_t lda, const void *A, CBLAS_TRANSPOSE tb, int64_t ldb,
                        const void *B, int64_t M, int64_t N, int64_t K, double alpha, double beta, bool clear,
                        void *Cp, int64_t ldc) {
#ifdef _OPENMP
    int threads = omp_in_parallel() ? 1 : ch_threads();
#else
    int threads = 1;
#endif
    bool big = M * N * K >= GEMM_PAR_MIN;
    /* float32 on the AVX-512 kernel: cut into units instead, each thread on
     * its own range and then on what the others have left (sgemm512.c) */
    if (f32 && big && threads > 1 &&
        ch_cpu_sgemm512_team(ta == CblasTrans, tb == CblasTrans, M, N, K, (float)alpha, (const float *)A, lda,
                             (const float *)B, ldb, (float)beta, (float *)Cp, ldc, threads))
        return;
    if (big && M < COL_SPLIT_ROWS && N >= 2 * COL_SPLIT_COLS) {
        int64_t pieces = 2 * (N / (2 * COL_SPLIT_COLS));
        int team = threads < pieces ? threads : (int)pieces;
        if (team <= 1) {
            for (int64_t q = 0; q < pieces; q++)
                gemm_piece(f32, ta, lda, A, tb, ldb, B, M, N, K, alpha, beta, clear, Cp, ldc, true, pieces, q);
            return;
        }
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(team)
        for (int64_t q = 0; q < pieces; q++)
            gemm_piece(f32, ta, lda, A, tb, ldb, B, M, N, K, alpha, beta, clear, Cp, ldc, true, pieces, q);
#endif
        return;
    }
    int64_t pieces = M / GEMM_ALIGN;
    if (pieces > threads) pieces = threads;
    if (threads <= 1) {
        /* one thread, or inside a parallel region: BLAS runs single-threaded */
        if (clear) clear_block(f32, Cp, ldc, 0, M, 0, N);
        gemm_block(f32, ta, lda, A, tb, ldb, B, 0, M, 0, N, K, alpha, beta, Cp, ldc);
        return;
    }
#ifdef _OPENMP
    if (pieces >= 2 && big) {
#pragma omp parallel for schedule(static) num_threads((int)pieces)
        for (int64_t q = 0; q < pieces; q++)
            gemm_piece(f32, ta, lda, A, tb, ldb, B, M, N, K, alpha, beta, clear, Cp, ldc, false, pieces, q);
        return;
    }
    /* small product: serial, and BLAS kept on one thread for this call */
    if (clear) clear_block(f32, Cp, ldc, 0, M, 0, N);
    omp_set_num_threads(1);
    gemm_block(f32, ta, lda, A, tb, ldb, B, 0, M, 0, N, K, alpha, beta, Cp, ldc);
    omp_set_num_threads(threads);
#endif
}

#include "gemm_skinny.h"
#include "gemv_rows.h"

/* C(MxN, ldc) = alpha * A(MxK) @ B(KxN) + beta * C, with gemv for one-row
 * and one-column products.  A and B are in BLAS layout (trans, ld). */
static void mm_kernel(ch_dtype dt, CBLAS_TRANSPOSE ta, int64_t lda, const void *A, CBLAS_TRANSPOSE tb, int64_t ldb,
                      const void *B, int64_t M, int64_t N, int64_t K, double alpha, double beta, void *Cp,
                      int64_t ldc) {
    bool f32 = dt == CH_FLOAT32;
    if (M == 0 || N == 0)
        return;
    if (K == 0) {
        /* alpha * (empty sum) = 0; BLAS may not touch C at all for K == 0 */
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
                if (f32) {
                    float *c = (float *)Cp + i * ldc + j;
                    *c = beta == 0.0 ? 0.0f : (float)(beta * *c);
                } else {
                    double *c = (double *)Cp + i * ldc + j;
                    *c = beta == 0.0 ? 0.0 : beta * *c;
                }
            }
        return;
    }
    if (M * N * K <= TINY_PRODUCT) {
        /* tiny products: a plain loop; BLAS's call set-up (argument checks,
         * buffer hand-out, thread decision) costs more than the arithmetic */
        if (f32)
            TINY_MM(float);
        else
            TINY_MM(double);
        return;
    }
    if (M == 1) {
        /* y(N) = op(B)^T x: x is A's only row, y is C's only row */
        int64_t incx = ta == CblasNoTrans ? 1 : lda;
#ifdef GEMV_ROWS_HAVE
        /* B holds op(B)^T's rows: y[j] = dot(row j, x) (a Linear at batch 1) */
        if (f32 && tb == CblasTrans && incx == 1 &&
            gemv_rows((const float *)B, ldb, (const float *)A, N, K, (float)alpha, (float)beta, (float *)Cp))
            return;
#endif
        if (beta == 0.0) memset(Cp, 0, (size_t)N * (f32 ? 4 : 8));
        CBLAS_TRANSPOSE t = tb == CblasNoTrans ? CblasTrans : CblasNoTrans;
        int64_t rows = tb == CblasNoTrans ? K : N, cols = tb == CblasNoTrans ? N : K;
        if (f32)
            cblas_sgemv(CblasRowMajor, t, (blasint)rows, (blasint)cols, (float)alpha, B, (blasint)ldb, A,
                        (blasint)incx, (float)beta, Cp, 1);
        else
            cblas_dgemv(CblasRowMajor, t, (blasint)rows, (blasint)cols, alpha, B, (blasint)ldb, A, (blasint)incx,
                        beta, Cp, 1);
        return;
    }
    if (N == 1) {
        /* y(M) = op(A) x: x is B's only column, y is C's only column */
        int64_t incx = tb == CblasNoTrans ? ldb : 1;
        if (beta == 0.0)
            for (int64_t i = 0; i < M; i++) {
                if (f32) ((float *)Cp)[i * ldc] = 0.0f;
                else ((double *)Cp)[i * ldc] = 0.0;
            }
        int64_t rows = ta == CblasNoTrans ? M : K, cols = ta == CblasNoTrans ? K : M;
        if (f32)
            cblas_sgemv(CblasRowMajor, ta, (blasint)rows, (blasint)cols, (float)alpha, A, (blasint)lda, B,
                        (blasint)incx, (float)beta, Cp, (blasint)ldc);
        else
            cblas_dgemv(CblasRowMajor, ta, (blasint)rows, (blasint)cols, alpha, A, (blasint)lda, B, (blasint)incx,
                        beta, Cp, (blasint)ldc);
        return;
    }
#ifdef SKINNY_HAVE
    /* one short side (a recurrent model's batch of 20 against a 10000-row
     * layer): kernels that read the big operand in place, no packing */
    if (f32 && gemm_skinny(ta, lda, (const float *)A, tb, ldb, (const float *)B, M, N, K, (float)alpha, (float)beta,
                           (float *)Cp, ldc))
        return;
#endif
    /* OpenBLAS clears C for beta = 0 with one scalar store per element
     * (sgemm_beta: 0.3 ms for a 1000x1000 gradient); memset is several times
     * faster and beta = 1 then skips that pass.  0 + x == x, so the result
     * is the same bit for bit.  gemm_blocks clears each piece on the thread
     * that computes it.  The AVX-512 kernel writes C without reading it
     * when beta = 0: no clearing there. */
    bool clear = beta == 0.0 && M * N >= ZERO_OURSELVES && !(f32 && ch_cpu_sgemm512_ok());
    if (clear) beta = 1.0;
    gemm_blocks(f32, ta, lda, A, tb, ldb, B, M, N, K, alpha, beta, clear, Cp, ldc);
}

/* Describes the last two axes of x (or a 1-D x as a row or a column). */
static void describe(const ch_tensor *x, int trans, int one_d_as_row, mat_desc *m) {
    memset(m, 0, sizeof *m);
    m->base = ch_base(x);
    if (x->nd == 1) {
        if (one_d_as_row) {
            m->R = 1, m->C = x->dim[0], m->rs = 0, m->cs = x->stride[0];
        } else {
            m->R = x->dim[0], m->C = 1, m->rs = x->stride[0], m->cs = 0;
        }
        return;
    }
    int nd = x->nd;
    m->R = x->dim[nd - 2], m->C = x->dim[nd - 1];
    m->rs = x->stride[nd - 2], m->cs = x->stride[nd - 1];
    if (trans) {
        int64_t t = m->R; m->R = m->C; m->C = t;
        t = m->rs; m->rs = m->cs; m->cs = t;
    }
}

/* Batch strides of x (its leading nd-2 axes) over the output batch shape. */
static void batch_strides(const ch_tensor *x, int nb, const int64_t *bdim, int64_t *bs) {
    int xb = x->nd > 2 ? x->nd - 2 : 0;
    for (int i = 0; i < nb; i++) {
        int j = i - (nb - xb);
        bs[i] = (j < 0 || x->dim[j] == 1) ? 0 : x->stride[j];
        if (bdim[i] == 1) bs[i] = 0;
    }
}

static void int_matmul(const mat_desc *a, const mat_desc *b, int nb, const int64_t *bdim, int64_t nbatch, int64_t M,
                       int64_t N, int64_t K, int64_t *out) {
    CH_PAR_FOR(nbatch * M * N * K >= CH_PARALLEL_GRAIN, int64_t p = 0; p < nbatch * M; p++, {
        int64_t bi = p / M, i = p % M, rem = bi, oa = 0, ob = 0;
        for (int d = nb - 1; d >= 0; d--) {
            int64_t k = rem % bdim[d];
            rem /= bdim[d];
            oa += k * a->bstride[d];
            ob += k * b->bstride[d];
        }
        const int64_t *A = (const int64_t *)a->base + oa + i * a->rs;
        const int64_t *B = (const int64_t *)b->base + ob;
        int64_t *c = out + p * N;
        for (int64_t j = 0; j < N; j++) c[j] = 0;
        for (int64_t k = 0; k < K; k++) {
            int64_t av = A[k * a->cs];
            const int64_t *brow = B + k * b->rs;
            for (int64_t j = 0; j < N; j++) c[j] += av * brow[j * b->cs];
        }
    });
}

/* Product number p of a batched matmul (leading axes broadcast). */
static void batch_product(const mat_desc *ma, const mat_desc *mb, int nb, const int64_t *bdim, ch_dtype cdt,
                          size_t z, int64_t M, int64_t N, int64_t K, char *obase, int64_t p) {
    int64_t rem = p, oa = 0, ob = 0;
    for (int d = nb - 1; d >= 0; d--) {
        int64_t k = rem % bdim[d];
        rem /= bdim[d];
        oa += k * ma->bstride[d];
        ob += k * mb->bstride[d];
    }
    mm_kernel(cdt, ma->trans, ma->ld, ma->base + oa * (int64_t)z, mb->trans, mb->ld, mb->base + ob * (int64_t)z, M,
              N, K, 1.0, 0.0, obase + p * M * N * (int64_t)z, N);
}

/* The matmul kernel (core/kernels.h): a, b and out of one dtype (the
 * result's), out contiguous with the result shape; computed in float32 for
 * float16 (rounded once) and in int64 for integers and bool. */
ch_status ch_cpu_matmul(const ch_tensor *a, const ch_tensor *b, int transa, int transb, ch_tensor *out) {
    ch_dtype rdt = (ch_dtype)out->dt;
    ch_dtype cdt = rdt == CH_FLOAT64 ? CH_FLOAT64 : (rdt == CH_FLOAT32 || rdt == CH_FLOAT16) ? CH_FLOAT32 : CH_INT64;
    ch_tensor *A = NULL, *B = NULL, *tmp = NULL;
    ch_status st = CH_OK;
    if ((st = ch_contiguous_as_if(a, cdt, &A)) != CH_OK) goto done;
    if ((st = ch_contiguous_as_if(b, cdt, &B)) != CH_OK) goto done;
    mat_desc ma, mb;
    describe(A, transa, 1, &ma);
    describe(B, transb, 0, &mb);
    int64_t M = ma.R, N = mb.C, K = ma.C;
    int nba = a->nd > 2 ? a->nd - 2 : 0, nbb = b->nd > 2 ? b->nd - 2 : 0, nb;
    int64_t bdim[CH_MAX_DIMS];
    if ((st = ch_broadcast_shape(nba, a->dim, nbb, b->dim, &nb, bdim, "matmul")) != CH_OK) goto done;
    int ond = out->nd;
    const int64_t *odim = out->dim;
    int64_t nbatch = ch_numel(nb, bdim);
    if (out->numel == 0) goto done;
    if (cdt == CH_INT64) {
        batch_strides(A, nb, bdim, ma.bstride);
        batch_strides(B, nb, bdim, mb.bstride);
        int64_t *o;
        if (rdt == CH_INT64) {
            o = (int64_t *)out->data;
        } else {
            if ((st = ch_tensor_new(CH_INT64, ond, odim, CH_CPU, &tmp)) != CH_OK) goto done;
            o = (int64_t *)tmp->data;
        }
        int_matmul(&ma, &mb, nb, bdim, nbatch, M, N, K, o);
        if (tmp) st = ch_cpu_copy(out, tmp);
        goto done;
    }

    /* operands whose last two axes fit no BLAS layout are copied once */
    if (!blas_layout(&ma)) {
        ch_tensor *c;
        if ((st = ch_copy(A, &c)) != CH_OK) goto done;
        ch_tensor_release(A);
        A = c;
        describe(A, transa, 1, &ma);
        blas_layout(&ma);
    }
    if (!blas_layout(&mb)) {
        ch_tensor *c;
        if ((st = ch_copy(B, &c)) != CH_OK) goto done;
        ch_tensor_release(B);
        B = c;
        describe(B, transb, 0, &mb);
        blas_layout(&mb);
    }
    batch_strides(A, nb, bdim, ma.bstride);
    batch_strides(B, nb, bdim, mb.bstride);

    char *obase;
    if (rdt == cdt) {
        obase = out->data;
    } else { /* float16: compute in float32, round once at the end */
        if ((st = ch_tensor_new(cdt, ond, odim, CH_CPU, &tmp)) != CH_OK) goto done;
        obase = tmp->data;
    }
    size_t z = ch_dtype_size(cdt);

    /* b shared by every batch and a's batches lying row after row: one
     * tall product (batch*M) x K instead of nbatch small ones */
    bool fold = nbatch > 1 && ma.trans == CblasNoTrans;
    int64_t expect = M * ma.rs;
    for (int i = nb - 1; i >= 0 && fold; i--) {
        if (bdim[i] == 1) continue;
        fold = mb.bstride[i] == 0 && ma.bstride[i] == expect;
        expect *= bdim[i];
    }
    if (fold) {
        mm_kernel(cdt, ma.trans, ma.ld, ma.base, mb.trans, mb.ld, mb.base, nbatch * M, N, K, 1.0, 0.0, obase, N);
    } else if (nbatch == 1) {
        mm_kernel(cdt, ma.trans, ma.ld, ma.base, mb.trans, mb.ld, mb.base, M, N, K, 1.0, 0.0, obase, N);
    } else {
        /* small matrices: parallel over the batch (BLAS runs single-threaded
         * inside a parallel region); large ones: BLAS threads each product */
        /* ... and a batch of little work at all stays on this thread: an
         * OpenMP region costs a team start-up, and on a busy machine waiting
         * for a descheduled worker took milliseconds for a (3,2,4)@(3,4,1) */
        bool par = M * N * K < (int64_t)1 << 21 && nbatch >= 2 && nbatch * M * N * K >= CH_PARALLEL_GRAIN;
        int team = par ? ch_threads() : 1;
        if (team > 1) {
#pragma omp parallel for schedule(static) num_threads(team)
            for (int64_t p = 0; p < nbatch; p++)
                batch_product(&ma, &mb, nb, bdim, cdt, z, M, N, K, obase, p);
        } else {
            for (int64_t p = 0; p < nbatch; p++)
                batch_product(&ma, &mb, nb, bdim, cdt, z, M, N, K, obase, p);
        }
    }
    if (tmp) st = ch_cpu_copy(out, tmp);

done:
    ch_tensor_release(A);
    ch_tensor_release(B);
    ch_tensor_release(tmp);
    return st;
}


/* The gemm kernel (core/kernels.h): c = alpha op(a) op(b) + beta c for 2-d
 * a, b, c of one dtype (float32/float64), any strides; operands that fit no
 * BLAS layout are copied, c is written in place. */
ch_status ch_cpu_gemm(int transa, int transb, double alpha, const ch_tensor *a, const ch_tensor *b, double beta,
                      ch_tensor *c) {
    ch_dtype dt = (ch_dtype)c->dt;
    mat_desc ma, mb, mc;
    ch_tensor *A = (ch_tensor *)a, *B = (ch_tensor *)b, *Ctmp = NULL;
    ch_tensor_retain(A);
    ch_tensor_retain(B);
    ch_status st = CH_OK;
    describe(A, transa, 1, &ma);
    describe(B, transb, 0, &mb);
    if (!blas_layout(&ma)) {
        ch_tensor *t;
        if ((st = ch_copy(A, &t)) != CH_OK) goto done;
        ch_tensor_release(A); A = t;
        describe(A, transa, 1, &ma);
        blas_layout(&ma);
    }
    if (!blas_layout(&mb)) {
        ch_tensor *t;
        if ((st = ch_copy(B, &t)) != CH_OK) goto done;
        ch_tensor_release(B); B = t;
        describe(B, transb, 0, &mb);
        blas_layout(&mb);
    }
    int64_t M = ma.R, N = mb.C, K = ma.C;
    describe(c, 0, 1, &mc);
    if (blas_layout(&mc) && mc.trans == CblasNoTrans) {
        mm_kernel(dt, ma.trans, ma.ld, ma.base, mb.trans, mb.ld, mb.base, M, N, K, alpha, beta, ch_base(c), mc.ld);
    } else if (blas_layout(&mc)) {
        /* column-major c: compute c^T = op(b)^T op(a)^T */
        CBLAS_TRANSPOSE tb = mb.trans == CblasNoTrans ? CblasTrans : CblasNoTrans;
        CBLAS_TRANSPOSE ta = ma.trans == CblasNoTrans ? CblasTrans : CblasNoTrans;
        mm_kernel(dt, tb, mb.ld, mb.base, ta, ma.ld, ma.base, N, M, K, alpha, beta, ch_base(c), mc.ld);
    } else {
        /* any other layout: through a contiguous copy of c */
        if ((st = ch_copy(c, &Ctmp)) != CH_OK) goto done;
        mm_kernel(dt, ma.trans, ma.ld, ma.base, mb.trans, mb.ld, mb.base, M, N, K, alpha, beta, Ctmp->data, N);
        st = ch_cpu_copy(c, Ctmp);
    }
done:
    ch_tensor_release(A);
    ch_tensor_release(B);
    ch_tensor_release(Ctmp);
    return st;
}


/* gemm.h: the same products on raw row-major buffers for the other CPU
 * kernels (convolution, the whole-sequence RNN layers): mm_kernel's path,
 * so their results do not depend on the thread count either. */
void ch_cpu_sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K, float alpha,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    mm_kernel(CH_FLOAT32, ta, lda, A, tb, ldb, B, M, N, K, alpha, beta, C, ldc);
}

void ch_cpu_dgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K, double alpha,
                  const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc) {
    mm_kernel(CH_FLOAT64, ta, lda, A, tb, ldb, B, M, N, K, alpha, beta, C, ldc);
}

/* gemm.h -- row-major BLAS products for the CPU kernels, with results that
 * do not depend on the thread count (cpu/blas.c: BLAS runs single-threaded,
 * on row bands fixed by the shapes).  A kernel calls these instead of
 * cblas_?gemm: OpenBLAS's own threading cuts the product where the thread
 * count says, and so changes the last bits of the result with it; with
 * adaptive threads (core/threads.c) that count follows the machine's load.
 * Inside an OpenMP region they are one single-threaded BLAS call. */
#ifndef CH_CPU_GEMM_H
#define CH_CPU_GEMM_H

#include <cblas.h>
#include <stdint.h>

void ch_cpu_sgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K, float alpha,
                  const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc);
void ch_cpu_dgemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t M, int64_t N, int64_t K, double alpha,
                  const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C, int64_t ldc);

/* The single-threaded float32 product on AVX-512 (cpu/sgemm512.c); false
 * when the CPU lacks it (or CHAINLUA_SGEMM=openblas), then nothing was
 * done.  ta, tb: op(A) = A^T, op(B) = B^T, row-major. */
#include <stdbool.h>
bool ch_cpu_sgemm512_ok(void);
bool ch_cpu_sgemm512(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t lda,
                     const float *B, int64_t ldb, float beta, float *C, int64_t ldc);

/* The same product on a team of `team` (>= 2) threads in one OpenMP region:
 * units of work fixed by the shape, each thread on its own contiguous range
 * of them and then on what is left of the others'; the same bits as on one
 * thread.  False (nothing done) on one thread, inside a parallel region,
 * without AVX-512 or out of memory. */
bool ch_cpu_sgemm512_team(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const float *A,
                          int64_t lda, const float *B, int64_t ldb, float beta, float *C, int64_t ldc, int team);

/* The same product with B already in the kernel's column panels: beta 0,
 * A (M x K, lda) not transposed, B's column j, row k at
 * Bp[(j / CH_SGEMM512_PANEL) * K * CH_SGEMM512_PANEL + k * CH_SGEMM512_PANEL
 * + j % CH_SGEMM512_PANEL] (Bp 64-byte aligned, the last panel's unused
 * columns finite).  Only where ch_cpu_sgemm512_ok(); false when out of
 * memory (nothing done). */
#define CH_SGEMM512_PANEL 48
bool ch_cpu_sgemm512_panels(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bp, float *C,
                            int64_t ldc);

#endif

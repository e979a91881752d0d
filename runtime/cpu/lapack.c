/* lapack.c -- CPU kernels of inv, det, solve and cholesky through the LAPACK routines
 * inside OpenBLAS.  Front doors (checks, compute dtypes, scratch copies,
 * results, the singular-matrix messages): runtime/ops/lapack.c.
 *
 * LAPACK is column-major.  A row-major n x n matrix read column-major is its
 * transpose, and inv(A^T) = inv(A)^T, det(A^T) = det(A), so inv and det
 * hand row-major data straight to LAPACK.  solve needs A itself, so it
 * transposes A and b into scratch buffers.  Everything is batched over the
 * leading axes.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <stdlib.h>

/* Fortran LAPACK entry points (32-bit integers in Debian's OpenBLAS). */
extern void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void sgetri_(const int *n, float *a, const int *lda, const int *ipiv, float *work, const int *lwork, int *info);
extern void dgetri_(const int *n, double *a, const int *lda, const int *ipiv, double *work, const int *lwork, int *info);
extern void sgesv_(const int *n, const int *nrhs, float *a, const int *lda, int *ipiv, float *b, const int *ldb,
                   int *info);
extern void spotrf_(const char *uplo, const int *n, float *a, const int *lda, int *info);
extern void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);
extern void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb,
                   int *info);

ch_status ch_cpu_inv(ch_tensor *w, int64_t *bad, int *pivot) {
    int64_t n = w->dim[w->nd - 1];
    ch_dtype cdt = (ch_dtype)w->dt;
    int64_t nbatch = n ? w->numel / (n * n) : 0;
    int ni = (int)n, lwork = ni > 0 ? 64 * ni : 1, info = 0;
    *bad = -1;
    int *ipiv = malloc(sizeof(int) * (size_t)(ni > 0 ? ni : 1));
    void *work = malloc((size_t)lwork * ch_dtype_size(cdt));
    if (!ipiv || !work) {
        free(ipiv), free(work);
        return ch_fail(CH_ERR_MEMORY, "inv: out of memory");
    }
    for (int64_t p = 0; p < nbatch && n > 0; p++) {
        if (cdt == CH_FLOAT32) {
            float *a = (float *)ch_base(w) + p * n * n;
            sgetrf_(&ni, &ni, a, &ni, ipiv, &info);
            if (info == 0) sgetri_(&ni, a, &ni, ipiv, work, &lwork, &info);
        } else {
            double *a = (double *)ch_base(w) + p * n * n;
            dgetrf_(&ni, &ni, a, &ni, ipiv, &info);
            if (info == 0) dgetri_(&ni, a, &ni, ipiv, work, &lwork, &info);
        }
        if (info != 0) {
            free(ipiv), free(work);
            if (info > 0) {
                *bad = p;
                *pivot = info - 1;
                return CH_OK;
            }
            return ch_fail(CH_ERR_INTERNAL, "inv: LAPACK getrf/getri failed (info %d)", info);
        }
    }
    free(ipiv), free(work);
    return CH_OK;
}

ch_status ch_cpu_det(ch_tensor *w, ch_tensor *out) {
    int64_t n = w->dim[w->nd - 1];
    ch_dtype cdt = (ch_dtype)w->dt;
    int ni = (int)n, info = 0;
    int *ipiv = malloc(sizeof(int) * (size_t)(ni > 0 ? ni : 1));
    if (!ipiv)
        return ch_fail(CH_ERR_MEMORY, "det: out of memory");
    for (int64_t p = 0; p < out->numel; p++) {
        double det = 1.0;
        if (n > 0) {
            if (cdt == CH_FLOAT32) {
                float *a = (float *)ch_base(w) + p * n * n;
                sgetrf_(&ni, &ni, a, &ni, ipiv, &info);
                for (int i = 0; i < ni; i++) det *= a[i * n + i] * (ipiv[i] != i + 1 ? -1.0 : 1.0);
            } else {
                double *a = (double *)ch_base(w) + p * n * n;
                dgetrf_(&ni, &ni, a, &ni, ipiv, &info);
                for (int i = 0; i < ni; i++) det *= a[i * n + i] * (ipiv[i] != i + 1 ? -1.0 : 1.0);
            }
            /* info > 0: a zero pivot, so the product above is 0 (det of a singular matrix) */
            if (info < 0) {
                free(ipiv);
                return ch_fail(CH_ERR_INTERNAL, "det: LAPACK getrf failed (info %d)", info);
            }
        }
        if (cdt == CH_FLOAT32) ((float *)ch_base(out))[p] = (float)det;
        else ((double *)ch_base(out))[p] = det;
    }
    free(ipiv);
    return CH_OK;
}

ch_status ch_cpu_solve(const ch_tensor *A, const ch_tensor *B, ch_tensor *out, int64_t *bad, int *pivot) {
    ch_dtype cdt = (ch_dtype)A->dt;
    int64_t n = A->dim[A->nd - 1], k = B->dim[B->nd - 1];
    int64_t nbatch = n && k ? B->numel / (n * k) : 0;
    *bad = -1;
    if (nbatch == 0) return CH_OK;
    size_t z = ch_dtype_size(cdt);
    int ni = (int)n, ki = (int)k, info = 0;
    int *ipiv = malloc(sizeof(int) * (size_t)ni);
    char *ta = malloc((size_t)(n * n) * z), *tb = malloc((size_t)(n * k) * z);
    if (!ipiv || !ta || !tb) {
        free(ipiv), free(ta), free(tb);
        return ch_fail(CH_ERR_MEMORY, "solve: out of memory");
    }
    ch_status st = CH_OK;
    for (int64_t p = 0; p < nbatch; p++) {
        /* transpose into column-major scratch, solve, transpose back */
#define SOLVE(T, gesv)                                                                   \
    {                                                                                    \
        const T *as = (const T *)ch_base(A) + p * n * n, *bs = (const T *)ch_base(B) + p * n * k; \
        T *at = (T *)ta, *bt = (T *)tb, *o = (T *)ch_base(out) + p * n * k;              \
        for (int64_t i = 0; i < n; i++)                                                  \
            for (int64_t j = 0; j < n; j++) at[j * n + i] = as[i * n + j];               \
        for (int64_t i = 0; i < n; i++)                                                  \
            for (int64_t j = 0; j < k; j++) bt[j * n + i] = bs[i * k + j];               \
        gesv(&ni, &ki, at, &ni, ipiv, bt, &ni, &info);                                   \
        for (int64_t i = 0; i < n; i++)                                                  \
            for (int64_t j = 0; j < k; j++) o[i * k + j] = bt[j * n + i];                \
    }
        if (cdt == CH_FLOAT32) SOLVE(float, sgesv_)
        else SOLVE(double, dgesv_)
#undef SOLVE
        if (info != 0) {
            if (info > 0) {
                *bad = p;
                *pivot = info - 1;
            } else {
                st = ch_fail(CH_ERR_INTERNAL, "solve: LAPACK gesv failed (info %d)", info);
            }
            break;
        }
    }
    free(ipiv), free(ta), free(tb);
    return st;
}

/* The row-major lower triangle of A is, read column-major, the upper
 * triangle of A^T: potrf('U') there gives U with U^T U = A, whose
 * column-major upper triangle is row-major L = U^T.  Then the row-major
 * strict upper triangle (LAPACK leaves the input there) is zeroed. */
ch_status ch_cpu_cholesky(ch_tensor *w, int64_t *bad, int *order) {
    int64_t n = w->dim[w->nd - 1];
    ch_dtype cdt = (ch_dtype)w->dt;
    int64_t nbatch = n ? w->numel / (n * n) : 0;
    int ni = (int)n, info = 0;
    const char uplo = 'U';
    *bad = -1;
    for (int64_t p = 0; p < nbatch; p++) {
        if (cdt == CH_FLOAT32) {
            float *a = (float *)ch_base(w) + p * n * n;
            spotrf_(&uplo, &ni, a, &ni, &info);
            for (int64_t i = 0; info == 0 && i < n; i++)
                for (int64_t j = i + 1; j < n; j++) a[i * n + j] = 0;
        } else {
            double *a = (double *)ch_base(w) + p * n * n;
            dpotrf_(&uplo, &ni, a, &ni, &info);
            for (int64_t i = 0; info == 0 && i < n; i++)
                for (int64_t j = i + 1; j < n; j++) a[i * n + j] = 0;
        }
        if (info > 0) {
            *bad = p;
            *order = info;
            return CH_OK;
        }
        if (info < 0)
            return ch_fail(CH_ERR_INTERNAL, "cholesky: LAPACK potrf failed (info %d)", info);
    }
    return CH_OK;
}

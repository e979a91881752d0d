/* lapack.c -- inv, det and solve through the LAPACK routines inside OpenBLAS.
 *
 * LAPACK is column-major.  A row-major n x n matrix read column-major is its
 * transpose, and inv(A^T) = inv(A)^T, det(A^T) = det(A), so inv and det
 * hand row-major data straight to LAPACK.  solve needs A itself, so it
 * transposes A and b into scratch buffers.  Everything is batched over the
 * leading axes.  Integer inputs compute in float64 (NumPy); float16 computes
 * in float32 and is rounded back.
 */
#include "../core/internal.h"

#include <math.h>
#include <stdlib.h>

/* Fortran LAPACK entry points (32-bit integers in Debian's OpenBLAS). */
extern void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
extern void dgetrf_(const int *m, const int *n, double *a, const int *lda, int *ipiv, int *info);
extern void sgetri_(const int *n, float *a, const int *lda, const int *ipiv, float *work, const int *lwork, int *info);
extern void dgetri_(const int *n, double *a, const int *lda, const int *ipiv, double *work, const int *lwork, int *info);
extern void sgesv_(const int *n, const int *nrhs, float *a, const int *lda, int *ipiv, float *b, const int *ldb,
                   int *info);
extern void dgesv_(const int *n, const int *nrhs, double *a, const int *lda, int *ipiv, double *b, const int *ldb,
                   int *info);

static ch_dtype compute_dtype(ch_dtype dt) {
    return (dt == CH_FLOAT32 || dt == CH_FLOAT16) ? CH_FLOAT32 : CH_FLOAT64;
}

/* Checks x is a batch of square matrices; *n gets their size. */
static ch_status square(const ch_tensor *x, const char *fn, const char *arg, int64_t *n) {
    if (x->nd < 2)
        return ch_fail(CH_ERR_SHAPE, "%s: %s must be at least 2-d (a matrix or a batch of matrices; got %d-d)", fn, arg,
                       x->nd);
    if (x->dim[x->nd - 1] != x->dim[x->nd - 2]) {
        char s[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "%s: %s must be square on its last two axes (got shape %s)", fn, arg,
                       ch_shape_str(s, sizeof s, x->nd, x->dim));
    }
    if (x->dim[x->nd - 1] > 2147483647)
        return ch_fail(CH_ERR_SHAPE, "%s: matrices larger than 2^31-1 are not supported", fn);
    *n = x->dim[x->nd - 1];
    return CH_OK;
}

/* Index of batch p as "[i, j]" for error messages ("" for one matrix). */
static const char *batch_str(char *buf, size_t sz, const ch_tensor *x, int64_t p) {
    int nb = x->nd - 2;
    if (nb == 0) {
        buf[0] = '\0';
        return buf;
    }
    int64_t idx[CH_MAX_DIMS];
    for (int d = nb - 1; d >= 0; d--) {
        idx[d] = p % x->dim[d];
        p /= x->dim[d];
    }
    size_t k = (size_t)snprintf(buf, sz, " (matrix [");
    for (int d = 0; d < nb && k < sz; d++)
        k += (size_t)snprintf(buf + k, sz - k, d ? ", %lld" : "%lld", (long long)idx[d]);
    if (k < sz) snprintf(buf + k, sz - k, "])");
    return buf;
}

/* A contiguous copy of x in dtype dt that LAPACK may overwrite. */
static ch_status scratch_copy(const ch_tensor *x, ch_dtype dt, ch_tensor **out) {
    ch_tensor *t;
    CH_TRY(ch_tensor_new(dt, x->nd, x->dim, CH_CPU, &t));
    ch_status st = ch_cpu_copy(t, x);
    if (st != CH_OK) {
        ch_tensor_release(t);
        return st;
    }
    *out = t;
    return CH_OK;
}

/* Hands `w` (compute dtype) back as the result in dtype rdt. */
static ch_status finish(ch_tensor *w, ch_dtype rdt, ch_tensor **result) {
    if (w->dt == (int)rdt) {
        *result = w;
        return CH_OK;
    }
    ch_tensor *r;
    ch_status st = ch_astype(w, rdt, &r);
    ch_tensor_release(w);
    if (st == CH_OK) *result = r;
    return st;
}

ch_status ch_inv(const ch_tensor *x, ch_tensor **result) {
    CH_CHECK_CPU(x, "inv", "x");
    int64_t n;
    CH_TRY(square(x, "inv", "x", &n));
    ch_dtype xdt = (ch_dtype)x->dt, cdt = compute_dtype(xdt);
    ch_dtype rdt = xdt == CH_FLOAT16 ? CH_FLOAT16 : cdt;
    ch_tensor *w;
    CH_TRY(scratch_copy(x, cdt, &w));
    int64_t nbatch = n ? x->numel / (n * n) : 0;
    int ni = (int)n, lwork = ni > 0 ? 64 * ni : 1, info = 0;
    int *ipiv = malloc(sizeof(int) * (size_t)(ni > 0 ? ni : 1));
    void *work = malloc((size_t)lwork * ch_dtype_size(cdt));
    if (!ipiv || !work) {
        free(ipiv), free(work), ch_tensor_release(w);
        return ch_fail(CH_ERR_MEMORY, "inv: out of memory");
    }
    for (int64_t p = 0; p < nbatch && n > 0; p++) {
        if (cdt == CH_FLOAT32) {
            float *a = (float *)w->data + p * n * n;
            sgetrf_(&ni, &ni, a, &ni, ipiv, &info);
            if (info == 0) sgetri_(&ni, a, &ni, ipiv, work, &lwork, &info);
        } else {
            double *a = (double *)w->data + p * n * n;
            dgetrf_(&ni, &ni, a, &ni, ipiv, &info);
            if (info == 0) dgetri_(&ni, a, &ni, ipiv, work, &lwork, &info);
        }
        if (info != 0) {
            char b[128];
            free(ipiv), free(work), ch_tensor_release(w);
            if (info > 0)
                return ch_fail(CH_ERR_ARG, "inv: matrix is singular%s (pivot %d is zero)",
                               batch_str(b, sizeof b, x, p), info - 1);
            return ch_fail(CH_ERR_INTERNAL, "inv: LAPACK getrf/getri failed (info %d)", info);
        }
    }
    free(ipiv), free(work);
    return finish(w, rdt, result);
}

ch_status ch_det(const ch_tensor *x, ch_tensor **result) {
    CH_CHECK_CPU(x, "det", "x");
    int64_t n;
    CH_TRY(square(x, "det", "x", &n));
    ch_dtype xdt = (ch_dtype)x->dt, cdt = compute_dtype(xdt);
    ch_dtype rdt = xdt == CH_FLOAT16 ? CH_FLOAT16 : cdt;
    ch_tensor *w, *out;
    CH_TRY(scratch_copy(x, cdt, &w));
    ch_status st = ch_tensor_new(cdt, x->nd - 2, x->dim, CH_CPU, &out);
    if (st != CH_OK) {
        ch_tensor_release(w);
        return st;
    }
    int ni = (int)n, info = 0;
    int *ipiv = malloc(sizeof(int) * (size_t)(ni > 0 ? ni : 1));
    if (!ipiv) {
        ch_tensor_release(w), ch_tensor_release(out);
        return ch_fail(CH_ERR_MEMORY, "det: out of memory");
    }
    for (int64_t p = 0; p < out->numel; p++) {
        double det = 1.0;
        if (n > 0) {
            if (cdt == CH_FLOAT32) {
                float *a = (float *)w->data + p * n * n;
                sgetrf_(&ni, &ni, a, &ni, ipiv, &info);
                for (int i = 0; i < ni; i++) det *= a[i * n + i] * (ipiv[i] != i + 1 ? -1.0 : 1.0);
            } else {
                double *a = (double *)w->data + p * n * n;
                dgetrf_(&ni, &ni, a, &ni, ipiv, &info);
                for (int i = 0; i < ni; i++) det *= a[i * n + i] * (ipiv[i] != i + 1 ? -1.0 : 1.0);
            }
            /* info > 0: a zero pivot, so the product above is 0 (det of a singular matrix) */
            if (info < 0) {
                free(ipiv), ch_tensor_release(w), ch_tensor_release(out);
                return ch_fail(CH_ERR_INTERNAL, "det: LAPACK getrf failed (info %d)", info);
            }
        }
        if (cdt == CH_FLOAT32) ((float *)out->data)[p] = (float)det;
        else ((double *)out->data)[p] = det;
    }
    free(ipiv);
    ch_tensor_release(w);
    return finish(out, rdt, result);
}

ch_status ch_solve(const ch_tensor *a, const ch_tensor *b, ch_tensor **result) {
    static const char *fn = "solve";
    CH_CHECK_CPU(a, fn, "a");
    CH_CHECK_CPU(b, fn, "b");
    int64_t n;
    CH_TRY(square(a, fn, "a", &n));
    ch_dtype pdt = ch_promote((ch_dtype)a->dt, (ch_dtype)b->dt), cdt = compute_dtype(pdt);
    ch_dtype rdt = pdt == CH_FLOAT16 ? CH_FLOAT16 : cdt;
    /* b is a batch of vectors when it has one axis fewer than a (NumPy 1.x
     * rule), otherwise a batch of (n, k) matrices */
    bool vec = b->nd == a->nd - 1;
    char sa[CH_SHAPE_BUF], sb[CH_SHAPE_BUF];
    if (b->nd < 1 || (!vec && b->nd < 2) || b->dim[b->nd - (vec ? 1 : 2)] != n)
        return ch_fail(CH_ERR_SHAPE, "solve: b of shape %s does not fit a of shape %s (expected b with %lld on its %s axis)",
                       ch_shape_str(sb, sizeof sb, b->nd, b->dim), ch_shape_str(sa, sizeof sa, a->nd, a->dim),
                       (long long)n, vec ? "last" : "second-to-last");
    int64_t k = vec ? 1 : b->dim[b->nd - 1];
    /* batch shape: broadcast of a's and b's leading axes */
    int nba = a->nd - 2, nbb = b->nd - (vec ? 1 : 2), nb;
    int64_t bdim[CH_MAX_DIMS];
    CH_TRY(ch_broadcast_shape(nba, a->dim, nbb, b->dim, &nb, bdim, fn));
    int64_t odim[CH_MAX_DIMS];
    for (int i = 0; i < nb; i++) odim[i] = bdim[i];
    odim[nb] = n;
    if (!vec) odim[nb + 1] = k;
    int ond = nb + (vec ? 1 : 2);

    /* a broadcast to (batch, n, n) and b to (batch, n, k), both in cdt */
    ch_tensor *ab = NULL, *bb = NULL, *A = NULL, *B = NULL, *out = NULL;
    ch_status st;
    int64_t adim[CH_MAX_DIMS + 2];
    for (int i = 0; i < nb; i++) adim[i] = bdim[i];
    adim[nb] = n, adim[nb + 1] = n;
    if ((st = ch_broadcast_to(a, nb + 2, adim, &ab)) != CH_OK) goto done;
    if ((st = ch_broadcast_to(b, ond, odim, &bb)) != CH_OK) goto done;
    if ((st = scratch_copy(ab, cdt, &A)) != CH_OK) goto done;
    if ((st = scratch_copy(bb, cdt, &B)) != CH_OK) goto done;
    if ((st = ch_tensor_new(cdt, ond, odim, CH_CPU, &out)) != CH_OK) goto done;
    int64_t nbatch = ch_numel(nb, bdim);
    if (n == 0 || k == 0 || nbatch == 0) goto done;
    {
        size_t z = ch_dtype_size(cdt);
        int ni = (int)n, ki = (int)k, info = 0;
        int *ipiv = malloc(sizeof(int) * (size_t)ni);
        char *ta = malloc((size_t)(n * n) * z), *tb = malloc((size_t)(n * k) * z);
        if (!ipiv || !ta || !tb) {
            free(ipiv), free(ta), free(tb);
            st = ch_fail(CH_ERR_MEMORY, "solve: out of memory");
            goto done;
        }
        for (int64_t p = 0; p < nbatch; p++) {
            /* transpose into column-major scratch, solve, transpose back */
#define SOLVE(T, gesv)                                                                   \
    {                                                                                    \
        const T *as = (const T *)A->data + p * n * n, *bs = (const T *)B->data + p * n * k; \
        T *at = (T *)ta, *bt = (T *)tb, *o = (T *)out->data + p * n * k;                 \
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
                char bs[128];
                if (info > 0)
                    st = ch_fail(CH_ERR_ARG, "solve: matrix a is singular%s (pivot %d is zero)",
                                 batch_str(bs, sizeof bs, ab, p), info - 1);
                else
                    st = ch_fail(CH_ERR_INTERNAL, "solve: LAPACK gesv failed (info %d)", info);
                break;
            }
        }
        free(ipiv), free(ta), free(tb);
    }
done:
    ch_tensor_release(ab);
    ch_tensor_release(bb);
    ch_tensor_release(A);
    ch_tensor_release(B);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    return finish(out, rdt, result);
}

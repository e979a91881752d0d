/* lapack.c -- front doors of inv, det, solve and cholesky (kernels: runtime/cpu/lapack.c,
 * LAPACK inside OpenBLAS).  Everything is batched over the leading axes.
 * Integer inputs compute in float64 (NumPy); float16 computes in float32
 * and is rounded back.  The kernels report a singular matrix by its batch
 * position; the message is written here.
 */
#include "prologue.h"

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

/* x, argument "x" of fn, is a usable tensor of square matrices. */
static ch_status square_x(const char *fn, const ch_tensor *x) {
    CH_CHECK_ARG(x, fn, "x");
    int64_t n;
    return square(x, fn, "x", &n);
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
    CH_TRY(ch_tensor_new(dt, x->nd, x->dim, x->dev, &t));
    ch_status st = ch_copy_any(t, x);
    return ch_hand_over(st, t, out);
}

/* The last step: when st is CH_OK, hands `w` (compute dtype) back as the
 * result in dtype rdt; otherwise releases it and returns st. */
static ch_status finish(ch_status st, ch_tensor *w, ch_dtype rdt, ch_tensor **result) {
    if (st != CH_OK) {
        ch_tensor_release(w);
        return st;
    }
    if (w->dt == (int)rdt) {
        *result = w;
        return CH_OK;
    }
    ch_tensor *r;
    st = ch_astype(w, rdt, &r);
    ch_tensor_release(w);
    if (st == CH_OK) *result = r;
    return st;
}

/* The in-place factorisations (inv, cholesky): kernel on a scratch copy of
 * square x, the copy handed back as the result.  A matrix the kernel
 * rejects fails as "<fn>: matrix is <what> (<before><k><after>)", k the
 * position the kernel reports. */
static ch_status factor_copy(const char *fn, const ch_tensor *x, ch_inv_kernel *kernel, const char *what,
                             const char *before, const char *after, ch_tensor **result) {
    ch_dtype xdt = (ch_dtype)x->dt, cdt = compute_dtype(xdt);
    ch_dtype rdt = xdt == CH_FLOAT16 ? CH_FLOAT16 : cdt;
    ch_tensor *w;
    CH_TRY(scratch_copy(x, cdt, &w));
    int64_t bad = -1;
    int k = 0;
    ch_status st = kernel(w, &bad, &k);
    if (st == CH_OK && bad >= 0) {
        char b[128];
        st = ch_fail(CH_ERR_ARG, "%s: matrix is %s%s (%s%d%s)", fn, what, batch_str(b, sizeof b, x, bad), before, k,
                     after);
    }
    return finish(st, w, rdt, result);
}

ch_status ch_inv(const ch_tensor *x, ch_tensor **result) {
    CH_TRY(square_x("inv", x));
    CH_KERNEL(kernel, inv, x->dev, "inv");
    return factor_copy("inv", x, kernel, "singular", "pivot ", " is zero", result);
}

ch_status ch_det(const ch_tensor *x, ch_tensor **result) {
    CH_TRY(square_x("det", x));
    CH_KERNEL(kernel, det, x->dev, "det");
    ch_dtype xdt = (ch_dtype)x->dt, cdt = compute_dtype(xdt);
    ch_dtype rdt = xdt == CH_FLOAT16 ? CH_FLOAT16 : cdt;
    ch_tensor *w, *out = NULL;
    CH_TRY(scratch_copy(x, cdt, &w));
    ch_status st = ch_tensor_new(cdt, x->nd - 2, x->dim, x->dev, &out);
    if (st == CH_OK)
        st = kernel(w, out);
    ch_tensor_release(w);
    return finish(st, out, rdt, result);
}

ch_status ch_solve(const ch_tensor *a, const ch_tensor *b, ch_tensor **result) {
    static const char *fn = "solve";
    CH_TRY(ch_check_pair(fn, "a", a, "b", b));
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
    CH_KERNEL(kernel, solve, a->dev, fn);
    int64_t odim[CH_MAX_DIMS];
    for (int i = 0; i < nb; i++) odim[i] = bdim[i];
    odim[nb] = n;
    if (!vec) odim[nb + 1] = k;
    int ond = nb + (vec ? 1 : 2);

    /* a broadcast to (batch, n, n) and b to (batch, n, k), both in cdt */
    ch_tensor *ab = NULL, *bb = NULL, *A = NULL, *B = NULL, *Bm = NULL, *out = NULL, *outm = NULL;
    ch_status st;
    int64_t adim[CH_MAX_DIMS + 2], mdim[CH_MAX_DIMS + 2];
    for (int i = 0; i < nb; i++) adim[i] = bdim[i], mdim[i] = bdim[i];
    adim[nb] = n, adim[nb + 1] = n;
    mdim[nb] = n, mdim[nb + 1] = k;
    if ((st = ch_broadcast_to(a, nb + 2, adim, &ab)) != CH_OK) goto done;
    if ((st = ch_broadcast_to(b, ond, odim, &bb)) != CH_OK) goto done;
    if ((st = scratch_copy(ab, cdt, &A)) != CH_OK) goto done;
    if ((st = scratch_copy(bb, cdt, &B)) != CH_OK) goto done;
    if ((st = ch_tensor_new(cdt, ond, odim, a->dev, &out)) != CH_OK) goto done;
    if (n == 0 || k == 0 || ch_numel(nb, bdim) == 0) goto done;
    /* the kernel sees b and the result as (batch, n, k) matrices */
    if ((st = ch_reshape(B, nb + 2, mdim, &Bm)) != CH_OK) goto done;
    if ((st = ch_reshape(out, nb + 2, mdim, &outm)) != CH_OK) goto done;
    {
        int64_t bad = -1;
        int pivot = 0;
        st = kernel(A, Bm, outm, &bad, &pivot);
        if (st == CH_OK && bad >= 0) {
            char bs[128];
            st = ch_fail(CH_ERR_ARG, "solve: matrix a is singular%s (pivot %d is zero)", batch_str(bs, sizeof bs, ab, bad),
                         pivot);
        }
    }
done:
    ch_tensor_release(ab);
    ch_tensor_release(bb);
    ch_tensor_release(A);
    ch_tensor_release(B);
    ch_tensor_release(Bm);
    ch_tensor_release(outm);
    return finish(st, out, rdt, result);
}

ch_status ch_cholesky(const ch_tensor *x, ch_tensor **result) {
    CH_TRY(square_x("cholesky", x));
    CH_KERNEL(kernel, cholesky, x->dev, "cholesky");
    return factor_copy("cholesky", x, kernel, "not positive definite", "its leading minor of order ", " is not",
                       result);
}

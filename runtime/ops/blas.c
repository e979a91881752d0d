/*
 * blas.c -- front doors of the matrix products: matmul, gemm, linear, and
 * dot, tensordot, outer and trace composed from them (kernels: cpu/blas.c,
 * cuda/matmul.c).  Shapes are checked here, with the messages users see;
 * the kernels choose layouts and BLAS calls.
 */
#include "prologue.h"

/* Logical (rows, cols) of a matmul operand: a 1-D a is a row, a 1-D b a
 * column; transposition swaps the last two axes of 2-D and higher. */
static void mat_shape(const ch_tensor *x, int trans, int one_d_as_row, int64_t *R, int64_t *C) {
    if (x->nd == 1) {
        *R = one_d_as_row ? 1 : x->dim[0];
        *C = one_d_as_row ? x->dim[0] : 1;
        return;
    }
    *R = x->dim[x->nd - 2];
    *C = x->dim[x->nd - 1];
    if (trans) {
        int64_t t = *R;
        *R = *C;
        *C = t;
    }
}

/* x in dtype dt: itself (retained, any layout) or a converted copy. */
static ch_status as_dtype(const ch_tensor *x, ch_dtype dt, ch_tensor **out) {
    if (x->dt == (int)dt) {
        ch_tensor_retain((ch_tensor *)x);
        *out = (ch_tensor *)x;
        return CH_OK;
    }
    return ch_astype(x, dt, out);
}

ch_status ch_matmul(const ch_tensor *a, const ch_tensor *b, int transa, int transb, ch_tensor **result) {
    static const char *fn = "matmul";
    CH_TRY(ch_check_pair(fn, "a", a, "b", b));
    if (a->nd == 0 || b->nd == 0)
        return ch_fail(CH_ERR_SHAPE, "matmul: operand %s is 0-d (matmul needs at least 1-d operands; use mul for scalars)",
                       a->nd == 0 ? "a" : "b");
    CH_KERNEL(kernel, matmul, a->dev, fn);
    int64_t aR, aC, bR, bC;
    mat_shape(a, transa, 1, &aR, &aC);
    mat_shape(b, transb, 0, &bR, &bC);
    if (aC != bR) {
        char sa[CH_SHAPE_BUF], sb[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "matmul: shapes %s%s and %s%s do not match: a has %lld columns but b has %lld rows",
                       ch_shape_str(sa, sizeof sa, a->nd, a->dim), transa && a->nd > 1 ? " (transposed)" : "",
                       ch_shape_str(sb, sizeof sb, b->nd, b->dim), transb && b->nd > 1 ? " (transposed)" : "",
                       (long long)aC, (long long)bR);
    }
    /* batch axes broadcast */
    int nba = a->nd > 2 ? a->nd - 2 : 0, nbb = b->nd > 2 ? b->nd - 2 : 0, nb;
    int64_t odim[CH_MAX_DIMS];
    CH_TRY(ch_broadcast_shape(nba, a->dim, nbb, b->dim, &nb, odim, fn));
    int ond = nb;
    if (a->nd > 1) odim[ond++] = aR;
    if (b->nd > 1) odim[ond++] = bC;
    ch_dtype rdt = ch_promote((ch_dtype)a->dt, (ch_dtype)b->dt);
    ch_tensor *A = NULL, *B = NULL, *out = NULL;
    ch_status st = ch_tensor_new(rdt, ond, odim, a->dev, &out);
    if (st == CH_OK && out->numel > 0) {
        st = as_dtype(a, rdt, &A);
        if (st == CH_OK) st = as_dtype(b, rdt, &B);
        if (st == CH_OK) st = kernel(A, B, transa, transb, out);
    }
    ch_tensor_release(A);
    ch_tensor_release(B);
    return ch_hand_over(st, out, result);
}

ch_status ch_gemm(int transa, int transb, double alpha, const ch_tensor *a, const ch_tensor *b, double beta,
                  ch_tensor *c) {
    static const char *fn = "gemm";
    CH_CHECK_ARG(a, fn, "a");
    CH_CHECK_ARG(b, fn, "b");
    CH_CHECK_ARG(c, fn, "c");
    CH_TRY(ch_same_device(fn, "a", a, "b", b));
    CH_TRY(ch_same_device(fn, "a", a, "c", c));
    if (a->nd != 2 || b->nd != 2 || c->nd != 2)
        return ch_fail(CH_ERR_SHAPE, "gemm: a, b and c must be 2-d (got %d-d, %d-d and %d-d)", a->nd, b->nd, c->nd);
    ch_dtype dt = (ch_dtype)c->dt;
    if (dt != CH_FLOAT32 && dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "gemm: c must be float32 or float64 (got %s)", ch_dtype_name(dt));
    int64_t aR, aC, bR, bC;
    mat_shape(a, transa, 1, &aR, &aC);
    mat_shape(b, transb, 0, &bR, &bC);
    if (aC != bR || aR != c->dim[0] || bC != c->dim[1]) {
        char sa[CH_SHAPE_BUF], sb[CH_SHAPE_BUF], sc[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE,
                       "gemm: op(a) is %lldx%lld and op(b) is %lldx%lld, so c must be %lldx%lld and the inner sizes "
                       "equal (a %s%s, b %s%s, c %s)",
                       (long long)aR, (long long)aC, (long long)bR, (long long)bC, (long long)aR, (long long)bC,
                       ch_shape_str(sa, sizeof sa, 2, a->dim), transa ? " transposed" : "",
                       ch_shape_str(sb, sizeof sb, 2, b->dim), transb ? " transposed" : "",
                       ch_shape_str(sc, sizeof sc, 2, c->dim));
    }
    CH_KERNEL(kernel, gemm, c->dev, fn);
    if (c->numel == 0)
        return CH_OK;
    ch_tensor *A = NULL, *B = NULL;
    ch_status st = as_dtype(a, dt, &A);
    if (st == CH_OK) st = as_dtype(b, dt, &B);
    if (st == CH_OK) st = kernel(transa, transb, alpha, A, B, beta, c);
    ch_tensor_release(A);
    ch_tensor_release(B);
    return st;
}

/* y = x W^T + b in one call (Linear's forward): y's rows start as b and
 * the product is added by gemm with beta = 1, so the bias costs one pass
 * over y and no broadcast temporary. */
ch_status ch_linear(const ch_tensor *x, const ch_tensor *W, const ch_tensor *b, ch_tensor **result) {
    static const char *fn = "linear";
    CH_CHECK_ARG(x, fn, "x");
    CH_CHECK_ARG(W, fn, "W");
    if (b) CH_CHECK_ARG(b, fn, "b");
    CH_TRY(ch_same_device(fn, "x", x, "W", W));
    if (b) CH_TRY(ch_same_device(fn, "x", x, "b", b));
    if (!result) return ch_fail(CH_ERR_ARG, "linear: result must not be NULL");
    if (x->nd != 2 || W->nd != 2)
        return ch_fail(CH_ERR_SHAPE, "linear: x and W must be 2-d (got %d-d and %d-d)", x->nd, W->nd);
    ch_dtype dt = (ch_dtype)x->dt;
    if (dt != CH_FLOAT32 && dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "linear: x must be float32 or float64 (got %s)", ch_dtype_name(dt));
    if (W->dt != x->dt || (b && b->dt != x->dt))
        return ch_fail(CH_ERR_DTYPE, "linear: x, W and b must have one dtype (got %s, %s and %s)", ch_dtype_name(dt),
                       ch_dtype_name((ch_dtype)W->dt), b ? ch_dtype_name((ch_dtype)b->dt) : "none");
    int64_t M = x->dim[0], K = x->dim[1], N = W->dim[0];
    if (W->dim[1] != K)
        return ch_fail(CH_ERR_SHAPE, "linear: x has %lld input features but W has %lld columns", (long long)K,
                       (long long)W->dim[1]);
    if (b && (b->nd != 1 || b->dim[0] != N))
        return ch_fail(CH_ERR_SHAPE, "linear: b must have shape (%lld,) to match W", (long long)N);
    int64_t odim[2] = {M, N};
    ch_tensor *y;
    CH_TRY(ch_tensor_new(dt, 2, odim, x->dev, &y));
    /* without b, beta = 0 never reads y */
    ch_status st = b && y->numel ? ch_copy_into(y, b) : CH_OK;
    if (st == CH_OK)
        st = ch_gemm(0, 1, 1.0, x, W, b ? 1.0 : 0.0, y);
    return ch_hand_over(st, y, result);
}

/* numpy.dot with a 0-d operand is a product with a scalar. */
static ch_status scalar_mul(const ch_tensor *x, const ch_tensor *s, ch_tensor **result) {
    return ch_binary(CH_MUL, x, s, NULL, result);
}

ch_status ch_dot(const ch_tensor *a, const ch_tensor *b, ch_tensor **result) {
    CH_TRY(ch_check_pair("dot", "a", a, "b", b));
    if (a->nd == 0) return scalar_mul(b, a, result);
    if (b->nd == 0) return scalar_mul(a, b, result);
    if (b->nd <= 2) {
        int64_t ka = a->dim[a->nd - 1], kb = b->dim[b->nd == 1 ? 0 : b->nd - 2];
        if (ka != kb) {
            char sa[CH_SHAPE_BUF], sb[CH_SHAPE_BUF];
            return ch_fail(CH_ERR_SHAPE, "dot: shapes %s and %s are not aligned: %lld (last axis of a) != %lld (%s of b)",
                           ch_shape_str(sa, sizeof sa, a->nd, a->dim), ch_shape_str(sb, sizeof sb, b->nd, b->dim),
                           (long long)ka, (long long)kb, b->nd == 1 ? "axis 0" : "second-to-last axis");
        }
        if (a->nd <= 2 || b->nd == 1)
            return ch_matmul(a, b, 0, 0, result);
    }
    /* N-D: sum over the last axis of a and the second-to-last of b */
    int32_t axa = a->nd - 1, axb = b->nd >= 2 ? b->nd - 2 : 0;
    return ch_tensordot(a, b, &axa, &axb, 1, result);
}

ch_status ch_tensordot(const ch_tensor *a, const ch_tensor *b, const int32_t *axes_a, const int32_t *axes_b, int naxes,
                       ch_tensor **result) {
    static const char *fn = "tensordot";
    CH_TRY(ch_check_pair(fn, "a", a, "b", b));
    if (naxes < 0 || naxes > a->nd || naxes > b->nd)
        return ch_fail(CH_ERR_ARG, "tensordot: %d contracted axes for a %d-d and a %d-d tensor", naxes, a->nd, b->nd);
    int ca[CH_MAX_DIMS], cb[CH_MAX_DIMS];
    bool useda[CH_MAX_DIMS] = {0}, usedb[CH_MAX_DIMS] = {0};
    int64_t K = 1;
    for (int i = 0; i < naxes; i++) {
        ca[i] = axes_a[i];
        cb[i] = axes_b[i];
        CH_TRY(ch_norm_axis(&ca[i], a->nd, fn));
        CH_TRY(ch_norm_axis(&cb[i], b->nd, fn));
        if (useda[ca[i]] || usedb[cb[i]])
            return ch_fail(CH_ERR_ARG, "tensordot: axis %d of %s is listed twice", useda[ca[i]] ? ca[i] : cb[i],
                           useda[ca[i]] ? "a" : "b");
        useda[ca[i]] = usedb[cb[i]] = true;
        if (a->dim[ca[i]] != b->dim[cb[i]]) {
            char sa[CH_SHAPE_BUF], sb[CH_SHAPE_BUF];
            return ch_fail(CH_ERR_SHAPE, "tensordot: shape mismatch for contracted pair %d: axis %d of a %s has %lld, "
                           "axis %d of b %s has %lld", i, ca[i], ch_shape_str(sa, sizeof sa, a->nd, a->dim),
                           (long long)a->dim[ca[i]], cb[i], ch_shape_str(sb, sizeof sb, b->nd, b->dim),
                           (long long)b->dim[cb[i]]);
        }
        K *= a->dim[ca[i]];
    }
    /* a -> (free_a..., contracted...), b -> (contracted..., free_b...) */
    int32_t pa[CH_MAX_DIMS], pb[CH_MAX_DIMS];
    int64_t odim[2 * CH_MAX_DIMS];
    int na = 0, ond = 0;
    int64_t Ma = 1, Nb = 1;
    for (int i = 0; i < a->nd; i++)
        if (!useda[i]) { pa[na++] = i; odim[ond++] = a->dim[i]; Ma *= a->dim[i]; }
    for (int i = 0; i < naxes; i++) pa[na++] = ca[i];
    int nbb = 0;
    for (int i = 0; i < naxes; i++) pb[nbb++] = cb[i];
    for (int i = 0; i < b->nd; i++)
        if (!usedb[i]) { pb[nbb++] = i; odim[ond++] = b->dim[i]; Nb *= b->dim[i]; }
    if (ond > CH_MAX_DIMS)
        return ch_fail(CH_ERR_SHAPE, "tensordot: the result would have %d axes (at most %d)", ond, CH_MAX_DIMS);
    ch_tensor *ta = NULL, *tb = NULL, *ra = NULL, *rb = NULL, *prod = NULL;
    ch_status st;
    int64_t s2a[2] = {Ma, K}, s2b[2] = {K, Nb};
    if ((st = ch_permute(a, pa, &ta)) != CH_OK) goto done;
    if ((st = ch_permute(b, pb, &tb)) != CH_OK) goto done;
    if ((st = ch_reshape(ta, 2, s2a, &ra)) != CH_OK) goto done;
    if ((st = ch_reshape(tb, 2, s2b, &rb)) != CH_OK) goto done;
    if ((st = ch_matmul(ra, rb, 0, 0, &prod)) != CH_OK) goto done;
    st = ch_reshape(prod, ond, odim, result);
done:
    ch_tensor_release(ta);
    ch_tensor_release(tb);
    ch_tensor_release(ra);
    ch_tensor_release(rb);
    ch_tensor_release(prod);
    return st;
}

ch_status ch_outer(const ch_tensor *a, const ch_tensor *b, ch_tensor **result) {
    CH_TRY(ch_check_pair("outer", "a", a, "b", b));
    int64_t sa[2] = {a->numel, 1}, sb[2] = {1, b->numel};
    ch_tensor *ra = NULL, *rb = NULL;
    ch_status st;
    if ((st = ch_reshape(a, 2, sa, &ra)) == CH_OK && (st = ch_reshape(b, 2, sb, &rb)) == CH_OK)
        st = ch_matmul(ra, rb, 0, 0, result);
    ch_tensor_release(ra);
    ch_tensor_release(rb);
    return st;
}

/* The sum of the main diagonal over the first two axes: NumPy sums small
 * integers and bool in int64 (as the sum reduction does). */
ch_status ch_trace(const ch_tensor *x, ch_tensor **result) {
    CH_CHECK_ARG(x, "trace", "x");
    if (x->nd < 2)
        return ch_fail(CH_ERR_SHAPE, "trace: x must be at least 2-d (got %d-d)", x->nd);
    ch_tensor *d;
    CH_TRY(ch_diagonal(x, 0, 0, 1, &d));
    int32_t last = d->nd - 1;
    ch_status st = ch_reduce(CH_SUM, d, &last, 1, 0, 0, result);
    ch_tensor_release(d);
    return st;
}

/*
 * reduce.c -- front doors of the reductions: sum, mean, prod, max, min,
 * argmax, argmin, var, std, logsumexp, all, any, count_nonzero, cumsum,
 * cumprod and sum_to.
 *
 * The input is first brought to its compute type, contiguous (no copy for a
 * contiguous float32/float64 input); the device's reduction kernel then
 * reduces every flagged axis into a new tensor.  mean divides the sum;
 * all/any/count_nonzero reduce 0/1 truth values; var/std/logsumexp are
 * composed from reductions and elementwise ops, so they run wherever those
 * do.
 */
#include "prologue.h"

#include <math.h>

static const char *const reduce_names[] = {CH_REDUCE_OP_LIST(CH_OP_NAME)};
_Static_assert(sizeof reduce_names / sizeof *reduce_names == CH_NREDUCE, "reduce names: one per list entry");

/* The compute type of a dtype: float16 computes in float32, integers and
 * bools in int64. */
static ch_dtype compute_of(ch_dtype dt) {
    if (dt == CH_FLOAT16 || dt == CH_FLOAT32)
        return CH_FLOAT32;
    if (dt == CH_FLOAT64)
        return CH_FLOAT64;
    return CH_INT64;
}

/* Reduces the contiguous xc (its compute dtype) over the axes flagged in
 * red with reduction `op` on xc's device, into a new tensor of shape oshape:
 * dtype xc's, or int64 for the arg ops. */
static ch_status run_reduce(int op, const ch_tensor *xc, const bool *red, int ond, const int64_t *oshape,
                            const char *fn, ch_tensor **result) {
    CH_KERNEL(kernel, reduce, xc->dev, fn);
    bool arg = op == CH_ARGMAX || op == CH_ARGMIN;
    uint8_t r[CH_MAX_DIMS];
    for (int i = 0; i < xc->nd; i++)
        r[i] = red[i];
    ch_tensor *out;
    CH_TRY(ch_tensor_new(arg ? CH_INT64 : (ch_dtype)xc->dt, ond, oshape, xc->dev, &out));
    ch_status st = kernel(op, xc, r, out);
    return ch_hand_over(st, out, result);
}

/* Casts t (consumed) to dtype dt when it differs. */
static ch_status cast_to(ch_tensor **t, ch_dtype dt) {
    if ((*t)->dt == (int)dt)
        return CH_OK;
    ch_tensor *c;
    ch_status st = ch_astype(*t, dt, &c);
    ch_tensor_release(*t);
    *t = st == CH_OK ? c : NULL;
    return st;
}

/* Parses axes into a mask; counts the reduced elements; builds both output
 * shapes (keepdims and not). */
typedef struct red_axes {
    bool red[CH_MAX_DIMS];
    int64_t count;                 /* elements reduced into each output */
    int ond;
    int64_t oshape[CH_MAX_DIMS];   /* final output shape */
    int64_t kshape[CH_MAX_DIMS];   /* keepdims shape (x->nd dims) */
} red_axes;

static ch_status parse_axes(const ch_tensor *x, const int32_t *axes, int naxes, int keepdims, const char *fn,
                            red_axes *ra) {
    int nd = x->nd;
    for (int i = 0; i < nd; i++)
        ra->red[i] = axes == NULL;
    if (axes) {
        if (naxes < 0 || naxes > CH_MAX_DIMS)
            return ch_fail(CH_ERR_ARG, "%s: %d axes given (expected 0..%d)", fn, naxes, CH_MAX_DIMS);
        for (int k = 0; k < naxes; k++) {
            int a = axes[k];
            CH_TRY(ch_norm_axis(&a, nd, fn));
            if (ra->red[a])
                return ch_fail(CH_ERR_ARG, "%s: axis %d is given twice", fn, axes[k]);
            ra->red[a] = true;
        }
    }
    ra->count = 1;
    ra->ond = 0;
    for (int i = 0; i < nd; i++) {
        ra->kshape[i] = ra->red[i] ? 1 : x->dim[i];
        if (ra->red[i])
            ra->count *= x->dim[i];
        if (keepdims)
            ra->oshape[ra->ond++] = ra->kshape[i];
        else if (!ra->red[i])
            ra->oshape[ra->ond++] = x->dim[i];
    }
    return CH_OK;
}

static ch_status reduce_impl(ch_reduce_op op, const ch_tensor *x, const int32_t *axes, int naxes, int keepdims,
                             double param, ch_tensor **result);

/* var/std: mean, squared deviations, their sum / max(n - ddof, 0) (NumPy's
 * two-pass formula), all in the compute type. */
static ch_status var_impl(bool is_std, const ch_tensor *xc, const int32_t *axes, int naxes, int keepdims,
                          double ddof, const red_axes *ra, ch_tensor **result) {
    ch_tensor *mean = NULL, *d = NULL, *s = NULL;
    ch_status st = reduce_impl(CH_MEAN, xc, axes, naxes, 1, 0, &mean);
    if (st == CH_OK)
        st = ch_binary(CH_SUB, xc, mean, NULL, &d);
    if (st == CH_OK)
        st = ch_binary(CH_MUL, d, d, d, NULL);
    if (st == CH_OK)
        st = reduce_impl(CH_SUM, d, axes, naxes, keepdims, 0, &s);
    if (st == CH_OK) {
        double div = (double)ra->count - ddof;
        st = ch_binary_scalar(CH_DIV, s, div > 0 ? div : 0, 1, 0, s, NULL);
    }
    if (st == CH_OK && is_std)
        st = ch_unary(CH_SQRT, s, s, NULL);
    ch_tensor_release(mean);
    ch_tensor_release(d);
    return ch_hand_over(st, s, result);
}

/* logsumexp: m + log(sum(exp(x - m))) with m the max, replaced by 0 where
 * it is not finite (all -inf gives -inf, an inf gives inf, NaN stays). */
static ch_status logsumexp_impl(const ch_tensor *xc, const int32_t *axes, int naxes, int keepdims,
                                const red_axes *ra, ch_tensor **result) {
    ch_dtype ct = (ch_dtype)xc->dt;
    ch_tensor *m = NULL, *e = NULL, *s = NULL, *r = NULL;
    ch_status st;
    if (ra->count == 0)
        st = ch_full(ct, xc->nd, ra->kshape, 0, xc->dev, &m);
    else
        st = reduce_impl(CH_MAX, xc, axes, naxes, 1, 0, &m);
    /* m = 0 where it is infinite (NaN stays) */
    ch_tensor *inf = NULL, *zero = NULL;
    if (st == CH_OK)
        st = ch_unary(CH_ISINF, m, NULL, &inf);
    if (st == CH_OK)
        st = ch_full(ct, 0, NULL, 0, m->dev, &zero);
    if (st == CH_OK)
        st = ch_where(inf, zero, m, m, NULL);
    ch_tensor_release(inf);
    ch_tensor_release(zero);
    if (st == CH_OK)
        st = ch_binary(CH_SUB, xc, m, NULL, &e);
    if (st == CH_OK)
        st = ch_unary(CH_EXP, e, e, NULL);
    if (st == CH_OK)
        st = reduce_impl(CH_SUM, e, axes, naxes, 1, 0, &s);
    if (st == CH_OK)
        st = ch_unary(CH_LOG, s, s, NULL);
    if (st == CH_OK)
        st = ch_binary(CH_ADD, s, m, s, NULL);
    if (st == CH_OK) {
        int64_t stride[CH_MAX_DIMS];
        ch_contiguous_strides(ra->ond, ra->oshape, stride);
        st = ch_view_of(s, ra->ond, ra->oshape, stride, s->offset, &r);
    }
    ch_tensor_release(m);
    ch_tensor_release(e);
    ch_tensor_release(s);
    if (st != CH_OK)
        return st;
    (void)keepdims;
    *result = r;
    return CH_OK;
}

static ch_status reduce_impl(ch_reduce_op op, const ch_tensor *x, const int32_t *axes, int naxes, int keepdims,
                             double param, ch_tensor **result) {
    if ((unsigned)op >= CH_NREDUCE)
        return ch_fail(CH_ERR_ARG, "reduce: invalid op code %d", (int)op);
    const char *fn = reduce_names[op];
    CH_CHECK_ARG(x, fn, "x");
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: result is NULL", fn);
    bool arg = op == CH_ARGMAX || op == CH_ARGMIN;
    if (arg && axes && naxes > 1)
        return ch_fail(CH_ERR_ARG, "%s: takes a single axis or none (got %d axes)", fn, naxes);
    red_axes ra;
    CH_TRY(parse_axes(x, axes, naxes, keepdims, fn, &ra));
    ch_dtype dt = (ch_dtype)x->dt, ct = compute_of(dt), res;
    bool is_float = ch_dtype_is_float(dt);
    switch (op) {
    case CH_SUM: case CH_PROD: res = is_float ? dt : CH_INT64; break;
    case CH_MEAN: case CH_VAR: case CH_STD: case CH_LOGSUMEXP:
        res = is_float ? dt : CH_FLOAT64;
        ct = compute_of(res);
        break;
    case CH_MAX: case CH_MIN: res = dt; break;
    case CH_ARGMAX: case CH_ARGMIN: res = CH_INT64; break;
    case CH_ALL: case CH_ANY: res = CH_BOOL; ct = CH_INT64; break;
    default: res = CH_INT64; ct = CH_INT64; break; /* count_nonzero */
    }
    if ((op == CH_MAX || op == CH_MIN || arg) && ra.count == 0)
        {
        char s[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_ARG, "%s: cannot reduce over a zero-size axis of a tensor of shape %s "
                       "(%s has no identity)", fn, ch_shape_str(s, sizeof s, x->nd, x->dim), fn);
    }
    /* the input in its compute type, contiguous; truth tests go through bool */
    ch_tensor *xc = NULL;
    if (op == CH_ALL || op == CH_ANY || op == CH_COUNT_NONZERO) {
        ch_tensor *xb;
        CH_TRY(ch_contiguous_as(x, CH_BOOL, &xb));
        ch_status st = ch_astype(xb, CH_INT64, &xc);
        ch_tensor_release(xb);
        CH_TRY(st);
    } else {
        CH_TRY(ch_contiguous_as(x, ct, &xc));
    }
    ch_tensor *r = NULL;
    ch_status st = CH_OK;
    if (op == CH_VAR || op == CH_STD) {
        st = var_impl(op == CH_STD, xc, axes, naxes, keepdims, param, &ra, &r);
    } else if (op == CH_LOGSUMEXP) {
        st = logsumexp_impl(xc, axes, naxes, keepdims, &ra, &r);
    } else {
        /* ANY and COUNT_NONZERO sum the 0/1 truth values, ALL takes their minimum */
        int kop = op == CH_ALL ? CH_MIN : (op == CH_ANY || op == CH_COUNT_NONZERO || op == CH_MEAN) ? CH_SUM : op;
        if (arg && !axes) {
            /* over the flattened tensor: every axis is one C-order run */
            bool all[CH_MAX_DIMS];
            for (int i = 0; i < x->nd; i++)
                all[i] = true;
            st = run_reduce(kop, xc, all, ra.ond, ra.oshape, fn, &r);
        } else {
            st = run_reduce(kop, xc, ra.red, ra.ond, ra.oshape, fn, &r);
        }
        /* an empty ANY is then 0 (false), an empty ALL the minimum's identity (true) */
        if (st == CH_OK && op == CH_MEAN) {
            /* divide (not multiply by 1/n), as NumPy, in the compute type */
            st = ch_binary_scalar(CH_DIV, r, (double)ra.count, 0, 0, r, NULL);
        }
    }
    ch_tensor_release(xc);
    CH_TRY(st);
    st = cast_to(&r, res);
    CH_TRY(st);
    *result = r;
    return CH_OK;
}

ch_status ch_reduce(ch_reduce_op op, const ch_tensor *x, const int32_t *axes, int naxes, int keepdims, double param,
                    ch_tensor **result) {
    return reduce_impl(op, x, axes, naxes, keepdims, param, result);
}

/* ---- cumulative ---------------------------------------------------------- */
static ch_status cumulative(bool prod, const ch_tensor *x, int axis, ch_tensor **result) {
    const char *fn = prod ? "cumprod" : "cumsum";
    CH_CHECK_ARG(x, fn, "x");
    CH_TRY(ch_norm_axis(&axis, x->nd, fn));
    CH_KERNEL(kernel, cumulative, x->dev, fn);
    ch_dtype dt = (ch_dtype)x->dt, ct = compute_of(dt);
    ch_dtype res = ch_dtype_is_float(dt) ? dt : CH_INT64;
    ch_tensor *xc, *out;
    CH_TRY(ch_contiguous_as(x, ct, &xc));
    ch_status st = ch_tensor_new(ct, x->nd, x->dim, x->dev, &out);
    int64_t O = 1, R = x->dim[axis], I = 1;
    for (int i = 0; i < axis; i++)
        O *= x->dim[i];
    for (int i = axis + 1; i < x->nd; i++)
        I *= x->dim[i];
    if (st == CH_OK)
        st = kernel(prod, xc, O, R, I, out);
    ch_tensor_release(xc);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    CH_TRY(cast_to(&out, res));
    *result = out;
    return CH_OK;
}

ch_status ch_cumsum(const ch_tensor *x, int axis, ch_tensor **result) { return cumulative(false, x, axis, result); }

ch_status ch_cumprod(const ch_tensor *x, int axis, ch_tensor **result) { return cumulative(true, x, axis, result); }

/* ---- sum_to: the gradient of broadcasting --------------------------------- */
ch_status ch_sum_to(const ch_tensor *x, int ndim, const int64_t *shape, ch_tensor **result) {
    CH_CHECK_ARG(x, "sum_to", "x");  /* a GPU tensor sums there through reduce_impl */
    char sx[CH_SHAPE_BUF], ss[CH_SHAPE_BUF];
    if (ndim < 0 || ndim > x->nd || (ndim > 0 && !shape))
        return ch_fail(CH_ERR_SHAPE, "sum_to: cannot sum a tensor of shape %s to a shape with %d dimensions", 
                       ch_shape_str(sx, sizeof sx, x->nd, x->dim), ndim);
    int lead = x->nd - ndim;
    int32_t axes[CH_MAX_DIMS];
    int naxes = 0;
    for (int i = 0; i < lead; i++)
        axes[naxes++] = i;
    for (int i = 0; i < ndim; i++) {
        int64_t d = x->dim[lead + i];
        if (shape[i] == d)
            continue;
        if (shape[i] != 1)
            return ch_fail(CH_ERR_SHAPE, "sum_to: cannot sum a tensor of shape %s to shape %s (axis %d has "
                           "size %lld, expected %lld or 1)", ch_shape_str(sx, sizeof sx, x->nd, x->dim),
                           ch_shape_str(ss, sizeof ss, ndim, shape), lead + i, (long long)d, (long long)shape[i]);
        axes[naxes++] = lead + i;
    }
    if (naxes == 0) {
        ch_tensor_retain((ch_tensor *)x);
        *result = (ch_tensor *)x;
        return CH_OK;
    }
    ch_tensor *s, *r;
    CH_TRY(reduce_impl(CH_SUM, x, axes, naxes, 1, 0, &s));
    /* keep x's dtype (integer sums come back as int64) */
    CH_TRY(cast_to(&s, (ch_dtype)x->dt));
    int64_t stride[CH_MAX_DIMS];
    ch_contiguous_strides(ndim, shape, stride);
    ch_status st = ch_view_of(s, ndim, shape, stride, s->offset, &r);
    ch_tensor_release(s);
    CH_TRY(st);
    *result = r;
    return CH_OK;
}

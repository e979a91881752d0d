/* softmax_cross_entropy.c -- front door of the fused softmax cross-entropy
 * over axis 1 (kernels: cpu/softmax_cross_entropy.c, cuda/softmax.cu): x
 * (N, C, d1, ...), integer labels t (N, d1, ...).  Labels are checked on
 * the host before anything is computed, so that a bad label never produces
 * numbers; float16 computes in float32.
 */
#include "prologue.h"

#define SCE_FN "softmax_cross_entropy"

/* Label checks: shape (N, d1, ...) and values in 0..C-1 or ignore_label. */
static ch_status check_labels(const ch_tensor *x, const ch_tensor *t, const int64_t *tl, int64_t n,
                              int64_t C, int64_t ignore, int64_t *count) {
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = tl[i];
        if (v == ignore) continue;
        if (v < 0 || v >= C) {
            char buf[CH_SHAPE_BUF];
            return ch_fail(CH_ERR_ARG,
                           SCE_FN ": label t[%lld] (flat position in t of shape %s) is %lld, out of range for "
                           "%lld classes (expected 0..%lld, or ignore_label %lld)",
                           (long long)i, ch_shape_str(buf, sizeof buf, t->nd, t->dim), (long long)v,
                           (long long)C, (long long)(C - 1), (long long)ignore);
        }
        cnt++;
    }
    CH_UNUSED(x);
    *count = cnt;
    return CH_OK;
}

/* Replaces *t (a working-dtype result) by a copy of dtype dt. */
static ch_status cast_result(ch_tensor **t, ch_dtype dt) {
    if (!*t || (*t)->dt == (int32_t)dt) return CH_OK;
    ch_tensor *o = NULL;
    ch_status st = ch_astype(*t, dt, &o);
    ch_tensor_release(*t);
    *t = st == CH_OK ? o : NULL;
    return st;
}

ch_status ch_softmax_cross_entropy(const ch_tensor *x, const ch_tensor *t, const ch_tensor *class_weight,
                                   int64_t ignore_label, ch_tensor **loss, ch_tensor **grad, ch_tensor **y,
                                   int64_t *count) {
    CH_CHECK_ARG(x, SCE_FN, "x");
    CH_CHECK_ARG(t, SCE_FN, "t");
    if (x->dev != t->dev)
        return ch_same_device(SCE_FN, "x", x, "t", t);
    if (!loss) return ch_fail(CH_ERR_ARG, SCE_FN ": loss result pointer is NULL");
    if (!ch_dtype_is_float((ch_dtype)x->dt))
        return ch_fail(CH_ERR_DTYPE, SCE_FN ": x must be a float tensor (got %s)", ch_dtype_name((ch_dtype)x->dt));
    if (ch_dtype_is_float((ch_dtype)t->dt) || t->dt == CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, SCE_FN ": labels t must be an integer tensor (int32 or int64), got %s",
                       ch_dtype_name((ch_dtype)t->dt));
    char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
    if (x->nd < 2)
        return ch_fail(CH_ERR_SHAPE, SCE_FN ": x must have at least 2 dimensions (N, C, ...), got shape %s",
                       ch_shape_str(b1, sizeof b1, x->nd, x->dim));
    int ok = t->nd == x->nd - 1 && t->dim[0] == x->dim[0];
    for (int i = 2; ok && i < x->nd; i++) ok = t->dim[i - 1] == x->dim[i];
    if (!ok)
        return ch_fail(CH_ERR_SHAPE, SCE_FN ": labels t of shape %s do not fit x of shape %s (expected x's shape "
                       "without axis 1)", ch_shape_str(b1, sizeof b1, t->nd, t->dim),
                       ch_shape_str(b2, sizeof b2, x->nd, x->dim));
    CH_KERNEL(kernel, softmax_cross_entropy, x->dev, SCE_FN);
    int64_t N = x->dim[0], C = x->dim[1], S = 1;
    for (int i = 2; i < x->nd; i++) S *= x->dim[i];
    if (class_weight) {
        CH_CHECK_ARG(class_weight, SCE_FN, "class_weight");
        if (class_weight->dev != x->dev)
            return ch_same_device(SCE_FN, "x", x, "class_weight", class_weight);
        if (class_weight->nd != 1 || class_weight->dim[0] != C)
            return ch_fail(CH_ERR_SHAPE, SCE_FN ": class_weight must have shape (%lld,) (one weight per class), got %s",
                           (long long)C, ch_shape_str(b1, sizeof b1, class_weight->nd, class_weight->dim));
    }
    ch_dtype wt = x->dt == CH_FLOAT64 ? CH_FLOAT64 : CH_FLOAT32;
    ch_tensor *xc = NULL, *tc = NULL, *wc = NULL, *lo = NULL, *go = NULL, *yo = NULL;
    ch_status st = ch_contiguous_as(t, CH_INT64, &tc);
    int64_t cnt = 0;
    if (st == CH_OK) {
        /* on the host (a copy for a GPU tensor): a bad label never produces numbers */
        ch_tensor *th = NULL;
        st = ch_to_device(tc, CH_CPU, &th);
        if (st == CH_OK) st = check_labels(x, t, (const int64_t *)ch_base(th), th->numel, C, ignore_label, &cnt);
        ch_tensor_release(th);
    }
    if (st == CH_OK) st = ch_contiguous_as(x, wt, &xc);
    if (st == CH_OK && class_weight) st = ch_contiguous_as(class_weight, wt, &wc);
    if (st == CH_OK) st = ch_tensor_new(wt, t->nd, t->dim, x->dev, &lo);
    if (st == CH_OK && grad) st = ch_tensor_new(wt, x->nd, x->dim, x->dev, &go);
    if (st == CH_OK && y) st = ch_tensor_new(wt, x->nd, x->dim, x->dev, &yo);
    if (st == CH_OK && N * S > 0) {
        ch_softmax_args s = {.name = SCE_FN, .O = N, .N = C, .I = S, .x = xc, .out = lo, .labels = tc, .weight = wc,
                             .ignore_label = ignore_label, .grad = go, .prob = yo};
        st = kernel(&s);
    }
    if (st == CH_OK) st = cast_result(&lo, (ch_dtype)x->dt);
    if (st == CH_OK) st = cast_result(&go, (ch_dtype)x->dt);
    if (st == CH_OK) st = cast_result(&yo, (ch_dtype)x->dt);
    ch_tensor_release(xc);
    ch_tensor_release(tc);
    ch_tensor_release(wc);
    if (st != CH_OK) {
        ch_tensor_release(lo);
        ch_tensor_release(go);
        ch_tensor_release(yo);
        return st;
    }
    *loss = lo;
    if (grad) *grad = go;
    if (y) *y = yo;
    if (count) *count = cnt;
    return CH_OK;
}

/* ctc.c -- front door of connectionist temporal classification (kernel:
 * runtime/cpu/ctc.c): checks, lengths and labels (their values are checked
 * on a CPU copy), the steps packed into one (T, B, V) float64 tensor on the
 * inputs' device, results in the inputs' dtype.
 */
#include "prologue.h"

#include <stdlib.h>

#define CTC_FN "connectionist_temporal_classification"

/* Reads an optional (B,) integer length vector into out (default dflt). */
static ch_status read_lengths(const ch_tensor *v, const ch_tensor *x0, int64_t B, int64_t dflt, int64_t lo,
                              const char *arg, int64_t *out) {
    if (!v) {
        for (int64_t b = 0; b < B; b++) out[b] = dflt;
        return CH_OK;
    }
    CH_CHECK_ARG(v, CTC_FN, arg);
    CH_TRY(ch_same_device(CTC_FN, "x", x0, arg, v));
    if (ch_dtype_is_float((ch_dtype)v->dt) || v->dt == CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, CTC_FN ": %s must be an integer tensor, got %s", arg,
                       ch_dtype_name((ch_dtype)v->dt));
    if (v->nd != 1 || v->dim[0] != B) {
        char buf[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, CTC_FN ": %s must have shape (%lld,), got %s", arg, (long long)B,
                       ch_shape_str(buf, sizeof buf, v->nd, v->dim));
    }
    ch_tensor *c = NULL;
    CH_TRY(ch_host_int64(v, &c));
    const int64_t *p = (const int64_t *)ch_base(c);
    for (int64_t b = 0; b < B; b++) {
        if (p[b] < lo || p[b] > dflt) {
            ch_status st = ch_fail(CH_ERR_ARG, CTC_FN ": %s[%lld] = %lld is out of range (expected %lld..%lld)", arg,
                                   (long long)b, (long long)p[b], (long long)lo, (long long)dflt);
            ch_tensor_release(c);
            return st;
        }
        out[b] = p[b];
    }
    ch_tensor_release(c);
    return CH_OK;
}

ch_status ch_ctc_loss(int T, ch_tensor *const *xs, const ch_tensor *t, const ch_tensor *input_length,
                      const ch_tensor *label_length, int64_t blank, ch_tensor **loss, ch_tensor **grad) {
    char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
    if (T < 1 || !xs) return ch_fail(CH_ERR_ARG, CTC_FN ": x must be a non-empty list of (B, V) arrays");
    if (!loss) return ch_fail(CH_ERR_ARG, CTC_FN ": loss result pointer is NULL");
    for (int i = 0; i < T; i++) {
        CH_CHECK_ARG(xs[i], CTC_FN, "x");
        if (i > 0) CH_TRY(ch_same_device(CTC_FN, "x", xs[0], "x", xs[i]));
        if (!ch_dtype_is_float((ch_dtype)xs[i]->dt))
            return ch_fail(CH_ERR_DTYPE, CTC_FN ": x[%d] must be a float tensor, got %s", i,
                           ch_dtype_name((ch_dtype)xs[i]->dt));
        if (xs[i]->nd != 2)
            return ch_fail(CH_ERR_SHAPE, CTC_FN ": x[%d] must be 2-d (B, V), got shape %s", i,
                           ch_shape_str(b1, sizeof b1, xs[i]->nd, xs[i]->dim));
        if (xs[i]->dt != xs[0]->dt || !ch_same_shape(xs[i], xs[0]))
            return ch_fail(CH_ERR_SHAPE, CTC_FN ": x[%d] is %s %s but x[0] is %s %s (all steps must match)", i,
                           ch_dtype_name((ch_dtype)xs[i]->dt), ch_shape_str(b1, sizeof b1, xs[i]->nd, xs[i]->dim),
                           ch_dtype_name((ch_dtype)xs[0]->dt), ch_shape_str(b2, sizeof b2, xs[0]->nd, xs[0]->dim));
    }
    int64_t B = xs[0]->dim[0], V = xs[0]->dim[1];
    int dev = xs[0]->dev;
    CH_CHECK_ARG(t, CTC_FN, "t");
    CH_TRY(ch_same_device(CTC_FN, "x", xs[0], "t", t));
    if (ch_dtype_is_float((ch_dtype)t->dt) || t->dt == CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, CTC_FN ": labels t must be an integer tensor (int32), got %s",
                       ch_dtype_name((ch_dtype)t->dt));
    if (t->nd != 2 || t->dim[0] != B)
        return ch_fail(CH_ERR_SHAPE, CTC_FN ": labels t must have shape (%lld, L), got %s", (long long)B,
                       ch_shape_str(b1, sizeof b1, t->nd, t->dim));
    if (blank < 0 || blank >= V)
        return ch_fail(CH_ERR_ARG, CTC_FN ": blank_symbol %lld is out of range for %lld symbols (expected 0..%lld)",
                       (long long)blank, (long long)V, (long long)(V - 1));
    CH_KERNEL(kernel, ctc_loss, dev, CTC_FN);
    int64_t L = t->dim[1];
    int64_t *lens = malloc(sizeof(int64_t) * (size_t)(2 * (B > 0 ? B : 1)));
    if (!lens) return ch_fail(CH_ERR_MEMORY, CTC_FN ": out of memory");
    int64_t *tlen = lens, *llen = lens + B;
    ch_status st = read_lengths(input_length, xs[0], B, T, 1, "input_length", tlen);
    if (st == CH_OK) st = read_lengths(label_length, xs[0], B, L, 0, "label_length", llen);
    ch_tensor *tc = NULL, *th = NULL, *xc = NULL, *lo = NULL, *go = NULL, *lo64 = NULL, *go64 = NULL;
    /* the labels on the device for the kernel, checked on the CPU */
    if (st == CH_OK) st = ch_contiguous_as(t, CH_INT64, &tc);
    if (st == CH_OK) st = ch_host_int64(tc, &th);
    if (st == CH_OK) {
        const int64_t *tl = (const int64_t *)ch_base(th);
        for (int64_t b = 0; b < B && st == CH_OK; b++)
            for (int64_t j = 0; j < llen[b]; j++) {
                int64_t v = tl[b * L + j];
                if (v < 0 || v >= V) {
                    st = ch_fail(CH_ERR_ARG, CTC_FN ": label t[%lld, %lld] = %lld is out of range for %lld symbols "
                                 "(expected 0..%lld)", (long long)b, (long long)j, (long long)v, (long long)V,
                                 (long long)(V - 1));
                    break;
                }
            }
    }
    /* stack the steps into one (T, B, V) double buffer */
    int64_t dim3[3] = {T, B, V};
    if (st == CH_OK) st = ch_tensor_new(CH_FLOAT64, 3, dim3, dev, &xc);
    for (int i = 0; i < T && st == CH_OK; i++) {
        ch_tensor *v = NULL;
        int64_t d2[2] = {B, V}, s2[2] = {V, 1};
        st = ch_view_of(xc, 2, d2, s2, xc->offset + (int64_t)i * B * V, &v);
        if (st == CH_OK) st = ch_copy_any(v, xs[i]);
        ch_tensor_release(v);
    }
    if (st == CH_OK) st = ch_tensor_new(CH_FLOAT64, 1, &B, dev, &lo64);
    if (st == CH_OK && grad) st = ch_tensor_new(CH_FLOAT64, 3, dim3, dev, &go64);
    if (st == CH_OK) st = kernel(xc, tc, tlen, llen, blank, lo64, go64);
    ch_dtype dt = (ch_dtype)xs[0]->dt;
    if (st == CH_OK) st = ch_contiguous_as(lo64, dt, &lo);
    if (st == CH_OK && grad) st = ch_contiguous_as(go64, dt, &go);
    free(lens);
    ch_tensor_release(tc);
    ch_tensor_release(th);
    ch_tensor_release(xc);
    ch_tensor_release(lo64);
    ch_tensor_release(go64);
    if (st != CH_OK) {
        ch_tensor_release(lo);
        ch_tensor_release(go);
        return st;
    }
    *loss = lo;
    if (grad) *grad = go;
    return CH_OK;
}

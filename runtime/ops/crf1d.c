/* crf1d.c -- front doors of the linear-chain conditional random field
 * (kernels: runtime/cpu/crf1d.c): negative log-likelihood with its
 * gradient, and Viterbi decoding.
 *
 * Sequences are given time-major as Chainer does: xs[t] holds the rows of
 * the sequences still running at step t, longest first, so sequence b has
 * length len[b] = #{t : B_t > b}.  The emissions are packed into one
 * (T, B, K) float64 tensor; gradients come per sequence (gx rows, a K x K
 * block of gcost each), so the caller can weight them by the upstream
 * gradient of each loss.
 */
#include "prologue.h"

#include <stdlib.h>

#define CRF_FN "crf1d"

/* Validates cost and xs and packs the emissions into a (T, B, K) double
 * buffer; len[b] receives each sequence length. */
static ch_status pack_inputs(const char *fn, const ch_tensor *cost, int T, ch_tensor *const *xs, ch_tensor **xpack,
                             ch_tensor **cpack, int64_t **lens) {
    char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
    CH_CHECK_ARG(cost, fn, "cost");
    if (!ch_dtype_is_float((ch_dtype)cost->dt))
        return ch_fail(CH_ERR_DTYPE, "%s: cost must be a float tensor, got %s", fn, ch_dtype_name((ch_dtype)cost->dt));
    if (cost->nd != 2 || cost->dim[0] != cost->dim[1])
        return ch_fail(CH_ERR_SHAPE, "%s: cost must be a square (K, K) matrix, got shape %s", fn,
                       ch_shape_str(b1, sizeof b1, cost->nd, cost->dim));
    if (T < 1 || !xs) return ch_fail(CH_ERR_ARG, "%s: xs must be a non-empty list of (B, K) arrays", fn);
    int64_t K = cost->dim[0];
    for (int i = 0; i < T; i++) {
        CH_CHECK_ARG(xs[i], fn, "xs");
        CH_TRY(ch_same_device(fn, "cost", cost, "xs", xs[i]));
        if (xs[i]->dt != cost->dt)
            return ch_fail(CH_ERR_DTYPE, "%s: xs[%d] is %s but cost is %s", fn, i, ch_dtype_name((ch_dtype)xs[i]->dt),
                           ch_dtype_name((ch_dtype)cost->dt));
        if (xs[i]->nd != 2 || xs[i]->dim[1] != K)
            return ch_fail(CH_ERR_SHAPE, "%s: xs[%d] must have shape (B, %lld) to fit cost %s, got %s", fn, i,
                           (long long)K, ch_shape_str(b1, sizeof b1, cost->nd, cost->dim),
                           ch_shape_str(b2, sizeof b2, xs[i]->nd, xs[i]->dim));
        if (i > 0 && xs[i]->dim[0] > xs[i - 1]->dim[0])
            return ch_fail(CH_ERR_SHAPE, "%s: batch sizes must not grow along the sequence (xs[%d] has %lld rows, "
                           "xs[%d] has %lld); sort the sequences by length, longest first", fn, i,
                           (long long)xs[i]->dim[0], i - 1, (long long)xs[i - 1]->dim[0]);
    }
    int64_t B = xs[0]->dim[0];
    int64_t *len = calloc((size_t)(B > 0 ? B : 1), sizeof(int64_t));
    if (!len) return ch_fail(CH_ERR_MEMORY, "%s: out of memory", fn);
    for (int i = 0; i < T; i++)
        for (int64_t b = 0; b < xs[i]->dim[0]; b++) len[b]++;
    int64_t dim3[3] = {T, B, K};
    ch_tensor *xc = NULL;
    ch_status st = ch_tensor_new(CH_FLOAT64, 3, dim3, cost->dev, &xc);
    if (st == CH_OK) st = ch_fill(xc, 0.0);
    for (int i = 0; i < T && st == CH_OK; i++) {
        if (xs[i]->dim[0] == 0) continue;
        ch_tensor *v = NULL;
        int64_t s2[2] = {K, 1};
        st = ch_view_of(xc, 2, xs[i]->dim, s2, xc->offset + (int64_t)i * B * K, &v);
        if (st == CH_OK) st = ch_copy_any(v, xs[i]);
        ch_tensor_release(v);
    }
    if (st == CH_OK) st = ch_contiguous_as(cost, CH_FLOAT64, cpack);
    if (st != CH_OK) {
        free(len);
        ch_tensor_release(xc);
        return st;
    }
    *xpack = xc;
    *lens = len;
    return CH_OK;
}

ch_status ch_crf1d(const ch_tensor *cost, int T, ch_tensor *const *xs, ch_tensor *const *ys, ch_tensor **loss,
                   ch_tensor **gx, ch_tensor **gcost) {
    if (!loss) return ch_fail(CH_ERR_ARG, CRF_FN ": loss result pointer is NULL");
    if (!ys) return ch_fail(CH_ERR_ARG, CRF_FN ": ys must be a list of label arrays");
    CH_CHECK_ARG(cost, CRF_FN, "cost");
    CH_KERNEL(kernel, crf1d, cost->dev, CRF_FN);
    ch_tensor *xc = NULL, *cc = NULL;
    int64_t *len = NULL;
    CH_TRY(pack_inputs(CRF_FN, cost, T, xs, &xc, &cc, &len));
    int64_t B = xs[0]->dim[0], K = cost->dim[0];
    ch_status st = CH_OK;
    /* labels packed (T, B) on the CPU, checked there, then moved */
    ch_tensor *labh = NULL, *lab = NULL;
    int64_t dim2[2] = {T, B};
    if (st == CH_OK) st = ch_tensor_new(CH_INT64, 2, dim2, CH_CPU, &labh);
    for (int i = 0; i < T && st == CH_OK; i++) {
        const ch_tensor *y = ys[i];
        char b1[CH_SHAPE_BUF];
        st = ch_check_tensor(y, CRF_FN, "ys");
        if (st == CH_OK) st = ch_same_device(CRF_FN, "cost", cost, "ys", y);
        if (st != CH_OK) break;
        if (ch_dtype_is_float((ch_dtype)y->dt) || y->dt == CH_BOOL) {
            st = ch_fail(CH_ERR_DTYPE, CRF_FN ": ys[%d] must be an integer tensor (int32), got %s", i,
                         ch_dtype_name((ch_dtype)y->dt));
            break;
        }
        if (y->nd != 1 || y->dim[0] != xs[i]->dim[0]) {
            st = ch_fail(CH_ERR_SHAPE, CRF_FN ": ys[%d] must have shape (%lld,) to match xs[%d], got %s", i,
                         (long long)xs[i]->dim[0], i, ch_shape_str(b1, sizeof b1, y->nd, y->dim));
            break;
        }
        ch_tensor *yc = NULL;
        st = ch_host_int64(y, &yc);
        if (st != CH_OK) break;
        const int64_t *p = (const int64_t *)ch_base(yc);
        int64_t *l = (int64_t *)ch_base(labh);
        for (int64_t b = 0; b < y->dim[0]; b++) {
            if (p[b] < 0 || p[b] >= K) {
                st = ch_fail(CH_ERR_ARG, CRF_FN ": label ys[%d][%lld] = %lld is out of range for %lld labels "
                             "(expected 0..%lld)", i, (long long)b, (long long)p[b], (long long)K, (long long)(K - 1));
                break;
            }
            l[i * B + b] = p[b];
        }
        ch_tensor_release(yc);
    }
    if (st == CH_OK) st = ch_to_device(labh, cost->dev, &lab);
    ch_tensor *lo = NULL, *go = NULL, *gc = NULL;
    int64_t dim3[3] = {T, B, K}, dimc[3] = {B, K, K};
    if (st == CH_OK) st = ch_tensor_new(CH_FLOAT64, 1, &B, cost->dev, &lo);
    if (st == CH_OK && gx) st = ch_tensor_new(CH_FLOAT64, 3, dim3, cost->dev, &go);
    if (st == CH_OK && gcost) st = ch_tensor_new(CH_FLOAT64, 3, dimc, cost->dev, &gc);
    if (st == CH_OK) st = kernel(xc, cc, lab, len, lo, go, gc);
    /* results in the inputs' dtype */
    ch_dtype dt = (ch_dtype)cost->dt;
    ch_tensor *out[3] = {lo, go, gc}, *cast[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3 && st == CH_OK; k++)
        if (out[k]) st = ch_contiguous_as(out[k], dt, &cast[k]);
    ch_release_all(out, 3);
    free(len);
    ch_tensor_release(labh);
    ch_tensor_release(lab);
    ch_tensor_release(xc);
    ch_tensor_release(cc);
    if (st != CH_OK) {
        ch_release_all(cast, 3);
        return st;
    }
    *loss = cast[0];
    if (gx) *gx = cast[1];
    if (gcost) *gcost = cast[2];
    return CH_OK;
}

ch_status ch_crf1d_argmax(const ch_tensor *cost, int T, ch_tensor *const *xs, ch_tensor **path) {
    if (!path) return ch_fail(CH_ERR_ARG, "argmax_crf1d: path result pointer is NULL");
    CH_CHECK_ARG(cost, "argmax_crf1d", "cost");
    CH_KERNEL(kernel, crf1d_argmax, cost->dev, "argmax_crf1d");
    ch_tensor *xc = NULL, *cc = NULL;
    int64_t *len = NULL;
    CH_TRY(pack_inputs("argmax_crf1d", cost, T, xs, &xc, &cc, &len));
    int64_t B = xs[0]->dim[0];
    int64_t dim2[2] = {T, B};
    ch_tensor *po = NULL;
    ch_status st = ch_tensor_new(CH_INT32, 2, dim2, cost->dev, &po);
    if (st == CH_OK) st = kernel(xc, cc, len, po);
    free(len);
    ch_tensor_release(xc);
    ch_tensor_release(cc);
    return ch_hand_over(st, po, path);
}

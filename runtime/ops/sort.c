/* sort.c -- front doors of the stable sort and argsort along an axis, and
 * of unique (kernels: runtime/cpu/sort.c).  Ascending order puts NaN last,
 * as NumPy does; descending order is the exact reverse ranking (NaN first),
 * keeping equal elements in their original order.
 */
#include "prologue.h"

static ch_status sort_common(const ch_tensor *x, int axis, int descending, bool want_vals, ch_tensor **result,
                             const char *fn) {
    CH_CHECK_ARG(x, fn, "x");
    if (x->nd == 0) {
        /* NumPy sorts a 0-d array as itself (argsort gives 0) */
        if (want_vals) return ch_copy(x, result);
        return ch_full(CH_INT64, 0, NULL, 0.0, x->dev, result);
    }
    CH_TRY(ch_norm_axis(&axis, x->nd, fn));
    CH_KERNEL(kernel, sort, x->dev, fn);
    ch_tensor *out;
    CH_TRY(ch_tensor_new(want_vals ? (ch_dtype)x->dt : CH_INT64, x->nd, x->dim, x->dev, &out));
    ch_status st = kernel(x, axis, descending, want_vals ? out : NULL, want_vals ? NULL : out);
    return ch_hand_over(st, out, result);
}

ch_status ch_sort(const ch_tensor *x, int axis, int descending, ch_tensor **result) {
    return sort_common(x, axis, descending, true, result, "sort");
}

ch_status ch_argsort(const ch_tensor *x, int axis, int descending, ch_tensor **result) {
    return sort_common(x, axis, descending, false, result, "argsort");
}

ch_status ch_unique(const ch_tensor *x, ch_tensor **values, ch_tensor **inverse, ch_tensor **counts) {
    static const char *fn = "unique";
    CH_CHECK_ARG(x, fn, "x");
    if (!values) return ch_fail(CH_ERR_ARG, "unique: values must not be NULL");
    CH_KERNEL(groups, unique_groups, x->dev, fn);
    CH_KERNEL(fill, unique_fill, x->dev, fn);
    int64_t n = x->numel, nu = 0;
    ch_tensor *flat = NULL, *order = NULL, *group = NULL, *vals = NULL, *inv = NULL, *cnt = NULL;
    ch_status st;
    if ((st = ch_reshape(x, 1, &n, &flat)) != CH_OK) goto done;
    if ((st = ch_argsort(flat, 0, 0, &order)) != CH_OK) goto done;
    if ((st = ch_tensor_new(CH_INT64, 1, &n, x->dev, &group)) != CH_OK) goto done;
    if ((st = groups(flat, order, group, &nu)) != CH_OK) goto done;
    if ((st = ch_tensor_new((ch_dtype)x->dt, 1, &nu, x->dev, &vals)) != CH_OK) goto done;
    if (inverse && (st = ch_tensor_new(CH_INT64, 1, &n, x->dev, &inv)) != CH_OK) goto done;
    if (counts && (st = ch_tensor_new(CH_INT64, 1, &nu, x->dev, &cnt)) != CH_OK) goto done;
    st = fill(flat, order, group, vals, inv, cnt);
done:
    ch_tensor_release(flat);
    ch_tensor_release(order);
    ch_tensor_release(group);
    if (st != CH_OK) {
        ch_tensor_release(vals);
        ch_tensor_release(inv);
        ch_tensor_release(cnt);
        return st;
    }
    *values = vals;
    if (inverse) *inverse = inv;
    if (counts) *counts = cnt;
    return CH_OK;
}

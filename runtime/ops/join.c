/* join.c -- joining and rearranging: concatenate, stack, split, tile,
 * repeat, pad, roll.
 *
 * These are compositions, with no kernel of their own: they write the
 * result through views of the output onto which the input is copied by the
 * device's copy (on the CPU, ch_cpu_copy merges contiguous runs into
 * memcpy), so every dtype, layout and device is handled by one casting,
 * strided copy; split makes views.
 */
#include "prologue.h"

#include <stdlib.h>

/* Copies src (any layout, broadcast) into the box of dst given by
 * (nd, dim, stride, offset) in elements of dst's storage. */
static ch_status copy_to_box(ch_tensor *dst, int nd, const int64_t *dim, const int64_t *stride, int64_t offset,
                             const ch_tensor *src, const int64_t *sstride, int64_t soffset) {
    ch_tensor d = *dst, s = *src;
    d.nd = s.nd = nd;
    for (int i = 0; i < nd; i++) {
        d.dim[i] = s.dim[i] = dim[i];
        d.stride[i] = stride[i];
        s.stride[i] = sstride[i];
    }
    d.numel = s.numel = ch_numel(nd, dim);
    d.offset = offset;
    s.offset = soffset;
    if (d.numel == 0) return CH_OK;
    return ch_copy_any(&d, &s);
}

/* At least one tensor, every one usable and on tensor 0's device. */
static ch_status check_list(const char *fn, ch_tensor *const *xs, int n) {
    if (n <= 0) return ch_fail(CH_ERR_ARG, "%s: need at least one tensor (got %d)", fn, n);
    for (int i = 0; i < n; i++) {
        char arg[32];
        snprintf(arg, sizeof arg, "tensor %d", i);
        CH_CHECK_ARG(xs[i], fn, arg);
        if (i > 0) CH_TRY(ch_same_device(fn, "tensor 0", xs[0], arg, xs[i]));
    }
    return CH_OK;
}

ch_status ch_concatenate(ch_tensor *const *xs, int n, int axis, ch_tensor **result) {
    static const char *fn = "concatenate";
    CH_TRY(check_list(fn, xs, n));
    const ch_tensor *x0 = xs[0];
    int nd = x0->nd;
    if (nd == 0) return ch_fail(CH_ERR_SHAPE, "concatenate: 0-d tensors cannot be concatenated (tensor 0 is 0-d)");
    CH_TRY(ch_norm_axis(&axis, nd, fn));
    ch_dtype dt = (ch_dtype)x0->dt;
    int64_t total = 0;
    for (int i = 0; i < n; i++) {
        const ch_tensor *x = xs[i];
        char s0[CH_SHAPE_BUF], si[CH_SHAPE_BUF];
        if (x->nd != nd)
            return ch_fail(CH_ERR_SHAPE, "concatenate: tensor %d has %d dimensions but tensor 0 has %d (shapes %s and %s)",
                           i, x->nd, nd, ch_shape_str(si, sizeof si, x->nd, x->dim),
                           ch_shape_str(s0, sizeof s0, nd, x0->dim));
        for (int d = 0; d < nd; d++)
            if (d != axis && x->dim[d] != x0->dim[d])
                return ch_fail(CH_ERR_SHAPE, "concatenate: tensor %d has shape %s but tensor 0 has shape %s "
                               "(they must match except on axis %d)", i, ch_shape_str(si, sizeof si, nd, x->dim),
                               ch_shape_str(s0, sizeof s0, nd, x0->dim), axis);
        total += x->dim[axis];
        dt = ch_promote(dt, (ch_dtype)x->dt);
    }
    int64_t odim[CH_MAX_DIMS], ostride[CH_MAX_DIMS];
    for (int d = 0; d < nd; d++) odim[d] = x0->dim[d];
    odim[axis] = total;
    ch_tensor *out;
    CH_TRY(ch_tensor_new(dt, nd, odim, x0->dev, &out));
    ch_contiguous_strides(nd, odim, ostride);
    int64_t pos = 0;
    for (int i = 0; i < n; i++) {
        ch_status st = copy_to_box(out, nd, xs[i]->dim, ostride, pos * ostride[axis], xs[i], xs[i]->stride,
                                   xs[i]->offset);
        if (st != CH_OK) {
            ch_tensor_release(out);
            return st;
        }
        pos += xs[i]->dim[axis];
    }
    *result = out;
    return CH_OK;
}

ch_status ch_stack(ch_tensor *const *xs, int n, int axis, ch_tensor **result) {
    static const char *fn = "stack";
    CH_TRY(check_list(fn, xs, n));
    const ch_tensor *x0 = xs[0];
    int nd = x0->nd;
    if (nd + 1 > CH_MAX_DIMS) return ch_fail(CH_ERR_SHAPE, "stack: the result would have more than %d axes", CH_MAX_DIMS);
    CH_TRY(ch_norm_axis(&axis, nd + 1, fn));
    ch_dtype dt = (ch_dtype)x0->dt;
    for (int i = 1; i < n; i++) {
        if (!ch_same_shape(xs[i], x0)) {
            char s0[CH_SHAPE_BUF], si[CH_SHAPE_BUF];
            return ch_fail(CH_ERR_SHAPE, "stack: tensor %d has shape %s but tensor 0 has shape %s (all must be equal)", i,
                           ch_shape_str(si, sizeof si, xs[i]->nd, xs[i]->dim),
                           ch_shape_str(s0, sizeof s0, nd, x0->dim));
        }
        dt = ch_promote(dt, (ch_dtype)xs[i]->dt);
    }
    int64_t odim[CH_MAX_DIMS], ostride[CH_MAX_DIMS], bdim[CH_MAX_DIMS], bstride[CH_MAX_DIMS];
    for (int d = 0, k = 0; d <= nd; d++) odim[d] = d == axis ? n : x0->dim[k++];
    ch_tensor *out;
    CH_TRY(ch_tensor_new(dt, nd + 1, odim, x0->dev, &out));
    ch_contiguous_strides(nd + 1, odim, ostride);
    /* tensor i goes to the box out[..., i, ...] with the stacking axis dropped */
    for (int d = 0, k = 0; d <= nd; d++)
        if (d != axis) bdim[k] = odim[d], bstride[k++] = ostride[d];
    for (int i = 0; i < n; i++) {
        ch_status st = copy_to_box(out, nd, bdim, bstride, i * ostride[axis], xs[i], xs[i]->stride, xs[i]->offset);
        if (st != CH_OK) {
            ch_tensor_release(out);
            return st;
        }
    }
    *result = out;
    return CH_OK;
}

ch_status ch_split(const ch_tensor *x, const int64_t *indices, int nidx, int axis, ch_tensor **results) {
    CH_CHECK_ARG(x, "split", "x");
    if (x->nd == 0) return ch_fail(CH_ERR_SHAPE, "split: cannot split a 0-d tensor");
    CH_TRY(ch_norm_axis(&axis, x->nd, "split"));
    if (nidx < 0) return ch_fail(CH_ERR_ARG, "split: negative number of split indices (%d)", nidx);
    int64_t n = x->dim[axis];
    int64_t dim[CH_MAX_DIMS];
    for (int d = 0; d < x->nd; d++) dim[d] = x->dim[d];
    /* Python slice semantics, like NumPy: x[start:stop] along axis, with
     * negative positions from the end and everything clamped to [0, n] */
    int64_t prev = 0;
    for (int i = 0; i <= nidx; i++) {
        int64_t stop = i < nidx ? indices[i] : n;
        if (stop < 0) stop += n;
        if (stop < 0) stop = 0;
        if (stop > n) stop = n;
        int64_t start = prev;
        int64_t len = stop > start ? stop - start : 0;
        dim[axis] = len;
        /* an empty piece keeps an in-range offset */
        int64_t off = x->offset + (len ? start : 0) * x->stride[axis];
        ch_status st = ch_view_of(x, x->nd, dim, x->stride, off, &results[i]);
        if (st != CH_OK) {
            for (int j = 0; j < i; j++) {
                ch_tensor_release(results[j]);
                results[j] = NULL;
            }
            return st;
        }
        prev = stop;
    }
    return CH_OK;
}

ch_status ch_roll(const ch_tensor *x, int64_t shift, int axis, int flat, ch_tensor **result) {
    CH_CHECK_ARG(x, "roll", "x");
    if (flat || x->nd == 0) {
        int64_t len = x->numel;
        ch_tensor *f = NULL, *r = NULL;
        ch_status st = ch_reshape(x, 1, &len, &f);
        if (st == CH_OK) st = ch_roll(f, shift, 0, 0, &r);
        if (st == CH_OK) st = ch_reshape(r, x->nd, x->dim, result);
        ch_tensor_release(f);
        ch_tensor_release(r);
        return st;
    }
    CH_TRY(ch_norm_axis(&axis, x->nd, "roll"));
    ch_tensor *out;
    CH_TRY(ch_tensor_new_like(x, (ch_dtype)x->dt, &out));
    int64_t n = x->dim[axis];
    int64_t s = n ? ((shift % n) + n) % n : 0;
    int64_t dim[CH_MAX_DIMS];
    for (int d = 0; d < x->nd; d++) dim[d] = x->dim[d];
    /* out[s:] = x[:n-s]; out[:s] = x[n-s:] */
    dim[axis] = n - s;
    ch_status st = copy_to_box(out, x->nd, dim, out->stride, s * out->stride[axis], x, x->stride, x->offset);
    if (st == CH_OK && s > 0) {
        dim[axis] = s;
        st = copy_to_box(out, x->nd, dim, out->stride, 0, x, x->stride, x->offset + (n - s) * x->stride[axis]);
    }
    return ch_hand_over(st, out, result);
}

ch_status ch_tile(const ch_tensor *x, int n, const int64_t *reps, ch_tensor **result) {
    CH_CHECK_ARG(x, "tile", "x");
    if (n < 0) return ch_fail(CH_ERR_ARG, "tile: negative number of repetitions entries (%d)", n);
    for (int i = 0; i < n; i++)
        if (reps[i] < 0) return ch_fail(CH_ERR_ARG, "tile: reps[%d] = %lld is negative", i, (long long)reps[i]);
    /* NumPy: the shorter of x's shape and reps is padded with leading 1s */
    int nd = x->nd > n ? x->nd : n;
    if (nd > CH_MAX_DIMS) return ch_fail(CH_ERR_SHAPE, "tile: the result would have %d axes (at most %d)", nd, CH_MAX_DIMS);
    int64_t xd[CH_MAX_DIMS], xs[CH_MAX_DIMS], r[CH_MAX_DIMS], odim[CH_MAX_DIMS], ostr[CH_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        int j = i - (nd - x->nd), k = i - (nd - n);
        xd[i] = j >= 0 ? x->dim[j] : 1;
        xs[i] = j >= 0 ? x->stride[j] : 0;
        r[i] = k >= 0 ? reps[k] : 1;
        odim[i] = xd[i] * r[i];
    }
    ch_tensor *out;
    CH_TRY(ch_tensor_new((ch_dtype)x->dt, nd, odim, x->dev, &out));
    ch_contiguous_strides(nd, odim, ostr);
    /* out seen as (r0, d0, r1, d1, ...), the source broadcast over the r axes;
     * axes repeated once need no split, which keeps the view within 16 axes */
    int64_t bd[2 * CH_MAX_DIMS], bs[2 * CH_MAX_DIMS], ss[2 * CH_MAX_DIMS];
    int m = 0;
    for (int i = 0; i < nd; i++) {
        if (r[i] != 1) {
            bd[m] = r[i], bs[m] = xd[i] * ostr[i], ss[m++] = 0;
        }
        bd[m] = xd[i], bs[m] = ostr[i], ss[m++] = xs[i];
    }
    ch_status st = CH_OK;
    if (m <= CH_MAX_DIMS) {
        st = copy_to_box(out, m, bd, bs, 0, x, ss, x->offset);
    } else {
        /* many repeated axes: copy x once, then double along each axis */
        int64_t pd[CH_MAX_DIMS];
        for (int i = 0; i < nd; i++) pd[i] = xd[i];
        st = copy_to_box(out, nd, pd, ostr, 0, x, xs, x->offset);
        for (int i = 0; i < nd && st == CH_OK; i++) {
            for (int64_t k = 1; k < r[i] && st == CH_OK; k++)
                st = copy_to_box(out, nd, pd, ostr, k * xd[i] * ostr[i], out, ostr, 0);
            pd[i] = odim[i];
        }
    }
    return ch_hand_over(st, out, result);
}

ch_status ch_repeat(const ch_tensor *x, const int64_t *counts, int ncounts, int axis, int flat, ch_tensor **result) {
    CH_CHECK_ARG(x, "repeat", "x");
    if (flat || x->nd == 0) {
        int64_t len = x->numel;
        ch_tensor *f = NULL;
        CH_TRY(ch_reshape(x, 1, &len, &f));
        ch_status st = ch_repeat(f, counts, ncounts, 0, 0, result);
        ch_tensor_release(f);
        return st;
    }
    CH_TRY(ch_norm_axis(&axis, x->nd, "repeat"));
    int64_t n = x->dim[axis];
    if (ncounts != 1 && ncounts != n)
        return ch_fail(CH_ERR_SHAPE, "repeat: %d counts for an axis of size %lld (expected 1 or %lld)", ncounts,
                       (long long)n, (long long)n);
    int64_t total = 0;
    for (int i = 0; i < ncounts; i++) {
        if (counts[i] < 0) return ch_fail(CH_ERR_ARG, "repeat: counts[%d] = %lld is negative", i, (long long)counts[i]);
        total += counts[i];
    }
    if (ncounts == 1) total = counts[0] * n;
    int nd = x->nd;
    int64_t odim[CH_MAX_DIMS + 1], ostr[CH_MAX_DIMS + 1];
    for (int d = 0; d < nd; d++) odim[d] = x->dim[d];
    odim[axis] = total;
    ch_tensor *out;
    CH_TRY(ch_tensor_new((ch_dtype)x->dt, nd, odim, x->dev, &out));
    ch_contiguous_strides(nd, odim, ostr);
    ch_status st = CH_OK;
    if (ncounts == 1 && nd < CH_MAX_DIMS) {
        /* out seen as (..., n, c, ...) and x broadcast over the c axis */
        int64_t c = counts[0], bd[CH_MAX_DIMS], bs[CH_MAX_DIMS], ss[CH_MAX_DIMS];
        int m = 0;
        for (int d = 0; d < nd; d++) {
            if (d == axis) {
                bd[m] = n, bs[m] = c * ostr[d], ss[m++] = x->stride[d];
                bd[m] = c, bs[m] = ostr[d], ss[m++] = 0;
            } else {
                bd[m] = x->dim[d], bs[m] = ostr[d], ss[m++] = x->stride[d];
            }
        }
        st = copy_to_box(out, m, bd, bs, 0, x, ss, x->offset);
    } else {
        /* one broadcast copy per source position along axis */
        int64_t bd[CH_MAX_DIMS], ss[CH_MAX_DIMS], pos = 0;
        for (int d = 0; d < nd; d++) bd[d] = x->dim[d], ss[d] = x->stride[d];
        ss[axis] = 0;
        for (int64_t j = 0; j < n && st == CH_OK; j++) {
            int64_t c = ncounts == 1 ? counts[0] : counts[j];
            bd[axis] = c;
            st = copy_to_box(out, nd, bd, ostr, pos * ostr[axis], x, ss, x->offset + j * x->stride[axis]);
            pos += c;
        }
    }
    return ch_hand_over(st, out, result);
}

/* Source position of padded position o (o - before, possibly outside
 * [0, n)) under mode; n > 0. */
static int64_t pad_source(int64_t k, int64_t n, ch_pad_mode mode) {
    if (mode == CH_PAD_EDGE) return k < 0 ? 0 : (k >= n ? n - 1 : k);
    /* reflect without repeating the edge: period 2(n-1) */
    if (n == 1) return 0;
    int64_t period = 2 * (n - 1);
    k %= period;
    if (k < 0) k += period;
    return k < n ? k : period - k;
}

ch_status ch_pad(const ch_tensor *x, const int64_t *pads, ch_pad_mode mode, double value, ch_tensor **result) {
    CH_CHECK_ARG(x, "pad", "x");
    if (mode != CH_PAD_CONSTANT && mode != CH_PAD_EDGE && mode != CH_PAD_REFLECT)
        return ch_fail(CH_ERR_ARG, "pad: unknown mode %d (expected constant, edge or reflect)", (int)mode);
    int nd = x->nd;
    int64_t odim[CH_MAX_DIMS], ostr[CH_MAX_DIMS];
    for (int d = 0; d < nd; d++) {
        if (pads[2 * d] < 0 || pads[2 * d + 1] < 0)
            return ch_fail(CH_ERR_ARG, "pad: pad widths must be >= 0 (axis %d has (%lld, %lld))", d,
                           (long long)pads[2 * d], (long long)pads[2 * d + 1]);
        if (mode != CH_PAD_CONSTANT && x->dim[d] == 0 && pads[2 * d] + pads[2 * d + 1] > 0)
            return ch_fail(CH_ERR_SHAPE, "pad: cannot pad the empty axis %d in %s mode (only constant works)", d,
                           mode == CH_PAD_EDGE ? "edge" : "reflect");
        odim[d] = x->dim[d] + pads[2 * d] + pads[2 * d + 1];
    }
    ch_tensor *out;
    CH_TRY(ch_tensor_new((ch_dtype)x->dt, nd, odim, x->dev, &out));
    ch_contiguous_strides(nd, odim, ostr);
    ch_status st = CH_OK;
    if (mode == CH_PAD_CONSTANT) st = ch_fill(out, value);
    int64_t center = 0;
    for (int d = 0; d < nd; d++) center += pads[2 * d] * ostr[d];
    if (st == CH_OK) st = copy_to_box(out, nd, x->dim, ostr, center, x, x->stride, x->offset);
    if (mode != CH_PAD_CONSTANT) {
        /* axis by axis (NumPy's order): pad axis d over the region where the
         * axes before d are already padded and the axes after d are not yet */
        int64_t bd[CH_MAX_DIMS], ss[CH_MAX_DIMS];
        for (int d = 0; d < nd && st == CH_OK; d++) {
            int64_t base = 0;
            for (int e = 0; e < nd; e++) {
                bd[e] = e < d ? odim[e] : x->dim[e];
                if (e > d) base += pads[2 * e] * ostr[e];
                ss[e] = ostr[e];
            }
            int64_t before = pads[2 * d], n = x->dim[d];
            bd[d] = 1;
            for (int64_t o = 0; o < odim[d] && st == CH_OK; o++) {
                if (o >= before && o < before + n) continue;
                int64_t src = before + pad_source(o - before, n, mode);
                st = copy_to_box(out, nd, bd, ostr, base + o * ostr[d], out, ss, base + src * ostr[d]);
            }
        }
    }
    return ch_hand_over(st, out, result);
}

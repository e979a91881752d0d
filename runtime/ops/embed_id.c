/*
 * embed_id.c -- front doors of the embedding lookup behind F.embed_id and
 * its weight gradient (kernels: runtime/cpu/embed_id.c).  Ids are any
 * integer dtype (checked to be in range, then handed over as contiguous
 * int64); w is float32/float64, and the gradient of a float16 one is
 * accumulated in float32.
 */
#include "prologue.h"

#include <inttypes.h>

static ch_status check_ids(const ch_tensor *x) {
    if (ch_dtype_is_float((ch_dtype)x->dt) || x->dt == CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, "embed_id: x must hold integer ids (got dtype %s)",
                       ch_dtype_name((ch_dtype)x->dt));
    return CH_OK;
}

/* ids as int64 in a contiguous buffer; checks the range. */
static ch_status load_ids(const ch_tensor *x, int64_t V, int has_ignore, int64_t ignore, ch_tensor **out) {
    ch_tensor *ids = NULL, *host = NULL;
    const void *data = NULL;
    CH_TRY(ch_contiguous_as(x, CH_INT64, &ids));
    ch_status st = ch_host_data(ids, &host, &data);
    const int64_t *p = (const int64_t *)data;
    for (int64_t i = 0; st == CH_OK && i < ids->numel; i++) {
        int64_t v = p[i];
        if (has_ignore && v == ignore)
            continue;
        if (v < 0 || v >= V)
            st = ch_fail(CH_ERR_ARG, "embed_id: x contains id %" PRId64 ", out of range for W with %" PRId64
                                     " rows (expected 0..%" PRId64 "%s)",
                         v, V, V - 1, has_ignore ? " or ignore_label" : "");
    }
    ch_tensor_release(host);
    return ch_hand_over(st, ids, out);
}

ch_status ch_embed_id_forward(const ch_tensor *x, const ch_tensor *w, int has_ignore, int64_t ignore_label,
                              ch_tensor **result) {
    CH_TRY(ch_check_pair("embed_id", "x", x, "W", w));
    if (!result)
        return ch_fail(CH_ERR_ARG, "embed_id: NULL result");
    CH_TRY(check_ids(x));
    if (!ch_dtype_is_float((ch_dtype)w->dt))
        return ch_fail(CH_ERR_DTYPE, "embed_id: W must be floating point (got %s)", ch_dtype_name((ch_dtype)w->dt));
    if (w->nd != 2)
        return ch_fail(CH_ERR_SHAPE, "embed_id: W must be 2-d (n_vocab, n_units), got %d-d", w->nd);
    if (x->nd + 1 > CH_MAX_DIMS)
        return ch_fail(CH_ERR_SHAPE, "embed_id: x has too many dimensions");
    CH_KERNEL(kernel, embed_id_forward, w->dev, "embed_id");
    int64_t V = w->dim[0], D = w->dim[1];
    ch_tensor *ids = NULL, *wc = NULL, *y = NULL;
    CH_TRY(load_ids(x, V, has_ignore, ignore_label, &ids));
    int64_t ydim[CH_MAX_DIMS];
    for (int a = 0; a < x->nd; a++)
        ydim[a] = x->dim[a];
    ydim[x->nd] = D;
    ch_status st = ch_contiguous_as(w, (ch_dtype)w->dt, &wc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)w->dt, x->nd + 1, ydim, w->dev, &y);
    if (st == CH_OK)
        st = kernel(ids, wc, has_ignore, ignore_label, y);
    ch_tensor_release(ids);
    ch_tensor_release(wc);
    return ch_hand_over(st, y, result);
}

ch_status ch_embed_id_backward(const ch_tensor *x, const ch_tensor *gy, int64_t n_vocab, int has_ignore,
                               int64_t ignore_label, ch_tensor **result) {
    CH_TRY(ch_check_pair("embed_id", "x", x, "gy", gy));
    if (!result)
        return ch_fail(CH_ERR_ARG, "embed_id: NULL result");
    CH_TRY(check_ids(x));
    if (!ch_dtype_is_float((ch_dtype)gy->dt))
        return ch_fail(CH_ERR_DTYPE, "embed_id: gy must be floating point (got %s)", ch_dtype_name((ch_dtype)gy->dt));
    if (gy->nd != x->nd + 1)
        return ch_fail(CH_ERR_SHAPE, "embed_id: gy must have x's shape plus one axis (x is %d-d, gy is %d-d)", x->nd,
                       gy->nd);
    for (int a = 0; a < x->nd; a++)
        if (gy->dim[a] != x->dim[a])
            return ch_fail(CH_ERR_SHAPE, "embed_id: gy's leading axes must match x's shape");
    if (n_vocab < 0)
        return ch_fail(CH_ERR_ARG, "embed_id: n_vocab must be non-negative");
    CH_KERNEL(kernel, embed_id_backward, gy->dev, "embed_id");
    int64_t D = gy->dim[x->nd];
    /* float16 accumulates in float32 */
    ch_dtype ct = gy->dt == CH_FLOAT64 ? CH_FLOAT64 : CH_FLOAT32;
    ch_tensor *ids = NULL, *gc = NULL, *gw = NULL;
    CH_TRY(load_ids(x, n_vocab, has_ignore, ignore_label, &ids));
    int64_t wdim[2] = {n_vocab, D};
    ch_status st = ch_contiguous_as(gy, ct, &gc);
    if (st == CH_OK)
        st = ch_tensor_new(ct, 2, wdim, gy->dev, &gw);
    if (st == CH_OK)
        st = kernel(ids, gc, has_ignore, ignore_label, gw);
    ch_tensor_release(ids);
    ch_tensor_release(gc);
    if (st == CH_OK && gy->dt != (int)ct) {
        ch_tensor *h = NULL;
        st = ch_astype(gw, (ch_dtype)gy->dt, &h);
        ch_tensor_release(gw);
        gw = h;
    }
    return ch_hand_over(st, gw, result);
}

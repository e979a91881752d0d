/* embed_id.c -- the embedding lookup behind F.embed_id and its weight
 * gradient (a scatter-add of gradient rows).
 *
 * Ids are any integer dtype; w is float32/float64 (float16 goes through a
 * float32 copy).  The forward copies rows in parallel; the backward adds
 * rows in id order, split over column blocks when the rows are wide, so
 * every element is summed in the same order whatever the thread count.
 */
#include "../core/internal.h"

#include <inttypes.h>

static ch_status check_ids(const ch_tensor *x, const char *fn) {
    if (ch_dtype_is_float((ch_dtype)x->dt) || x->dt == CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, "embed_id: x must hold integer ids (got dtype %s)",
                       ch_dtype_name((ch_dtype)x->dt));
    (void)fn;
    return CH_OK;
}

/* ids as int64 in a contiguous buffer; checks the range. */
static ch_status load_ids(const ch_tensor *x, int64_t V, int has_ignore, int64_t ignore, ch_tensor **out) {
    ch_tensor *ids = NULL;
    CH_TRY(ch_contiguous_as(x, CH_INT64, &ids));
    const int64_t *p = (const int64_t *)ch_base(ids);
    for (int64_t i = 0; i < ids->numel; i++) {
        int64_t v = p[i];
        if (has_ignore && v == ignore)
            continue;
        if (v < 0 || v >= V) {
            ch_tensor_release(ids);
            return ch_fail(CH_ERR_ARG, "embed_id: x contains id %" PRId64 ", out of range for W with %" PRId64
                                       " rows (expected 0..%" PRId64 "%s)",
                           v, V, V - 1, has_ignore ? " or ignore_label" : "");
        }
    }
    *out = ids;
    return CH_OK;
}

ch_status ch_embed_id_forward(const ch_tensor *x, const ch_tensor *w, int has_ignore, int64_t ignore_label,
                              ch_tensor **result) {
    CH_CHECK_CPU(x, "embed_id", "x");
    CH_CHECK_CPU(w, "embed_id", "W");
    if (!result)
        return ch_fail(CH_ERR_ARG, "embed_id: NULL result");
    CH_TRY(check_ids(x, "embed_id"));
    if (!ch_dtype_is_float((ch_dtype)w->dt))
        return ch_fail(CH_ERR_DTYPE, "embed_id: W must be floating point (got %s)", ch_dtype_name((ch_dtype)w->dt));
    if (w->nd != 2)
        return ch_fail(CH_ERR_SHAPE, "embed_id: W must be 2-d (n_vocab, n_units), got %d-d", w->nd);
    if (x->nd + 1 > CH_MAX_DIMS)
        return ch_fail(CH_ERR_SHAPE, "embed_id: x has too many dimensions");
    int64_t V = w->dim[0], D = w->dim[1];
    ch_tensor *ids = NULL, *wc = NULL, *y = NULL;
    CH_TRY(load_ids(x, V, has_ignore, ignore_label, &ids));
    int64_t ydim[CH_MAX_DIMS];
    for (int a = 0; a < x->nd; a++)
        ydim[a] = x->dim[a];
    ydim[x->nd] = D;
    ch_status st = ch_contiguous_as(w, (ch_dtype)w->dt, &wc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)w->dt, x->nd + 1, ydim, CH_CPU, &y);
    if (st == CH_OK) {
        size_t row = (size_t)D * ch_dtype_size((ch_dtype)w->dt);
        const int64_t *p = (const int64_t *)ch_base(ids);
        const char *wb = ch_base(wc);
        char *yb = (char *)y->data;
        int64_t n = ids->numel;
        CH_PAR_FOR(n * D >= CH_PARALLEL_GRAIN && ch_threads() > 1, int64_t i = 0; i < n; i++, {
            if (has_ignore && p[i] == ignore_label)
                memset(yb + i * row, 0, row);
            else
                memcpy(yb + i * row, wb + p[i] * row, row);
        });
    }
    ch_tensor_release(ids);
    ch_tensor_release(wc);
    if (st != CH_OK) {
        ch_tensor_release(y);
        return st;
    }
    *result = y;
    return CH_OK;
}

#define EMB_BLOCK 256

#define EMB_SCATTER(T)                                                                   \
    do {                                                                                 \
        const T *g = (const T *)ch_base(gc);                                             \
        T *o = (T *)gw->data;                                                            \
        int64_t nb = (D + EMB_BLOCK - 1) / EMB_BLOCK;                                    \
        CH_PAR_FOR(nb >= 2 && n * D >= CH_PARALLEL_GRAIN && ch_threads() > 1, int64_t bk = 0; bk < nb; bk++, { \
            int64_t j0 = bk * EMB_BLOCK, j1 = j0 + EMB_BLOCK < D ? j0 + EMB_BLOCK : D;    \
            for (int64_t i = 0; i < n; i++) {                                            \
                if (has_ignore && p[i] == ignore_label)                                  \
                    continue;                                                            \
                T *dst = o + p[i] * D;                                                   \
                const T *src = g + i * D;                                                \
                for (int64_t j = j0; j < j1; j++)                                        \
                    dst[j] += src[j];                                                    \
            }                                                                            \
        });                                                                              \
    } while (0)

ch_status ch_embed_id_backward(const ch_tensor *x, const ch_tensor *gy, int64_t n_vocab, int has_ignore,
                               int64_t ignore_label, ch_tensor **result) {
    CH_CHECK_CPU(x, "embed_id", "x");
    CH_CHECK_CPU(gy, "embed_id", "gy");
    if (!result)
        return ch_fail(CH_ERR_ARG, "embed_id: NULL result");
    CH_TRY(check_ids(x, "embed_id"));
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
    int64_t D = gy->dim[x->nd];
    /* float16 accumulates in float32 */
    ch_dtype ct = gy->dt == CH_FLOAT64 ? CH_FLOAT64 : CH_FLOAT32;
    ch_tensor *ids = NULL, *gc = NULL, *gw = NULL;
    CH_TRY(load_ids(x, n_vocab, has_ignore, ignore_label, &ids));
    int64_t wdim[2] = {n_vocab, D};
    ch_status st = ch_contiguous_as(gy, ct, &gc);
    if (st == CH_OK)
        st = ch_tensor_new(ct, 2, wdim, CH_CPU, &gw);
    if (st == CH_OK) {
        memset(gw->data, 0, (size_t)gw->numel * ch_dtype_size(ct));
        const int64_t *p = (const int64_t *)ch_base(ids);
        int64_t n = ids->numel;
        if (ct == CH_FLOAT32)
            EMB_SCATTER(float);
        else
            EMB_SCATTER(double);
    }
    ch_tensor_release(ids);
    ch_tensor_release(gc);
    if (st == CH_OK && gy->dt != (int)ct) {
        ch_tensor *h = NULL;
        st = ch_astype(gw, (ch_dtype)gy->dt, &h);
        ch_tensor_release(gw);
        gw = h;
    }
    if (st != CH_OK) {
        ch_tensor_release(gw);
        return st;
    }
    *result = gw;
    return CH_OK;
}

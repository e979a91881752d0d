/* embed_id.c -- the embedding lookup behind F.embed_id and its weight
 * gradient (a scatter-add of gradient rows).
 *
 * The forward copies rows in parallel; the backward adds rows in id order,
 * split over column blocks when the rows are wide, so every element is
 * summed in the same order whatever the thread count.
 * Front doors (checks, ids as checked int64, outputs):
 * runtime/ops/embed_id.c.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

ch_status ch_cpu_embed_id_forward(const ch_tensor *ids, const ch_tensor *w, int has_ignore, int64_t ignore_label,
                                  ch_tensor *y) {
    int64_t D = w->dim[1];
    size_t row = (size_t)D * ch_dtype_size((ch_dtype)w->dt);
    const int64_t *p = (const int64_t *)ch_base(ids);
    const char *wb = ch_base(w);
    char *yb = (char *)y->data;
    int64_t n = ids->numel;
    CH_PAR_FOR(n * D >= CH_PARALLEL_GRAIN && ch_threads() > 1, int64_t i = 0; i < n; i++, {
        if (has_ignore && p[i] == ignore_label)
            memset(yb + i * row, 0, row);
        else
            memcpy(yb + i * row, wb + p[i] * row, row);
    });
    return CH_OK;
}

#define EMB_BLOCK 256

#define EMB_SCATTER(T)                                                                   \
    do {                                                                                 \
        const T *g = (const T *)ch_base(gy);                                             \
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

ch_status ch_cpu_embed_id_backward(const ch_tensor *ids, const ch_tensor *gy, int has_ignore, int64_t ignore_label,
                                   ch_tensor *gw) {
    int64_t D = gw->dim[1];
    memset(gw->data, 0, (size_t)gw->numel * ch_dtype_size((ch_dtype)gw->dt));
    const int64_t *p = (const int64_t *)ch_base(ids);
    int64_t n = ids->numel;
    if (gw->dt == CH_FLOAT32)
        EMB_SCATTER(float);
    else
        EMB_SCATTER(double);
    return CH_OK;
}

/* geometry.c -- collapses the index space of a same-shape operation. */
#include "backend.h"

char *cu_base(const ch_tensor *t) {
    return (char *)t->data + t->offset * (int64_t)cu_dtype_size(t->dt);
}

void cu_geom_init(cu_geom *g, int nd, const int64_t *dim, int nops, const int64_t *const *strides) {
    g->numel = 1;
    g->nd = 0;
    for (int i = 0; i < nd; i++)
        g->numel *= dim[i];
    /* keep the dimensions longer than 1, outermost first */
    for (int i = 0; i < nd; i++) {
        if (dim[i] == 1)
            continue;
        g->dim[g->nd] = dim[i];
        for (int k = 0; k < 2; k++)
            g->stride[k][g->nd] = k < nops ? strides[k][i] : 0;
        g->nd++;
    }
    /* merge a dimension into the next inner one when every operand steps
     * across the pair as one run */
    int out = 0;
    for (int i = 1; i < g->nd; i++) {
        int mergeable = 1;
        for (int k = 0; k < nops; k++)
            if (g->stride[k][out] != g->stride[k][i] * g->dim[i])
                mergeable = 0;
        if (mergeable) {
            g->dim[out] *= g->dim[i];
            for (int k = 0; k < 2; k++)
                g->stride[k][out] = g->stride[k][i];
        } else {
            out++;
            g->dim[out] = g->dim[i];
            for (int k = 0; k < 2; k++)
                g->stride[k][out] = g->stride[k][i];
        }
    }
    if (g->nd > 0)
        g->nd = out + 1;
    if (g->nd == 0) {
        g->nd = 1;
        g->dim[0] = g->numel;  /* 1, or 0 for an empty tensor */
        g->stride[0][0] = g->stride[1][0] = 1;
    }
    g->contiguous = g->nd == 1;
    for (int k = 0; k < nops; k++)
        if (g->dim[0] > 1 && g->stride[k][0] != 1)
            g->contiguous = 0;
}

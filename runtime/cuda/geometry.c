/* geometry.c -- collapses the index space of a same-shape operation. */
#include "backend.h"
#include "plan.h"

char *cu_base(const ch_tensor *t) {
    return (char *)t->data + t->offset * (int64_t)cu_dtype_size(t->dt);
}

/* The collapsing is cu_ew_plan_init's (plan_elementwise.c); a cu_geom keeps
 * two operands and calls the layout contiguous only when every operand
 * steps by one element (no broadcast stride 0). */
void cu_geom_init(cu_geom *g, int nd, const int64_t *dim, int nops, const int64_t *const *strides) {
    cu_ew_plan p;
    cu_ew_plan_init(&p, nd, dim, nops, strides);
    g->numel = p.numel;
    g->nd = p.nd;
    for (int i = 0; i < p.nd; i++) {
        g->dim[i] = p.dim[i];
        for (int k = 0; k < 2; k++)
            g->stride[k][i] = p.stride[k][i];
    }
    g->contiguous = g->nd == 1;
    for (int k = 0; k < nops; k++)
        if (g->dim[0] > 1 && g->stride[k][0] != 1)
            g->contiguous = 0;
}

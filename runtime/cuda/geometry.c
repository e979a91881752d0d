/* geometry.c -- collapses the index space of a same-shape operation. */
#include "backend.h"
#include "plan.h"

char *cu_base(const ch_tensor *t) {
    return (char *)t->data + t->offset * (int64_t)cu_dtype_size(t->dt);
}

int cu_dense(const ch_tensor *t, int dt, int64_t n, int dev) {
    if (!t || (!t->data && t->numel) || t->dt != dt || t->numel != n || t->dev != dev)
        return 0;
    int64_t s = 1;
    for (int i = t->nd - 1; i >= 0; i--) {
        if (t->dim[i] > 1 && t->stride[i] != s)
            return 0;
        s *= t->dim[i];
    }
    return 1;
}

int cu_dense_as(const ch_tensor *t, const ch_tensor *ref) {
    if (!cu_dense(t, ref->dt, ref->numel, ref->dev) || t->nd != ref->nd)
        return 0;
    for (int i = 0; i < t->nd; i++)
        if (t->dim[i] != ref->dim[i])
            return 0;
    return 1;
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

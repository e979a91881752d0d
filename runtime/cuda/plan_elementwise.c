/* plan_elementwise.c -- broadcast strides and the collapsed index space of
 * an elementwise op (see plan.h). */
#include "plan.h"

int cu_broadcast_strides(int xnd, const int64_t *xdim, const int64_t *xstride, int nd, const int64_t *dim,
                         int64_t *out) {
    if (xnd > nd)
        return -1;
    for (int i = 0; i < nd; i++) {
        int j = i - (nd - xnd);
        if (j < 0 || xdim[j] == 1)
            out[i] = 0;
        else if (xdim[j] == dim[i])
            out[i] = xstride[j];
        else
            return -1;
    }
    return 0;
}

void cu_ew_plan_init(cu_ew_plan *p, int nd, const int64_t *dim, int nops, const int64_t *const *strides) {
    p->nops = nops;
    p->numel = 1;
    p->nd = 0;
    for (int i = 0; i < nd; i++)
        p->numel *= dim[i];
    for (int i = 0; i < nd; i++) {
        if (dim[i] == 1)
            continue;
        p->dim[p->nd] = dim[i];
        for (int k = 0; k < CU_EW_MAXOPS; k++)
            p->stride[k][p->nd] = k < nops ? strides[k][i] : 0;
        p->nd++;
    }
    /* merge axis i into the kept axis `out` when every operand steps across
     * the pair as one run (stride 0 on both sides also qualifies) */
    int out = 0;
    for (int i = 1; i < p->nd; i++) {
        int mergeable = 1;
        for (int k = 0; k < nops; k++)
            if (p->stride[k][out] != p->stride[k][i] * p->dim[i])
                mergeable = 0;
        if (!mergeable)
            out++;
        p->dim[out] = mergeable ? p->dim[out] * p->dim[i] : p->dim[i];
        for (int k = 0; k < CU_EW_MAXOPS; k++)
            p->stride[k][out] = p->stride[k][i];
    }
    if (p->nd > 0) {
        p->nd = out + 1;
    } else {
        p->nd = 1;
        p->dim[0] = p->numel; /* 1, or 0 for an empty tensor */
        for (int k = 0; k < CU_EW_MAXOPS; k++)
            p->stride[k][0] = 0;
        if (nops > 0)
            p->stride[0][0] = 1;
    }
    p->dense = p->nd == 1 && (p->dim[0] <= 1 || p->stride[0][0] == 1);
    for (int k = 1; k < nops; k++)
        if (p->dim[0] > 1 && p->stride[k][0] != 0 && p->stride[k][0] != 1)
            p->dense = 0;
    p->index32 = p->dense && p->numel <= INT32_MAX;
}

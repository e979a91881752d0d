/* plan_reduce.c -- the kept/reduced split of a reduction (see plan.h). */
#include "plan.h"

/* Appends an axis to a group, merging it into the group's last axis when x
 * steps across the pair as one run (C order over the group is unchanged). */
static void push(int *n, int64_t *gdim, int64_t *gstride, int64_t d, int64_t s) {
    if (*n > 0 && gstride[*n - 1] == s * d) {
        gdim[*n - 1] *= d;
        gstride[*n - 1] = s;
        return;
    }
    gdim[*n] = d;
    gstride[*n] = s;
    (*n)++;
}

void cu_reduce_plan_init(cu_reduce_plan *p, int nd, const int64_t *dim, const int64_t *stride, const uint8_t *red) {
    p->rows = 1;
    p->count = 1;
    p->nk = p->nr = 0;
    for (int i = 0; i < nd; i++) {
        if (red[i])
            p->count *= dim[i];
        else
            p->rows *= dim[i];
        if (dim[i] == 1)
            continue;
        if (red[i])
            push(&p->nr, p->rdim, p->rstride, dim[i], stride[i]);
        else
            push(&p->nk, p->kdim, p->kstride, dim[i], stride[i]);
    }
}

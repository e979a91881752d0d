/* plan_gemm.c -- how a (batched, transposed, strided) row-major matmul maps
 * onto cuBLAS calls (see plan.h). */
#include "plan.h"

#include <string.h>

/* The last two axes of x as a logical matrix; a 1-D x is a row (as_row)
 * or a column. */
static void describe(cu_gemm_operand *m, int nd, const int64_t *dim, const int64_t *stride, int trans, int as_row) {
    memset(m, 0, sizeof *m);
    if (nd == 1) {
        if (as_row) {
            m->rows = 1, m->cols = dim[0], m->rs = 0, m->cs = stride[0];
        } else {
            m->rows = dim[0], m->cols = 1, m->rs = stride[0], m->cs = 0;
        }
        return;
    }
    m->rows = dim[nd - 2], m->cols = dim[nd - 1];
    m->rs = stride[nd - 2], m->cs = stride[nd - 1];
    if (trans) {
        int64_t t = m->rows;
        m->rows = m->cols, m->cols = t;
        t = m->rs;
        m->rs = m->cs, m->cs = t;
    }
}

/* Picks op N (row-major storage) or op T (column-major) and the leading
 * dimension; strides of size-1 axes mean nothing and are normalised. */
static void layout(cu_gemm_operand *m) {
    int64_t rs = m->rs, cs = m->cs;
    int64_t c1 = m->cols > 1 ? m->cols : 1, r1 = m->rows > 1 ? m->rows : 1;
    if (m->cols == 1)
        cs = 1;
    if (m->rows == 1)
        rs = cs == 1 ? c1 : 1;
    if (cs == 1 && rs >= c1) {
        m->op_t = 0, m->ld = rs, m->copy = 0;
    } else if (rs == 1 && cs >= r1) {
        m->op_t = 1, m->ld = cs, m->copy = 0;
    } else {
        m->op_t = 0, m->ld = 0, m->copy = 1;
    }
}

/* Strides of x's batch axes (all but its last two) over the output batch
 * shape bdim[0..nb): aligned on the right, 0 where x broadcasts. */
static void batch_strides(int nd, const int64_t *dim, const int64_t *stride, int nb, const int64_t *bdim,
                          int64_t *bs) {
    int xb = nd > 2 ? nd - 2 : 0;
    for (int i = 0; i < nb; i++) {
        int j = i - (nb - xb);
        bs[i] = (j < 0 || dim[j] == 1 || bdim[i] == 1) ? 0 : stride[j];
    }
}

int cu_gemm_plan_init(cu_gemm_plan *p, int and_, const int64_t *adim, const int64_t *astride, int trans_a, int bnd,
                      const int64_t *bdim, const int64_t *bstride, int trans_b) {
    memset(p, 0, sizeof *p);
    if (and_ < 1 || bnd < 1)
        return -1;
    describe(&p->a, and_, adim, astride, trans_a, 1);
    describe(&p->b, bnd, bdim, bstride, trans_b, 0);
    if (p->a.cols != p->b.rows)
        return -1;
    p->M = p->a.rows, p->N = p->b.cols, p->K = p->a.cols;
    layout(&p->a);
    layout(&p->b);

    /* the broadcast batch shape */
    int nba = and_ > 2 ? and_ - 2 : 0, nbb = bnd > 2 ? bnd - 2 : 0;
    int nb = nba > nbb ? nba : nbb;
    int64_t shape[CH_MAX_DIMS], s[3][CH_MAX_DIMS];
    for (int i = 0; i < nb; i++) {
        int ja = i - (nb - nba), jb = i - (nb - nbb);
        int64_t da = ja < 0 ? 1 : adim[ja], db = jb < 0 ? 1 : bdim[jb];
        if (da != db && da != 1 && db != 1)
            return -1;
        shape[i] = da == 1 ? db : da;
    }
    batch_strides(and_, adim, astride, nb, shape, s[0]);
    batch_strides(bnd, bdim, bstride, nb, shape, s[1]);
    int64_t cs = p->M * p->N;
    for (int i = nb - 1; i >= 0; i--) {
        s[2][i] = cs;
        cs *= shape[i];
    }
    /* drop size-1 batch axes; merge neighbours that every operand steps
     * across as one run */
    p->batch = 1;
    for (int i = 0; i < nb; i++) {
        p->batch *= shape[i];
        if (shape[i] == 1)
            continue;
        int n = p->nb;
        int merge = n > 0;
        for (int k = 0; k < 3 && merge; k++)
            merge = p->bstride[k][n - 1] == s[k][i] * shape[i];
        if (merge) {
            p->bdim[n - 1] *= shape[i];
            for (int k = 0; k < 3; k++)
                p->bstride[k][n - 1] = s[k][i];
        } else {
            p->bdim[n] = shape[i];
            for (int k = 0; k < 3; k++)
                p->bstride[k][n] = s[k][i];
            p->nb++;
        }
    }
    return 0;
}

/* shape.c -- axis normalisation, broadcasting and the strided N-D iterator. */
#include "internal.h"

int64_t ch_numel(int nd, const int64_t *dim) {
    int64_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= dim[i];
    return n;
}

int64_t ch_contiguous_strides(int nd, const int64_t *dim, int64_t *stride) {
    int64_t n = 1;
    for (int i = nd - 1; i >= 0; i--) {
        stride[i] = n;
        n *= dim[i];
    }
    return n;
}

ch_status ch_norm_axis(int *axis, int nd, const char *fn) {
    int a = *axis;
    if (a < -nd || a >= nd) {
        if (nd == 0)
            return ch_fail(CH_ERR_ARG, "%s: axis %d is out of range for a 0-d tensor", fn, a);
        return ch_fail(CH_ERR_ARG, "%s: axis %d is out of range for a %d-d tensor (expected %d..%d)", fn, a, nd,
                       -nd, nd - 1);
    }
    *axis = a < 0 ? a + nd : a;
    return CH_OK;
}

ch_status ch_broadcast_shape(int nda, const int64_t *da, int ndb, const int64_t *db, int *out_nd,
                             int64_t *out_dim, const char *fn) {
    int nd = nda > ndb ? nda : ndb;
    for (int i = 0; i < nd; i++) {
        int ia = i - (nd - nda), ib = i - (nd - ndb);
        int64_t x = ia >= 0 ? da[ia] : 1, y = ib >= 0 ? db[ib] : 1;
        if (x == y || y == 1) {
            out_dim[i] = x;
        } else if (x == 1) {
            out_dim[i] = y;
        } else {
            char sa[CH_SHAPE_BUF], sb[CH_SHAPE_BUF];
            return ch_fail(CH_ERR_SHAPE, "%s: shapes %s and %s cannot be broadcast together", fn,
                           ch_shape_str(sa, sizeof sa, nda, da), ch_shape_str(sb, sizeof sb, ndb, db));
        }
    }
    *out_nd = nd;
    return CH_OK;
}

void ch_broadcast_strides(const ch_tensor *x, int nd, const int64_t *dim, int64_t *stride) {
    int shift = nd - x->nd;
    for (int i = 0; i < nd; i++) {
        int j = i - shift;
        stride[i] = (j < 0 || (x->dim[j] == 1 && dim[i] != 1)) ? 0 : x->stride[j];
    }
}

bool ch_same_shape(const ch_tensor *a, const ch_tensor *b) {
    if (a->nd != b->nd)
        return false;
    for (int i = 0; i < a->nd; i++)
        if (a->dim[i] != b->dim[i])
            return false;
    return true;
}

void ch_iter_init(ch_iter *it, int nd, const int64_t *dim, int nops, const int64_t *const *strides) {
    int64_t d[CH_MAX_DIMS], s[CH_ITER_MAX_OPS][CH_MAX_DIMS];
    int n = 0;
    it->nops = nops;
    /* drop size-1 axes, then merge axis i into i+1 when every operand steps
     * through them as one run */
    for (int i = 0; i < nd; i++) {
        if (dim[i] == 1)
            continue;
        d[n] = dim[i];
        for (int k = 0; k < nops; k++)
            s[k][n] = strides[k][i];
        n++;
    }
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m > 0) {
            bool merge = true;
            for (int k = 0; k < nops && merge; k++)
                merge = s[k][m - 1] == s[k][i] * d[i];
            if (merge) {
                d[m - 1] *= d[i];
                for (int k = 0; k < nops; k++)
                    s[k][m - 1] = s[k][i];
                continue;
            }
        }
        d[m] = d[i];
        for (int k = 0; k < nops; k++)
            s[k][m] = s[k][i];
        m++;
    }
    if (m == 0) {
        it->inner = 1;
        for (int k = 0; k < nops; k++)
            it->inner_stride[k] = 0;
        it->nd = 0;
    } else {
        it->inner = d[m - 1];
        for (int k = 0; k < nops; k++)
            it->inner_stride[k] = s[k][m - 1];
        it->nd = m - 1;
    }
    it->outer_count = 1;
    for (int i = 0; i < it->nd; i++) {
        it->dim[i] = d[i];
        it->outer_count *= d[i];
        for (int k = 0; k < nops; k++)
            it->stride[k][i] = s[k][i];
    }
    if (ch_numel(nd, dim) == 0) {
        it->outer_count = 0;
        it->inner = 0;
    }
}

void ch_iter_offsets(const ch_iter *it, int64_t pos, int64_t *offs) {
    for (int k = 0; k < it->nops; k++)
        offs[k] = 0;
    for (int i = it->nd - 1; i >= 0; i--) {
        int64_t idx = pos % it->dim[i];
        pos /= it->dim[i];
        for (int k = 0; k < it->nops; k++)
            offs[k] += idx * it->stride[k][i];
    }
}

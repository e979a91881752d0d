/* Views: reshape's view-versus-copy rule, slicing (negative steps too),
 * permute/flip/squeeze/broadcast geometry, and their error messages. */
#include "check.h"

static ch_tensor *arange(int64_t n, ch_dtype dt) {
    ch_tensor *t = NULL;
    CHECK_OK(ch_arange(0, (double)n, 1, dt, CH_CPU, &t));
    return t;
}

static ch_index I(int64_t i) { ch_index x = {CH_IDX_INT, 1, 0, 0, i, 0, 0}; return x; }
static ch_index S(int hs, int64_t s, int he, int64_t e, int hst, int64_t st) {
    ch_index x = {CH_IDX_SLICE, hs, he, hst, s, e, st};
    return x;
}
static ch_index ALL(void) { return S(0, 0, 0, 0, 0, 0); }

/* values of t (flat, C order) equal to want[0..n) */
static int values_are(const ch_tensor *t, const double *want, int64_t n) {
    if (t->numel != n)
        return 0;
    for (int64_t k = 0; k < n; k++)
        if (at(t, k) != want[k])
            return 0;
    return 1;
}

int main(void) {
    int64_t base = ch_live_tensors(), base_bytes = ch_live_bytes(CH_CPU);
    ch_tensor *x = arange(24, CH_FLOAT32), *r = NULL, *r2 = NULL, *p = NULL;

    /* reshape of a contiguous tensor is a view, -1 is inferred */
    int64_t s234[3] = {2, 3, -1};
    CHECK_OK(ch_reshape(x, 3, s234, &r));
    CHECK(r->data == x->data);
    CHECK_EQ_I(r->dim[2], 4);
    CHECK_EQ_I(r->stride[0], 12);
    CHECK_EQ_I(r->stride[2], 1);

    /* transposed: reshape that merges permuted axes must copy, ch_view refuses */
    int32_t perm[3] = {2, 1, 0};
    CHECK_OK(ch_permute(r, perm, &p));
    CHECK_EQ_I(p->dim[0], 4);
    CHECK_EQ_I(p->stride[0], 1);
    CHECK_EQ_I(p->stride[2], 12);
    int64_t flat[1] = {24};
    CHECK_OK(ch_reshape(p, 1, flat, &r2));
    CHECK(ch_is_contiguous(r2));
    CHECK(r2->data != x->data);
    {   /* p[i, j, k] = x[k*12 + j*4 + i]; flattened in C order */
        double want[24];
        int n = 0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 2; k++)
                    want[n++] = k * 12 + j * 4 + i;
        CHECK(values_are(r2, want, 24));
    }
    ch_tensor_release(r2);
    r2 = NULL;
    CHECK_ERR(ch_view(p, 1, flat, &r2), CH_ERR_SHAPE, "view");
    CHECK(r2 == NULL);
    /* splitting an axis of a non-contiguous tensor is still a view */
    int64_t s2232[4] = {2, 2, 3, 2};
    CHECK_OK(ch_reshape(p, 4, s2232, &r2));
    CHECK(r2->data == x->data);
    CHECK(at(r2, 1) == 12 && at(r2, 2) == 4);
    ch_tensor_release(r2);

    /* bad reshapes */
    int64_t s5[1] = {5}, bad2[2] = {-1, -1};
    CHECK_ERR(ch_reshape(x, 1, s5, &r2), CH_ERR_SHAPE, "reshape", "(24,)", "(5,)");
    CHECK_ERR(ch_reshape(x, 2, bad2, &r2), CH_ERR_ARG, "reshape", "-1");

    /* slicing: x2 = arange(24).reshape(4, 6) */
    int64_t s46[2] = {4, 6};
    ch_tensor *x2 = NULL, *sl = NULL;
    CHECK_OK(ch_reshape(x, 2, s46, &x2));
    {   /* x2[1:3, ::2] */
        ch_index idx[2] = {S(1, 1, 1, 3, 0, 0), S(0, 0, 0, 0, 1, 2)};
        CHECK_OK(ch_slice(x2, idx, 2, &sl));
        double want[] = {6, 8, 10, 12, 14, 16};
        CHECK(values_are(sl, want, 6));
        CHECK(sl->data == x->data);
        CHECK_EQ_I(sl->stride[1], 2);
        ch_tensor_release(sl);
    }
    {   /* x2[::-1, -1] -> [23, 17, 11, 5] */
        ch_index idx[2] = {S(0, 0, 0, 0, 1, -1), I(-1)};
        CHECK_OK(ch_slice(x2, idx, 2, &sl));
        double want[] = {23, 17, 11, 5};
        CHECK_EQ_I(sl->nd, 1);
        CHECK_EQ_I(sl->stride[0], -6);
        CHECK(values_are(sl, want, 4));
        ch_tensor_release(sl);
    }
    {   /* x2[2, 5:0:-2] -> [17, 15, 13] */
        ch_index idx[2] = {I(2), S(1, 5, 1, 0, 1, -2)};
        CHECK_OK(ch_slice(x2, idx, 2, &sl));
        double want[] = {17, 15, 13};
        CHECK(values_are(sl, want, 3));
        ch_tensor_release(sl);
    }
    {   /* x2[-1:-5:-3, 4::-4] -> rows 3, 0; cols 4, 0 */
        ch_index idx[2] = {S(1, -1, 1, -5, 1, -3), S(1, 4, 0, 0, 1, -4)};
        CHECK_OK(ch_slice(x2, idx, 2, &sl));
        double want[] = {22, 18, 4, 0};
        CHECK(values_are(sl, want, 4));
        ch_tensor *c = NULL;
        CHECK_OK(ch_copy(sl, &c));
        CHECK(values_are(c, want, 4));
        CHECK(ch_is_contiguous(c));
        ch_tensor_release(c);
        ch_tensor_release(sl);
    }
    {   /* empty results and clamping: x2[5:10], x2[:, 3:1] */
        ch_index idx[1] = {S(1, 5, 1, 10, 0, 0)};
        CHECK_OK(ch_slice(x2, idx, 1, &sl));
        CHECK_EQ_I(sl->numel, 0);
        CHECK_EQ_I(sl->dim[0], 0);
        CHECK_EQ_I(sl->dim[1], 6);
        ch_tensor_release(sl);
        ch_index idx2[2] = {ALL(), S(1, 3, 1, 1, 0, 0)};
        CHECK_OK(ch_slice(x2, idx2, 2, &sl));
        CHECK_EQ_I(sl->dim[1], 0);
        ch_tensor_release(sl);
    }
    {   /* newaxis and ellipsis: x2[..., None, 0] -> shape (4, 1) */
        ch_index idx[3] = {{CH_IDX_ELLIPSIS, 0, 0, 0, 0, 0, 0}, {CH_IDX_NEWAXIS, 0, 0, 0, 0, 0, 0}, I(0)};
        CHECK_OK(ch_slice(x2, idx, 3, &sl));
        CHECK_EQ_I(sl->nd, 2);
        CHECK_EQ_I(sl->dim[0], 4);
        CHECK_EQ_I(sl->dim[1], 1);
        double want[] = {0, 6, 12, 18};
        CHECK(values_are(sl, want, 4));
        ch_tensor_release(sl);
    }
    {   /* a 0-d result */
        ch_index idx[2] = {I(3), I(-2)};
        CHECK_OK(ch_slice(x2, idx, 2, &sl));
        CHECK_EQ_I(sl->nd, 0);
        CHECK_EQ_I(sl->numel, 1);
        CHECK(at(sl, 0) == 22);
        ch_tensor_release(sl);
    }
    {   /* slice errors */
        ch_index idx[2] = {I(4), ALL()};
        CHECK_ERR(ch_slice(x2, idx, 2, &sl), CH_ERR_ARG, "slice", "out of bounds", "size 4");
        ch_index idx0[1] = {S(0, 0, 0, 0, 1, 0)};
        CHECK_ERR(ch_slice(x2, idx0, 1, &sl), CH_ERR_ARG, "slice", "step", "zero");
        ch_index idx3[3] = {I(0), I(0), I(0)};
        CHECK_ERR(ch_slice(x2, idx3, 3, &sl), CH_ERR_ARG, "slice", "too many indices");
    }

    /* flip: a negative-stride view */
    ch_tensor *fl = NULL;
    CHECK_OK(ch_flip(x2, 1, &fl));
    CHECK(fl->data == x->data);
    CHECK_EQ_I(fl->stride[1], -1);
    CHECK(at(fl, 0) == 5 && at(fl, 6) == 11);
    ch_tensor *flc = NULL;   /* and reshape of it must copy correctly */
    CHECK_OK(ch_reshape(fl, 1, flat, &flc));
    CHECK(at(flc, 1) == 4 && at(flc, 23) == 18);
    ch_tensor_release(flc);
    ch_tensor_release(fl);
    CHECK_ERR(ch_flip(x2, 2, &fl), CH_ERR_ARG, "flip", "axis 2", "2-d");

    /* expand_dims / squeeze / broadcast_to */
    ch_tensor *e = NULL, *sq = NULL, *bc = NULL;
    CHECK_OK(ch_expand_dims(x2, 1, &e));
    CHECK_EQ_I(e->nd, 3);
    CHECK_EQ_I(e->dim[1], 1);
    CHECK_OK(ch_squeeze(e, NULL, 0, &sq));
    CHECK_EQ_I(sq->nd, 2);
    int32_t ax0 = 0;
    CHECK_ERR(ch_squeeze(e, &ax0, 1, &bc), CH_ERR_SHAPE, "squeeze", "size 4");
    int64_t s346[3] = {3, 4, 6};
    CHECK_OK(ch_broadcast_to(x2, 3, s346, &bc));
    CHECK_EQ_I(bc->stride[0], 0);
    CHECK(at(bc, 24 + 7) == 7);
    ch_tensor_release(bc);
    int64_t s45[2] = {4, 5};
    CHECK_ERR(ch_broadcast_to(x2, 2, s45, &bc), CH_ERR_SHAPE, "broadcast_to", "(4, 6)", "(4, 5)");
    ch_tensor_release(sq);
    ch_tensor_release(e);

    /* diagonal */
    ch_tensor *d = NULL;
    CHECK_OK(ch_diagonal(x2, 1, 0, 1, &d));
    {
        double want[] = {1, 8, 15, 22};
        CHECK(values_are(d, want, 4));
    }
    ch_tensor_release(d);

    /* copy_into broadcasts and casts; writes through a view reach the base */
    ch_tensor *col = NULL, *src = NULL;
    ch_index idx[2] = {ALL(), I(0)};
    CHECK_OK(ch_slice(x2, idx, 2, &col));
    int64_t one[1] = {1};
    CHECK_OK(ch_full(CH_INT32, 1, one, -3, CH_CPU, &src));
    CHECK_OK(ch_copy_into(col, src));
    CHECK(at(x, 0) == -3 && at(x, 6) == -3 && at(x, 18) == -3 && at(x, 1) == 1);
    ch_tensor_release(src);
    ch_tensor_release(col);

    ch_tensor_release(x2);
    ch_tensor_release(p);
    ch_tensor_release(r);
    ch_tensor_release(x);
    CHECK_EQ_I(ch_live_tensors(), base);
    CHECK_EQ_I(ch_live_bytes(CH_CPU), base_bytes);
    return check_done("test_views");
}

/* test_sort.cu -- the GPU's stable sort/argsort and unique (sort.c,
 * sort.cu) emulated on the host against the CPU's front doors, bit for bit:
 * every dtype, every axis of a strided x, both orders, many equal keys and
 * NaNs, lines long enough to merge, empty tensors, the contract check.
 * emulates: sort.c sort.cu index.c index.cu staging.c */
#include "emulator.h"

#include <math.h>

static const ch_dtype all_dtypes[] = {CH_BOOL, CH_INT8, CH_UINT8, CH_INT16, CH_INT32,
                                      CH_INT64, CH_FLOAT16, CH_FLOAT32, CH_FLOAT64};
enum { NDT = sizeof all_dtypes / sizeof *all_dtypes };

/* Few distinct values (many ties), negative ones, and NaN every 7th for floats. */
static ch_tensor *keys(ch_dtype dt, int nd, const int64_t *shape, uint64_t seed) {
    ch_tensor *f, *t;
    CHECK_OK(ch_empty(CH_FLOAT64, nd, shape, CH_CPU, &f));
    emu_fill_uniform(f, -4, 4, seed);
    for (int64_t k = 0; k < f->numel; k++) {
        double v;
        ch_get_flat(f, k, &v);
        ch_set_flat(f, k, (dt != CH_BOOL && k % 7 == 3 && (dt == CH_FLOAT16 || dt == CH_FLOAT32 || dt == CH_FLOAT64))
                              ? NAN
                              : floor(v) / (dt == CH_FLOAT32 || dt == CH_FLOAT64 ? 2.0 : 1.0));
    }
    CHECK_OK(ch_astype(f, dt, &t));
    ch_tensor_release(f);
    return t;
}

static void report(const char *what, ch_dtype dt, int axis, int desc, int64_t bad) {
    if (bad) {
        fprintf(stderr, "%s %s axis %d %s: %lld elements differ from the CPU\n", what, cu_dtype_name(dt), axis,
                desc ? "descending" : "ascending", (long long)bad);
        check_failures++;
    }
}

static void test_sort(ch_dtype dt) {
    int64_t shape[3] = {5, 37, 6};
    int32_t perm[3] = {1, 0, 2};
    ch_tensor *base = keys(dt, 3, shape, 3), *x;
    CHECK_OK(ch_permute(base, perm, &x)); /* (37, 5, 6), strided */
    for (int axis = 0; axis < 3; axis++)
        for (int desc = 0; desc < 2; desc++) {
            ch_tensor *vals, *args, *gv, *ga;
            CHECK_OK(ch_sort(x, axis, desc, &vals));
            CHECK_OK(ch_argsort(x, axis, desc, &args));
            CHECK_OK(ch_full(dt, 3, x->dim, 1.0, CH_CPU, &gv));
            CHECK_OK(ch_full(CH_INT64, 3, x->dim, -1.0, CH_CPU, &ga));
            ch_tensor dx = emu_on_device(x), dv = emu_on_device(gv), da = emu_on_device(ga);
            CHECK_OK(cu_sort(&dx, axis, desc, &dv, &da));
            report("sort values", dt, axis, desc, emu_bit_mismatches(vals, gv));
            report("argsort", dt, axis, desc, emu_bit_mismatches(args, ga));
            /* positions only */
            CHECK_OK(ch_full(CH_INT64, 3, x->dim, -1.0, CH_CPU, &ga));
            da = emu_on_device(ga);
            CHECK_OK(cu_sort(&dx, axis, desc, NULL, &da));
            report("argsort alone", dt, axis, desc, emu_bit_mismatches(args, ga));
            ch_tensor_release(vals);
            ch_tensor_release(args);
            ch_tensor_release(gv);
            ch_tensor_release(ga);
        }
    ch_tensor_release(base);
    ch_tensor_release(x);
}

/* unique of a flipped 1-d x spanning several chunks. */
static void test_unique(ch_dtype dt, int64_t n) {
    ch_tensor *base = keys(dt, 1, &n, 9), *flat;
    CHECK_OK(ch_flip(base, 0, &flat));
    ch_tensor *vals, *inv, *cnt;
    CHECK_OK(ch_unique(flat, &vals, &inv, &cnt));
    ch_tensor *order, *group, *gv, *gi, *gc;
    CHECK_OK(ch_argsort(flat, 0, 0, &order));
    CHECK_OK(ch_full(CH_INT64, 1, &n, -1.0, CH_CPU, &group));
    ch_tensor df = emu_on_device(flat), dord = emu_on_device(order), dg = emu_on_device(group);
    int64_t ng = -1;
    CHECK_OK(cu_unique_groups(&df, &dord, &dg, &ng));
    CHECK_EQ_I(ng, vals->numel);
    CHECK_OK(ch_full(dt, 1, vals->dim, 1.0, CH_CPU, &gv));
    CHECK_OK(ch_full(CH_INT64, 1, &n, -1.0, CH_CPU, &gi));
    CHECK_OK(ch_full(CH_INT64, 1, vals->dim, -1.0, CH_CPU, &gc));
    ch_tensor dv = emu_on_device(gv), di = emu_on_device(gi), dc = emu_on_device(gc);
    CHECK_OK(cu_unique_fill(&df, &dord, &dg, &dv, &di, &dc));
    report("unique values", dt, 0, 0, emu_bit_mismatches(vals, gv));
    report("unique inverse", dt, 0, 0, emu_bit_mismatches(inv, gi));
    report("unique counts", dt, 0, 0, emu_bit_mismatches(cnt, gc));
    /* values alone */
    CHECK_OK(ch_full(dt, 1, vals->dim, 1.0, CH_CPU, &gv));
    dv = emu_on_device(gv);
    CHECK_OK(cu_unique_fill(&df, &dord, &dg, &dv, NULL, NULL));
    report("unique values alone", dt, 0, 0, emu_bit_mismatches(vals, gv));
    ch_tensor *list[] = {base, flat, vals, inv, cnt, order, group, gv, gi, gc};
    for (int k = 0; k < 10; k++)
        ch_tensor_release(list[k]);
}

static void test_empty_and_contract(void) {
    int64_t zshape[2] = {0, 4}, n0 = 0;
    ch_tensor *z, *zv, *e, *ord, *grp;
    CHECK_OK(ch_empty(CH_FLOAT32, 2, zshape, CH_CPU, &z));
    CHECK_OK(ch_empty(CH_FLOAT32, 2, zshape, CH_CPU, &zv));
    ch_tensor dz = emu_on_device(z), dzv = emu_on_device(zv);
    CHECK_OK(cu_sort(&dz, 1, 0, &dzv, NULL));
    CHECK_OK(ch_empty(CH_FLOAT32, 1, &n0, CH_CPU, &e));
    CHECK_OK(ch_empty(CH_INT64, 1, &n0, CH_CPU, &ord));
    CHECK_OK(ch_empty(CH_INT64, 1, &n0, CH_CPU, &grp));
    ch_tensor de = emu_on_device(e), dord = emu_on_device(ord), dgrp = emu_on_device(grp);
    int64_t ng = -1;
    CHECK_OK(cu_unique_groups(&de, &dord, &dgrp, &ng));
    CHECK_EQ_I(ng, 0);
    /* the contract: values of another dtype are refused, nothing written */
    int64_t shape[2] = {3, 4};
    ch_tensor *x, *wrong;
    CHECK_OK(ch_full(CH_FLOAT32, 2, shape, 1.0, CH_CPU, &x));
    CHECK_OK(ch_full(CH_FLOAT64, 2, shape, 7.0, CH_CPU, &wrong));
    ch_tensor dx = emu_on_device(x), dw = emu_on_device(wrong);
    EMU_CHECK_ERR(cu_sort(&dx, 1, 0, &dw, NULL), CH_ERR_INTERNAL, "sort: x and the contiguous results");
    CHECK(at(wrong, 0) == 7.0);
    ch_tensor *list[] = {z, zv, e, ord, grp, x, wrong};
    for (int k = 0; k < 7; k++)
        ch_tensor_release(list[k]);
}

int main(void) {
    for (int k = 0; k < NDT; k++) {
        test_sort(all_dtypes[k]);
        test_unique(all_dtypes[k], 5000);
        test_unique(all_dtypes[k], 1);
    }
    test_empty_and_contract();
    return check_done("test_sort (emulated)");
}

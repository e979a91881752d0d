/* test_index.cu -- the GPU's indexing kernels (index.c, index.cu) emulated
 * on the host against the CPU's front doors, bit for bit, for every dtype,
 * strided and broadcast operands, duplicates in scatters, empty tensors and
 * the backend's contract checks.
 * emulates: index.c index.cu staging.c */
#include "emulator.h"

static const ch_dtype all_dtypes[] = {CH_BOOL, CH_INT8, CH_UINT8, CH_INT16, CH_INT32,
                                      CH_INT64, CH_FLOAT16, CH_FLOAT32, CH_FLOAT64};
enum { NDT = sizeof all_dtypes / sizeof *all_dtypes };

/* A new CPU tensor of dtype dt, values from a fixed stream in [lo, hi);
 * every `zeros`-th element 0 (-0.0 on odd ones for floats) when zeros > 0. */
static ch_tensor *filled(ch_dtype dt, int nd, const int64_t *shape, double lo, double hi, uint64_t seed, int zeros) {
    ch_tensor *f, *t;
    CHECK_OK(ch_empty(CH_FLOAT64, nd, shape, CH_CPU, &f));
    emu_fill_uniform(f, lo, hi, seed);
    if (zeros > 0)
        for (int64_t k = 0; k < f->numel; k += zeros)
            ch_set_flat(f, k, (k / zeros) % 2 ? -0.0 : 0.0);
    CHECK_OK(ch_astype(f, dt, &t));
    ch_tensor_release(f);
    return t;
}

/* int64 indices in [-n, n) (negative ones counting from the end). */
static ch_tensor *indices(int nd, const int64_t *shape, int64_t n, uint64_t seed) {
    ch_tensor *t;
    CHECK_OK(ch_empty(CH_INT64, nd, shape, CH_CPU, &t));
    uint64_t s = seed;
    for (int64_t k = 0; k < t->numel; k++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        ch_set_flat(t, k, (double)((int64_t)((s >> 33) % (uint64_t)(2 * n)) - n));
    }
    return t;
}

/* Elements of a and b (any layouts, one dtype and shape) that differ bitwise. */
static int64_t mismatches(const ch_tensor *a, const ch_tensor *b) {
    if (a->nd != b->nd || a->numel != b->numel || a->dt != b->dt)
        return -1;
    ch_tensor *ca, *cb;
    CHECK_OK(ch_contiguous(a, &ca));
    CHECK_OK(ch_contiguous(b, &cb));
    int64_t bad = emu_bit_mismatches(ca, cb);
    ch_tensor_release(ca);
    ch_tensor_release(cb);
    return bad;
}

static void report(const char *what, ch_dtype dt, int64_t bad) {
    if (bad) {
        fprintf(stderr, "%s %s: %lld elements differ from the CPU (-1: shapes)\n", what, cu_dtype_name(dt),
                (long long)bad);
        check_failures++;
    }
}

/* indices wrapped on the emulated device (a copy). */
static ch_tensor *wrapped(const ch_tensor *idx, int64_t n) {
    ch_tensor *w;
    CHECK_OK(ch_copy(idx, &w));
    ch_tensor dw = emu_on_device(w);
    int bad = -1;
    int64_t v = 0;
    CHECK_OK(cu_wrap_indices(&dw, n, &bad, &v));
    CHECK_EQ_I(bad, 0);
    return w;
}

static void test_wrap(void) {
    int64_t n5 = 5, n4 = 4;
    ch_tensor *ok, *badt;
    CHECK_OK(ch_empty(CH_INT64, 1, &n5, CH_CPU, &ok));
    const int64_t good[5] = {-5, -1, 0, 4, 2}, want[5] = {0, 4, 0, 4, 2};
    for (int k = 0; k < 5; k++)
        ch_set_flat(ok, k, (double)good[k]);
    ch_tensor d = emu_on_device(ok);
    int bad = -1;
    int64_t v = 0;
    CHECK_OK(cu_wrap_indices(&d, 5, &bad, &v));
    CHECK_EQ_I(bad, 0);
    for (int k = 0; k < 5; k++)
        CHECK_EQ_I(((int64_t *)ch_tensor_ptr(ok))[k], want[k]);
    /* the first bad entry is reported, whatever comes after it */
    CHECK_OK(ch_empty(CH_INT64, 1, &n4, CH_CPU, &badt));
    const int64_t wrong[4] = {1, 7, -9, 2};
    for (int k = 0; k < 4; k++)
        ch_set_flat(badt, k, (double)wrong[k]);
    d = emu_on_device(badt);
    CHECK_OK(cu_wrap_indices(&d, 5, &bad, &v));
    CHECK_EQ_I(bad, 1);
    CHECK_EQ_I(v, 7);
    ch_tensor_release(ok);
    ch_tensor_release(badt);
}

static void test_take(ch_dtype dt) {
    int64_t xs[3] = {4, 5, 3}, is[2] = {2, 3}, empty = 0;
    ch_tensor *x = filled(dt, 3, xs, -4, 4, 11, 0);
    for (int axis = 0; axis < 3; axis++)
        for (int e = 0; e < 2; e++) {
            ch_tensor *idx = e ? indices(1, &empty, xs[axis], 1) : indices(2, is, xs[axis], 3 + axis);
            ch_tensor *want, *w = wrapped(idx, xs[axis]), *got;
            CHECK_OK(ch_take(x, idx, axis, 0, &want));
            CHECK_OK(ch_empty(dt, want->nd, want->dim, CH_CPU, &got));
            ch_tensor dx = emu_on_device(x), dw = emu_on_device(w), dg = emu_on_device(got);
            CHECK_OK(cu_take(&dx, &dw, axis, &dg));
            report(e ? "take (empty)" : "take", dt, mismatches(want, got));
            ch_tensor_release(idx);
            ch_tensor_release(w);
            ch_tensor_release(want);
            ch_tensor_release(got);
        }
    ch_tensor_release(x);
}

/* x a permuted (strided) view; indices broadcast off the axis. */
static void test_take_along(ch_dtype dt) {
    int64_t xs[3] = {5, 4, 3};
    int32_t perm[3] = {2, 1, 0};
    ch_tensor *base = filled(dt, 3, xs, -4, 4, 12, 0), *x;
    CHECK_OK(ch_permute(base, perm, &x)); /* (3, 4, 5) */
    int64_t ishape[3][3] = {{6, 4, 1}, {1, 7, 5}, {3, 1, 7}};
    for (int axis = 0; axis < 3; axis++) {
        ch_tensor *idx = indices(3, ishape[axis], x->dim[axis], 20 + axis), *want, *got;
        ch_tensor *w = wrapped(idx, x->dim[axis]);
        CHECK_OK(ch_take_along_axis(x, idx, axis, &want));
        CHECK_OK(ch_empty(dt, want->nd, want->dim, CH_CPU, &got));
        ch_tensor dx = emu_on_device(x), dw = emu_on_device(w), dg = emu_on_device(got);
        CHECK_OK(cu_take_along_axis(&dx, &dw, axis, &dg));
        report("take_along_axis", dt, mismatches(want, got));
        ch_tensor_release(idx);
        ch_tensor_release(w);
        ch_tensor_release(want);
        ch_tensor_release(got);
    }
    ch_tensor_release(base);
    ch_tensor_release(x);
}

/* scatter_add into a flipped (negative-stride) target, duplicate indices,
 * values broadcast along the first axis. */
static void test_scatter(ch_dtype dt) {
    int64_t ts[3] = {4, 5, 3}, is[2] = {3, 4}, vs[3] = {3, 4, 3};
    for (int e = 0; e < 2; e++) {
        ch_tensor *tc = filled(dt, 3, ts, -4, 4, 30, 0), *tg, *vtc, *vtg;
        CHECK_OK(ch_copy(tc, &tg));
        CHECK_OK(ch_flip(tc, 2, &vtc));
        CHECK_OK(ch_flip(tg, 2, &vtg));
        int64_t ie = e ? 0 : is[0];
        int64_t ishape[2] = {ie, is[1]};
        ch_tensor *idx = indices(2, ishape, 5, 31), *w = wrapped(idx, 5);
        int64_t vshape[3] = {ie, vs[1], vs[2]};
        ch_tensor *v = filled(dt, 3, vshape, -3, 3, 32, 0);
        CHECK_OK(ch_scatter_add(vtc, 1, idx, v));
        ch_tensor dt_ = emu_on_device(vtg), dw = emu_on_device(w), dv = emu_on_device(v);
        CHECK_OK(cu_scatter_add(&dt_, 1, &dw, &dv));
        report(e ? "scatter_add (empty)" : "scatter_add", dt, mismatches(tc, tg));
        ch_tensor *list[] = {tc, tg, vtc, vtg, idx, w, v};
        for (int k = 0; k < 7; k++)
            ch_tensor_release(list[k]);
    }
}

/* scatter_add_along_axis: indices broadcast off the axis, and a target of
 * extent 1 off the axis that many index positions add into. */
static void test_scatter_along(ch_dtype dt) {
    int64_t tshape[2][3] = {{4, 5, 3}, {1, 5, 3}}, ishape[2][3] = {{4, 7, 1}, {4, 7, 3}};
    for (int c = 0; c < 2; c++) {
        ch_tensor *tc = filled(dt, 3, tshape[c], -4, 4, 40 + c, 0), *tg;
        CHECK_OK(ch_copy(tc, &tg));
        ch_tensor *idx = indices(3, ishape[c], 5, 42 + c), *w = wrapped(idx, 5);
        int64_t vshape[3] = {4, 7, 3};
        ch_tensor *v = filled(dt, 3, vshape, -3, 3, 44 + c, 0);
        CHECK_OK(ch_scatter_add_along_axis(tc, 1, idx, v));
        ch_tensor dt_ = emu_on_device(tg), dw = emu_on_device(w), dv = emu_on_device(v);
        CHECK_OK(cu_scatter_add_along_axis(&dt_, 1, &dw, &dv));
        report(c ? "scatter_add_along_axis (broadcast target)" : "scatter_add_along_axis", dt, mismatches(tc, tg));
        ch_tensor *list[] = {tc, tg, idx, w, v};
        for (int k = 0; k < 5; k++)
            ch_tensor_release(list[k]);
    }
}

/* count_nonzero, masked_select and nonzero over several chunks of a
 * flipped x with zeros (and -0.0), the mask broadcast. */
static void test_select(ch_dtype dt) {
    int64_t xs[3] = {7, 300, 3}, ms[2] = {300, 1};
    ch_tensor *base = filled(dt, 3, xs, -3, 3, 50, 3), *x;
    CHECK_OK(ch_flip(base, 1, &x));
    ch_tensor *mask = filled(CH_BOOL, 2, ms, 0.5, 1, 51, 2); /* every other row false */
    ch_tensor dx = emu_on_device(x), dm = emu_on_device(mask);
    /* nonzero, and count_nonzero against its row count */
    ch_tensor *nz, *got;
    CHECK_OK(ch_nonzero(x, &nz));
    int64_t count = -1;
    CHECK_OK(cu_count_nonzero(&dx, x->nd, x->dim, &count));
    CHECK_EQ_I(count, nz->dim[0]);
    CHECK_OK(ch_empty(CH_INT64, 2, nz->dim, CH_CPU, &got));
    ch_tensor dg = emu_on_device(got);
    CHECK_OK(cu_nonzero(&dx, &dg));
    report("nonzero", dt, mismatches(nz, got));
    ch_tensor_release(got);
    /* masked_select */
    ch_tensor *sel;
    CHECK_OK(ch_masked_select(x, mask, &sel));
    CHECK_OK(ch_empty(dt, 1, sel->dim, CH_CPU, &got));
    dg = emu_on_device(got);
    CHECK_OK(cu_masked_select(&dx, &dm, x->nd, x->dim, &dg));
    report("masked_select", dt, mismatches(sel, got));
    ch_tensor *list[] = {base, x, mask, nz, got, sel};
    for (int k = 0; k < 6; k++)
        ch_tensor_release(list[k]);
}

static void test_empty_and_zero_d(void) {
    int64_t zshape[2] = {3, 0};
    ch_tensor *z, *s, *out;
    CHECK_OK(ch_empty(CH_FLOAT32, 2, zshape, CH_CPU, &z));
    ch_tensor dz = emu_on_device(z);
    int64_t count = -1;
    CHECK_OK(cu_count_nonzero(&dz, 2, z->dim, &count));
    CHECK_EQ_I(count, 0);
    int64_t oshape[2] = {0, 2};
    CHECK_OK(ch_empty(CH_INT64, 2, oshape, CH_CPU, &out));
    ch_tensor dout = emu_on_device(out);
    CHECK_OK(cu_nonzero(&dz, &dout));
    ch_tensor_release(out);
    /* a 0-d x: one row of no columns when it is nonzero */
    CHECK_OK(ch_full(CH_FLOAT64, 0, NULL, 2.5, CH_CPU, &s));
    ch_tensor ds = emu_on_device(s);
    CHECK_OK(cu_count_nonzero(&ds, 0, NULL, &count));
    CHECK_EQ_I(count, 1);
    int64_t one[2] = {1, 0};
    CHECK_OK(ch_empty(CH_INT64, 2, one, CH_CPU, &out));
    dout = emu_on_device(out);
    CHECK_OK(cu_nonzero(&ds, &dout));
    ch_tensor_release(out);
    ch_tensor_release(s);
    ch_tensor_release(z);
}

/* The backend's own contract: refused with the kernel's name, nothing written. */
static void test_contract(void) {
    int64_t xs[2] = {4, 3}, n2 = 2, os[2] = {2, 3};
    ch_tensor *x, *idx, *out, *idx32;
    CHECK_OK(ch_full(CH_FLOAT32, 2, xs, 1.0, CH_CPU, &x));
    CHECK_OK(ch_full(CH_INT64, 1, &n2, 0.0, CH_CPU, &idx));
    CHECK_OK(ch_full(CH_INT32, 1, &n2, 0.0, CH_CPU, &idx32));
    CHECK_OK(ch_full(CH_FLOAT64, 2, os, 7.0, CH_CPU, &out));
    ch_tensor dx = emu_on_device(x), di = emu_on_device(idx), do_ = emu_on_device(out), di32 = emu_on_device(idx32);
    EMU_CHECK_ERR(cu_take(&dx, &di, 0, &do_), CH_ERR_INTERNAL, "take: x, the int64 indices and out");
    CHECK(at(out, 0) == 7.0);
    int bad;
    int64_t v;
    EMU_CHECK_ERR(cu_wrap_indices(&di32, 4, &bad, &v), CH_ERR_INTERNAL, "wrap_indices: the indices must be");
    /* masked_select with an out of the wrong length */
    ch_tensor *mask, *o1;
    CHECK_OK(ch_full(CH_BOOL, 2, xs, 1.0, CH_CPU, &mask));
    int64_t five = 5;
    CHECK_OK(ch_empty(CH_FLOAT32, 1, &five, CH_CPU, &o1));
    ch_tensor dm = emu_on_device(mask), d1 = emu_on_device(o1);
    EMU_CHECK_ERR(cu_masked_select(&dx, &dm, 2, xs, &d1), CH_ERR_INTERNAL, "masked_select: out has 5 elements for 12");
    ch_tensor *list[] = {x, idx, idx32, out, mask, o1};
    for (int k = 0; k < 6; k++)
        ch_tensor_release(list[k]);
}

int main(void) {
    test_wrap();
    for (int k = 0; k < NDT; k++) {
        test_take(all_dtypes[k]);
        test_take_along(all_dtypes[k]);
        test_scatter(all_dtypes[k]);
        test_scatter_along(all_dtypes[k]);
        test_select(all_dtypes[k]);
    }
    test_empty_and_zero_d();
    test_contract();
    return check_done("test_index (emulated)");
}

/*
 * elementwise.c -- front doors of the elementwise ops: unary and binary ops
 * (tensor-tensor and tensor-scalar), clip, where, axpby.
 *
 * Here every decision that does not depend on the device is taken: NumPy's
 * result and compute types, the broadcast shape, the output (given or new,
 * on the inputs' device), copies of inputs that partially overlap the
 * output, weak scalars rounded to the compute type.  The device's kernel
 * (cpu/elementwise.c, cuda/elementwise.cu) then runs one ch_ew_args.
 */
#include "prologue.h"
#include "../core/scalar_math.h"

#include <math.h>

#define EW_CLIP CH_NUNARY /* unary op code of clip(lo, hi) in ch_ew_args */

/* the op list's names, and clip after the unary ops */
static const char *const unary_names[] = {CH_UNARY_OP_LIST(CH_OP_NAME) "clip"};
static const char *const binary_names[] = {CH_BINARY_OP_LIST(CH_OP_NAME)};
_Static_assert(sizeof unary_names / sizeof *unary_names == CH_NUNARY + 1, "unary names: the list and clip");
_Static_assert(sizeof binary_names / sizeof *binary_names == CH_NBINARY, "binary names: one per list entry");

/* The compute type of a dtype: float16 computes in float32, integers and
 * bools in int64. */
static ch_dtype compute_of(ch_dtype dt) {
    if (dt == CH_FLOAT64) return CH_FLOAT64;
    if (dt == CH_FLOAT32 || dt == CH_FLOAT16) return CH_FLOAT32;
    return CH_INT64;
}

static bool bool_result_binary(int op) { return op >= CH_EQ; }
static bool bool_result_unary(int op) { return op >= CH_LOGICAL_NOT && op <= CH_ISFINITE; }
static bool keeps_dtype_unary(int op) {
    return op == CH_NEG || op == CH_ABS || op == CH_SIGN || op == CH_SQUARE || op == EW_CLIP;
}

/* Result dtype and compute type of a binary op on operand type p (the
 * promoted type of the inputs). */
static ch_status binary_types(int op, ch_dtype p, ch_dtype *res, ch_dtype *ct) {
    if (bool_result_binary(op)) {
        *res = CH_BOOL;
        *ct = compute_of(p);
        return CH_OK;
    }
    if (op == CH_DIV || op == CH_ARCTAN2 || op == CH_HYPOT || op == CH_ZETA || op == CH_POLYGAMMA) {
        *res = ch_dtype_is_float(p) ? p : CH_FLOAT64; /* integer true division gives float64 */
        *ct = compute_of(*res);
        return CH_OK;
    }
    if (p == CH_BOOL) {
        if (op == CH_SUB)
            return ch_fail(CH_ERR_DTYPE, "sub: subtracting bool tensors is not supported (NumPy neither); "
                                         "use logical_xor, or convert with astype first");
        /* NumPy has no bool loops for these; the smallest integer type runs them */
        *res = (op == CH_FLOOR_DIVIDE || op == CH_MOD || op == CH_FMOD || op == CH_POW) ? CH_INT8 : CH_BOOL;
        *ct = CH_INT64;
        return CH_OK;
    }
    *res = p;
    *ct = compute_of(p);
    return CH_OK;
}

static ch_status unary_types(int op, ch_dtype dt, ch_dtype *res, ch_dtype *ct) {
    if (bool_result_unary(op)) {
        *res = CH_BOOL;
        *ct = compute_of(dt);
        return CH_OK;
    }
    if (keeps_dtype_unary(op)) {
        if (dt == CH_BOOL) {
            if (op == CH_NEG || op == CH_SIGN)
                return ch_fail(CH_ERR_DTYPE, "%s: not supported for bool tensors (NumPy neither); use logical_not, "
                               "or convert with astype first", unary_names[op]);
            *res = op == CH_SQUARE ? CH_INT8 : CH_BOOL;
        } else {
            *res = dt;
        }
        *ct = compute_of(*res);
        return CH_OK;
    }
    /* math functions: integers and bools compute (and give) float64 */
    *res = ch_dtype_is_float(dt) ? dt : CH_FLOAT64;
    *ct = compute_of(*res);
    return CH_OK;
}

/* Validates a caller-given output (shape, device: that of the input `ref`)
 * or allocates one on ref's device. */
static ch_status prepare_out(const char *fn, ch_tensor *out, ch_dtype res, int nd, const int64_t *dim,
                             const ch_tensor *ref, const char *ref_name, ch_tensor **target) {
    if (out) {
        CH_CHECK_ARG(out, fn, "out");
        if (out->dev != ref->dev)
            return ch_same_device(fn, ref_name, ref, "out", out);
        bool same = out->nd == nd;
        for (int i = 0; same && i < nd; i++)
            same = out->dim[i] == dim[i];
        if (!same) {
            char so[CH_SHAPE_BUF], sr[CH_SHAPE_BUF];
            return ch_fail(CH_ERR_SHAPE, "%s: the output has shape %s, but the result has shape %s "
                           "(in-place ops cannot broadcast the tensor they write to)", fn,
                           ch_shape_str(so, sizeof so, out->nd, out->dim), ch_shape_str(sr, sizeof sr, nd, dim));
        }
        ch_tensor_retain(out);
        *target = out;
        return CH_OK;
    }
    return ch_tensor_new(res, nd, dim, ref->dev, target);
}

/* An input that shares memory with the output but is laid out differently
 * (a shifted or transposed view of it) would be overwritten while still
 * being read: such inputs are copied first.  Exact aliasing (x += y) is
 * safe because every output element depends only on the inputs at the same
 * position, which each chunk reads before it writes. */
static ch_status unalias(const ch_tensor *out, const ch_tensor *x, const int64_t *bstride, ch_tensor **copy) {
    *copy = NULL;
    if (!out->storage || out->storage != x->storage || out->numel == 0)
        return CH_OK;
    bool same = ch_base(out) == ch_base(x);
    for (int i = 0; same && i < out->nd; i++)
        same = out->dim[i] == 1 || bstride[i] == out->stride[i];
    if (same)
        return CH_OK;
    return ch_copy(x, copy);
}

static void finish(ch_tensor *target, ch_tensor *out, ch_tensor **result) {
    if (out) {
        if (result)
            *result = target;       /* a new reference to out */
        else
            ch_tensor_release(target);
    } else {
        *result = target;
    }
}

/* Integer pow refuses negative exponents; a GPU exponent is checked on a
 * host copy (the error must come before any work). */
static ch_status check_int_pow(const ch_tensor *b, const char *fn) {
    /* NumPy refuses negative integer exponents rather than returning 0 */
    ch_iter it;
    const int64_t *strides[1] = {b->stride};
    ch_iter_init(&it, b->nd, b->dim, 1, strides);
    ch_dtype dt = (ch_dtype)b->dt;
    if (!ch_dtype_is_signed(dt))
        return CH_OK;
    int64_t z = (int64_t)ch_dtype_size(dt);
    const char *base = ch_base(b);
    for (int64_t pos = 0; pos < it.outer_count; pos++) {
        int64_t off;
        ch_iter_offsets(&it, pos, &off);
        for (int64_t i = 0; i < it.inner; i++)
            if (ch_load_i64(dt, base + (off + i * it.inner_stride[0]) * z) < 0)
                return ch_fail(CH_ERR_ARG, "%s: integers to negative integer powers are not allowed "
                               "(convert the base to float first)", fn);
    }
    return CH_OK;
}

static ch_status check_int_pow_any(const ch_tensor *b, const char *fn) {
    if (b->dev == CH_CPU)
        return check_int_pow(b, fn);
    ch_tensor *h;
    CH_TRY(ch_to_device(b, CH_CPU, &h));
    ch_status st = check_int_pow(h, fn);
    ch_tensor_release(h);
    return st;
}

/* Runs w on out's device and hands out the result (or releases target on
 * failure). */
static ch_status run(const ch_ew_args *w, ch_elementwise_kernel *kernel, ch_tensor *target, ch_tensor *out,
                     ch_tensor **result) {
    ch_status st = kernel(w);
    if (st != CH_OK) {
        ch_tensor_release(target);
        return st;
    }
    finish(target, out, result);
    return CH_OK;
}

/* ---- unary ops and clip ---------------------------------------------------- */
static ch_status unary_impl(int op, const ch_tensor *x, double lo, double hi, ch_dtype res_override,
                            ch_tensor *out, ch_tensor **result) {
    const char *fn = unary_names[op];
    CH_CHECK_ARG(x, fn, "x");
    if (!out && !result)
        return ch_fail(CH_ERR_ARG, "%s: neither out nor result was given", fn);
    CH_KERNEL(kernel, elementwise, x->dev, fn);
    ch_dtype res = CH_FLOAT64, ct = CH_FLOAT64;
    CH_TRY(unary_types(op, (ch_dtype)x->dt, &res, &ct));
    if (res_override != CH_NDTYPES) {
        res = res_override;
        ct = compute_of(res);
    }
    ch_tensor *target;
    CH_TRY(prepare_out(fn, out, res, x->nd, x->dim, x, "x", &target));
    ch_tensor *xc = NULL;
    ch_status st = unalias(target, x, x->stride, &xc);
    if (st != CH_OK) {
        ch_tensor_release(target);
        return st;
    }
    ch_ew_args w = {.name = fn, .op = op, .nin = 1, .ct = ct, .scalar_pos = -1, .lo = lo, .hi = hi,
                    .out = target, .in = {xc ? xc : x, NULL}};
    st = run(&w, kernel, target, out, result);
    ch_tensor_release(xc);
    return st;
}

ch_status ch_unary(ch_unary_op op, const ch_tensor *x, ch_tensor *out, ch_tensor **result) {
    if ((unsigned)op >= CH_NUNARY)
        return ch_fail(CH_ERR_ARG, "unary: invalid op code %d", (int)op);
    return unary_impl(op, x, 0, 0, CH_NDTYPES, out, result);
}

ch_status ch_clip(const ch_tensor *x, double lo, double hi, ch_tensor *out, ch_tensor **result) {
    CH_CHECK_ARG(x, "clip", "x");
    /* bounds are weak scalars: a fractional bound lifts integers to float64 */
    ch_dtype dt = (ch_dtype)x->dt;
    int frac = (lo == lo && lo != floor(lo)) || (hi == hi && hi != floor(hi)) || isinf(lo) || isinf(hi);
    ch_dtype res = ch_promote_scalar(dt, frac, 0);
    if (lo != lo)
        lo = -INFINITY;
    if (hi != hi)
        hi = INFINITY;
    return unary_impl(EW_CLIP, x, lo, hi, res, out, result);
}

/* ---- binary ops -------------------------------------------------------------- */
/* Same-shape, C-contiguous float32/float64 operands of + - * /: the
 * autograd's per-node ops on small tensors and the in-place accumulation of
 * gradients.  For them the broadcast planning and alias analysis of the
 * general path cost several times the arithmetic of a small tensor, so this
 * route skips them and marks the arguments `flat` for the kernel.  Returns
 * false, having done nothing, when the operands do not qualify; an `out`
 * must then be exactly the same memory as an operand or not share its
 * storage at all. */
static bool binary_flat(int op, const ch_tensor *a, const ch_tensor *b, ch_tensor *out, ch_tensor **result,
                        ch_elementwise_kernel *kernel, ch_status *st) {
    ch_dtype dt = (ch_dtype)a->dt;
    if (op > CH_DIV || (dt != CH_FLOAT32 && dt != CH_FLOAT64) || !ch_same_dense_layout(b, a) || !ch_contig(a))
        return false;
    if (out) {
        if (out->dev != a->dev || !out->data || !ch_same_dense_layout(out, a))
            return false;
        if ((out->storage == a->storage && ch_base(out) != ch_base(a)) ||
            (out->storage == b->storage && ch_base(out) != ch_base(b)))
            return false;
    }
    /* (an `out` is not retained for the call: the caller holds it, and an
     * in-place op then costs no atomic count) */
    ch_tensor *target = out;
    if (!out && (*st = ch_tensor_new_like(a, dt, &target)) != CH_OK)
        return true;
    ch_ew_args w = {.name = binary_names[op], .op = op, .nin = 2, .ct = dt, .scalar_pos = -1, .flat = 1,
                    .out = target, .in = {a, b}};
    *st = kernel(&w);
    if (*st != CH_OK) {
        if (!out)
            ch_tensor_release(target);
    } else if (result) {
        if (out)
            ch_tensor_retain(out);     /* a new reference to out */
        *result = target;
    }
    return true;
}

ch_status ch_binary(ch_binary_op op, const ch_tensor *a, const ch_tensor *b, ch_tensor *out, ch_tensor **result) {
    if ((unsigned)op >= CH_NBINARY)
        return ch_fail(CH_ERR_ARG, "binary: invalid op code %d", (int)op);
    const char *fn = binary_names[op];
    CH_CHECK_ARG(a, fn, "a");
    CH_CHECK_ARG(b, fn, "b");
    if (!out && !result)
        return ch_fail(CH_ERR_ARG, "%s: neither out nor result was given", fn);
    if (a->dev != b->dev)
        return ch_same_device(fn, "a", a, "b", b);
    CH_KERNEL(kernel, elementwise, a->dev, fn);
    ch_status flat_st;
    if (binary_flat(op, a, b, out, result, kernel, &flat_st))
        return flat_st;
    ch_dtype p = ch_promote((ch_dtype)a->dt, (ch_dtype)b->dt), res, ct;
    CH_TRY(binary_types(op, p, &res, &ct));
    int nd;
    int64_t dim[CH_MAX_DIMS];
    CH_TRY(ch_broadcast_shape(a->nd, a->dim, b->nd, b->dim, &nd, dim, fn));
    if (op == CH_POW && ct == CH_INT64)
        CH_TRY(check_int_pow_any(b, fn));
    ch_tensor *target;
    CH_TRY(prepare_out(fn, out, res, nd, dim, a, "a", &target));
    int64_t sa[CH_MAX_DIMS], sb[CH_MAX_DIMS];
    ch_broadcast_strides(a, nd, dim, sa);
    ch_broadcast_strides(b, nd, dim, sb);
    ch_tensor *ac = NULL, *bc = NULL;
    ch_status st = unalias(target, a, sa, &ac);
    if (st == CH_OK)
        st = unalias(target, b, sb, &bc);
    if (st != CH_OK) {
        ch_tensor_release(ac);
        ch_tensor_release(target);
        return st;
    }
    ch_ew_args w = {.name = fn, .op = op, .nin = 2, .ct = ct, .scalar_pos = -1, .out = target,
                    .in = {ac ? ac : a, bc ? bc : b}};
    st = run(&w, kernel, target, out, result);
    ch_tensor_release(ac);
    ch_tensor_release(bc);
    return st;
}

ch_status ch_binary_scalar(ch_binary_op op, const ch_tensor *a, double s, int scalar_is_float, int scalar_first,
                           ch_tensor *out, ch_tensor **result) {
    if ((unsigned)op >= CH_NBINARY)
        return ch_fail(CH_ERR_ARG, "binary: invalid op code %d", (int)op);
    const char *fn = binary_names[op];
    const char *an = scalar_first ? "b" : "a";
    CH_CHECK_ARG(a, fn, an);
    if (!out && !result)
        return ch_fail(CH_ERR_ARG, "%s: neither out nor result was given", fn);
    CH_KERNEL(kernel, elementwise, a->dev, fn);
    ch_dtype adt = (ch_dtype)a->dt;
    ch_dtype p = ch_promote_scalar(adt, scalar_is_float, 0), res, ct;
    CH_TRY(binary_types(op, p, &res, &ct));
    if (op == CH_POW && ct == CH_INT64 && !scalar_first && s < 0)
        return ch_fail(CH_ERR_ARG, "%s: integers to negative integer powers are not allowed "
                       "(convert the base to float first)", fn);
    ch_tensor *target;
    CH_TRY(prepare_out(fn, out, res, a->nd, a->dim, a, an, &target));
    ch_tensor *ac = NULL;
    ch_status st = unalias(target, a, a->stride, &ac);
    if (st == CH_OK && op == CH_POW && ct == CH_INT64 && scalar_first)
        st = check_int_pow_any(a, fn);
    if (st != CH_OK) {
        ch_tensor_release(ac);
        ch_tensor_release(target);
        return st;
    }
    const ch_tensor *ax = ac ? ac : a;
    ch_ew_args w = {.name = fn, .op = op, .nin = 2, .ct = ct, .scalar_pos = scalar_first ? 0 : 1, .out = target,
                    .in = {scalar_first ? NULL : ax, scalar_first ? ax : NULL}};
    /* the scalar takes the operand type's precision first (NumPy's weak
     * scalars): float32 x == 0.1 compares with float32(0.1) */
    if (p == CH_FLOAT16)
        w.scalar_f = ch_half_to_float(ch_float_to_half((float)s));
    else if (ct == CH_FLOAT32)
        w.scalar_f = (float)s;
    else if (ct == CH_FLOAT64)
        w.scalar_f = s;
    else
        w.scalar_i = ch_sat_i64(s);
    st = run(&w, kernel, target, out, result);
    ch_tensor_release(ac);
    return st;
}

/* ---- where --------------------------------------------------------------- */
ch_status ch_where(const ch_tensor *cond, const ch_tensor *a, const ch_tensor *b, ch_tensor *out,
                   ch_tensor **result) {
    CH_CHECK_ARG(cond, "where", "cond");
    CH_CHECK_ARG(a, "where", "a");
    CH_CHECK_ARG(b, "where", "b");
    if (!out && !result)
        return ch_fail(CH_ERR_ARG, "where: neither out nor result was given");
    CH_TRY(ch_same_device("where", "a", a, "b", b));
    CH_TRY(ch_same_device("where", "cond", cond, "a", a));
    CH_KERNEL(kernel, where, a->dev, "where");
    int nd1, nd;
    int64_t d1[CH_MAX_DIMS], dim[CH_MAX_DIMS];
    CH_TRY(ch_broadcast_shape(cond->nd, cond->dim, a->nd, a->dim, &nd1, d1, "where"));
    CH_TRY(ch_broadcast_shape(nd1, d1, b->nd, b->dim, &nd, dim, "where"));
    ch_dtype res = ch_promote((ch_dtype)a->dt, (ch_dtype)b->dt);
    ch_tensor *target;
    CH_TRY(prepare_out("where", out, res, nd, dim, a, "a", &target));
    /* The kernel selects between operands of the output's dtype under a bool
     * condition: others are converted first (the same conversions as a
     * copy).  Inputs overlapping the output are copied (see unalias). */
    const ch_tensor *in[3] = {cond, a, b};
    ch_tensor *cp[3] = {NULL, NULL, NULL};
    ch_status st = CH_OK;
    for (int k = 0; k < 3 && st == CH_OK; k++) {
        ch_dtype want = k == 0 ? CH_BOOL : res;
        if (in[k]->dt != (int32_t)want) {
            st = ch_astype(in[k], want, &cp[k]);
        } else {
            int64_t s[CH_MAX_DIMS];
            ch_broadcast_strides(in[k], nd, dim, s);
            st = unalias(target, in[k], s, &cp[k]);
        }
        if (cp[k])
            in[k] = cp[k];
    }
    if (st == CH_OK)
        st = kernel(in[0], in[1], in[2], target);
    ch_release_all(cp, 3);
    if (st != CH_OK) {
        ch_tensor_release(target);
        return st;
    }
    finish(target, out, result);
    return CH_OK;
}

/* ---- axpby --------------------------------------------------------------- */
ch_status ch_axpby(double a, const ch_tensor *x, double b, ch_tensor *y) {
    CH_TRY(ch_check_pair("axpby", "x", x, "y", y));
    if (!ch_dtype_is_float((ch_dtype)y->dt))
        return ch_fail(CH_ERR_DTYPE, "axpby: y must be a float tensor (got %s)", ch_dtype_name((ch_dtype)y->dt));
    if (!ch_same_shape(x, y)) {
        char sx[CH_SHAPE_BUF], sy[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "axpby: x has shape %s but y has shape %s (expected the same shape)",
                       ch_shape_str(sx, sizeof sx, x->nd, x->dim), ch_shape_str(sy, sizeof sy, y->nd, y->dim));
    }
    CH_KERNEL(kernel, axpby, y->dev, "axpby");
    if (y->numel == 0)
        return CH_OK;
    /* x in y's dtype (a copy when it differs, or when it partially overlaps y) */
    ch_tensor *xc = NULL;
    if (x->dt != y->dt)
        CH_TRY(ch_astype(x, (ch_dtype)y->dt, &xc));
    else
        CH_TRY(unalias(y, x, x->stride, &xc));
    ch_status st = kernel(a, xc ? xc : x, b, y);
    ch_tensor_release(xc);
    return st;
}

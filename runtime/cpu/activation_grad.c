/*
 * activation_grad.c -- one-pass gradients of relu, sigmoid and tanh from
 * their outputs: composing them from tensor ops would take two or three
 * passes and temporaries (a mask, 1 - y, ...).
 * relu reads g unconditionally: a conditional load keeps the loop scalar with
 * a branch that relu's ~50 % zeros mispredict (538 us instead of ~30 us for
 * 10^5 floats); loading first lets it vectorise into a compare and a blend.
 * CUDA tensors take the same checks and conversions and run the same
 * formulas in the backend (runtime/cuda/activation.cu).
 */
#include "../core/internal.h"
#include "../core/device_ops.h"

static const char *const act_names[] = {"relu_grad", "sigmoid_grad", "tanh_grad"};

#define ACT_LOOP(T)                                                         \
    do {                                                                    \
        const T *a = (const T *)ch_base(yc), *g = (const T *)ch_base(gc);  \
        T *o = (T *)ch_base(gx);                                            \
        switch (op) {                                                       \
        case CH_ACT_RELU:                                                   \
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, T g_ = g[i]; o[i] = a[i] > 0 ? g_ : (T)0;); \
            break;                                                          \
        case CH_ACT_SIGMOID:                                                \
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, o[i] = g[i] * a[i] * ((T)1 - a[i]);); \
            break;                                                          \
        default:                                                            \
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, o[i] = g[i] * ((T)1 - a[i] * a[i]);); \
            break;                                                          \
        }                                                                   \
    } while (0)

ch_status ch_activation_grad(ch_act_grad_op op, const ch_tensor *y, const ch_tensor *gy, ch_tensor **result) {
    if ((int)op < 0 || (int)op > CH_ACT_TANH) return ch_fail(CH_ERR_ARG, "activation_grad: unknown op %d", (int)op);
    const char *fn = act_names[op];
    CH_CHECK_ARG(y, fn, "y");
    CH_CHECK_ARG(gy, fn, "gy");
    if (y->dev != gy->dev)
        return ch_same_device(fn, "y", y, "gy", gy);
    if (!result) return ch_fail(CH_ERR_ARG, "%s: result must not be NULL", fn);
    if (!ch_dtype_is_float((ch_dtype)y->dt))
        return ch_fail(CH_ERR_DTYPE, "%s: y must be a float tensor (got %s)", fn, ch_dtype_name((ch_dtype)y->dt));
    if (y->dt != gy->dt)
        return ch_fail(CH_ERR_DTYPE, "%s: y and gy have different dtypes (%s and %s)", fn,
                       ch_dtype_name((ch_dtype)y->dt), ch_dtype_name((ch_dtype)gy->dt));
    if (!ch_same_shape(y, gy)) {
        char a[CH_SHAPE_BUF], b[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "%s: gy has shape %s, expected the shape of y %s", fn,
                       ch_shape_str(a, sizeof a, gy->nd, gy->dim), ch_shape_str(b, sizeof b, y->nd, y->dim));
    }
    ch_dtype ct = y->dt == CH_FLOAT64 ? CH_FLOAT64 : CH_FLOAT32;
    ch_tensor *yc = NULL, *gc = NULL, *gx = NULL;
    CH_TRY(ch_contiguous_as(y, ct, &yc));
    ch_status st = ch_contiguous_as(gy, ct, &gc);
    if (st == CH_OK) st = ch_tensor_new_like(yc, ct, &gx);
    if (st != CH_OK) {
        ch_tensor_release(yc);
        if (gc) ch_tensor_release(gc);
        return st;
    }
    int64_t n = yc->numel;
    int par = n > CH_PARALLEL_GRAIN;
    if (yc->dev != CH_CPU)
        st = ch_device_activation_grad(fn, (int)op, yc, gc, gx);
    else if (ct == CH_FLOAT32)
        ACT_LOOP(float);
    else
        ACT_LOOP(double);
    ch_tensor_release(yc);
    ch_tensor_release(gc);
    if (st != CH_OK) {
        ch_tensor_release(gx);
        return st;
    }
    if ((ch_dtype)y->dt != ct) {
        ch_tensor *o = NULL;
        if (gx->dev != CH_CPU) {
            st = ch_astype(gx, (ch_dtype)y->dt, &o);
        } else {
            st = ch_tensor_new_like(gx, (ch_dtype)y->dt, &o);
            if (st == CH_OK) st = ch_cpu_copy(o, gx);
        }
        ch_tensor_release(gx);
        if (st != CH_OK) {
            if (o) ch_tensor_release(o);
            return st;
        }
        gx = o;
    }
    *result = gx;
    return CH_OK;
}

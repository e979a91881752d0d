/*
 * activation_grad.c -- front door of ch_activation_grad: the gradients of
 * relu, sigmoid and tanh from their outputs in one pass (composing them
 * from tensor ops would take two or three passes and temporaries).
 * float16 computes in float32 and is rounded back once.
 */
#include "prologue.h"

static const char *const act_names[] = {"relu_grad", "sigmoid_grad", "tanh_grad"};
_Static_assert(sizeof act_names / sizeof *act_names == CH_NACT_GRAD, "one name per CH_ACT_GRAD_OP_LIST entry");

ch_status ch_activation_grad(ch_act_grad_op op, const ch_tensor *y, const ch_tensor *gy, ch_tensor **result) {
    if ((unsigned)op >= CH_NACT_GRAD)
        return ch_fail(CH_ERR_ARG, "activation_grad: unknown op %d", (int)op);
    const char *fn = act_names[op];
    CH_TRY(ch_want_float(fn, "y", y));
    CH_TRY(ch_want_like(fn, "gy", gy, "y", y, 1));
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: result must not be NULL", fn);
    CH_KERNEL(kernel, activation_grad, y->dev, fn);

    ch_dtype ct = y->dt == CH_FLOAT64 ? CH_FLOAT64 : CH_FLOAT32;
    const ch_tensor *in[2] = {y, gy};
    ch_tensor *c[2], *gx = NULL;
    CH_TRY(ch_contiguous_all(in, 2, ct, c));
    ch_status st = ch_tensor_new_like(c[0], ct, &gx);
    if (st == CH_OK)
        st = kernel((int)op, c[0], c[1], gx);
    ch_release_all(c, 2);
    if (st == CH_OK && (ch_dtype)y->dt != ct) {
        ch_tensor *rounded = NULL;
        st = ch_astype(gx, (ch_dtype)y->dt, &rounded);
        ch_tensor_release(gx);
        gx = rounded;
    }
    return ch_hand_over(st, gx, result);
}

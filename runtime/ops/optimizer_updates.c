/* optimizer_updates.c -- front doors of the fused optimizer updates and the
 * gradient hooks (kernels: cpu/optimizer_updates.c, cuda/optimizer.cu).
 *
 * Each update checks its operands (param's device, float dtypes, param's
 * shape, no memory shared with the parameter), then runs the device's
 * kernel on the operands as they are when they are contiguous and of one
 * dtype (float32 or float64), else on contiguous float64 working copies that
 * are written back.  The formulas are in chainlua.h.
 */
#include "prologue.h"

/* Checks operand t of an update against the parameter (the first checked):
 * on param's device, float, param's shape, not sharing param's memory. */
static ch_status check_operand(const ch_tensor *t, const ch_tensor *param, const char *fn, const char *arg) {
    CH_CHECK_ARG(t, fn, arg);
    if (t != param && t->dev != param->dev)
        return ch_same_device(fn, "param", param, arg, t);
    if (!ch_dtype_is_float((ch_dtype)t->dt))
        return ch_fail(CH_ERR_DTYPE, "%s: %s must be a float tensor (got %s)", fn, arg,
                       ch_dtype_name((ch_dtype)t->dt));
    if (t != param && !ch_same_shape(t, param)) {
        char s1[CH_SHAPE_BUF], s2[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "%s: %s has shape %s but the parameter has shape %s", fn, arg,
                       ch_shape_str(s1, sizeof s1, t->nd, t->dim),
                       ch_shape_str(s2, sizeof s2, param->nd, param->dim));
    }
    if (t != param && t->data == param->data && t->data != NULL && t->numel > 0 &&
        t->offset == param->offset)
        return ch_fail(CH_ERR_ARG, "%s: %s shares its memory with the parameter", fn, arg);
    return CH_OK;
}

static bool fast_operand(const ch_tensor *t, ch_dtype dt) {
    return t == NULL || (t->dt == (int32_t)dt && ch_contig(t));
}

/* run_update with the kernel `name` of param's device (NULL is checked there,
 * after the argument checks). */
#define RUN(name, ...) run_update(#name, ch_kernels(param ? param->dev : CH_CPU)->name, &u, param, grad, __VA_ARGS__)

/* Validates, then runs the device's kernel directly or on contiguous
 * float64 working copies that are written back (float16, strided views, a
 * grad of another dtype). */
static ch_status run_update(const char *fn, ch_opt_update_kernel *kernel, ch_opt_args *u, ch_tensor *param,
                            const ch_tensor *grad, ch_tensor *s0, ch_tensor *s1, ch_tensor *s2, int nstate) {
    CH_TRY(check_operand(param, param, fn, "param"));
    CH_TRY(check_operand(grad, param, fn, "grad"));
    ch_tensor *st[3] = {s0, s1, s2};
    static const char *sname[3] = {"state 1", "state 2", "state 3"};
    for (int j = 0; j < nstate; j++) {
        if (st[j] == NULL)
            return ch_fail(CH_ERR_ARG, "%s: %s is NULL", fn, sname[j]);
        CH_TRY(check_operand(st[j], param, fn, sname[j]));
        if (st[j] == param)
            return ch_fail(CH_ERR_ARG, "%s: %s shares its memory with the parameter", fn, sname[j]);
    }
    if (!kernel)
        return ch_no_kernel(fn, param->dev);
    if (param->numel == 0)
        return CH_OK;
    u->name = fn;
    ch_dtype dt = (ch_dtype)param->dt;
    bool fast = (dt == CH_FLOAT32 || dt == CH_FLOAT64) && fast_operand(param, dt) && fast_operand(grad, dt);
    for (int j = 0; j < nstate && fast; j++) fast = fast_operand(st[j], dt);
    if (fast) {
        u->param = param;
        u->grad = grad;
        for (int j = 0; j < nstate; j++) u->state[j] = st[j];
        return kernel(u);
    }
    ch_tensor *wp = NULL, *wg = NULL, *ws[3] = {NULL, NULL, NULL};
    /* an operand that is already contiguous float64 is its own working copy */
    ch_status rc = ch_contiguous_as(param, CH_FLOAT64, &wp);
    if (rc == CH_OK) rc = ch_contiguous_as(grad, CH_FLOAT64, &wg);
    for (int j = 0; j < nstate && rc == CH_OK; j++) rc = ch_contiguous_as(st[j], CH_FLOAT64, &ws[j]);
    if (rc == CH_OK) {
        u->param = wp;
        u->grad = wg;
        for (int j = 0; j < nstate; j++) u->state[j] = ws[j];
        rc = kernel(u);
    }
    if (rc == CH_OK && wp != param) rc = ch_copy_into(param, wp);
    for (int j = 0; j < nstate && rc == CH_OK; j++)
        if (ws[j] != st[j]) rc = ch_copy_into(st[j], ws[j]);
    ch_tensor_release(wp);
    ch_tensor_release(wg);
    for (int j = 0; j < 3; j++) ch_tensor_release(ws[j]);
    return rc;
}

ch_status ch_sgd_update(ch_tensor *param, const ch_tensor *grad, double lr) {
    ch_opt_args u = {.lr = lr};
    return RUN(sgd_update, NULL, NULL, NULL, 0);
}

ch_status ch_momentum_sgd_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *v, double lr, double momentum) {
    ch_opt_args u = {.lr = lr, .momentum = momentum};
    return RUN(momentum_sgd_update, v, NULL, NULL, 1);
}

ch_status ch_corrected_momentum_sgd_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *v, double lr,
                                           double momentum) {
    ch_opt_args u = {.lr = lr, .momentum = momentum};
    return RUN(corrected_momentum_sgd_update, v, NULL, NULL, 1);
}

ch_status ch_nesterov_ag_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *v, double lr, double momentum) {
    ch_opt_args u = {.lr = lr, .momentum = momentum};
    return RUN(nesterov_ag_update, v, NULL, NULL, 1);
}

ch_status ch_adagrad_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *hs, double lr, double eps) {
    ch_opt_args u = {.lr = lr, .eps = eps};
    return RUN(adagrad_update, hs, NULL, NULL, 1);
}

ch_status ch_adadelta_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *msg, ch_tensor *msdx, double rho,
                             double eps) {
    ch_opt_args u = {.rho = rho, .eps = eps};
    return RUN(adadelta_update, msg, msdx, NULL, 2);
}

ch_status ch_adam_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *m, ch_tensor *v, ch_tensor *vhat,
                         double alpha_t, double beta1, double beta2, double eps, double eta,
                         double weight_decay_rate, int bounded, double lower, double upper) {
    ch_opt_args u = {.lr = alpha_t, .beta1 = beta1, .beta2 = beta2, .eps = eps, .eta = eta, .wd = weight_decay_rate,
                     .bounded = bounded != 0, .lower = lower, .upper = upper, .amsgrad = vhat != NULL};
    return RUN(adam_update, m, v, vhat, vhat ? 3 : 2);
}

ch_status ch_rmsprop_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *ms, double lr, double alpha,
                            double eps, int eps_inside_sqrt) {
    ch_opt_args u = {.lr = lr, .alpha = alpha, .eps = eps, .eps_inside_sqrt = eps_inside_sqrt != 0};
    return RUN(rmsprop_update, ms, NULL, NULL, 1);
}

ch_status ch_rmsprop_graves_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *n, ch_tensor *gm,
                                   ch_tensor *delta, double lr, double alpha, double momentum, double eps) {
    ch_opt_args u = {.lr = lr, .alpha = alpha, .momentum = momentum, .eps = eps};
    return RUN(rmsprop_graves_update, n, gm, delta, 3);
}

ch_status ch_smorms3_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *mem, ch_tensor *g, ch_tensor *g2,
                            double lr, double eps) {
    ch_opt_args u = {.lr = lr, .eps = eps};
    return RUN(smorms3_update, mem, g, g2, 3);
}

ch_status ch_msvag_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *m, ch_tensor *v, double lr,
                          double beta, double beta_power, double rho, double eta, double weight_decay_rate) {
    if (beta_power == 1.0)
        return ch_fail(CH_ERR_ARG, "msvag_update: beta_power must differ from 1 (got 1; is beta 1?)");
    if (rho == 1.0)
        return ch_fail(CH_ERR_ARG, "msvag_update: rho must differ from 1 (got 1)");
    ch_opt_args u = {.lr = lr, .beta1 = beta, .beta_power = beta_power, .rho = rho, .eta = eta, .wd = weight_decay_rate};
    return RUN(msvag_update, m, v, NULL, 2);
}

/* ---- gradient hooks ------------------------------------------------------ */
ch_status ch_grad_transform(ch_tensor *grad, const ch_tensor *param, double scale, double decay, int decay_sign,
                            double lower, double upper) {
    const char *fn = "grad_transform";
    CH_TRY(check_operand(grad, grad, fn, "grad"));
    if (decay == 0) param = NULL;
    if (param) CH_TRY(check_operand(param, grad, fn, "param"));
    if (lower > upper)
        return ch_fail(CH_ERR_ARG, "%s: lower (%g) must not exceed upper (%g)", fn, lower, upper);
    CH_KERNEL(kernel, grad_transform, grad->dev, fn);
    if (grad->numel == 0) return CH_OK;
    return kernel(grad, param, scale, decay, decay_sign, lower, upper);
}

ch_status ch_sqnorm(const ch_tensor *x, double *result) {
    CH_CHECK_ARG(x, "sqnorm", "x");
    if (result == NULL) return ch_fail(CH_ERR_ARG, "sqnorm: result is NULL");
    CH_KERNEL(kernel, sqnorm, x->dev, "sqnorm");
    return kernel(x, result);
}

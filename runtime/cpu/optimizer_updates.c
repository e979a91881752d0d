/* optimizer_updates.c -- fused per-parameter optimizer updates and gradient hooks.
 *
 * Each update reads the gradient and the state once and writes the parameter
 * and the state once: one pass over memory, no temporaries, on the typed
 * fast path (param, grad and states contiguous and of one dtype, float32 or
 * float64).  The arithmetic follows Chainer's formulas in the parameter's
 * own precision there, so float32 trajectories track Chainer's NumPy ones.
 * Anything else (float16, strided views, a grad of another dtype) runs the
 * float64 loop on contiguous float64 copies and writes the results back.
 *
 * On CUDA tensors SGD, the momentum variants and Adam take the same checks
 * here and run the same formulas in the backend (update_device); the other
 * optimizers refuse GPU tensors so far.
 */
#include "../core/internal.h"
#include "../core/device_ops.h"

#include <math.h>
#include <stdlib.h>

typedef enum opt_kind {
    K_SGD, K_MOMENTUM, K_CMOMENTUM, K_NESTEROV, K_ADAGRAD, K_ADADELTA, K_ADAM,
    K_RMSPROP, K_GRAVES, K_SMORMS3, K_MSVAG
} opt_kind;

/* Resolved scalars; each kernel reads the fields its comment names. */
typedef struct opt_hp {
    double lr, momentum, eps, beta1, beta2, eta, wd, lower, upper, rho, beta_power;
    int bounded, amsgrad, eps_inside;
} opt_hp;

/* NumPy-style clip: NaN passes through. */
#define CLIP(x, lo, hi) ((x) < (lo) ? (lo) : ((x) > (hi) ? (hi) : (x)))

/* PARFOR({ body }): for i in [0, n), on OpenMP's threads for large n only */
#define PARFOR(...) CH_PAR_FOR(n >= CH_PARALLEL_GRAIN, int64_t i = 0; i < n; i++, __VA_ARGS__)

/* Adam's loop with the AMSGrad and AdaBound switches as constants. */
#define ADAM_LOOP(T, SQRT, AMS, BOUNDED)                                              \
    do { PARFOR({                                                                     \
        T g = G[i];                                                                   \
        T m = S0[i] + b1 * (g - S0[i]);                                               \
        T v = S1[i] + b2 * (g * g - S1[i]);                                           \
        S0[i] = m;                                                                    \
        S1[i] = v;                                                                    \
        if (AMS) {                                                                    \
            T vh = S2[i] > v ? S2[i] : v;                                             \
            S2[i] = vh;                                                               \
            v = vh;                                                                   \
        }                                                                             \
        T step = a / (SQRT(v) + eps);                                                 \
        if (BOUNDED) {                                                                \
            step = step > lo ? step : lo;                                             \
            step = step < hi ? step : hi;                                             \
        }                                                                             \
        P[i] = keep * P[i] - eta * step * m;                                          \
    }); } while (0)

/* The element loops for one element type T (SQRT is sqrtf or sqrt).  P is the
 * parameter, G the gradient, S0..S2 the states in the order of the public
 * functions' arguments. */
#define DEFINE_KERNELS(T, SQRT, SUF)                                                  \
static void run_##SUF(opt_kind k, const opt_hp *h, int64_t n, T *P, const T *G,      \
                      T *S0, T *S1, T *S2) {                                          \
    switch (k) {                                                                      \
    case K_SGD: {                                                                     \
        const T lr = (T)h->lr;                                                        \
        PARFOR(P[i] -= lr * G[i];);                                                   \
        break;                                                                        \
    }                                                                                 \
    case K_MOMENTUM: {                                                                \
        const T lr = (T)h->lr, mu = (T)h->momentum;                                   \
        PARFOR({                                                                      \
            T v = mu * S0[i] - lr * G[i];                                             \
            S0[i] = v;                                                                \
            P[i] += v;                                                                \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_CMOMENTUM: {                                                               \
        const T lr = (T)h->lr, mu = (T)h->momentum;                                   \
        PARFOR({                                                                      \
            T v = mu * S0[i] - G[i];                                                  \
            S0[i] = v;                                                                \
            P[i] += lr * v;                                                           \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_NESTEROV: {                                                                \
        const T lr = (T)h->lr, mu = (T)h->momentum, mu2 = (T)(h->momentum * h->momentum); \
        const T c = (T)((1.0 + h->momentum) * h->lr);                                 \
        PARFOR({                                                                      \
            T g = G[i];                                                               \
            T v = mu * S0[i] - lr * g;                                                \
            S0[i] = v;                                                                \
            P[i] += mu2 * v - c * g;                                                  \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_ADAGRAD: {                                                                 \
        const T lr = (T)h->lr, eps = (T)h->eps;                                       \
        PARFOR({                                                                      \
            T g = G[i];                                                               \
            T hh = S0[i] + g * g;                                                     \
            S0[i] = hh;                                                               \
            P[i] -= lr * g / (SQRT(hh) + eps);                                        \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_ADADELTA: {                                                                \
        const T rho = (T)h->rho, omr = (T)(1.0 - h->rho), eps = (T)h->eps;            \
        PARFOR({                                                                      \
            T g = G[i];                                                               \
            T msg = rho * S0[i] + omr * g * g;                                        \
            T dx = SQRT((S1[i] + eps) / (msg + eps)) * g;                             \
            S0[i] = msg;                                                              \
            S1[i] = rho * S1[i] + omr * dx * dx;                                      \
            P[i] -= dx;                                                               \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_ADAM: {                                                                    \
        const T a = (T)h->lr, b1 = (T)(1.0 - h->beta1), b2 = (T)(1.0 - h->beta2);    \
        const T eps = (T)h->eps, eta = (T)h->eta, keep = (T)(1.0 - h->eta * h->wd);   \
        const T lo = (T)h->lower, hi = (T)h->upper;                                   \
        /* the variants are separate loops: no branch inside, so they vectorise */    \
        if (h->amsgrad && h->bounded) ADAM_LOOP(T, SQRT, 1, 1);                       \
        else if (h->amsgrad) ADAM_LOOP(T, SQRT, 1, 0);                                \
        else if (h->bounded) ADAM_LOOP(T, SQRT, 0, 1);                                \
        else ADAM_LOOP(T, SQRT, 0, 0);                                                \
        break;                                                                        \
    }                                                                                 \
    case K_RMSPROP: {                                                                 \
        const T lr = (T)h->lr, al = (T)h->beta1, oma = (T)(1.0 - h->beta1), eps = (T)h->eps; \
        if (h->eps_inside) {                                                          \
            PARFOR({                                                                  \
                T g = G[i];                                                           \
                T ms = al * S0[i] + oma * g * g;                                      \
                S0[i] = ms;                                                           \
                P[i] -= lr * g / SQRT(ms + eps);                                      \
            });                                                                       \
        } else {                                                                      \
            PARFOR({                                                                  \
                T g = G[i];                                                           \
                T ms = al * S0[i] + oma * g * g;                                      \
                S0[i] = ms;                                                           \
                P[i] -= lr * g / (SQRT(ms) + eps);                                    \
            });                                                                       \
        }                                                                             \
        break;                                                                        \
    }                                                                                 \
    case K_GRAVES: {                                                                  \
        const T lr = (T)h->lr, al = (T)h->beta1, oma = (T)(1.0 - h->beta1);          \
        const T mu = (T)h->momentum, eps = (T)h->eps;                                 \
        PARFOR({                                                                      \
            T g = G[i];                                                               \
            T nn = al * S0[i] + oma * g * g;                                          \
            T gm = al * S1[i] + oma * g;                                              \
            T d = mu * S2[i] - lr * g / SQRT(nn - gm * gm + eps);                     \
            S0[i] = nn;                                                               \
            S1[i] = gm;                                                               \
            S2[i] = d;                                                                \
            P[i] += d;                                                                \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_SMORMS3: {                                                                 \
        const T lr = (T)h->lr, eps = (T)h->eps;                                       \
        PARFOR({                                                                      \
            T g = G[i], mem = S0[i];                                                  \
            T r = (T)1 / (mem + (T)1);                                                \
            T gm = ((T)1 - r) * S1[i] + r * g;                                        \
            T g2 = ((T)1 - r) * S2[i] + r * g * g;                                    \
            T x = gm * gm / (g2 + eps);                                               \
            T lim = x < lr ? x : lr;                                                  \
            P[i] -= g * lim / (SQRT(g2) + eps);                                       \
            S0[i] = (T)1 + mem * ((T)1 - x);                                          \
            S1[i] = gm;                                                               \
            S2[i] = g2;                                                               \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_MSVAG: {                                                                   \
        const T lr = (T)h->lr, omb = (T)(1.0 - h->beta1), eta = (T)h->eta;           \
        const T wd = (T)h->wd, rho = (T)h->rho;                                       \
        const T inv_bias = (T)(1.0 / (1.0 - h->beta_power));                          \
        const T inv_omr = (T)(1.0 / (1.0 - h->rho));                                  \
        PARFOR({                                                                      \
            T g = G[i];                                                               \
            T m = S0[i] + omb * (g - S0[i]);                                          \
            T v = S1[i] + omb * (g * g - S1[i]);                                      \
            S0[i] = m;                                                                \
            S1[i] = v;                                                                \
            T mt = m * inv_bias, vt = v * inv_bias;                                   \
            T mt2 = mt * mt;                                                          \
            T s = (vt - mt2) * inv_omr;                                               \
            T f = mt2 / (mt2 + rho * s);                                              \
            f = f > (T)0 ? f : (T)0;  /* NaN (0/0 at a zero gradient) -> 0 */        \
            f = f < (T)1 ? f : (T)1;                                                  \
            P[i] -= eta * (lr * mt * f + wd * P[i]);                                  \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    }                                                                                 \
}

DEFINE_KERNELS(float, sqrtf, f32)
DEFINE_KERNELS(double, sqrt, f64)

static const char *kind_name[] = {
    "sgd_update", "momentum_sgd_update", "corrected_momentum_sgd_update", "nesterov_ag_update",
    "adagrad_update", "adadelta_update", "adam_update", "rmsprop_update", "rmsprop_graves_update",
    "smorms3_update", "msvag_update"};

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
    return t == NULL || (t->dt == (int32_t)dt && ch_is_contiguous(t));
}

/* The kinds with a GPU kernel (runtime/cuda/optimizer.cu), by opt_kind;
 * -1: CPU only so far. */
static const int device_kind[] = {
    [K_SGD] = CH_CUDA_OPT_SGD, [K_MOMENTUM] = CH_CUDA_OPT_MOMENTUM, [K_CMOMENTUM] = CH_CUDA_OPT_CMOMENTUM,
    [K_NESTEROV] = CH_CUDA_OPT_NESTEROV, [K_ADAGRAD] = -1, [K_ADADELTA] = -1, [K_ADAM] = CH_CUDA_OPT_ADAM,
    [K_RMSPROP] = -1, [K_GRAVES] = -1, [K_SMORMS3] = -1, [K_MSVAG] = -1};

/* An update of GPU tensors (already validated): the backend's typed kernel
 * directly, or, as on the CPU, on contiguous float64 working copies (on
 * the device) that are written back. */
static ch_status update_device(opt_kind k, const opt_hp *h, ch_tensor *param, const ch_tensor *grad,
                               ch_tensor *const st[3], int nstate) {
    const char *fn = kind_name[k];
    if (device_kind[k] < 0)
        return ch_check_cpu(param, fn, "param");
    if (param->numel == 0)
        return CH_OK;
    ch_cuda_opt u;
    memset(&u, 0, sizeof u);
    u.kind = device_kind[k];
    u.lr = h->lr, u.momentum = h->momentum, u.beta1 = h->beta1, u.beta2 = h->beta2, u.eps = h->eps;
    u.eta = h->eta, u.wd = h->wd, u.lower = h->lower, u.upper = h->upper;
    u.bounded = h->bounded, u.amsgrad = h->amsgrad;
    ch_dtype dt = (ch_dtype)param->dt;
    bool fast = (dt == CH_FLOAT32 || dt == CH_FLOAT64) && fast_operand(param, dt) && fast_operand(grad, dt);
    for (int j = 0; j < nstate && fast; j++) fast = fast_operand(st[j], dt);
    if (fast) {
        u.param = param;
        u.grad = grad;
        for (int j = 0; j < nstate; j++) u.state[j] = st[j];
        return ch_device_opt_update(fn, &u);
    }
    ch_tensor *wp = NULL, *wg = NULL, *ws[3] = {NULL, NULL, NULL};
    /* an operand that is already contiguous float64 is its own working copy */
    ch_status rc = ch_contiguous_as(param, CH_FLOAT64, &wp);
    if (rc == CH_OK) rc = ch_contiguous_as(grad, CH_FLOAT64, &wg);
    for (int j = 0; j < nstate && rc == CH_OK; j++) rc = ch_contiguous_as(st[j], CH_FLOAT64, &ws[j]);
    if (rc == CH_OK) {
        u.param = wp;
        u.grad = wg;
        for (int j = 0; j < nstate; j++) u.state[j] = ws[j];
        rc = ch_device_opt_update(fn, &u);
    }
    if (rc == CH_OK && wp != param) rc = ch_copy_into(param, wp);
    for (int j = 0; j < nstate && rc == CH_OK; j++)
        if (ws[j] != st[j]) rc = ch_copy_into(st[j], ws[j]);
    ch_tensor_release(wp);
    ch_tensor_release(wg);
    for (int j = 0; j < 3; j++) ch_tensor_release(ws[j]);
    return rc;
}

/* Validates, then runs the typed loop directly or on float64 copies. */
static ch_status run_update(opt_kind k, const opt_hp *h, ch_tensor *param, const ch_tensor *grad,
                            ch_tensor *s0, ch_tensor *s1, ch_tensor *s2, int nstate) {
    const char *fn = kind_name[k];
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
    if (param->dev != CH_CPU)
        return update_device(k, h, param, grad, st, nstate);
    int64_t n = param->numel;
    if (n == 0) return CH_OK;
    ch_dtype dt = (ch_dtype)param->dt;
    bool fast = (dt == CH_FLOAT32 || dt == CH_FLOAT64) && fast_operand(param, dt) && fast_operand(grad, dt);
    for (int j = 0; j < nstate && fast; j++) fast = fast_operand(st[j], dt);
    if (fast) {
        char *sp[3];
        for (int j = 0; j < 3; j++) sp[j] = j < nstate ? ch_base(st[j]) : NULL;
        if (dt == CH_FLOAT32)
            run_f32(k, h, n, (float *)ch_base(param), (const float *)ch_base(grad), (float *)sp[0],
                    (float *)sp[1], (float *)sp[2]);
        else
            run_f64(k, h, n, (double *)ch_base(param), (const double *)ch_base(grad), (double *)sp[0],
                    (double *)sp[1], (double *)sp[2]);
        return CH_OK;
    }
    /* Slow path: float64 working copies (float16 and strided layouts). */
    ch_tensor *wp = NULL, *wg = NULL, *ws[3] = {NULL, NULL, NULL};
    ch_status rc = ch_tensor_new(CH_FLOAT64, param->nd, param->dim, CH_CPU, &wp);
    if (rc == CH_OK) rc = ch_cpu_copy(wp, param);
    if (rc == CH_OK) rc = ch_contiguous_as(grad, CH_FLOAT64, &wg);
    for (int j = 0; j < nstate && rc == CH_OK; j++) {
        rc = ch_tensor_new(CH_FLOAT64, param->nd, param->dim, CH_CPU, &ws[j]);
        if (rc == CH_OK) rc = ch_cpu_copy(ws[j], st[j]);
    }
    if (rc == CH_OK) {
        run_f64(k, h, n, (double *)ch_base(wp), (const double *)ch_base(wg),
                ws[0] ? (double *)ch_base(ws[0]) : NULL, ws[1] ? (double *)ch_base(ws[1]) : NULL,
                ws[2] ? (double *)ch_base(ws[2]) : NULL);
        rc = ch_cpu_copy(param, wp);
        for (int j = 0; j < nstate && rc == CH_OK; j++) rc = ch_cpu_copy(st[j], ws[j]);
    }
    ch_tensor_release(wp);
    ch_tensor_release(wg);
    for (int j = 0; j < 3; j++) ch_tensor_release(ws[j]);
    return rc;
}

ch_status ch_sgd_update(ch_tensor *param, const ch_tensor *grad, double lr) {
    opt_hp h = {0};
    h.lr = lr;
    return run_update(K_SGD, &h, param, grad, NULL, NULL, NULL, 0);
}

ch_status ch_momentum_sgd_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *v, double lr, double momentum) {
    opt_hp h = {0};
    h.lr = lr;
    h.momentum = momentum;
    return run_update(K_MOMENTUM, &h, param, grad, v, NULL, NULL, 1);
}

ch_status ch_corrected_momentum_sgd_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *v, double lr,
                                           double momentum) {
    opt_hp h = {0};
    h.lr = lr;
    h.momentum = momentum;
    return run_update(K_CMOMENTUM, &h, param, grad, v, NULL, NULL, 1);
}

ch_status ch_nesterov_ag_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *v, double lr, double momentum) {
    opt_hp h = {0};
    h.lr = lr;
    h.momentum = momentum;
    return run_update(K_NESTEROV, &h, param, grad, v, NULL, NULL, 1);
}

ch_status ch_adagrad_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *hs, double lr, double eps) {
    opt_hp h = {0};
    h.lr = lr;
    h.eps = eps;
    return run_update(K_ADAGRAD, &h, param, grad, hs, NULL, NULL, 1);
}

ch_status ch_adadelta_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *msg, ch_tensor *msdx, double rho,
                             double eps) {
    opt_hp h = {0};
    h.rho = rho;
    h.eps = eps;
    return run_update(K_ADADELTA, &h, param, grad, msg, msdx, NULL, 2);
}

ch_status ch_adam_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *m, ch_tensor *v, ch_tensor *vhat,
                         double alpha_t, double beta1, double beta2, double eps, double eta,
                         double weight_decay_rate, int bounded, double lower, double upper) {
    opt_hp h = {0};
    h.lr = alpha_t;
    h.beta1 = beta1;
    h.beta2 = beta2;
    h.eps = eps;
    h.eta = eta;
    h.wd = weight_decay_rate;
    h.bounded = bounded != 0;
    h.lower = lower;
    h.upper = upper;
    h.amsgrad = vhat != NULL;
    return run_update(K_ADAM, &h, param, grad, m, v, vhat, vhat ? 3 : 2);
}

ch_status ch_rmsprop_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *ms, double lr, double alpha,
                            double eps, int eps_inside_sqrt) {
    opt_hp h = {0};
    h.lr = lr;
    h.beta1 = alpha;
    h.eps = eps;
    h.eps_inside = eps_inside_sqrt != 0;
    return run_update(K_RMSPROP, &h, param, grad, ms, NULL, NULL, 1);
}

ch_status ch_rmsprop_graves_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *n, ch_tensor *gm,
                                   ch_tensor *delta, double lr, double alpha, double momentum, double eps) {
    opt_hp h = {0};
    h.lr = lr;
    h.beta1 = alpha;
    h.momentum = momentum;
    h.eps = eps;
    return run_update(K_GRAVES, &h, param, grad, n, gm, delta, 3);
}

ch_status ch_smorms3_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *mem, ch_tensor *g, ch_tensor *g2,
                            double lr, double eps) {
    opt_hp h = {0};
    h.lr = lr;
    h.eps = eps;
    return run_update(K_SMORMS3, &h, param, grad, mem, g, g2, 3);
}

ch_status ch_msvag_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *m, ch_tensor *v, double lr,
                          double beta, double beta_power, double rho, double eta, double weight_decay_rate) {
    if (beta_power == 1.0)
        return ch_fail(CH_ERR_ARG, "msvag_update: beta_power must differ from 1 (got 1; is beta 1?)");
    if (rho == 1.0)
        return ch_fail(CH_ERR_ARG, "msvag_update: rho must differ from 1 (got 1)");
    opt_hp h = {0};
    h.lr = lr;
    h.beta1 = beta;
    h.beta_power = beta_power;
    h.rho = rho;
    h.eta = eta;
    h.wd = weight_decay_rate;
    return run_update(K_MSVAG, &h, param, grad, m, v, NULL, 2);
}

/* ---- gradient hooks ------------------------------------------------------ */
#define TRANSFORM_LOOP(T)                                                              \
    do {                                                                               \
        T *g = (T *)ch_base(grad);                                                     \
        const T *p = param ? (const T *)ch_base(param) : NULL;                         \
        const T sc = (T)scale, dc = (T)decay, lo = (T)lower, hi = (T)upper;            \
        if (p && decay_sign) {                                                         \
            PARFOR({                                                                   \
                T d = p[i] > 0 ? (T)1 : (p[i] < 0 ? (T)-1 : (T)0);                     \
                T x = sc * (g[i] + dc * d);                                            \
                g[i] = clip ? CLIP(x, lo, hi) : x;                                     \
            });                                                                        \
        } else if (p) {                                                                \
            PARFOR({                                                                   \
                T x = sc * (g[i] + dc * p[i]);                                         \
                g[i] = clip ? CLIP(x, lo, hi) : x;                                     \
            });                                                                        \
        } else {                                                                       \
            PARFOR({                                                                   \
                T x = sc * g[i];                                                       \
                g[i] = clip ? CLIP(x, lo, hi) : x;                                     \
            });                                                                        \
        }                                                                              \
    } while (0)

static double sign_of(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : (x != x ? x : 0.0)); }

ch_status ch_grad_transform(ch_tensor *grad, const ch_tensor *param, double scale, double decay, int decay_sign,
                            double lower, double upper) {
    const char *fn = "grad_transform";
    CH_CHECK_CPU(grad, fn, "grad");
    CH_TRY(check_operand(grad, grad, fn, "grad"));
    if (decay == 0) param = NULL;
    if (param) CH_TRY(check_operand(param, grad, fn, "param"));
    if (lower > upper)
        return ch_fail(CH_ERR_ARG, "%s: lower (%g) must not exceed upper (%g)", fn, lower, upper);
    int64_t n = grad->numel;
    if (n == 0) return CH_OK;
    const int clip = lower > -INFINITY || upper < INFINITY;
    ch_dtype dt = (ch_dtype)grad->dt;
    if ((dt == CH_FLOAT32 || dt == CH_FLOAT64) && ch_is_contiguous(grad) && fast_operand(param, dt)) {
        if (dt == CH_FLOAT32)
            TRANSFORM_LOOP(float);
        else
            TRANSFORM_LOOP(double);
        return CH_OK;
    }
    /* Generic path: any layout, float16, param of another dtype. */
    const int64_t *strides[2] = {grad->stride, param ? param->stride : grad->stride};
    ch_iter it;
    ch_iter_init(&it, grad->nd, grad->dim, 2, strides);
    ch_dtype pd = param ? (ch_dtype)param->dt : dt;
    int64_t zg = (int64_t)ch_dtype_size(dt), zp = (int64_t)ch_dtype_size(pd);
    char *gb = ch_base(grad);
    const char *pb = param ? ch_base(param) : NULL;
    CH_PAR_FOR(n >= CH_PARALLEL_GRAIN && it.outer_count > 1, int64_t pos = 0; pos < it.outer_count; pos++, {
        int64_t off[2];
        ch_iter_offsets(&it, pos, off);
        for (int64_t i = 0; i < it.inner; i++) {
            char *pg = gb + (off[0] + i * it.inner_stride[0]) * zg;
            double x = ch_load(dt, pg);
            if (pb) {
                double pv = ch_load(pd, pb + (off[1] + i * it.inner_stride[1]) * zp);
                x += decay * (decay_sign ? sign_of(pv) : pv);
            }
            x *= scale;
            if (clip) x = CLIP(x, lower, upper);
            ch_store(dt, pg, x);
        }
    });
    return CH_OK;
}

/* Blocks of a fixed size, summed in order: the result does not depend on
 * the number of threads. */
#define SQNORM_BLOCK 8192

ch_status ch_sqnorm(const ch_tensor *x, double *result) {
    CH_CHECK_CPU(x, "sqnorm", "x");
    if (result == NULL) return ch_fail(CH_ERR_ARG, "sqnorm: result is NULL");
    *result = 0;
    int64_t n = x->numel;
    if (n == 0) return CH_OK;
    ch_tensor *xc = NULL;
    ch_dtype dt = (ch_dtype)x->dt;
    if (!((dt == CH_FLOAT32 || dt == CH_FLOAT64) && ch_is_contiguous(x))) {
        CH_TRY(ch_contiguous_as(x, CH_FLOAT64, &xc));
        dt = CH_FLOAT64;
    }
    const ch_tensor *src = xc ? xc : x;
    int64_t nb = (n + SQNORM_BLOCK - 1) / SQNORM_BLOCK;
    double *part = (double *)malloc((size_t)nb * sizeof(double));
    if (!part) {
        ch_tensor_release(xc);
        return ch_fail(CH_ERR_MEMORY, "sqnorm: out of memory (%lld partial sums)", (long long)nb);
    }
    const char *base = ch_base(src);
    CH_PAR_FOR(n >= CH_PARALLEL_GRAIN, int64_t b = 0; b < nb; b++, {
        int64_t lo = b * SQNORM_BLOCK, hi = lo + SQNORM_BLOCK < n ? lo + SQNORM_BLOCK : n;
        double s = 0;
        if (dt == CH_FLOAT32) {
            const float *p = (const float *)base;
            for (int64_t i = lo; i < hi; i++) s += (double)p[i] * (double)p[i];
        } else {
            const double *p = (const double *)base;
            for (int64_t i = lo; i < hi; i++) s += p[i] * p[i];
        }
        part[b] = s;
    });
    double total = 0;
    for (int64_t b = 0; b < nb; b++) total += part[b];
    free(part);
    ch_tensor_release(xc);
    *result = total;
    return CH_OK;
}

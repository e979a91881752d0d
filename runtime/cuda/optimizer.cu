/*
 * optimizer.cu -- the fused optimizer updates of all 15 optimizers on the
 * GPU: SGD, MomentumSGD (plain, corrected, Nesterov), Adam (with AdamW's
 * decay, AMSGrad and AdaBound), AdaGrad, AdaDelta, RMSprop, RMSpropGraves,
 * SMORMS3 and MSVAG: one grid-stride pass over contiguous float32 or float64 data,
 * reading the gradient and states once and writing the parameter and states
 * once, with the formulas of runtime/cpu/optimizer_updates.c in the
 * parameter's own precision.  This file is compiled with --fmad=false
 * (runtime/cuda/CMakeLists.txt) so that products and sums round separately,
 * as on the CPU.
 *
 * Compiled here, but NOT yet executed on a GPU: tests/cuda/test_optimizer.cu
 * runs it emulated on the host against the CPU, bit for bit; the GPU specs
 * (spec/cuda/mlp_gpu_spec.lua) compare it with the CPU where a GPU exists.
 */
#include "backend.h"
#include "launch.cuh"

/* The hyperparameters in the element type, as the CPU converts them. */
template <typename T> struct opt_consts {
    T lr, mu, mu2, c, b1, b2, eps, eta, keep, lo, hi;
    T decay, omd;          /* AdaDelta's rho, RMSprop's alpha, MSVAG's beta; 1 minus it */
    T wd, rho, inv_bias, inv_omr;  /* MSVAG */
};

CU_HD float opt_sqrt(float v) { return sqrtf(v); }
CU_HD double opt_sqrt(double v) { return sqrt(v); }

/* One element's update: parameter, gradient and the kind's states. */
template <typename T> struct opt_step {
    int kind, amsgrad, bounded, eps_inside;
    opt_consts<T> k;
    T *P;
    const T *G;
    T *S0, *S1, *S2;

    /* Adam's and MSVAG's running moments: m and v moved towards g and g^2
     * by the rates b1, b2, stored in S0, S1. */
    CU_HD void moments(int64_t i, T g, T b1, T b2, T &m, T &v) const {
        m = S0[i] + b1 * (g - S0[i]);
        v = S1[i] + b2 * (g * g - S1[i]);
        S0[i] = m;
        S1[i] = v;
    }

    CU_HD void operator()(int64_t i) const {
        T g = G[i];
        switch (kind) {
        case CU_OPT_SGD:
            P[i] -= k.lr * g;
            break;
        case CU_OPT_MOMENTUM: {
            T v = k.mu * S0[i] - k.lr * g;
            S0[i] = v;
            P[i] += v;
            break;
        }
        case CU_OPT_CMOMENTUM: {
            T v = k.mu * S0[i] - g;
            S0[i] = v;
            P[i] += k.lr * v;
            break;
        }
        case CU_OPT_NESTEROV: {
            T v = k.mu * S0[i] - k.lr * g;
            S0[i] = v;
            P[i] += k.mu2 * v - k.c * g;
            break;
        }
        case CU_OPT_ADAM: {
            T m, v;
            moments(i, g, k.b1, k.b2, m, v);
            if (amsgrad) {
                T vh = S2[i] > v ? S2[i] : v;
                S2[i] = vh;
                v = vh;
            }
            T step = k.lr / (opt_sqrt(v) + k.eps);
            if (bounded) {
                step = step > k.lo ? step : k.lo;
                step = step < k.hi ? step : k.hi;
            }
            P[i] = k.keep * P[i] - k.eta * step * m;
            break;
        }
        case CU_OPT_ADAGRAD: {
            T h = S0[i] + g * g;
            S0[i] = h;
            P[i] -= k.lr * g / (opt_sqrt(h) + k.eps);
            break;
        }
        case CU_OPT_ADADELTA: {
            T msg = k.decay * S0[i] + k.omd * g * g;
            T dx = opt_sqrt((S1[i] + k.eps) / (msg + k.eps)) * g;
            S0[i] = msg;
            S1[i] = k.decay * S1[i] + k.omd * dx * dx;
            P[i] -= dx;
            break;
        }
        case CU_OPT_RMSPROP: {
            T ms = k.decay * S0[i] + k.omd * g * g;
            S0[i] = ms;
            if (eps_inside)
                P[i] -= k.lr * g / opt_sqrt(ms + k.eps);
            else
                P[i] -= k.lr * g / (opt_sqrt(ms) + k.eps);
            break;
        }
        case CU_OPT_GRAVES: {
            T n = k.decay * S0[i] + k.omd * g * g;
            T gm = k.decay * S1[i] + k.omd * g;
            T d = k.mu * S2[i] - k.lr * g / opt_sqrt(n - gm * gm + k.eps);
            S0[i] = n;
            S1[i] = gm;
            S2[i] = d;
            P[i] += d;
            break;
        }
        case CU_OPT_SMORMS3: {
            T mem = S0[i];
            T r = (T)1 / (mem + (T)1);
            T gm = ((T)1 - r) * S1[i] + r * g;
            T g2 = ((T)1 - r) * S2[i] + r * g * g;
            T x = gm * gm / (g2 + k.eps);
            T lim = x < k.lr ? x : k.lr;
            P[i] -= g * lim / (opt_sqrt(g2) + k.eps);
            S0[i] = (T)1 + mem * ((T)1 - x);
            S1[i] = gm;
            S2[i] = g2;
            break;
        }
        case CU_OPT_MSVAG: {
            T m, v;
            moments(i, g, k.omd, k.omd, m, v);
            T mt = m * k.inv_bias, vt = v * k.inv_bias;
            T mt2 = mt * mt;
            T s = (vt - mt2) * k.inv_omr;
            T f = mt2 / (mt2 + k.rho * s);
            f = f > (T)0 ? f : (T)0; /* NaN (0/0 at a zero gradient) -> 0, as on the CPU */
            f = f < (T)1 ? f : (T)1;
            P[i] -= k.eta * (k.lr * mt * f + k.wd * P[i]);
            break;
        }
        }
    }
};

template <typename T> static opt_consts<T> consts_of(int kind, const ch_opt_args *u) {
    /* the decay rate of the running averages, by kind (as the CPU reads it) */
    double decay = kind == CU_OPT_ADADELTA ? u->rho
                   : (kind == CU_OPT_RMSPROP || kind == CU_OPT_GRAVES) ? u->alpha
                                                                       : u->beta1;
    opt_consts<T> k;
    k.decay = (T)decay;
    k.omd = (T)(1.0 - decay);
    k.wd = (T)u->wd;
    k.rho = (T)u->rho;
    k.inv_bias = kind == CU_OPT_MSVAG ? (T)(1.0 / (1.0 - u->beta_power)) : (T)0;
    k.inv_omr = kind == CU_OPT_MSVAG ? (T)(1.0 / (1.0 - u->rho)) : (T)0;
    k.lr = (T)u->lr;
    k.mu = (T)u->momentum;
    k.mu2 = (T)(u->momentum * u->momentum);
    k.c = (T)((1.0 + u->momentum) * u->lr);
    k.b1 = (T)(1.0 - u->beta1);
    k.b2 = (T)(1.0 - u->beta2);
    k.eps = (T)u->eps;
    k.eta = (T)u->eta;
    k.keep = (T)(1.0 - u->eta * u->wd);
    k.lo = (T)u->lower;
    k.hi = (T)u->upper;
    return k;
}

template <typename T>
static ch_status opt_launch(int kind, const ch_opt_args *u, int64_t n, char *param, const char *grad, char *s0,
                            char *s1, char *s2) {
    opt_step<T> step = {kind, u->amsgrad != 0, u->bounded != 0, u->eps_inside_sqrt != 0, consts_of<T>(kind, u),
                        (T *)param, (const T *)grad, (T *)s0, (T *)s1, (T *)s2};
    return cu_each("optimizer update", n, step);
}

extern "C" ch_status cu_opt_launch(int kind, const ch_opt_args *u, int dt, int64_t n, char *param, const char *grad,
                                   char *s0, char *s1, char *s2) {
    if (dt == CH_FLOAT32)
        return opt_launch<float>(kind, u, n, param, grad, s0, s1, s2);
    return opt_launch<double>(kind, u, n, param, grad, s0, s1, s2);
}

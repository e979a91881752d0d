/*
 * optimizer.cu -- the fused optimizer updates of SGD, MomentumSGD (plain,
 * corrected, Nesterov) and Adam (with AdamW's decay, AMSGrad and AdaBound)
 * on the GPU: one grid-stride pass over contiguous float32 or float64 data,
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
};

CU_HD float opt_sqrt(float v) { return sqrtf(v); }
CU_HD double opt_sqrt(double v) { return sqrt(v); }

/* One element's update: parameter, gradient and the kind's states. */
template <typename T> struct opt_step {
    int kind, amsgrad, bounded;
    opt_consts<T> k;
    T *P;
    const T *G;
    T *S0, *S1, *S2;

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
        default: { /* Adam */
            T m = S0[i] + k.b1 * (g - S0[i]);
            T v = S1[i] + k.b2 * (g * g - S1[i]);
            S0[i] = m;
            S1[i] = v;
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
        }
    }
};

template <typename T> static opt_consts<T> consts_of(const ch_opt_args *u) {
    opt_consts<T> k;
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
    opt_step<T> step = {kind, u->amsgrad != 0, u->bounded != 0, consts_of<T>(u), (T *)param, (const T *)grad,
                        (T *)s0, (T *)s1, (T *)s2};
    return cu_each("optimizer update", n, step);
}

extern "C" ch_status cu_opt_launch(int kind, const ch_opt_args *u, int dt, int64_t n, char *param, const char *grad,
                                   char *s0, char *s1, char *s2) {
    if (dt == CH_FLOAT32)
        return opt_launch<float>(kind, u, n, param, grad, s0, s1, s2);
    return opt_launch<double>(kind, u, n, param, grad, s0, s1, s2);
}

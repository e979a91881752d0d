/* optimizer_updates.c -- the CPU kernels of the fused per-parameter
 * optimizer updates and of the gradient hooks (front doors, with the checks
 * and the float64 working copies for other layouts and dtypes:
 * runtime/ops/optimizer_updates.c).
 *
 * Each update reads the gradient and the state once and writes the parameter
 * and the state once: one pass over memory, no temporaries, on the typed
 * fast path (param, grad and states contiguous and of one dtype, float32 or
 * float64).  The arithmetic follows Chainer's formulas in the parameter's
 * own precision there, so float32 trajectories track Chainer's NumPy ones.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

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

/* EACH({ body }): for i in one thread's range [i0, i1) (run_f32 / run_f64
 * below hand the ranges out) */
#define EACH(...) for (int64_t i = i0; i < i1; i++) { __VA_ARGS__ }

/* Adam's loop with the AMSGrad and AdaBound switches as constants. */
#define ADAM_LOOP(T, SQRT, AMS, BOUNDED)                                              \
    do { EACH({                                                                       \
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
#define DEFINE_KERNELS(T, SQRT, NAME, ATTR)                                           \
static ATTR void NAME(opt_kind k, const opt_hp *h, int64_t i0, int64_t i1, T *P,      \
                      const T *G, T *S0, T *S1, T *S2) {                              \
    switch (k) {                                                                      \
    case K_SGD: {                                                                     \
        const T lr = (T)h->lr;                                                        \
        EACH(P[i] -= lr * G[i];);                                                     \
        break;                                                                        \
    }                                                                                 \
    case K_MOMENTUM: {                                                                \
        const T lr = (T)h->lr, mu = (T)h->momentum;                                   \
        EACH({                                                                        \
            T v = mu * S0[i] - lr * G[i];                                             \
            S0[i] = v;                                                                \
            P[i] += v;                                                                \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_CMOMENTUM: {                                                               \
        const T lr = (T)h->lr, mu = (T)h->momentum;                                   \
        EACH({                                                                        \
            T v = mu * S0[i] - G[i];                                                  \
            S0[i] = v;                                                                \
            P[i] += lr * v;                                                           \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_NESTEROV: {                                                                \
        const T lr = (T)h->lr, mu = (T)h->momentum, mu2 = (T)(h->momentum * h->momentum); \
        const T c = (T)((1.0 + h->momentum) * h->lr);                                 \
        EACH({                                                                        \
            T g = G[i];                                                               \
            T v = mu * S0[i] - lr * g;                                                \
            S0[i] = v;                                                                \
            P[i] += mu2 * v - c * g;                                                  \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_ADAGRAD: {                                                                 \
        const T lr = (T)h->lr, eps = (T)h->eps;                                       \
        EACH({                                                                        \
            T g = G[i];                                                               \
            T hh = S0[i] + g * g;                                                     \
            S0[i] = hh;                                                               \
            P[i] -= lr * g / (SQRT(hh) + eps);                                        \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    case K_ADADELTA: {                                                                \
        const T rho = (T)h->rho, omr = (T)(1.0 - h->rho), eps = (T)h->eps;            \
        EACH({                                                                        \
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
        const T a = (T)h->lr, b1 = (T)(1.0 - h->beta1), b2 = (T)(1.0 - h->beta2);     \
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
            EACH({                                                                    \
                T g = G[i];                                                           \
                T ms = al * S0[i] + oma * g * g;                                      \
                S0[i] = ms;                                                           \
                P[i] -= lr * g / SQRT(ms + eps);                                      \
            });                                                                       \
        } else {                                                                      \
            EACH({                                                                    \
                T g = G[i];                                                           \
                T ms = al * S0[i] + oma * g * g;                                      \
                S0[i] = ms;                                                           \
                P[i] -= lr * g / (SQRT(ms) + eps);                                    \
            });                                                                       \
        }                                                                             \
        break;                                                                        \
    }                                                                                 \
    case K_GRAVES: {                                                                  \
        const T lr = (T)h->lr, al = (T)h->beta1, oma = (T)(1.0 - h->beta1);           \
        const T mu = (T)h->momentum, eps = (T)h->eps;                                 \
        EACH({                                                                        \
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
        EACH({                                                                        \
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
        const T lr = (T)h->lr, omb = (T)(1.0 - h->beta1), eta = (T)h->eta;            \
        const T wd = (T)h->wd, rho = (T)h->rho;                                       \
        const T inv_bias = (T)(1.0 / (1.0 - h->beta_power));                          \
        const T inv_omr = (T)(1.0 / (1.0 - h->rho));                                  \
        EACH({                                                                        \
            T g = G[i];                                                               \
            T m = S0[i] + omb * (g - S0[i]);                                          \
            T v = S1[i] + omb * (g * g - S1[i]);                                      \
            S0[i] = m;                                                                \
            S1[i] = v;                                                                \
            T mt = m * inv_bias, vt = v * inv_bias;                                   \
            T mt2 = mt * mt;                                                          \
            T s = (vt - mt2) * inv_omr;                                               \
            T f = mt2 / (mt2 + rho * s);                                              \
            f = f > (T)0 ? f : (T)0;  /* NaN (0/0 at a zero gradient) -> 0 */         \
            f = f < (T)1 ? f : (T)1;                                                  \
            P[i] -= eta * (lr * mt * f + wd * P[i]);                                  \
        });                                                                           \
        break;                                                                        \
    }                                                                                 \
    }                                                                                 \
}

DEFINE_KERNELS(float, sqrtf, range_f32, )
DEFINE_KERNELS(double, sqrt, range_f64, )

/* The same loops for AVX-512 (16 floats a vector instead of 4): Adam's and
 * the other adaptive updates' square roots and divisions made the baseline
 * build compute-bound (Adam on the MNIST MLP's 1.8M parameters: 0.58 ms on 2
 * threads against 0.11 ms for SGD's pass over less memory).  CMake builds
 * this file with -ffp-contract=off, so no a * b + c becomes a fused
 * multiply-add (AVX-512F has them): every element gets the bits of the
 * baseline loop (IEEE +, -, *, / and sqrt round alike at every width). */
#if defined(__x86_64__) && defined(__GNUC__)
#define OPT_HAVE_AVX512 1
DEFINE_KERNELS(float, sqrtf, range_f32_avx512, __attribute__((target("avx512f"))))
DEFINE_KERNELS(double, sqrt, range_f64_avx512, __attribute__((target("avx512f"))))
#else
#define OPT_HAVE_AVX512 0
#define range_f32_avx512 range_f32
#define range_f64_avx512 range_f64
#endif

/* [0, n) in one contiguous piece per thread (whole vectors of 64 bytes),
 * the pieces the product team's ranges and the static loops elsewhere give
 * each core, so a thread updates what it last wrote.  WIDE and BASE: the
 * AVX-512 and baseline builds of one element type's loops. */
#define RUN_PIECES(n, WIDE, BASE, ...)                                                \
    do {                                                                              \
        int team_ = (n) >= CH_PARALLEL_GRAIN ? ch_threads() : 1;                      \
        int64_t piece_ = ((n) + team_ - 1) / team_;                                   \
        piece_ = (piece_ + 15) / 16 * 16;                                             \
        bool wide_ = OPT_HAVE_AVX512 && ch_cpu_avx512f();                             \
        CH_PAR_FOR(team_ > 1, int t_ = 0; t_ < team_; t_++, {                         \
            int64_t i0_ = t_ * piece_, i1_ = i0_ + piece_ < (n) ? i0_ + piece_ : (n); \
            if (i0_ < i1_) {                                                          \
                if (wide_)                                                            \
                    WIDE(k, h, i0_, i1_, __VA_ARGS__);                                \
                else                                                                  \
                    BASE(k, h, i0_, i1_, __VA_ARGS__);                                \
            }                                                                         \
        });                                                                           \
    } while (0)

static void run_f32(opt_kind k, const opt_hp *h, int64_t n, float *P, const float *G, float *S0, float *S1,
                    float *S2) {
    RUN_PIECES(n, range_f32_avx512, range_f32, P, G, S0, S1, S2);
}

static void run_f64(opt_kind k, const opt_hp *h, int64_t n, double *P, const double *G, double *S0, double *S1,
                    double *S2) {
    RUN_PIECES(n, range_f64_avx512, range_f64, P, G, S0, S1, S2);
}


/* The update kernels of the table: contiguous param, grad and states of one
 * float dtype (float32 or float64), checked by the front door. */
static ch_status run_kind(opt_kind k, const ch_opt_args *u, int rms_alpha) {
    opt_hp h = {.lr = u->lr, .momentum = u->momentum, .eps = u->eps, .beta1 = rms_alpha ? u->alpha : u->beta1,
                .beta2 = u->beta2, .eta = u->eta, .wd = u->wd, .lower = u->lower, .upper = u->upper, .rho = u->rho,
                .beta_power = u->beta_power, .bounded = u->bounded, .amsgrad = u->amsgrad,
                .eps_inside = u->eps_inside_sqrt};
    int64_t n = u->param->numel;
    char *sp[3];
    for (int j = 0; j < 3; j++) sp[j] = u->state[j] ? ch_base(u->state[j]) : NULL;
    if (u->param->dt == CH_FLOAT32)
        run_f32(k, &h, n, (float *)ch_base(u->param), (const float *)ch_base(u->grad), (float *)sp[0],
                (float *)sp[1], (float *)sp[2]);
    else
        run_f64(k, &h, n, (double *)ch_base(u->param), (const double *)ch_base(u->grad), (double *)sp[0],
                (double *)sp[1], (double *)sp[2]);
    return CH_OK;
}

ch_status ch_cpu_sgd_update(const ch_opt_args *u) { return run_kind(K_SGD, u, 0); }
ch_status ch_cpu_momentum_sgd_update(const ch_opt_args *u) { return run_kind(K_MOMENTUM, u, 0); }
ch_status ch_cpu_corrected_momentum_sgd_update(const ch_opt_args *u) { return run_kind(K_CMOMENTUM, u, 0); }
ch_status ch_cpu_nesterov_ag_update(const ch_opt_args *u) { return run_kind(K_NESTEROV, u, 0); }
ch_status ch_cpu_adagrad_update(const ch_opt_args *u) { return run_kind(K_ADAGRAD, u, 0); }
ch_status ch_cpu_adadelta_update(const ch_opt_args *u) { return run_kind(K_ADADELTA, u, 0); }
ch_status ch_cpu_adam_update(const ch_opt_args *u) { return run_kind(K_ADAM, u, 0); }
ch_status ch_cpu_rmsprop_update(const ch_opt_args *u) { return run_kind(K_RMSPROP, u, 1); }
ch_status ch_cpu_rmsprop_graves_update(const ch_opt_args *u) { return run_kind(K_GRAVES, u, 1); }
ch_status ch_cpu_smorms3_update(const ch_opt_args *u) { return run_kind(K_SMORMS3, u, 0); }
ch_status ch_cpu_msvag_update(const ch_opt_args *u) { return run_kind(K_MSVAG, u, 0); }

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

ch_status ch_cpu_grad_transform(ch_tensor *grad, const ch_tensor *param, double scale, double decay, int decay_sign,
                                double lower, double upper) {
    int64_t n = grad->numel;
    if (n == 0) return CH_OK;
    const int clip = lower > -INFINITY || upper < INFINITY;
    ch_dtype dt = (ch_dtype)grad->dt;
    if ((dt == CH_FLOAT32 || dt == CH_FLOAT64) && ch_contig(grad) && (!param || (param->dt == (int32_t)dt && ch_contig(param)))) {
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

ch_status ch_cpu_sqnorm(const ch_tensor *x, double *result) {
    *result = 0;
    int64_t n = x->numel;
    if (n == 0) return CH_OK;
    ch_tensor *xc = NULL;
    ch_dtype dt = (ch_dtype)x->dt;
    if (!((dt == CH_FLOAT32 || dt == CH_FLOAT64) && ch_contig(x))) {
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

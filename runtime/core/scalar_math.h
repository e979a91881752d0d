/*
 * scalar_math.h -- the elementwise formulas, written once for the CPU
 * kernels (runtime/cpu/elementwise.c) and the CUDA kernels
 * (runtime/cuda/elementwise.cu), so that both devices compute the same
 * numbers with NumPy's semantics.
 *
 * Under nvcc every function is __host__ __device__; in C they are static
 * inline.  Float formulas exist for float (suffix _f32) and double (_f64);
 * C++ (nvcc) also gets overloads without the suffix for templates.  Math
 * calls are type-generic: <tgmath.h> in C, the overloads of <cmath> and
 * CUDA's device library in C++.
 *
 * What stays device-specific, and why: lgamma (the CPU calls lgamma_r, as
 * plain lgamma writes the global signgam, a race under OpenMP; the GPU's
 * lgamma has no such state) and the loops themselves.
 */
#ifndef CHAINLUA_SCALAR_MATH_H
#define CHAINLUA_SCALAR_MATH_H

#include <stdint.h>

#ifdef __CUDACC__
#define CH_SM static __host__ __device__ __forceinline__
#else
#define CH_SM static inline
#endif

#ifdef __cplusplus
#include <cmath>
#else
#include <tgmath.h>
#endif

#define CH_SM_PI 3.14159265358979323846

/* maximum/minimum propagate NaN from either side (NumPy) */
#define CH_SM_MAX(x, y) (((x) >= (y) || (x) != (x)) ? (x) : (y))
#define CH_SM_MIN(x, y) (((x) <= (y) || (x) != (x)) ? (x) : (y))

/* ---- float formulas, for T = float (f32) and double (f64) ---------------- */
#ifdef __cplusplus
#define CH_SM_OVERLOADS(T, SUF)                                                        \
    CH_SM T ch_floordiv(T a, T b) { return ch_floordiv_##SUF(a, b); }                  \
    CH_SM T ch_pymod(T a, T b) { return ch_pymod_##SUF(a, b); }                        \
    CH_SM T ch_sigmoid(T x) { return ch_sigmoid_##SUF(x); }                            \
    CH_SM T ch_softplus(T x) { return ch_softplus_##SUF(x); }                          \
    CH_SM T ch_clip(T x, T lo, T hi) { return ch_clip_##SUF(x, lo, hi); }              \
    CH_SM T ch_sign(T x) { return ch_sign_##SUF(x); }
#else
#define CH_SM_OVERLOADS(T, SUF)
#endif

#define CH_SM_FLOAT_FORMULAS(T, SUF)                                                   \
    /* Python's floor division: NumPy's npy_divmod, including the rounding fix \
     * for quotients that land just below an integer; division by 0 gives a/b. */ \
    CH_SM T ch_floordiv_##SUF(T a, T b) {                                              \
        if (b == 0)                                                                    \
            return a / b;                                                              \
        T m = fmod(a, b);                                                              \
        T d = (a - m) / b;                                                             \
        if (m != 0 && ((b < 0) != (m < 0)))                                            \
            d -= 1;                                                                    \
        if (d != 0) {                                                                  \
            T f = floor(d);                                                            \
            if (d - f > (T)0.5)                                                        \
                f += 1;                                                                \
            return f;                                                                  \
        }                                                                              \
        return copysign((T)0, a / b);                                                  \
    }                                                                                  \
    /* Python's modulo: the result takes the divisor's sign. */                       \
    CH_SM T ch_pymod_##SUF(T a, T b) {                                                 \
        if (b == 0)                                                                    \
            return fmod(a, b); /* NaN, as NumPy */                                     \
        T m = fmod(a, b);                                                              \
        if (m != 0) {                                                                  \
            if ((b < 0) != (m < 0))                                                    \
                m += b;                                                                \
        } else {                                                                       \
            m = copysign((T)0, b);                                                     \
        }                                                                              \
        return m;                                                                      \
    }                                                                                  \
    /* exp of a non-positive number only, so neither branch overflows. */             \
    CH_SM T ch_sigmoid_##SUF(T x) {                                                    \
        if (x >= 0)                                                                    \
            return (T)1 / ((T)1 + exp(-x));                                            \
        T e = exp(x);                                                                  \
        return e / ((T)1 + e);                                                         \
    }                                                                                  \
    CH_SM T ch_softplus_##SUF(T x) { return (x > 0 ? x : (T)0) + log1p(exp(-fabs(x))); } \
    /* min(max(x, lo), hi) as NumPy: lo > hi gives hi everywhere. */                  \
    CH_SM T ch_clip_##SUF(T x, T lo, T hi) {                                           \
        T v = x < lo ? lo : x;                                                         \
        return v > hi ? hi : v;                                                        \
    }                                                                                  \
    CH_SM T ch_sign_##SUF(T x) { return x > 0 ? (T)1 : x < 0 ? (T)-1 : x == x ? (T)0 : x; } \
    CH_SM_OVERLOADS(T, SUF)

CH_SM_FLOAT_FORMULAS(float, f32)
CH_SM_FLOAT_FORMULAS(double, f64)

/* ---- special functions, in double ----------------------------------------- */
/* Digamma: reflection for x < 0, recurrence up to x >= 6, then the
 * asymptotic series in 1/x^2. */
CH_SM double ch_digamma(double x) {
    if (x != x || x == INFINITY)
        return x;
    if (x == -INFINITY)
        return NAN;
    if (x <= 0 && x == floor(x))
        return x == 0 ? copysign((double)INFINITY, -x) : NAN; /* poles */
    double r = 0;
    if (x < 0) {
        /* psi(x) = psi(1 - x) - pi / tan(pi x) */
        r = -CH_SM_PI / tan(CH_SM_PI * x);
        x = 1 - x;
    }
    while (x < 6) {
        r -= 1 / x;
        x += 1;
    }
    double f = 1 / (x * x);
    double t = f * (-1 / 12.0 + f * (1 / 120.0 + f * (-1 / 252.0 + f * (1 / 240.0 + f * (-1 / 132.0 +
               f * (691 / 32760.0 + f * (-1 / 12.0)))))));
    return r + log(x) - 0.5 / x + t;
}

/* Inverse error function: a rational first guess refined by Halley steps
 * on erf, which converge to full double precision in two or three steps. */
CH_SM double ch_erfinv(double y) {
    if (y != y || y < -1 || y > 1)
        return NAN;
    if (y == 1)
        return INFINITY;
    if (y == -1)
        return -INFINITY;
    if (y == 0)
        return y;
    double w = -log((1 - y) * (1 + y)), x;
    if (w < 5) {
        w -= 2.5;
        double p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
        x = p * y;
    } else {
        w = sqrt(w) - 3;
        double p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
        x = p * y;
    }
    for (int k = 0; k < 3; k++) {
        double err = erf(x) - y;
        double d = 1.1283791670955126 * exp(-x * x); /* 2/sqrt(pi) e^{-x^2} */
        if (d == 0)
            break;
        x -= err / (d + x * err); /* Halley's step (converges cubically) */
    }
    return x;
}

/* ---- int64 formulas --------------------------------------------------------- */
/* Signed overflow is undefined in C, so +,-,* wrap through uint64_t (which is
 * what NumPy's fixed-width integers do); storing to a narrower dtype then
 * wraps again, the same as computing in that dtype. */
CH_SM int64_t ch_i_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
CH_SM int64_t ch_i_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
CH_SM int64_t ch_i_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* Division by zero gives 0 (NumPy, with a warning there); INT64_MIN / -1
 * would trap in hardware, so -1 is handled as a negation. */
CH_SM int64_t ch_i_floordiv(int64_t a, int64_t b) {
    if (b == 0)
        return 0;
    if (b == -1)
        return ch_i_sub(0, a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}
CH_SM int64_t ch_i_mod(int64_t a, int64_t b) {
    if (b == 0 || b == -1)
        return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}
CH_SM int64_t ch_i_fmod(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }
/* Exponents are checked to be >= 0 by the front door. */
CH_SM int64_t ch_i_pow(int64_t a, int64_t b) {
    uint64_t r = 1, base = (uint64_t)a;
    while (b > 0) {
        if (b & 1)
            r *= base;
        base *= base;
        b >>= 1;
    }
    return (int64_t)r;
}

#endif

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

/* Float to int64 without C's undefined behaviour: NaN gives 0, values
 * beyond the range saturate. */
CH_SM int64_t ch_sat_i64(double v) {
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

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

/* Inverse complementary error function, erfc(x) = y for y in [0, 2].  The
 * start comes from erfinv(1 - y) where 1 - y keeps enough digits (y >= 1e-2)
 * and from the tail asymptotics erfc(x) ~ exp(-x^2) / (x sqrt(pi)) below;
 * Halley steps on erfc itself then reach full precision, also for the tiny
 * y that 1 - y would round away.  y > 1 uses the symmetry
 * erfcinv(y) = -erfcinv(2 - y) (2 - y is exact there). */
CH_SM double ch_erfcinv(double y) {
    if (y != y || y < 0 || y > 2)
        return NAN;
    if (y == 0)
        return INFINITY;
    if (y == 2)
        return -INFINITY;
    double sign = 1;
    if (y > 1) {
        y = 2 - y;
        sign = -1;
    }
    if (y == 1)
        return 0;
    double x;
    if (y >= 1e-2) {
        x = ch_erfinv(1 - y);
    } else {
        double t = sqrt(-log(y));
        x = sqrt(-log(y) - log(t * 1.7724538509055160273)); /* sqrt(pi) */
    }
    for (int k = 0; k < 8; k++) {
        double err = erfc(x) - y;
        double d = -1.1283791670955126 * exp(-x * x); /* d erfc / dx */
        if (d == 0)
            break;
        double step = err / (d + x * err); /* Halley's step, as in erfinv */
        x -= step;
        if (fabs(step) <= 1e-16 * fabs(x))
            break;
    }
    return sign * x;
}

/* Scaled complementary error function exp(x^2) erfc(x).  The product is
 * exact enough below 25 (erfc keeps its relative precision down to 1e-273;
 * the rounding of x^2 costs at most x^2 ulps); above, erfc would underflow,
 * and the asymptotic series 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k
 * has converged to double precision within a dozen terms.  Large negative x
 * overflows to +inf, as it should. */
CH_SM double ch_erfcx(double x) {
    if (x != x)
        return x;
    if (x < 25)
        return exp(x * x) * erfc(x);
    double r = 1 / (2 * x * x), term = 1, sum = 1;
    for (int k = 1; k < 12; k++) {
        term *= -(2 * k - 1) * r;
        sum += term;
    }
    return sum / (x * 1.7724538509055160273);
}

/* Inverse of the standard normal CDF: ndtri(p) = -sqrt(2) erfcinv(2p). */
/* (+ 0.0 turns erfcinv(1) = 0 into +0, not -0) */
CH_SM double ch_ndtri(double p) { return -1.4142135623730950488 * ch_erfcinv(2 * p) + 0.0; }

/* log of the standard normal CDF, accurate in both tails: for x > 0,
 * log1p of the small upper tail; for x <= 0, the log of 0.5 erfc(-x/sqrt 2),
 * which is rewritten through erfcx where erfc would underflow. */
CH_SM double ch_log_ndtr(double x) {
    double t = x * 0.70710678118654752440;
    if (x > 0)
        return log1p(-0.5 * erfc(t));
    if (t > -25)
        return log(0.5 * erfc(-t));
    return log(0.5 * ch_erfcx(-t)) - t * t;
}

/* Hurwitz zeta function zeta(s, q) = sum_{k >= 0} (q + k)^-s, as SciPy's
 * zeta(x, q): a direct sum of at least nine terms until q + k > 9, then the
 * Euler-Maclaurin tail: the integral a^(1-s)/(s-1), half the first omitted
 * term and the Bernoulli corrections B_2j/(2j)! s(s+1)...(s+2j-2) a^(1-s-2j).
 * s = 1 is the pole (+inf), s < 1 is outside SciPy's domain (NaN), as are
 * q <= 0 with a non-integer s; non-positive integer q are poles. */
CH_SM double ch_zeta(double s, double q) {
    /* (2j)! / B_2j for j = 1..12 */
    const double fact_over_bernoulli[12] = {
        12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
        -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
        1.8152105401943546773e17, -7.1661652561756670113e18};
    if (s != s || q != q)
        return NAN;
    if (s == 1)
        return INFINITY;
    if (s < 1)
        return NAN;
    if (q <= 0) {
        if (q == floor(q))
            return INFINITY;
        if (s != floor(s))
            return NAN;
    }
    double sum = 0, a = q;
    int n = 0;
    while (n < 9 || a <= 9) {
        double term = pow(a, -s);
        sum += term;
        a += 1;
        n++;
        if (fabs(term) <= 1e-17 * fabs(sum))
            return sum;
    }
    double w = pow(a, -s);
    sum += a * w / (s - 1) + 0.5 * w;
    double rising = s, power = w / a; /* s(s+1)...(s+2j-2) and a^(-s-2j+1) */
    for (int j = 0; j < 12; j++) {
        double term = rising * power / fact_over_bernoulli[j];
        sum += term;
        if (fabs(term) <= 1e-17 * fabs(sum))
            break;
        rising *= (s + 2 * j + 1) * (s + 2 * j + 2);
        power /= a * a;
    }
    return sum;
}

/* Polygamma function psi^(n)(x), as SciPy: digamma for n = 0,
 * (-1)^(n+1) n! zeta(n + 1, x) for integer n >= 1, NaN otherwise. */
CH_SM double ch_polygamma(double n, double x) {
    if (n == 0)
        return ch_digamma(x);
    if (!(n > 0) || n != floor(n))
        return NAN;
    double sign = fmod(n, 2.0) == 1 ? 1 : -1;
    return sign * tgamma(n + 1) * ch_zeta(n + 1, x);
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

/*
 * rnn_math.h -- branch-free float32 exp, sigmoid and tanh for the
 * recurrent kernels (lstm.c, rnn_seq.c).
 *
 * glibc's tanhf/expf are scalar calls; in an LSTM step they cost more than
 * the recurrent GEMM.  These inline versions vectorise (the loops over
 * units become SSE code) and stay within a few float32 ulps:
 *   exp:     2^n * e^r, |r| <= ln2/2, degree-7 Taylor polynomial for e^r;
 *   sigmoid: 1 / (1 + e^-x);
 *   tanh:    odd polynomial for |x| < 0.25 (no cancellation near 0),
 *            else sign(x) (1 - 2 / (e^2|x| + 1)).
 * float64 keeps libm (the oracle's float64 tolerance is 1e-10).
 *
 * The CUDA backend's recurrent kernels (runtime/cuda/lstm.cu) call the same
 * functions on the device (RNN_HD), so that float32 gives the CPU's bits
 * there too (the device's tanh for float64 may differ in the last bit).
 */
#ifndef CHAINLUA_RNN_MATH_H
#define CHAINLUA_RNN_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define RNN_HD __host__ __device__
#else
#define RNN_HD
#endif

/* Without this GCC keeps the float -> int conversion and the clamps as
 * branches (they could raise FP exceptions, which nothing here reads), and
 * the gate loops do not vectorise.  Applies to the functions that follow
 * in the including file. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#pragma GCC optimize("no-trapping-math")
#endif

RNN_HD static inline float rnn_expf(float x) {
    /* clamp so that 2^n stays a normal float: e^-87 ~ 1.6e-38, e^88 ~ 1.7e38 */
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    /* round x / ln2 to the nearest integer with the 1.5 * 2^23 trick */
    const float shifter = 12582912.0f;
    float t = x * 1.44269504088896341f + shifter;
    float n = t - shifter;
    float r = x - n * 0.693145751953125f;  /* ln2, high part (exact product) */
    r = r - n * 1.42860682030941723e-6f;    /* ln2, low part */
    float p = 1.0f / 5040;
    p = p * r + 1.0f / 720;
    p = p * r + 1.0f / 120;
    p = p * r + 1.0f / 24;
    p = p * r + 1.0f / 6;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t bits = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

RNN_HD static inline float rnn_sigmoidf(float x) { return 1.0f / (1.0f + rnn_expf(-x)); }

RNN_HD static inline float rnn_tanhf(float x) {
    float ax = fabsf(x);
    float e = rnn_expf(2.0f * ax);
    float big = 1.0f - 2.0f / (e + 1.0f);
    big = x < 0 ? -big : big;
    /* tanh x = x - x^3/3 + 2x^5/15 - 17x^7/315 + 62x^9/2835 (error < 1e-9 at 0.25) */
    float x2 = x * x;
    float q = 62.0f / 2835;
    q = q * x2 - 17.0f / 315;
    q = q * x2 + 2.0f / 15;
    q = q * x2 - 1.0f / 3;
    float small = x + x * x2 * q;
    return ax < 0.25f ? small : big;
}

RNN_HD static inline double rnn_sigmoid(double x) { return 0.5 * tanh(0.5 * x) + 0.5; }

#endif

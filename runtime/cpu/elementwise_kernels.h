/*
 * elementwise_kernels.h -- the float kernels of elementwise.c, written once
 * and instantiated for float and double (elementwise.c includes this file
 * twice with EW_T and EW_NAME set).  Math calls go through <tgmath.h>, so
 * exp(x) on a float is expf: float32 data never detours through double.
 *
 * A kernel runs one op over n elements with element strides; the op switch
 * sits outside the loops, and the stride-1 and scalar-broadcast (stride 0)
 * cases get their own loops so the compiler can vectorise them.
 */
#ifndef EW_T
#error "define EW_T, EW_NAME and EW_SM before including elementwise_kernels.h"
#endif

/* The formulas (floordiv, pymod, sigmoid, softplus, clip, sign, maximum,
 * minimum) are shared with the CUDA kernels: core/scalar_math.h. */
#define EW_MAX CH_SM_MAX
#define EW_MIN CH_SM_MIN
/* the loops: EW_BIN_LOOP, EW_UN_LOOP (elementwise_loops.h) */

/* o is EW_T* for arithmetic ops and uint8_t* (bool) for comparisons/logic. */
static void EW_NAME(binary)(int op, void *o, int64_t so, const EW_T *a, int64_t sa, const EW_T *b, int64_t sb,
                            int64_t n) {
    switch (op) {
    case CH_ADD: EW_BIN_LOOP(EW_T, x + y); break;
    case CH_SUB: EW_BIN_LOOP(EW_T, x - y); break;
    case CH_MUL: EW_BIN_LOOP(EW_T, x * y); break;
    case CH_DIV: EW_BIN_LOOP(EW_T, x / y); break;
    case CH_FLOOR_DIVIDE: EW_BIN_LOOP(EW_T, EW_SM(floordiv)(x, y)); break;
    case CH_MOD: EW_BIN_LOOP(EW_T, EW_SM(pymod)(x, y)); break;
    case CH_FMOD: EW_BIN_LOOP(EW_T, fmod(x, y)); break;
    case CH_POW: EW_BIN_LOOP(EW_T, pow(x, y)); break;
    case CH_MAXIMUM: EW_BIN_LOOP(EW_T, EW_MAX(x, y)); break;
    case CH_MINIMUM: EW_BIN_LOOP(EW_T, EW_MIN(x, y)); break;
    case CH_ARCTAN2: EW_BIN_LOOP(EW_T, atan2(x, y)); break;
    case CH_HYPOT: EW_BIN_LOOP(EW_T, hypot(x, y)); break;
    case CH_ZETA: EW_BIN_LOOP(EW_T, ch_zeta((double)x, (double)y)); break;
    case CH_POLYGAMMA: EW_BIN_LOOP(EW_T, ch_polygamma((double)x, (double)y)); break;
    EW_COMPARISON_CASES
    default: break;
    }
}

/* Special functions are evaluated in double even for float32 inputs: their
 * float versions are either missing or not accurate to the last bit. */
static void EW_NAME(unary)(int op, void *o, int64_t so, const EW_T *a, int64_t sa, int64_t n, double lo,
                           double hi) {
    switch (op) {
    case CH_NEG: EW_UN_LOOP(EW_T, -x); break;
    case CH_ABS: EW_UN_LOOP(EW_T, fabs(x)); break;
    case CH_SIGN: EW_UN_LOOP(EW_T, EW_SM(sign)(x)); break;
    case CH_RECIPROCAL: EW_UN_LOOP(EW_T, (EW_T)1 / x); break;
    case CH_EXP: EW_UN_LOOP(EW_T, exp(x)); break;
    case CH_EXPM1: EW_UN_LOOP(EW_T, expm1(x)); break;
    case CH_EXP2: EW_UN_LOOP(EW_T, exp2(x)); break;
    case CH_LOG: EW_UN_LOOP(EW_T, log(x)); break;
    case CH_LOG1P: EW_UN_LOOP(EW_T, log1p(x)); break;
    case CH_LOG2: EW_UN_LOOP(EW_T, log2(x)); break;
    case CH_LOG10: EW_UN_LOOP(EW_T, log10(x)); break;
    case CH_SQRT: EW_UN_LOOP(EW_T, sqrt(x)); break;
    case CH_RSQRT: EW_UN_LOOP(EW_T, (EW_T)1 / sqrt(x)); break;
    case CH_SQUARE: EW_UN_LOOP(EW_T, x * x); break;
    case CH_CBRT: EW_UN_LOOP(EW_T, cbrt(x)); break;
    case CH_SIN: EW_UN_LOOP(EW_T, sin(x)); break;
    case CH_COS: EW_UN_LOOP(EW_T, cos(x)); break;
    case CH_TAN: EW_UN_LOOP(EW_T, tan(x)); break;
    case CH_ARCSIN: EW_UN_LOOP(EW_T, asin(x)); break;
    case CH_ARCCOS: EW_UN_LOOP(EW_T, acos(x)); break;
    case CH_ARCTAN: EW_UN_LOOP(EW_T, atan(x)); break;
    case CH_SINH: EW_UN_LOOP(EW_T, sinh(x)); break;
    case CH_COSH: EW_UN_LOOP(EW_T, cosh(x)); break;
    case CH_TANH: EW_UN_LOOP(EW_T, tanh(x)); break;
    case CH_ARCSINH: EW_UN_LOOP(EW_T, asinh(x)); break;
    case CH_ARCCOSH: EW_UN_LOOP(EW_T, acosh(x)); break;
    case CH_ARCTANH: EW_UN_LOOP(EW_T, atanh(x)); break;
    case CH_ERF: EW_UN_LOOP(EW_T, erf(x)); break;
    case CH_ERFC: EW_UN_LOOP(EW_T, erfc(x)); break;
    case CH_FLOOR: EW_UN_LOOP(EW_T, floor(x)); break;
    case CH_CEIL: EW_UN_LOOP(EW_T, ceil(x)); break;
    case CH_TRUNC: EW_UN_LOOP(EW_T, trunc(x)); break;
    case CH_RINT: EW_UN_LOOP(EW_T, rint(x)); break;
    case CH_SIGMOID: EW_UN_LOOP(EW_T, EW_SM(sigmoid)(x)); break;
    case CH_RELU: EW_UN_LOOP(EW_T, x < 0 ? (EW_T)0 : x); break;
    case CH_SOFTPLUS: EW_UN_LOOP(EW_T, EW_SM(softplus)(x)); break;
    case CH_LGAMMA: EW_UN_LOOP(EW_T, ew_lgamma((double)x)); break;
    case CH_DIGAMMA: EW_UN_LOOP(EW_T, ch_digamma((double)x)); break;
    case CH_ERFINV: EW_UN_LOOP(EW_T, ch_erfinv((double)x)); break;
    case CH_NDTR: EW_UN_LOOP(EW_T, (EW_T)0.5 * erfc(-x * (EW_T)M_SQRT1_2)); break;
    case CH_NDTRI: EW_UN_LOOP(EW_T, ch_ndtri((double)x)); break;
    case CH_LOG_NDTR: EW_UN_LOOP(EW_T, ch_log_ndtr((double)x)); break;
    case CH_ERFCINV: EW_UN_LOOP(EW_T, ch_erfcinv((double)x)); break;
    case CH_ERFCX: EW_UN_LOOP(EW_T, ch_erfcx((double)x)); break;
    case CH_LOGICAL_NOT: EW_UN_LOOP(uint8_t, x == 0); break;
    case CH_ISNAN: EW_UN_LOOP(uint8_t, x != x); break;
    case CH_ISINF: EW_UN_LOOP(uint8_t, isinf(x) != 0); break;
    case CH_ISFINITE: EW_UN_LOOP(uint8_t, isfinite(x) != 0); break;
    case EW_CLIP: {
        /* NaN bounds were turned into infinities by the caller; x < lo and
         * x > hi are false for NaN x, so NaN passes through (NumPy). */
        const EW_T l = (EW_T)lo, h = (EW_T)hi;
        EW_UN_LOOP(EW_T, EW_SM(clip)(x, l, h));
        break;
    }
    default: break;
    }
}

#undef EW_MAX
#undef EW_MIN
#undef EW_T
#undef EW_NAME
#undef EW_SM

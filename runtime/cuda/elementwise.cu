/*
 * elementwise.cu -- unary, binary and clip kernels with the CPU's semantics
 * (runtime/cpu/elementwise.c, elementwise_kernels.h): each op computes in
 * float (float16 and float32 data), double, or int64 (integers and bool,
 * wrapping on overflow), and stores to the output's dtype with the CPU's
 * conversion rules (convert.cuh).
 *
 * One kernel per (compute type, arity); the op switch sits outside the
 * grid-stride loops.  Operand dtypes are read through a switch on a value
 * that is the same for every thread (no divergence), which keeps the number
 * of instantiations small at the price of a few instructions per element.
 * A dense run (plan.dense) indexes with 32 bits when it fits; other layouts
 * decompose the linear index over the collapsed axes.
 *
 * Compiled here, but NOT yet executed on a GPU: the GPU specs
 * (spec/cuda/ops_gpu_spec.lua) compare it with the CPU where one exists.
 */
#include "backend.h"
#include "convert.cuh"
#include "plan.h"
#include "scalar_math.h"

#include <cuda_runtime.h>

#define EW_CLIP CH_NUNARY

/* ---- operand access ------------------------------------------------------- */
template <typename CT> struct ew_conv;
template <> struct ew_conv<float> {
    __device__ static float from_i(int64_t v) { return (float)v; }
    __device__ static float from_f(double v) { return (float)v; }
};
template <> struct ew_conv<double> {
    __device__ static double from_i(int64_t v) { return (double)v; }
    __device__ static double from_f(double v) { return v; }
};
template <> struct ew_conv<int64_t> {
    __device__ static int64_t from_i(int64_t v) { return v; }
    __device__ static int64_t from_f(double v) { return ch_sat_i64(v); }
};

/* Element `off` of data of dtype dt, in the compute type CT. */
template <typename CT> __device__ __forceinline__ CT ew_load(int dt, const char *p, int64_t off) {
    typedef ew_conv<CT> C;
    switch (dt) {
    case CH_BOOL: return C::from_i(((const uint8_t *)p)[off] != 0);
    case CH_INT8: return C::from_i(((const int8_t *)p)[off]);
    case CH_UINT8: return C::from_i(((const uint8_t *)p)[off]);
    case CH_INT16: return C::from_i(((const int16_t *)p)[off]);
    case CH_INT32: return C::from_i(((const int32_t *)p)[off]);
    case CH_INT64: return C::from_i(((const int64_t *)p)[off]);
    case CH_FLOAT16: return C::from_f((double)__half2float(((const __half *)p)[off]));
    case CH_FLOAT32: return C::from_f((double)((const float *)p)[off]);
    default: return C::from_f(((const double *)p)[off]);
    }
}

/* Stores a result (compute type, or bool for tests) as dtype dt. */
__device__ __forceinline__ int64_t ew_widen(bool v) { return v; }
__device__ __forceinline__ int64_t ew_widen(int64_t v) { return v; }
__device__ __forceinline__ double ew_widen(float v) { return (double)v; }
__device__ __forceinline__ double ew_widen(double v) { return v; }

template <typename V> __device__ __forceinline__ void ew_store(int dt, char *p, int64_t off, V v) {
    auto w = ew_widen(v);
    switch (dt) {
    case CH_BOOL: ((cu_bool *)p)[off] = cu_store<cu_bool>::from(w); break;
    case CH_INT8: ((int8_t *)p)[off] = cu_store<int8_t>::from(w); break;
    case CH_UINT8: ((uint8_t *)p)[off] = cu_store<uint8_t>::from(w); break;
    case CH_INT16: ((int16_t *)p)[off] = cu_store<int16_t>::from(w); break;
    case CH_INT32: ((int32_t *)p)[off] = cu_store<int32_t>::from(w); break;
    case CH_INT64: ((int64_t *)p)[off] = cu_store<int64_t>::from(w); break;
    case CH_FLOAT16: ((__half *)p)[off] = cu_store<__half>::from(w); break;
    case CH_FLOAT32: ((float *)p)[off] = cu_store<float>::from(w); break;
    default: ((double *)p)[off] = cu_store<double>::from(w); break;
    }
}

template <typename CT> __device__ __forceinline__ CT ew_scalar(const cu_ew_args &a);
template <> __device__ __forceinline__ float ew_scalar<float>(const cu_ew_args &a) { return (float)a.scalar_f; }
template <> __device__ __forceinline__ double ew_scalar<double>(const cu_ew_args &a) { return a.scalar_f; }
template <> __device__ __forceinline__ int64_t ew_scalar<int64_t>(const cu_ew_args &a) { return a.scalar_i; }

/* Element offsets of linear position i for every operand. */
__device__ __forceinline__ void ew_offsets(const cu_ew_plan &p, int64_t i, int64_t *o) {
    o[0] = o[1] = o[2] = 0;
    for (int k = p.nd - 1; k >= 0; k--) {
        int64_t d = p.dim[k], c = i % d;
        i /= d;
        o[0] += c * p.stride[0][k];
        o[1] += c * p.stride[1][k];
        o[2] += c * p.stride[2][k];
    }
}

/* ---- the loops ------------------------------------------------------------ */
template <typename CT, typename F> __device__ __forceinline__ void ew_loop2(const cu_ew_plan &p, const cu_ew_args &a, F f) {
    const CT s = ew_scalar<CT>(a);
    const bool x_is_scalar = a.scalar_pos == 0, y_is_scalar = a.scalar_pos == 1;
    if (p.index32) {
        uint32_t n = (uint32_t)p.numel, sx = (uint32_t)p.stride[1][0], sy = (uint32_t)p.stride[2][0];
        for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
            CT x = x_is_scalar ? s : ew_load<CT>(a.dt[1], a.ptr[1], i * sx);
            CT y = y_is_scalar ? s : ew_load<CT>(a.dt[2], a.ptr[2], i * sy);
            ew_store(a.dt[0], a.ptr[0], i, f(x, y));
        }
        return;
    }
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t o[3];
        if (p.dense)
            o[0] = i, o[1] = i * p.stride[1][0], o[2] = i * p.stride[2][0];
        else
            ew_offsets(p, i, o);
        CT x = x_is_scalar ? s : ew_load<CT>(a.dt[1], a.ptr[1], o[1]);
        CT y = y_is_scalar ? s : ew_load<CT>(a.dt[2], a.ptr[2], o[2]);
        ew_store(a.dt[0], a.ptr[0], o[0], f(x, y));
    }
}

template <typename CT, typename F> __device__ __forceinline__ void ew_loop1(const cu_ew_plan &p, const cu_ew_args &a, F f) {
    if (p.index32) {
        uint32_t n = (uint32_t)p.numel, sx = (uint32_t)p.stride[1][0];
        for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
            ew_store(a.dt[0], a.ptr[0], i, f(ew_load<CT>(a.dt[1], a.ptr[1], i * sx)));
        return;
    }
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.numel; i += (int64_t)gridDim.x * blockDim.x) {
        int64_t o[3];
        if (p.dense)
            o[0] = i, o[1] = i * p.stride[1][0];
        else
            ew_offsets(p, i, o);
        ew_store(a.dt[0], a.ptr[0], o[0], f(ew_load<CT>(a.dt[1], a.ptr[1], o[1])));
    }
}

/* ---- the formulas: shared with the CPU kernels (core/scalar_math.h) ------ */
#define EW_MAX CH_SM_MAX
#define EW_MIN CH_SM_MIN

/* ---- kernels ---------------------------------------------------------------- */
/* The comparisons and logical ops, written the same for every compute type;
 * any other op: nothing. */
template <typename T> __device__ __forceinline__ void ew_compare(const cu_ew_plan &p, const cu_ew_args &a) {
    switch (a.op) {
    case CH_EQ: ew_loop2<T>(p, a, [](T x, T y) { return x == y; }); break;
    case CH_NE: ew_loop2<T>(p, a, [](T x, T y) { return x != y; }); break;
    case CH_LT: ew_loop2<T>(p, a, [](T x, T y) { return x < y; }); break;
    case CH_LE: ew_loop2<T>(p, a, [](T x, T y) { return x <= y; }); break;
    case CH_GT: ew_loop2<T>(p, a, [](T x, T y) { return x > y; }); break;
    case CH_GE: ew_loop2<T>(p, a, [](T x, T y) { return x >= y; }); break;
    case CH_LOGICAL_AND: ew_loop2<T>(p, a, [](T x, T y) { return x != 0 && y != 0; }); break;
    case CH_LOGICAL_OR: ew_loop2<T>(p, a, [](T x, T y) { return x != 0 || y != 0; }); break;
    case CH_LOGICAL_XOR: ew_loop2<T>(p, a, [](T x, T y) { return (x != 0) != (y != 0); }); break;
    default: break;
    }
}

template <typename T> __global__ void ew_binary_float(cu_ew_plan p, cu_ew_args a) {
    switch (a.op) {
    case CH_ADD: ew_loop2<T>(p, a, [](T x, T y) { return x + y; }); break;
    case CH_SUB: ew_loop2<T>(p, a, [](T x, T y) { return x - y; }); break;
    case CH_MUL: ew_loop2<T>(p, a, [](T x, T y) { return x * y; }); break;
    case CH_DIV: ew_loop2<T>(p, a, [](T x, T y) { return x / y; }); break;
    case CH_FLOOR_DIVIDE: ew_loop2<T>(p, a, [](T x, T y) { return ch_floordiv(x, y); }); break;
    case CH_MOD: ew_loop2<T>(p, a, [](T x, T y) { return ch_pymod(x, y); }); break;
    case CH_FMOD: ew_loop2<T>(p, a, [](T x, T y) { return (T)fmod(x, y); }); break;
    case CH_POW: ew_loop2<T>(p, a, [](T x, T y) { return (T)pow(x, y); }); break;
    case CH_MAXIMUM: ew_loop2<T>(p, a, [](T x, T y) { return EW_MAX(x, y); }); break;
    case CH_MINIMUM: ew_loop2<T>(p, a, [](T x, T y) { return EW_MIN(x, y); }); break;
    case CH_ARCTAN2: ew_loop2<T>(p, a, [](T x, T y) { return (T)atan2(x, y); }); break;
    case CH_HYPOT: ew_loop2<T>(p, a, [](T x, T y) { return (T)hypot(x, y); }); break;
    case CH_ZETA: ew_loop2<T>(p, a, [](T x, T y) { return (T)ch_zeta((double)x, (double)y); }); break;
    case CH_POLYGAMMA: ew_loop2<T>(p, a, [](T x, T y) { return (T)ch_polygamma((double)x, (double)y); }); break;
    default: ew_compare<T>(p, a); break;
    }
}

__global__ void ew_binary_int(cu_ew_plan p, cu_ew_args a) {
    typedef int64_t T;
    switch (a.op) {
    case CH_ADD: ew_loop2<T>(p, a, [](T x, T y) { return ch_i_add(x, y); }); break;
    case CH_SUB: ew_loop2<T>(p, a, [](T x, T y) { return ch_i_sub(x, y); }); break;
    case CH_MUL: ew_loop2<T>(p, a, [](T x, T y) { return ch_i_mul(x, y); }); break;
    case CH_FLOOR_DIVIDE: ew_loop2<T>(p, a, [](T x, T y) { return ch_i_floordiv(x, y); }); break;
    case CH_MOD: ew_loop2<T>(p, a, [](T x, T y) { return ch_i_mod(x, y); }); break;
    case CH_FMOD: ew_loop2<T>(p, a, [](T x, T y) { return ch_i_fmod(x, y); }); break;
    case CH_POW: ew_loop2<T>(p, a, [](T x, T y) { return ch_i_pow(x, y); }); break;
    case CH_MAXIMUM: ew_loop2<T>(p, a, [](T x, T y) { return x > y ? x : y; }); break;
    case CH_MINIMUM: ew_loop2<T>(p, a, [](T x, T y) { return x < y ? x : y; }); break;
    default: ew_compare<T>(p, a); break; /* DIV, ARCTAN2, HYPOT, ZETA and POLYGAMMA never compute in int64 */
    }
}

template <typename T> __global__ void ew_unary_float(cu_ew_plan p, cu_ew_args a) {
    switch (a.op) {
    case CH_NEG: ew_loop1<T>(p, a, [](T x) { return -x; }); break;
    case CH_ABS: ew_loop1<T>(p, a, [](T x) { return (T)fabs(x); }); break;
    case CH_SIGN: ew_loop1<T>(p, a, [](T x) { return ch_sign(x); }); break;
    case CH_RECIPROCAL: ew_loop1<T>(p, a, [](T x) { return (T)1 / x; }); break;
    case CH_EXP: ew_loop1<T>(p, a, [](T x) { return (T)exp(x); }); break;
    case CH_EXPM1: ew_loop1<T>(p, a, [](T x) { return (T)expm1(x); }); break;
    case CH_EXP2: ew_loop1<T>(p, a, [](T x) { return (T)exp2(x); }); break;
    case CH_LOG: ew_loop1<T>(p, a, [](T x) { return (T)log(x); }); break;
    case CH_LOG1P: ew_loop1<T>(p, a, [](T x) { return (T)log1p(x); }); break;
    case CH_LOG2: ew_loop1<T>(p, a, [](T x) { return (T)log2(x); }); break;
    case CH_LOG10: ew_loop1<T>(p, a, [](T x) { return (T)log10(x); }); break;
    case CH_SQRT: ew_loop1<T>(p, a, [](T x) { return (T)sqrt(x); }); break;
    case CH_RSQRT: ew_loop1<T>(p, a, [](T x) { return (T)1 / (T)sqrt(x); }); break;
    case CH_SQUARE: ew_loop1<T>(p, a, [](T x) { return x * x; }); break;
    case CH_CBRT: ew_loop1<T>(p, a, [](T x) { return (T)cbrt(x); }); break;
    case CH_SIN: ew_loop1<T>(p, a, [](T x) { return (T)sin(x); }); break;
    case CH_COS: ew_loop1<T>(p, a, [](T x) { return (T)cos(x); }); break;
    case CH_TAN: ew_loop1<T>(p, a, [](T x) { return (T)tan(x); }); break;
    case CH_ARCSIN: ew_loop1<T>(p, a, [](T x) { return (T)asin(x); }); break;
    case CH_ARCCOS: ew_loop1<T>(p, a, [](T x) { return (T)acos(x); }); break;
    case CH_ARCTAN: ew_loop1<T>(p, a, [](T x) { return (T)atan(x); }); break;
    case CH_SINH: ew_loop1<T>(p, a, [](T x) { return (T)sinh(x); }); break;
    case CH_COSH: ew_loop1<T>(p, a, [](T x) { return (T)cosh(x); }); break;
    case CH_TANH: ew_loop1<T>(p, a, [](T x) { return (T)tanh(x); }); break;
    case CH_ARCSINH: ew_loop1<T>(p, a, [](T x) { return (T)asinh(x); }); break;
    case CH_ARCCOSH: ew_loop1<T>(p, a, [](T x) { return (T)acosh(x); }); break;
    case CH_ARCTANH: ew_loop1<T>(p, a, [](T x) { return (T)atanh(x); }); break;
    case CH_ERF: ew_loop1<T>(p, a, [](T x) { return (T)erf(x); }); break;
    case CH_ERFC: ew_loop1<T>(p, a, [](T x) { return (T)erfc(x); }); break;
    case CH_FLOOR: ew_loop1<T>(p, a, [](T x) { return (T)floor(x); }); break;
    case CH_CEIL: ew_loop1<T>(p, a, [](T x) { return (T)ceil(x); }); break;
    case CH_TRUNC: ew_loop1<T>(p, a, [](T x) { return (T)trunc(x); }); break;
    case CH_RINT: ew_loop1<T>(p, a, [](T x) { return (T)rint(x); }); break;
    case CH_SIGMOID: ew_loop1<T>(p, a, [](T x) { return ch_sigmoid(x); }); break;
    case CH_RELU: ew_loop1<T>(p, a, [](T x) { return x < 0 ? (T)0 : x; }); break;
    case CH_SOFTPLUS: ew_loop1<T>(p, a, [](T x) { return ch_softplus(x); }); break;
    /* the CPU computes these three in double for both float types; lgamma is
     * the device's (the CPU's lgamma_r has no device twin) */
    case CH_LGAMMA: ew_loop1<T>(p, a, [](T x) { return (T)lgamma((double)x); }); break;
    case CH_DIGAMMA: ew_loop1<T>(p, a, [](T x) { return (T)ch_digamma((double)x); }); break;
    case CH_ERFINV: ew_loop1<T>(p, a, [](T x) { return (T)ch_erfinv((double)x); }); break;
    case CH_NDTRI: ew_loop1<T>(p, a, [](T x) { return (T)ch_ndtri((double)x); }); break;
    case CH_LOG_NDTR: ew_loop1<T>(p, a, [](T x) { return (T)ch_log_ndtr((double)x); }); break;
    case CH_ERFCINV: ew_loop1<T>(p, a, [](T x) { return (T)ch_erfcinv((double)x); }); break;
    case CH_ERFCX: ew_loop1<T>(p, a, [](T x) { return (T)ch_erfcx((double)x); }); break;
    case CH_NDTR: ew_loop1<T>(p, a, [](T x) { return (T)0.5 * (T)erfc(-x * (T)0.70710678118654752440); }); break;
    case CH_LOGICAL_NOT: ew_loop1<T>(p, a, [](T x) { return x == 0; }); break;
    case CH_ISNAN: ew_loop1<T>(p, a, [](T x) { return x != x; }); break;
    case CH_ISINF: ew_loop1<T>(p, a, [](T x) { return (bool)isinf(x); }); break;
    case CH_ISFINITE: ew_loop1<T>(p, a, [](T x) { return (bool)isfinite(x); }); break;
    case EW_CLIP: {
        /* NaN bounds arrive as infinities; NaN x passes through (NumPy) */
        const T lo = (T)a.lo, hi = (T)a.hi;
        ew_loop1<T>(p, a, [lo, hi](T x) { return ch_clip(x, lo, hi); });
        break;
    }
    default: break;
    }
}

__global__ void ew_unary_int(cu_ew_plan p, cu_ew_args a) {
    typedef int64_t T;
    switch (a.op) {
    case CH_NEG: ew_loop1<T>(p, a, [](T x) { return ch_i_sub(0, x); }); break;
    case CH_ABS: ew_loop1<T>(p, a, [](T x) { return x < 0 ? ch_i_sub(0, x) : x; }); break;
    case CH_SIGN: ew_loop1<T>(p, a, [](T x) { return (T)((x > 0) - (x < 0)); }); break;
    case CH_SQUARE: ew_loop1<T>(p, a, [](T x) { return ch_i_mul(x, x); }); break;
    case CH_LOGICAL_NOT: ew_loop1<T>(p, a, [](T x) { return x == 0; }); break;
    case CH_ISNAN: ew_loop1<T>(p, a, [](T) { return false; }); break;
    case CH_ISINF: ew_loop1<T>(p, a, [](T) { return false; }); break;
    case CH_ISFINITE: ew_loop1<T>(p, a, [](T) { return true; }); break;
    case EW_CLIP: {
        const T lo = a.lo_i, hi = a.hi_i;
        ew_loop1<T>(p, a, [lo, hi](T x) {
            T v = x < lo ? lo : x;
            return v > hi ? hi : v;
        });
        break;
    }
    default: break; /* math functions of integers compute in float64 */
    }
}

extern "C" ch_status cu_ew_launch(const char *fn, const cu_ew_plan *p, const cu_ew_args *a) {
    if (p->numel == 0)
        return CH_OK;
    unsigned blocks = cu_blocks(p->numel);
    bool two = a->nin == 2;
    switch (a->ct) {
    case CH_FLOAT32:
        if (two) ew_binary_float<float><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, *a);
        else ew_unary_float<float><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, *a);
        break;
    case CH_FLOAT64:
        if (two) ew_binary_float<double><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, *a);
        else ew_unary_float<double><<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, *a);
        break;
    case CH_INT64:
        if (two) ew_binary_int<<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, *a);
        else ew_unary_int<<<blocks, 256, 0, (cudaStream_t)cu_stream()>>>(*p, *a);
        break;
    default:
        return cu_fail(CH_ERR_INTERNAL, "%s: invalid compute dtype code %d", fn, a->ct);
    }
    return cu_check(cudaGetLastError(), fn, "kernel launch");
}

/*
 * convert.cuh -- element types and casts on the device, with the CPU's
 * rules (runtime/core/dtype.c) so that a cast gives the same values on both
 * devices:
 *   - a value is read as int64 (integers, bool) or double (floats), then
 *     stored; bool stores v != 0 (NaN is true);
 *   - float to integer saturates to int64 (NaN -> 0) and then wraps to the
 *     narrower type; integer to integer wraps;
 *   - float16 is written from float32 with round-to-nearest-even
 *     (double -> float -> half, as the CPU does).
 */
#ifndef CHAINLUA_CUDA_CONVERT_CUH
#define CHAINLUA_CUDA_CONVERT_CUH

#include <cuda_fp16.h>
#include <stdint.h>

#include "chainlua.h"
#include "launch.cuh"
#include "scalar_math.h"

/* bool is stored as one byte but reads as 0/1 whatever the byte holds. */
struct cu_bool {
    uint8_t v;
};

/* ---- loads: every type widens to int64_t or double -------------------- */
CU_HD int64_t cu_load(cu_bool x) { return x.v != 0; }
CU_HD int64_t cu_load(int8_t x) { return x; }
CU_HD int64_t cu_load(uint8_t x) { return x; }
CU_HD int64_t cu_load(int16_t x) { return x; }
CU_HD int64_t cu_load(int32_t x) { return x; }
CU_HD int64_t cu_load(int64_t x) { return x; }
CU_HD double cu_load(__half x) { return (double)__half2float(x); }
CU_HD double cu_load(float x) { return (double)x; }
CU_HD double cu_load(double x) { return x; }

/* ---- stores: from the widened value ----------------------------------- */
template <typename T> struct cu_store;

template <> struct cu_store<cu_bool> {
    CU_HD static cu_bool from(int64_t v) { return cu_bool{(uint8_t)(v != 0)}; }
    CU_HD static cu_bool from(double v) { return cu_bool{(uint8_t)(v != 0.0)}; }
};
#define CU_INT_STORE(T)                                                       \
    template <> struct cu_store<T> {                                          \
        CU_HD static T from(int64_t v) { return (T)v; }                  \
        CU_HD static T from(double v) { return (T)ch_sat_i64(v); }       \
    };
CU_INT_STORE(int8_t)
CU_INT_STORE(uint8_t)
CU_INT_STORE(int16_t)
CU_INT_STORE(int32_t)
CU_INT_STORE(int64_t)
#undef CU_INT_STORE
template <> struct cu_store<__half> {
    CU_HD static __half from(int64_t v) { return __float2half_rn((float)(double)v); }
    CU_HD static __half from(double v) { return __float2half_rn((float)v); }
};
template <> struct cu_store<float> {
    /* direct, like the CPU's int64 -> float32 fast path */
    CU_HD static float from(int64_t v) { return (float)v; }
    CU_HD static float from(double v) { return (float)v; }
};
template <> struct cu_store<double> {
    CU_HD static double from(int64_t v) { return (double)v; }
    CU_HD static double from(double v) { return v; }
};

template <typename D, typename S> CU_HD D cu_cast(S x) { return cu_store<D>::from(cu_load(x)); }

/* Calls f.template operator()<T>() with the C type of a ch_dtype code;
 * returns false for an invalid code. */
template <typename F> __host__ bool cu_dispatch(int dt, F &&f) {
    switch (dt) {
    case CH_BOOL: f((cu_bool *)0); return true;
    case CH_INT8: f((int8_t *)0); return true;
    case CH_UINT8: f((uint8_t *)0); return true;
    case CH_INT16: f((int16_t *)0); return true;
    case CH_INT32: f((int32_t *)0); return true;
    case CH_INT64: f((int64_t *)0); return true;
    case CH_FLOAT16: f((__half *)0); return true;
    case CH_FLOAT32: f((float *)0); return true;
    case CH_FLOAT64: f((double *)0); return true;
    default: return false;
    }
}

/* Kernel-side view of a cu_geom (passed by value in parameter space). */
struct cu_kgeom {
    int nd;
    int64_t dim[CH_MAX_DIMS];
    int64_t stride[2][CH_MAX_DIMS];
};

/* Element offsets of linear position i for both operands. */
CU_HD void cu_offsets(const cu_kgeom &g, int64_t i, int64_t &o0, int64_t &o1) {
    o0 = 0;
    o1 = 0;
    for (int k = g.nd - 1; k >= 0; k--) {
        int64_t d = g.dim[k];
        int64_t c = i % d;
        i /= d;
        o0 += c * g.stride[0][k];
        o1 += c * g.stride[1][k];
    }
}

#endif

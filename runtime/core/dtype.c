/* dtype.c -- element types: sizes, names, NumPy promotion, float16 conversion. */
#include "internal.h"
#include "scalar_math.h"

#include <math.h>

static const char *const names[] = {CH_DTYPE_LIST(CH_OP_NAME)};
_Static_assert(sizeof names / sizeof *names == CH_NDTYPES, "dtype names: one per entry of CH_DTYPE_LIST");

size_t ch_dtype_size(ch_dtype dt) { return (unsigned)dt < CH_NDTYPES ? ch_dtype_bytes[dt] : 0; }

const char *ch_dtype_name(ch_dtype dt) { return (unsigned)dt < CH_NDTYPES ? names[dt] : "invalid"; }

int ch_dtype_from_name(const char *name) {
    if (!name)
        return -1;
    for (int i = 0; i < CH_NDTYPES; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    if (strcmp(name, "half") == 0) return CH_FLOAT16;
    if (strcmp(name, "float") == 0 || strcmp(name, "single") == 0) return CH_FLOAT32;
    if (strcmp(name, "double") == 0) return CH_FLOAT64;
    if (strcmp(name, "int") == 0 || strcmp(name, "long") == 0) return CH_INT64;
    return -1;
}

int ch_dtype_is_float(ch_dtype dt) { return dt == CH_FLOAT16 || dt == CH_FLOAT32 || dt == CH_FLOAT64; }

int ch_dtype_is_signed(ch_dtype dt) { return dt != CH_BOOL && dt != CH_UINT8; }

/* NumPy 1.x result_type for arrays.  Mixed signed/unsigned integers widen to
 * the next signed type that holds both; integers with floats promote to the
 * float wide enough to hold the integer exactly (int16+float16 -> float32,
 * int32+float32 -> float64), as NumPy does. */
ch_dtype ch_promote(ch_dtype a, ch_dtype b) {
    if (a == b)
        return a;
    if (a > b) {
        ch_dtype t = a; a = b; b = t;
    }
    /* now a < b in the enum order */
    if (a == CH_BOOL)
        return b;
    if (ch_dtype_is_float(a))          /* both float */
        return b;
    if (ch_dtype_is_float(b)) {         /* int a, float b */
        int isz = (int)ch_dtype_bytes[a];
        if (b == CH_FLOAT16)
            return isz == 1 ? CH_FLOAT16 : (isz == 2 ? CH_FLOAT32 : CH_FLOAT64);
        if (b == CH_FLOAT32)
            return isz <= 2 ? CH_FLOAT32 : CH_FLOAT64;
        return CH_FLOAT64;
    }
    /* both integer; the only unsigned type is uint8 */
    if (a == CH_UINT8 || b == CH_UINT8) {
        ch_dtype other = a == CH_UINT8 ? b : a;
        if (other == CH_INT8)
            return CH_INT16;
        return other;                   /* int16/32/64 hold uint8 */
    }
    return b;                           /* wider signed */
}

ch_dtype ch_promote_scalar(ch_dtype a, int scalar_is_float, int scalar_is_bool) {
    if (scalar_is_bool)
        return a;
    if (scalar_is_float)
        return ch_dtype_is_float(a) ? a : CH_FLOAT64;
    return a == CH_BOOL ? CH_INT64 : a;
}

/* IEEE 754 binary16 <-> binary32, round to nearest even. */
float ch_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0) {
        if (man == 0) {
            bits = sign;
        } else { /* subnormal: normalise */
            int e = -1;
            do { e++; man <<= 1; } while (!(man & 0x400));
            bits = sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3ff) << 13);
        }
    } else if (exp == 31) {
        bits = sign | 0x7f800000u | (man << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t ch_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or nan */
        return (uint16_t)(sign | 0x7c00 | (absx > 0x7f800000u ? 0x200 : 0));
    if (absx >= 0x477ff000u) /* rounds to >= 65520: overflow */
        return (uint16_t)(sign | 0x7c00);
    if (absx < 0x38800000u) { /* below the smallest normal half: subnormal or 0 */
        if (absx < 0x33000000u)
            return sign;
        uint32_t man = (absx & 0x7fffff) | 0x800000;
        int shift = 126 - (int)(absx >> 23); /* 14..24 */
        uint32_t res = man >> shift;
        uint32_t rem = man & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (res & 1)))
            res++;
        return (uint16_t)(sign | res);
    }
    uint32_t res = ((absx >> 13) - (112u << 10));
    uint32_t rem = absx & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (res & 1)))
        res++;
    return (uint16_t)(sign | res);
}

double ch_load(ch_dtype dt, const char *p) {
    switch (dt) {
    case CH_BOOL: return *(const uint8_t *)p ? 1.0 : 0.0;
    case CH_INT8: return *(const int8_t *)p;
    case CH_UINT8: return *(const uint8_t *)p;
    case CH_INT16: return *(const int16_t *)p;
    case CH_INT32: return *(const int32_t *)p;
    case CH_INT64: return (double)*(const int64_t *)p;
    case CH_FLOAT16: return ch_half_to_float(*(const uint16_t *)p);
    case CH_FLOAT32: return *(const float *)p;
    case CH_FLOAT64: return *(const double *)p;
    default: return NAN;
    }
}

void ch_store(ch_dtype dt, char *p, double v) {
    switch (dt) {
    case CH_BOOL: *(uint8_t *)p = v != 0.0; break;
    case CH_INT8: *(int8_t *)p = (int8_t)ch_sat_i64(v); break;
    case CH_UINT8: *(uint8_t *)p = (uint8_t)ch_sat_i64(v); break;
    case CH_INT16: *(int16_t *)p = (int16_t)ch_sat_i64(v); break;
    case CH_INT32: *(int32_t *)p = (int32_t)ch_sat_i64(v); break;
    case CH_INT64: *(int64_t *)p = ch_sat_i64(v); break;
    case CH_FLOAT16: *(uint16_t *)p = ch_float_to_half((float)v); break;
    case CH_FLOAT32: *(float *)p = (float)v; break;
    case CH_FLOAT64: *(double *)p = v; break;
    default: break;
    }
}

int64_t ch_load_i64(ch_dtype dt, const char *p) {
    switch (dt) {
    case CH_INT64: return *(const int64_t *)p;
    case CH_INT32: return *(const int32_t *)p;
    case CH_INT16: return *(const int16_t *)p;
    case CH_INT8: return *(const int8_t *)p;
    case CH_UINT8: return *(const uint8_t *)p;
    case CH_BOOL: return *(const uint8_t *)p != 0;
    default: return ch_sat_i64(ch_load(dt, p));
    }
}

void ch_store_i64(ch_dtype dt, char *p, int64_t v) {
    switch (dt) {
    case CH_INT64: *(int64_t *)p = v; break;
    case CH_INT32: *(int32_t *)p = (int32_t)v; break;
    case CH_INT16: *(int16_t *)p = (int16_t)v; break;
    case CH_INT8: *(int8_t *)p = (int8_t)v; break;
    case CH_UINT8: *(uint8_t *)p = (uint8_t)v; break;
    case CH_BOOL: *(uint8_t *)p = v != 0; break;
    default: ch_store(dt, p, (double)v); break;
    }
}

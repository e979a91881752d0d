/* dtypes: names and sizes, NumPy's promotion table, weak scalars, and
 * float16 <-> float32 conversion (all 65536 halves, rounding), and the
 * saturating float -> int64 conversion every device uses. */
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "scalar_math.h"

enum { B = CH_BOOL, I8 = CH_INT8, U8 = CH_UINT8, I16 = CH_INT16, I32 = CH_INT32, I64 = CH_INT64,
       F16 = CH_FLOAT16, F32 = CH_FLOAT32, F64 = CH_FLOAT64 };

/* numpy.result_type(a, b) for the dtypes in enum order */
static const int promote_table[9][9] = {
    /*         b    i8   u8   i16  i32  i64  f16  f32  f64 */
    /* b   */ {B,   I8,  U8,  I16, I32, I64, F16, F32, F64},
    /* i8  */ {I8,  I8,  I16, I16, I32, I64, F16, F32, F64},
    /* u8  */ {U8,  I16, U8,  I16, I32, I64, F16, F32, F64},
    /* i16 */ {I16, I16, I16, I16, I32, I64, F32, F32, F64},
    /* i32 */ {I32, I32, I32, I32, I32, I64, F64, F64, F64},
    /* i64 */ {I64, I64, I64, I64, I64, I64, F64, F64, F64},
    /* f16 */ {F16, F16, F16, F32, F64, F64, F16, F32, F64},
    /* f32 */ {F32, F32, F32, F32, F64, F64, F32, F32, F64},
    /* f64 */ {F64, F64, F64, F64, F64, F64, F64, F64, F64},
};

static double half_reference(uint16_t h) {
    int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp(man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexp(1024 + man, exp - 25);
    return sign ? -v : v;
}

int main(void) {
    static const char *names[9] = {"bool", "int8", "uint8", "int16", "int32", "int64",
                                   "float16", "float32", "float64"};
    static const size_t sizes[9] = {1, 1, 1, 2, 4, 8, 2, 4, 8};
    for (int d = 0; d < 9; d++) {
        CHECK(strcmp(ch_dtype_name((ch_dtype)d), names[d]) == 0);
        CHECK_EQ_I(ch_dtype_from_name(names[d]), d);
        CHECK_EQ_I(ch_dtype_size((ch_dtype)d), sizes[d]);
        CHECK_EQ_I(ch_dtype_is_float((ch_dtype)d) != 0, d >= F16);
    }
    CHECK_EQ_I(ch_dtype_from_name("complex64"), -1);
    CHECK(ch_dtype_is_signed(CH_INT8) && !ch_dtype_is_signed(CH_UINT8) && ch_dtype_is_signed(CH_FLOAT32));

    for (int a = 0; a < 9; a++)
        for (int b = 0; b < 9; b++) {
            int got = ch_promote((ch_dtype)a, (ch_dtype)b);
            if (got != promote_table[a][b]) {
                fprintf(stderr, "promote(%s, %s) = %s, expected %s\n", names[a], names[b], names[got],
                        names[promote_table[a][b]]);
                check_failures++;
            }
        }

    /* weak scalars: (int scalar, float scalar, bool scalar) */
    static const int scalar_table[9][3] = {
        {I64, F64, B}, {I8, F64, I8}, {U8, F64, U8}, {I16, F64, I16}, {I32, F64, I32},
        {I64, F64, I64}, {F16, F16, F16}, {F32, F32, F32}, {F64, F64, F64},
    };
    for (int a = 0; a < 9; a++) {
        CHECK_EQ_I(ch_promote_scalar((ch_dtype)a, 0, 0), scalar_table[a][0]);
        CHECK_EQ_I(ch_promote_scalar((ch_dtype)a, 1, 0), scalar_table[a][1]);
        CHECK_EQ_I(ch_promote_scalar((ch_dtype)a, 0, 1), scalar_table[a][2]);
    }

    /* every half: exact value, and float -> half gives the same bits back */
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = ch_half_to_float((uint16_t)h);
        double want = half_reference((uint16_t)h);
        uint16_t back = ch_float_to_half(f);
        if (isnan(want)) {
            if (!isnan(f) || ((back >> 10) & 0x1f) != 31 || (back & 0x3ff) == 0 || (back >> 15) != (h >> 15))
                bad++;
        } else if ((double)f != want || back != h) {
            if (bad < 5)
                fprintf(stderr, "half 0x%04x: got %.9g (want %.9g), back 0x%04x\n", h, f, want, back);
            bad++;
        }
    }
    CHECK_EQ_I(bad, 0);

    /* rounding of float -> half: to nearest, ties to even */
    CHECK_EQ_I(ch_float_to_half(1.0f + ldexpf(1, -11)), 0x3c00);       /* tie -> even (1.0) */
    CHECK_EQ_I(ch_float_to_half(1.0f + 3 * ldexpf(1, -11)), 0x3c02);   /* tie -> even (up) */
    CHECK_EQ_I(ch_float_to_half(1.0f + ldexpf(1, -11) + ldexpf(1, -20)), 0x3c01);
    CHECK_EQ_I(ch_float_to_half(65504.0f), 0x7bff);                     /* largest half */
    CHECK_EQ_I(ch_float_to_half(65519.0f), 0x7bff);                     /* rounds down */
    CHECK_EQ_I(ch_float_to_half(65520.0f), 0x7c00);                     /* rounds to inf */
    CHECK_EQ_I(ch_float_to_half(1e10f), 0x7c00);
    CHECK_EQ_I(ch_float_to_half(-1e10f), 0xfc00);
    CHECK_EQ_I(ch_float_to_half(ldexpf(1, -24)), 0x0001);               /* smallest subnormal */
    CHECK_EQ_I(ch_float_to_half(ldexpf(1, -25)), 0x0000);               /* tie -> even (0) */
    CHECK_EQ_I(ch_float_to_half(3 * ldexpf(1, -26)), 0x0001);
    CHECK_EQ_I(ch_float_to_half(ldexpf(1, -30)), 0x0000);
    CHECK_EQ_I(ch_float_to_half(-0.0f), 0x8000);
    CHECK_EQ_I(ch_float_to_half(ldexpf(1023, -24) + ldexpf(1, -25)), 0x0400); /* subnormal rounds up to normal */
    uint16_t nan_h = ch_float_to_half(NAN);
    CHECK(((nan_h >> 10) & 0x1f) == 31 && (nan_h & 0x3ff) != 0);

    /* casting tensors through float16 */
    int64_t n[1] = {4};
    float src[4] = {0.1f, -2.5f, 70000.0f, 1e-8f};
    ch_tensor *f32 = NULL, *f16 = NULL, *back = NULL;
    CHECK_OK(ch_from_buffer(CH_FLOAT32, 1, n, src, &f32));
    CHECK_OK(ch_astype(f32, CH_FLOAT16, &f16));
    CHECK_OK(ch_astype(f16, CH_FLOAT32, &back));
    CHECK(at(back, 0) == (double)ch_half_to_float(ch_float_to_half(0.1f)));
    CHECK(at(back, 1) == -2.5);
    CHECK(isinf(at(back, 2)));
    CHECK(at(back, 3) == 0);
    ch_tensor_release(f32);
    ch_tensor_release(f16);
    ch_tensor_release(back);

    /* integer casts truncate toward zero like NumPy's astype */
    float vals[3] = {2.7f, -2.7f, 255.0f};
    ch_tensor *fv = NULL, *iv = NULL;
    int64_t n3[1] = {3};
    CHECK_OK(ch_from_buffer(CH_FLOAT32, 1, n3, vals, &fv));
    CHECK_OK(ch_astype(fv, CH_INT32, &iv));
    CHECK(at(iv, 0) == 2 && at(iv, 1) == -2 && at(iv, 2) == 255);
    ch_tensor_release(iv);
    CHECK_OK(ch_astype(fv, CH_BOOL, &iv));
    CHECK(at(iv, 0) == 1 && at(iv, 1) == 1);
    ch_tensor_release(iv);
    ch_tensor_release(fv);
    CHECK_ERR(ch_astype(NULL, CH_INT32, &iv), CH_ERR_ARG, "astype", "NULL");
    /* float -> int64: truncation, saturation, NaN -> 0 */
    CHECK(ch_sat_i64(1e300) == INT64_MAX && ch_sat_i64(-1e300) == INT64_MIN);
    CHECK(ch_sat_i64(0.0 / 0.0) == 0 && ch_sat_i64(-2.9) == -2);
    return check_done("test_dtype");
}

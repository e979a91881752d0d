/*
 * elementwise.c -- unary and binary ops, weak-scalar ops, clip, where, axpby.
 *
 * Every op computes in one of three types: float (for float16 and float32),
 * double, or int64 (for every integer and bool dtype).  Operands already in
 * the compute type are read in place; the others are converted chunk by
 * chunk into a small stack buffer (NumPy's buffered iteration), so there is
 * one kernel per compute type instead of one per dtype combination, and
 * float16 is computed in float32 and rounded once on the store.
 *
 * Work is split into tasks over (outer position, piece of the inner run)
 * so that both "many short rows" and "one long run" use every thread.
 *
 * Unary ops, clip and the binary ops on CUDA tensors take the same dtype,
 * shape and aliasing decisions here and hand the work to the backend
 * (ew_device); so do where (where_device) and axpby (axpby_device).
 */
#include "../core/internal.h"
#include "../core/device_ops.h"

#include <stdlib.h>
#include <tgmath.h>

#define EW_CLIP CH_NUNARY /* private unary op code: clip(lo, hi) */
#define CHUNK 512         /* elements per conversion buffer */
#define PIECE 32768       /* inner-run elements per parallel task */

/* ---- special functions (double) ---------------------------------------- */
/* lgamma_r: plain lgamma writes the global signgam, a race under OpenMP. */
static double ew_lgamma(double x) {
    int sign;
    return lgamma_r(x, &sign);
}

/* Digamma: reflection for x < 0, recurrence up to x >= 6, then the
 * asymptotic series in 1/x^2. */
static double ew_digamma(double x) {
    if (x != x || x == INFINITY)
        return x;
    if (x == -INFINITY)
        return NAN;
    if (x <= 0 && x == floor(x))
        return x == 0 ? copysign(INFINITY, -x) : NAN; /* poles */
    double r = 0;
    if (x < 0) {
        /* psi(x) = psi(1 - x) - pi / tan(pi x) */
        r = -M_PI / tan(M_PI * x);
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

/* Inverse error function: a rational first guess refined by Newton steps
 * on erf, which converge to full double precision in two or three steps. */
static double ew_erfinv(double y) {
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

/* ---- float kernels (float and double instances) -------------------------- */
#define EW_T float
#define EW_NAME(x) x##_f32
#include "elementwise_kernels.h"
#define EW_T double
#define EW_NAME(x) x##_f64
#include "elementwise_kernels.h"

/* ---- int64 kernels ------------------------------------------------------ */
/* Signed overflow is undefined in C, so +,-,* wrap through uint64_t (which is
 * what NumPy's fixed-width integers do); storing to a narrower dtype then
 * wraps again, the same as computing in that dtype. */
static inline int64_t wrap_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
static inline int64_t wrap_sub(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
static inline int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

/* Division by zero gives 0 (NumPy, with a warning there); INT64_MIN / -1
 * would trap in hardware, so -1 is handled as a negation. */
static inline int64_t i_floordiv(int64_t a, int64_t b) {
    if (b == 0)
        return 0;
    if (b == -1)
        return wrap_sub(0, a);
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}
static inline int64_t i_mod(int64_t a, int64_t b) {
    if (b == 0 || b == -1)
        return 0;
    int64_t r = a % b;
    if (r != 0 && ((r < 0) != (b < 0)))
        r += b;
    return r;
}
static inline int64_t i_fmod(int64_t a, int64_t b) { return (b == 0 || b == -1) ? 0 : a % b; }
/* Exponents are checked to be >= 0 before the kernel runs. */
static inline int64_t i_pow(int64_t a, int64_t b) {
    uint64_t r = 1, base = (uint64_t)a;
    while (b > 0) {
        if (b & 1)
            r *= base;
        base *= base;
        b >>= 1;
    }
    return (int64_t)r;
}

#define EW_T int64_t
#define I_BIN_LOOP(OT, EXPR)                                                    \
    do {                                                                        \
        OT *o_ = (OT *)o;                                                       \
        if (so == 1 && sa == 1 && sb == 1) {                                    \
            for (int64_t i = 0; i < n; i++) {                                   \
                EW_T x = a[i], y = b[i];                                        \
                o_[i] = (OT)(EXPR);                                             \
            }                                                                   \
        } else if (so == 1 && sa == 1 && sb == 0) {                             \
            const EW_T y = b[0];                                                \
            for (int64_t i = 0; i < n; i++) {                                   \
                EW_T x = a[i];                                                  \
                o_[i] = (OT)(EXPR);                                             \
            }                                                                   \
        } else {                                                                \
            for (int64_t i = 0; i < n; i++) {                                   \
                EW_T x = a[i * sa], y = b[i * sb];                              \
                o_[i * so] = (OT)(EXPR);                                        \
            }                                                                   \
        }                                                                       \
    } while (0)

static void binary_i64(int op, void *o, int64_t so, const int64_t *a, int64_t sa, const int64_t *b, int64_t sb,
                       int64_t n) {
    switch (op) {
    case CH_ADD: I_BIN_LOOP(int64_t, wrap_add(x, y)); break;
    case CH_SUB: I_BIN_LOOP(int64_t, wrap_sub(x, y)); break;
    case CH_MUL: I_BIN_LOOP(int64_t, wrap_mul(x, y)); break;
    case CH_FLOOR_DIVIDE: I_BIN_LOOP(int64_t, i_floordiv(x, y)); break;
    case CH_MOD: I_BIN_LOOP(int64_t, i_mod(x, y)); break;
    case CH_FMOD: I_BIN_LOOP(int64_t, i_fmod(x, y)); break;
    case CH_POW: I_BIN_LOOP(int64_t, i_pow(x, y)); break;
    case CH_MAXIMUM: I_BIN_LOOP(int64_t, x > y ? x : y); break;
    case CH_MINIMUM: I_BIN_LOOP(int64_t, x < y ? x : y); break;
    case CH_EQ: I_BIN_LOOP(uint8_t, x == y); break;
    case CH_NE: I_BIN_LOOP(uint8_t, x != y); break;
    case CH_LT: I_BIN_LOOP(uint8_t, x < y); break;
    case CH_LE: I_BIN_LOOP(uint8_t, x <= y); break;
    case CH_GT: I_BIN_LOOP(uint8_t, x > y); break;
    case CH_GE: I_BIN_LOOP(uint8_t, x >= y); break;
    case CH_LOGICAL_AND: I_BIN_LOOP(uint8_t, (x != 0) & (y != 0)); break;
    case CH_LOGICAL_OR: I_BIN_LOOP(uint8_t, (x != 0) | (y != 0)); break;
    case CH_LOGICAL_XOR: I_BIN_LOOP(uint8_t, (x != 0) ^ (y != 0)); break;
    default: break; /* DIV, ARCTAN2, HYPOT never compute in int64 */
    }
}

#define I_UN_LOOP(OT, EXPR)                                                     \
    do {                                                                        \
        OT *o_ = (OT *)o;                                                       \
        for (int64_t i = 0; i < n; i++) {                                       \
            EW_T x = a[i * sa];                                                 \
            o_[i * so] = (OT)(EXPR);                                            \
        }                                                                       \
    } while (0)

static void unary_i64(int op, void *o, int64_t so, const int64_t *a, int64_t sa, int64_t n, int64_t lo,
                      int64_t hi) {
    switch (op) {
    case CH_NEG: I_UN_LOOP(int64_t, wrap_sub(0, x)); break;
    case CH_ABS: I_UN_LOOP(int64_t, x < 0 ? wrap_sub(0, x) : x); break;
    case CH_SIGN: I_UN_LOOP(int64_t, (x > 0) - (x < 0)); break;
    case CH_SQUARE: I_UN_LOOP(int64_t, wrap_mul(x, x)); break;
    case CH_LOGICAL_NOT: I_UN_LOOP(uint8_t, x == 0); break;
    case CH_ISNAN: I_UN_LOOP(uint8_t, 0 * x); break;
    case CH_ISINF: I_UN_LOOP(uint8_t, 0 * x); break;
    case CH_ISFINITE: I_UN_LOOP(uint8_t, 1 + 0 * x); break;
    case EW_CLIP: {
        I_UN_LOOP(int64_t, (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x));
        break;
    }
    default: break;
    }
}
#undef EW_T

/* ---- compute types and chunk conversion ---------------------------------- */
/* Kernel value types: the three compute types plus bool outputs. */
enum { KT_F32 = 0, KT_F64, KT_I64, KT_BOOL };

static int kt_of(ch_dtype dt) {
    if (dt == CH_FLOAT64) return KT_F64;
    if (dt == CH_FLOAT32 || dt == CH_FLOAT16) return KT_F32;
    return KT_I64;
}
static ch_dtype kt_dtype(int kt) {
    static const ch_dtype d[4] = {CH_FLOAT32, CH_FLOAT64, CH_INT64, CH_BOOL};
    return d[kt];
}

/* Float to integer without C's undefined behaviour: NaN -> 0, saturating. */
static inline int64_t f2i(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

/* Converts n elements (dtype dt, stride s) into dst of kernel type kt. */
static void load_chunk(ch_dtype dt, const char *p, int64_t s, int64_t n, int kt, void *dst) {
#define LOAD_AS(DT, EXPR)                                                       \
    for (int64_t i = 0; i < n; i++) {                                           \
        DT *d_ = (DT *)dst;                                                     \
        d_[i] = (EXPR);                                                         \
    }
#define LOAD_FROM(DT, CONV_FLOAT)                                               \
    switch (dt) {                                                               \
    case CH_BOOL: LOAD_AS(DT, (DT)(((const uint8_t *)p)[i * s] != 0)) break;   \
    case CH_INT8: LOAD_AS(DT, (DT)((const int8_t *)p)[i * s]) break;           \
    case CH_UINT8: LOAD_AS(DT, (DT)((const uint8_t *)p)[i * s]) break;         \
    case CH_INT16: LOAD_AS(DT, (DT)((const int16_t *)p)[i * s]) break;         \
    case CH_INT32: LOAD_AS(DT, (DT)((const int32_t *)p)[i * s]) break;         \
    case CH_INT64: LOAD_AS(DT, (DT)((const int64_t *)p)[i * s]) break;         \
    case CH_FLOAT16: LOAD_AS(DT, CONV_FLOAT(ch_half_to_float(((const uint16_t *)p)[i * s]))) break; \
    case CH_FLOAT32: LOAD_AS(DT, CONV_FLOAT(((const float *)p)[i * s])) break; \
    case CH_FLOAT64: LOAD_AS(DT, CONV_FLOAT(((const double *)p)[i * s])) break; \
    default: break;                                                             \
    }
#define AS_F32(v) ((float)(v))
#define AS_F64(v) ((double)(v))
#define AS_I64(v) f2i((double)(v))
    switch (kt) {
    case KT_F32: LOAD_FROM(float, AS_F32) break;
    case KT_F64: LOAD_FROM(double, AS_F64) break;
    case KT_I64: LOAD_FROM(int64_t, AS_I64) break;
    default: break;
    }
#undef LOAD_AS
#undef LOAD_FROM
#undef AS_F32
#undef AS_F64
#undef AS_I64
}

/* Stores n kernel values (type kt, packed) to dtype dt with stride s. */
static void store_chunk(ch_dtype dt, char *p, int64_t s, int64_t n, int kt, const void *src) {
#define STORE_AS(DT, ST, EXPR)                                                  \
    for (int64_t i = 0; i < n; i++) {                                           \
        ST v = ((const ST *)src)[i];                                            \
        ((DT *)p)[i * s] = (EXPR);                                              \
    }
#define STORE_FROM(ST, TOINT)                                                   \
    switch (dt) {                                                               \
    case CH_BOOL: STORE_AS(uint8_t, ST, v != 0) break;                         \
    case CH_INT8: STORE_AS(int8_t, ST, (int8_t)TOINT(v)) break;                \
    case CH_UINT8: STORE_AS(uint8_t, ST, (uint8_t)TOINT(v)) break;             \
    case CH_INT16: STORE_AS(int16_t, ST, (int16_t)TOINT(v)) break;             \
    case CH_INT32: STORE_AS(int32_t, ST, (int32_t)TOINT(v)) break;             \
    case CH_INT64: STORE_AS(int64_t, ST, (int64_t)TOINT(v)) break;             \
    case CH_FLOAT16: STORE_AS(uint16_t, ST, ch_float_to_half((float)v)) break; \
    case CH_FLOAT32: STORE_AS(float, ST, (float)v) break;                      \
    case CH_FLOAT64: STORE_AS(double, ST, (double)v) break;                    \
    default: break;                                                             \
    }
#define FLOAT_TO_INT(v) f2i((double)(v))
#define INT_TO_INT(v) (v)
    switch (kt) {
    case KT_F32: STORE_FROM(float, FLOAT_TO_INT) break;
    case KT_F64: STORE_FROM(double, FLOAT_TO_INT) break;
    case KT_I64: STORE_FROM(int64_t, INT_TO_INT) break;
    case KT_BOOL: STORE_FROM(uint8_t, INT_TO_INT) break;
    default: break;
    }
#undef STORE_AS
#undef STORE_FROM
#undef FLOAT_TO_INT
#undef INT_TO_INT
}

/* ---- the engine ---------------------------------------------------------- */
typedef struct ew_operand {
    ch_dtype dt;
    const char *base;          /* first element */
    const int64_t *stride;     /* in the output's shape (0 on broadcast axes) */
} ew_operand;

typedef struct ew_plan {
    int op;
    int ct;                    /* compute type (KT_F32/F64/I64) */
    int kt_out;                /* kernel output type (ct, or KT_BOOL) */
    int nin;                   /* 1 or 2 inputs */
    double lo, hi;             /* clip bounds */
} ew_plan;

static void run_kernel(const ew_plan *pl, void *o, int64_t so, const void *a, int64_t sa, const void *b,
                       int64_t sb, int64_t n) {
    if (pl->nin == 2) {
        switch (pl->ct) {
        case KT_F32: binary_f32(pl->op, o, so, a, sa, b, sb, n); break;
        case KT_F64: binary_f64(pl->op, o, so, a, sa, b, sb, n); break;
        default: binary_i64(pl->op, o, so, a, sa, b, sb, n); break;
        }
    } else {
        switch (pl->ct) {
        case KT_F32: unary_f32(pl->op, o, so, a, sa, n, pl->lo, pl->hi); break;
        case KT_F64: unary_f64(pl->op, o, so, a, sa, n, pl->lo, pl->hi); break;
        default: unary_i64(pl->op, o, so, a, sa, n, f2i(pl->lo), f2i(pl->hi)); break;
        }
    }
}

/* Loads `n` elements of an operand for the kernel: in place when it is
 * already of the compute type, else converted into buf (one element when
 * the operand is broadcast along the run). */
static const void *operand_run(const ew_operand *x, int ct, const char *p, int64_t s, int64_t n, void *buf,
                               int64_t *stride_out) {
    if (x->dt == kt_dtype(ct)) {
        *stride_out = s;
        return p;
    }
    if (s == 0) {
        load_chunk(x->dt, p, 0, 1, ct, buf);
        *stride_out = 0;
    } else {
        load_chunk(x->dt, p, s, n, ct, buf);
        *stride_out = 1;
    }
    return buf;
}

/* Everything one task of ew_execute needs (a task is one run, or one piece
 * of a long run). */
typedef struct ew_ctx {
    const ew_plan *pl;
    const ew_operand *a, *b;
    ch_iter it;
    int64_t pieces, piece_len, zo, za, zb;
    char *obase;
    ch_dtype odt;
    bool direct_out, direct;
} ew_ctx;

static inline void ew_task(const ew_ctx *c, int64_t task) {
    const ew_plan *pl = c->pl;
    const ew_operand *a = c->a, *b = c->b;
    int64_t pos = task / c->pieces, piece = task % c->pieces;
    int64_t offs[3];
    ch_iter_offsets(&c->it, pos, offs);
    int64_t j0 = piece * c->piece_len, j1 = j0 + c->piece_len;
    if (j1 > c->it.inner)
        j1 = c->it.inner;
    double abuf[CHUNK], bbuf[CHUNK], obuf[CHUNK];
    int64_t so = c->it.inner_stride[0], sa_ = c->it.inner_stride[1], sb_ = c->it.inner_stride[2];
    for (int64_t j = j0; j < j1;) {
        int64_t m = c->direct ? j1 - j : (j1 - j < CHUNK ? j1 - j : CHUNK);
        int64_t sa, sb = 0;
        const void *pa = operand_run(a, pl->ct, a->base + (offs[1] + j * sa_) * c->za, sa_, m, abuf, &sa);
        const void *pb = NULL;
        if (b)
            pb = operand_run(b, pl->ct, b->base + (offs[2] + j * sb_) * c->zb, sb_, m, bbuf, &sb);
        char *po = c->obase + (offs[0] + j * so) * c->zo;
        if (c->direct_out) {
            run_kernel(pl, po, so, pa, sa, pb, sb, m);
        } else {
            run_kernel(pl, obuf, 1, pa, sa, pb, sb, m);
            store_chunk(c->odt, po, so, m, pl->kt_out, obuf);
        }
        j += m;
    }
}

static void ew_execute(const ew_plan *pl, ch_tensor *out, const ew_operand *a, const ew_operand *b) {
    const int64_t *strides[3] = {out->stride, a->stride, b ? b->stride : a->stride};
    ew_ctx c;
    ch_iter_init(&c.it, out->nd, out->dim, 3, strides);
    if (c.it.outer_count == 0 || c.it.inner == 0)
        return;
    c.pl = pl, c.a = a, c.b = b;
    c.pieces = c.it.inner > PIECE ? (c.it.inner + PIECE - 1) / PIECE : 1;
    c.piece_len = (c.it.inner + c.pieces - 1) / c.pieces;
    int64_t ntasks = c.it.outer_count * c.pieces;
    int64_t total = c.it.outer_count * c.it.inner;
    c.odt = (ch_dtype)out->dt;
    c.zo = (int64_t)ch_dtype_size(c.odt);
    c.za = (int64_t)ch_dtype_size(a->dt), c.zb = b ? (int64_t)ch_dtype_size(b->dt) : 0;
    c.obase = ch_base(out);
    c.direct_out = c.odt == kt_dtype(pl->kt_out);
    c.direct = c.direct_out && a->dt == kt_dtype(pl->ct) && (!b || b->dt == kt_dtype(pl->ct));

    /* Small work never enters an OpenMP region: even a region whose `if`
     * clause is false costs a team set-up (~1,500 instructions), more than
     * the arithmetic of a small tensor. */
    if (total >= CH_PARALLEL_GRAIN && ntasks > 1) {
#pragma omp parallel for schedule(static)
        for (int64_t task = 0; task < ntasks; task++)
            ew_task(&c, task);
    } else {
        for (int64_t task = 0; task < ntasks; task++)
            ew_task(&c, task);
    }
}

/* ---- op tables and dtype rules ------------------------------------------- */
/* the op list's names, and clip (EW_CLIP) after the unary ops */
static const char *const unary_names[] = {CH_UNARY_OP_LIST(CH_OP_NAME) "clip"};
static const char *const binary_names[] = {CH_BINARY_OP_LIST(CH_OP_NAME)};
_Static_assert(sizeof unary_names / sizeof *unary_names == CH_NUNARY + 1, "unary names: the list and clip");
_Static_assert(sizeof binary_names / sizeof *binary_names == CH_NBINARY, "binary names: one per list entry");

static bool bool_result_binary(int op) { return op >= CH_EQ; }
static bool bool_result_unary(int op) { return op >= CH_LOGICAL_NOT && op <= CH_ISFINITE; }
static bool keeps_dtype_unary(int op) {
    return op == CH_NEG || op == CH_ABS || op == CH_SIGN || op == CH_SQUARE || op == EW_CLIP;
}

/* Result dtype and compute type of a binary op on operand type p (the
 * promoted type of the inputs). */
static ch_status binary_types(int op, ch_dtype p, ch_dtype *res, int *ct) {
    const char *fn = binary_names[op];
    if (bool_result_binary(op)) {
        *res = CH_BOOL;
        *ct = kt_of(p);
        return CH_OK;
    }
    if (op == CH_DIV || op == CH_ARCTAN2 || op == CH_HYPOT) {
        *res = ch_dtype_is_float(p) ? p : CH_FLOAT64; /* integer true division gives float64 */
        *ct = kt_of(*res);
        return CH_OK;
    }
    if (p == CH_BOOL) {
        if (op == CH_SUB)
            return ch_fail(CH_ERR_DTYPE, "sub: subtracting bool tensors is not supported (NumPy neither); "
                                         "use logical_xor, or convert with astype first");
        /* NumPy has no bool loops for these; the smallest integer type runs them */
        *res = (op == CH_FLOOR_DIVIDE || op == CH_MOD || op == CH_FMOD || op == CH_POW) ? CH_INT8 : CH_BOOL;
        *ct = KT_I64;
        return CH_OK;
    }
    (void)fn;
    *res = p;
    *ct = kt_of(p);
    return CH_OK;
}

static ch_status unary_types(int op, ch_dtype dt, ch_dtype *res, int *ct) {
    if (bool_result_unary(op)) {
        *res = CH_BOOL;
        *ct = kt_of(dt);
        return CH_OK;
    }
    if (keeps_dtype_unary(op)) {
        if (dt == CH_BOOL) {
            if (op == CH_NEG || op == CH_SIGN)
                return ch_fail(CH_ERR_DTYPE, "%s: not supported for bool tensors (NumPy neither); use logical_not, "
                               "or convert with astype first", unary_names[op]);
            *res = op == CH_SQUARE ? CH_INT8 : CH_BOOL;
        } else {
            *res = dt;
        }
        *ct = kt_of(*res);
        return CH_OK;
    }
    /* math functions: integers and bools compute (and give) float64 */
    *res = ch_dtype_is_float(dt) ? dt : CH_FLOAT64;
    *ct = kt_of(*res);
    return CH_OK;
}

/* Validates a caller-given output (shape, device: that of the input `ref`)
 * or allocates one on ref's device. */
static ch_status prepare_out(const char *fn, ch_tensor *out, ch_dtype res, int nd, const int64_t *dim,
                             const ch_tensor *ref, const char *ref_name, ch_tensor **target) {
    if (out) {
        CH_CHECK_ARG(out, fn, "out");
        if (out->dev != ref->dev)
            return ch_same_device(fn, ref_name, ref, "out", out);
        bool same = out->nd == nd;
        for (int i = 0; same && i < nd; i++)
            same = out->dim[i] == dim[i];
        if (!same) {
            char so[CH_SHAPE_BUF], sr[CH_SHAPE_BUF];
            return ch_fail(CH_ERR_SHAPE, "%s: the output has shape %s, but the result has shape %s "
                           "(in-place ops cannot broadcast the tensor they write to)", fn,
                           ch_shape_str(so, sizeof so, out->nd, out->dim), ch_shape_str(sr, sizeof sr, nd, dim));
        }
        ch_tensor_retain(out);
        *target = out;
        return CH_OK;
    }
    return ch_tensor_new(res, nd, dim, ref->dev, target);
}

/* An input that shares memory with the output but is laid out differently
 * (a shifted or transposed view of it) would be overwritten while still
 * being read: such inputs are copied first.  Exact aliasing (x += y) is
 * safe because every output element depends only on the inputs at the same
 * position, which each chunk reads before it writes. */
static ch_status unalias(const ch_tensor *out, const ch_tensor *x, const int64_t *bstride, ch_tensor **copy) {
    *copy = NULL;
    if (!out->storage || out->storage != x->storage || out->numel == 0)
        return CH_OK;
    bool same = ch_base(out) == ch_base(x);
    for (int i = 0; same && i < out->nd; i++)
        same = out->dim[i] == 1 || bstride[i] == out->stride[i];
    if (same)
        return CH_OK;
    return ch_copy(x, copy);
}

static void finish(ch_tensor *target, ch_tensor *out, ch_tensor **result) {
    if (out) {
        if (result)
            *result = target;       /* a new reference to out */
        else
            ch_tensor_release(target);
    } else {
        *result = target;
    }
}

/* Runs the op of plan pl on the GPU of `out` (every operand is there):
 * b NULL for unary ops; scalar_pos >= 0 when that input is the scalar sv
 * (already in the compute type) instead of a tensor. */
typedef union ew_scalar { float f; double d; int64_t i; } ew_scalar;

static ch_status ew_device(const char *fn, const ew_plan *pl, ch_tensor *out, const ch_tensor *a,
                           const ch_tensor *b, int scalar_pos, ew_scalar sv) {
    ch_cuda_ew w;
    memset(&w, 0, sizeof w);
    w.name = fn;
    w.op = pl->op;
    w.nin = pl->nin;
    w.ct = kt_dtype(pl->ct);
    w.scalar_pos = scalar_pos;
    if (scalar_pos >= 0) {
        if (pl->ct == KT_F32)
            w.scalar_f = sv.f;
        else if (pl->ct == KT_F64)
            w.scalar_f = sv.d;
        else
            w.scalar_i = sv.i;
    }
    w.lo = pl->lo;
    w.hi = pl->hi;
    w.out = out;
    w.in[0] = a;
    w.in[1] = b;
    return ch_device_elementwise(fn, &w);
}

/* Integer pow refuses negative exponents; a GPU exponent is checked on a
 * host copy (the error must come before any work). */
static ch_status check_int_pow(const ch_tensor *b, const char *fn);
static ch_status check_int_pow_any(const ch_tensor *b, const char *fn) {
    if (b->dev == CH_CPU)
        return check_int_pow(b, fn);
    ch_tensor *h;
    CH_TRY(ch_to_device(b, CH_CPU, &h));
    ch_status st = check_int_pow(h, fn);
    ch_tensor_release(h);
    return st;
}

/* ---- public entry points --------------------------------------------------- */
static ch_status unary_impl(int op, const ch_tensor *x, double lo, double hi, ch_dtype res_override,
                            ch_tensor *out, ch_tensor **result) {
    const char *fn = unary_names[op];
    CH_CHECK_ARG(x, fn, "x");
    if (!out && !result)
        return ch_fail(CH_ERR_ARG, "%s: neither out nor result was given", fn);
    ch_dtype res = CH_FLOAT64;
    int ct = KT_F64;
    CH_TRY(unary_types(op, (ch_dtype)x->dt, &res, &ct));
    if (res_override != CH_NDTYPES) {
        res = res_override;
        ct = kt_of(res);
    }
    ch_tensor *target;
    CH_TRY(prepare_out(fn, out, res, x->nd, x->dim, x, "x", &target));
    ch_tensor *xc = NULL;
    ch_status st = unalias(target, x, x->stride, &xc);
    if (st != CH_OK) {
        ch_tensor_release(target);
        return st;
    }
    const ch_tensor *xs = xc ? xc : x;
    ew_plan pl = {op, ct, bool_result_unary(op) ? KT_BOOL : ct, 1, lo, hi};
    if (xs->dev != CH_CPU) {
        ew_scalar none = {0};
        st = ew_device(fn, &pl, target, xs, NULL, -1, none);
    } else {
        ew_operand a = {(ch_dtype)xs->dt, ch_base(xs), xs->stride};
        ew_execute(&pl, target, &a, NULL);
    }
    ch_tensor_release(xc);
    if (st != CH_OK) {
        ch_tensor_release(target);
        return st;
    }
    finish(target, out, result);
    return CH_OK;
}

ch_status ch_unary(ch_unary_op op, const ch_tensor *x, ch_tensor *out, ch_tensor **result) {
    if ((unsigned)op >= CH_NUNARY)
        return ch_fail(CH_ERR_ARG, "unary: invalid op code %d", (int)op);
    return unary_impl(op, x, 0, 0, CH_NDTYPES, out, result);
}

ch_status ch_clip(const ch_tensor *x, double lo, double hi, ch_tensor *out, ch_tensor **result) {
    CH_CHECK_ARG(x, "clip", "x");
    /* bounds are weak scalars: a fractional bound lifts integers to float64 */
    ch_dtype dt = (ch_dtype)x->dt;
    int frac = (lo == lo && lo != floor(lo)) || (hi == hi && hi != floor(hi)) || isinf(lo) || isinf(hi);
    ch_dtype res = ch_promote_scalar(dt, frac, 0);
    if (lo != lo)
        lo = -INFINITY;
    if (hi != hi)
        hi = INFINITY;
    return unary_impl(EW_CLIP, x, lo, hi, res, out, result);
}

static ch_status check_int_pow(const ch_tensor *b, const char *fn) {
    /* NumPy refuses negative integer exponents rather than returning 0 */
    ch_iter it;
    const int64_t *strides[1] = {b->stride};
    ch_iter_init(&it, b->nd, b->dim, 1, strides);
    ch_dtype dt = (ch_dtype)b->dt;
    if (!ch_dtype_is_signed(dt))
        return CH_OK;
    int64_t z = (int64_t)ch_dtype_size(dt);
    const char *base = ch_base(b);
    for (int64_t pos = 0; pos < it.outer_count; pos++) {
        int64_t off;
        ch_iter_offsets(&it, pos, &off);
        for (int64_t i = 0; i < it.inner; i++)
            if (ch_load_i64(dt, base + (off + i * it.inner_stride[0]) * z) < 0)
                return ch_fail(CH_ERR_ARG, "%s: integers to negative integer powers are not allowed "
                               "(convert the base to float first)", fn);
    }
    return CH_OK;
}

/* Same-shape, C-contiguous float32/float64 operands of + - * / below the
 * parallel grain: the autograd's per-node ops on small tensors and the
 * in-place accumulation of gradients.  For them the broadcast planning,
 * alias analysis and strided iteration of the general path cost several
 * times the arithmetic.  The same kernels run (binary_f32/binary_f64 with
 * unit strides), so results are identical.  Returns false, having done
 * nothing, when the operands do not qualify; an `out` must then be exactly
 * the same memory as an operand or not share its storage at all. */
static bool same_shape_contiguous(const ch_tensor *x, const ch_tensor *ref) {
    return x->dt == ref->dt && ch_same_shape(x, ref) && ch_is_contiguous(x);
}

static bool binary_fast(int op, const ch_tensor *a, const ch_tensor *b, ch_tensor *out, ch_tensor **result,
                        ch_status *st) {
    ch_dtype dt = (ch_dtype)a->dt;
    if (op > CH_DIV || (dt != CH_FLOAT32 && dt != CH_FLOAT64) || a->numel >= CH_PARALLEL_GRAIN ||
        !same_shape_contiguous(a, a) || !same_shape_contiguous(b, a))
        return false;
    if (out) {
        if (out->dev != CH_CPU || !out->data || !same_shape_contiguous(out, a))
            return false;
        if ((out->storage == a->storage && ch_base(out) != ch_base(a)) ||
            (out->storage == b->storage && ch_base(out) != ch_base(b)))
            return false;
    }
    ch_tensor *target = out;
    if (out) {
        ch_tensor_retain(out);
    } else if ((*st = ch_tensor_new(dt, a->nd, a->dim, CH_CPU, &target)) != CH_OK) {
        return true;
    }
    if (dt == CH_FLOAT32)
        binary_f32(op, ch_base(target), 1, (const float *)ch_base(a), 1, (const float *)ch_base(b), 1, a->numel);
    else
        binary_f64(op, ch_base(target), 1, (const double *)ch_base(a), 1, (const double *)ch_base(b), 1, a->numel);
    finish(target, out, result);
    *st = CH_OK;
    return true;
}

ch_status ch_binary(ch_binary_op op, const ch_tensor *a, const ch_tensor *b, ch_tensor *out, ch_tensor **result) {
    if ((unsigned)op >= CH_NBINARY)
        return ch_fail(CH_ERR_ARG, "binary: invalid op code %d", (int)op);
    const char *fn = binary_names[op];
    CH_CHECK_ARG(a, fn, "a");
    CH_CHECK_ARG(b, fn, "b");
    if (!out && !result)
        return ch_fail(CH_ERR_ARG, "%s: neither out nor result was given", fn);
    bool gpu = a->dev != CH_CPU || b->dev != CH_CPU;
    if (gpu) {
        CH_TRY(ch_same_device(fn, "a", a, "b", b));
    } else {
        ch_status fast_st;
        if (binary_fast(op, a, b, out, result, &fast_st))
            return fast_st;
    }
    ch_dtype p = ch_promote((ch_dtype)a->dt, (ch_dtype)b->dt), res;
    int ct;
    CH_TRY(binary_types(op, p, &res, &ct));
    int nd;
    int64_t dim[CH_MAX_DIMS];
    CH_TRY(ch_broadcast_shape(a->nd, a->dim, b->nd, b->dim, &nd, dim, fn));
    if (op == CH_POW && ct == KT_I64)
        CH_TRY(check_int_pow_any(b, fn));
    ch_tensor *target;
    CH_TRY(prepare_out(fn, out, res, nd, dim, a, "a", &target));
    int64_t sa[CH_MAX_DIMS], sb[CH_MAX_DIMS];
    ch_broadcast_strides(a, nd, dim, sa);
    ch_broadcast_strides(b, nd, dim, sb);
    ch_tensor *ac = NULL, *bc = NULL;
    ch_status st = unalias(target, a, sa, &ac);
    if (st == CH_OK)
        st = unalias(target, b, sb, &bc);
    if (st != CH_OK) {
        ch_tensor_release(ac);
        ch_tensor_release(target);
        return st;
    }
    if (ac)
        ch_broadcast_strides(ac, nd, dim, sa);
    if (bc)
        ch_broadcast_strides(bc, nd, dim, sb);
    const ch_tensor *ax = ac ? ac : a, *bx = bc ? bc : b;
    ew_plan pl = {op, ct, bool_result_binary(op) ? KT_BOOL : ct, 2, 0, 0};
    if (gpu) {
        ew_scalar none = {0};
        st = ew_device(fn, &pl, target, ax, bx, -1, none);
    } else {
        ew_operand oa = {(ch_dtype)ax->dt, ch_base(ax), sa}, ob = {(ch_dtype)bx->dt, ch_base(bx), sb};
        ew_execute(&pl, target, &oa, &ob);
    }
    ch_tensor_release(ac);
    ch_tensor_release(bc);
    if (st != CH_OK) {
        ch_tensor_release(target);
        return st;
    }
    finish(target, out, result);
    return CH_OK;
}

ch_status ch_binary_scalar(ch_binary_op op, const ch_tensor *a, double s, int scalar_is_float, int scalar_first,
                           ch_tensor *out, ch_tensor **result) {
    if ((unsigned)op >= CH_NBINARY)
        return ch_fail(CH_ERR_ARG, "binary: invalid op code %d", (int)op);
    const char *fn = binary_names[op];
    const char *an = scalar_first ? "b" : "a";
    CH_CHECK_ARG(a, fn, an);
    if (!out && !result)
        return ch_fail(CH_ERR_ARG, "%s: neither out nor result was given", fn);
    ch_dtype adt = (ch_dtype)a->dt;
    ch_dtype p = ch_promote_scalar(adt, scalar_is_float, 0), res;
    int ct;
    CH_TRY(binary_types(op, p, &res, &ct));
    if (op == CH_POW && ct == KT_I64 && !scalar_first && s < 0)
        return ch_fail(CH_ERR_ARG, "%s: integers to negative integer powers are not allowed "
                       "(convert the base to float first)", fn);
    ch_tensor *target;
    CH_TRY(prepare_out(fn, out, res, a->nd, a->dim, a, an, &target));
    ch_tensor *ac = NULL;
    ch_status st = unalias(target, a, a->stride, &ac);
    if (st != CH_OK) {
        ch_tensor_release(target);
        return st;
    }
    if (op == CH_POW && ct == KT_I64 && scalar_first) {
        st = check_int_pow_any(a, fn);
        if (st != CH_OK) {
            ch_tensor_release(ac);
            ch_tensor_release(target);
            return st;
        }
    }
    const ch_tensor *ax = ac ? ac : a;
    /* the scalar takes the operand type's precision first (NumPy's weak
     * scalars): float32 x == 0.1 compares with float32(0.1) */
    ew_scalar sv;
    if (p == CH_FLOAT16)
        sv.f = ch_half_to_float(ch_float_to_half((float)s));
    else if (ct == KT_F32)
        sv.f = (float)s;
    else if (ct == KT_F64)
        sv.d = s;
    else
        sv.i = f2i(s);
    static const int64_t zero[CH_MAX_DIMS] = {0};
    ew_plan pl = {op, ct, bool_result_binary(op) ? KT_BOOL : ct, 2, 0, 0};
    if (ax->dev != CH_CPU) {
        st = ew_device(fn, &pl, target, scalar_first ? NULL : ax, scalar_first ? ax : NULL, scalar_first ? 0 : 1, sv);
    } else {
        ew_operand ot = {(ch_dtype)ax->dt, ch_base(ax), ax->stride};
        ew_operand os = {kt_dtype(ct), (const char *)&sv, zero};
        if (scalar_first)
            ew_execute(&pl, target, &os, &ot);
        else
            ew_execute(&pl, target, &ot, &os);
    }
    ch_tensor_release(ac);
    if (st != CH_OK) {
        ch_tensor_release(target);
        return st;
    }
    finish(target, out, result);
    return CH_OK;
}

/* ---- where --------------------------------------------------------------- */
/* where on a GPU: the backend selects elements of one dtype under a bool
 * condition, so operands of other dtypes are converted first, with the same
 * conversions as the CPU loop (ch_astype); the copies (in cp) are released
 * by the caller. */
static ch_status where_device(ch_tensor *target, const ch_tensor *in[3], ch_tensor *cp[3]) {
    for (int k = 0; k < 3; k++) {
        ch_dtype want = k == 0 ? CH_BOOL : (ch_dtype)target->dt;
        if (in[k]->dt == (int32_t)want)
            continue;
        ch_tensor *c;
        CH_TRY(ch_astype(in[k], want, &c));
        ch_tensor_release(cp[k]);
        cp[k] = c;
        in[k] = c;
    }
    return ch_device_where("where", in[0], in[1], in[2], target);
}

ch_status ch_where(const ch_tensor *cond, const ch_tensor *a, const ch_tensor *b, ch_tensor *out,
                   ch_tensor **result) {
    CH_CHECK_ARG(cond, "where", "cond");
    CH_CHECK_ARG(a, "where", "a");
    CH_CHECK_ARG(b, "where", "b");
    if (!out && !result)
        return ch_fail(CH_ERR_ARG, "where: neither out nor result was given");
    if (cond->dev != CH_CPU || a->dev != CH_CPU || b->dev != CH_CPU) {
        CH_TRY(ch_same_device("where", "a", a, "b", b));
        CH_TRY(ch_same_device("where", "cond", cond, "a", a));
    }
    int nd1, nd;
    int64_t d1[CH_MAX_DIMS], dim[CH_MAX_DIMS];
    CH_TRY(ch_broadcast_shape(cond->nd, cond->dim, a->nd, a->dim, &nd1, d1, "where"));
    CH_TRY(ch_broadcast_shape(nd1, d1, b->nd, b->dim, &nd, dim, "where"));
    ch_dtype res = ch_promote((ch_dtype)a->dt, (ch_dtype)b->dt);
    ch_tensor *target;
    CH_TRY(prepare_out("where", out, res, nd, dim, a, "a", &target));
    /* inputs overlapping the output are copied first (see unalias) */
    const ch_tensor *in[3] = {cond, a, b};
    ch_tensor *cp[3] = {NULL, NULL, NULL};
    int64_t s[4][CH_MAX_DIMS];
    for (int k = 0; k < 3; k++) {
        ch_broadcast_strides(in[k], nd, dim, s[k + 1]);
        ch_status st = unalias(target, in[k], s[k + 1], &cp[k]);
        if (st != CH_OK) {
            for (int j = 0; j < k; j++)
                ch_tensor_release(cp[j]);
            ch_tensor_release(target);
            return st;
        }
        if (cp[k]) {
            in[k] = cp[k];
            ch_broadcast_strides(in[k], nd, dim, s[k + 1]);
        }
    }
    if (target->dev != CH_CPU) {
        ch_status st = where_device(target, in, cp);
        for (int k = 0; k < 3; k++)
            ch_tensor_release(cp[k]);
        if (st != CH_OK) {
            ch_tensor_release(target);
            return st;
        }
        finish(target, out, result);
        return CH_OK;
    }
    for (int i = 0; i < nd; i++)
        s[0][i] = target->stride[i];
    const int64_t *strides[4] = {s[0], s[1], s[2], s[3]};
    ch_iter it;
    ch_iter_init(&it, nd, dim, 4, strides);
    ch_dtype od = (ch_dtype)target->dt, cd = (ch_dtype)in[0]->dt, ad = (ch_dtype)in[1]->dt,
             bd = (ch_dtype)in[2]->dt;
    int64_t zo = (int64_t)ch_dtype_size(od), zc = (int64_t)ch_dtype_size(cd), za = (int64_t)ch_dtype_size(ad),
            zb = (int64_t)ch_dtype_size(bd);
    char *ob = ch_base(target);
    const char *cb = ch_base(in[0]), *ab = ch_base(in[1]), *bb = ch_base(in[2]);
    /* same dtype everywhere and a bool condition: a plain byte-size select */
    bool fast = ad == od && bd == od && cd == CH_BOOL;
    bool exact_int = !ch_dtype_is_float(od);
    int64_t total = it.outer_count * it.inner;
    /* one run of the plain select (the loop below is a macro argument, so
     * this is defined outside it) */
#define SELECT(T)                                                                         \
    {                                                                                     \
        T *o = (T *)(ob + off[0] * zo);                                                   \
        const T *x = (const T *)(ab + off[2] * za), *y = (const T *)(bb + off[3] * zb);   \
        for (int64_t i = 0; i < n; i++) o[i * so] = c[i * sc] ? x[i * sa] : y[i * sb];   \
    }                                                                                     \
    break;
    CH_PAR_FOR(total >= CH_PARALLEL_GRAIN && it.outer_count > 1, int64_t pos = 0; pos < it.outer_count; pos++, {
        int64_t off[4];
        ch_iter_offsets(&it, pos, off);
        int64_t n = it.inner, so = it.inner_stride[0], sc = it.inner_stride[1], sa = it.inner_stride[2],
                sb = it.inner_stride[3];
        const uint8_t *c = (const uint8_t *)(cb + off[1] * zc);
        if (fast) {
            switch (zo) {
            case 1: SELECT(uint8_t)
            case 2: SELECT(uint16_t)
            case 4: SELECT(uint32_t)
            case 8: SELECT(uint64_t)
            }
            continue;
        }
        for (int64_t i = 0; i < n; i++) {
            bool t = ch_load(cd, cb + (off[1] + i * sc) * zc) != 0;
            const char *src = t ? ab + (off[2] + i * sa) * za : bb + (off[3] + i * sb) * zb;
            ch_dtype sd = t ? ad : bd;
            char *dst = ob + (off[0] + i * so) * zo;
            if (exact_int)
                ch_store_i64(od, dst, ch_load_i64(sd, src));
            else
                ch_store(od, dst, ch_load(sd, src));
        }
    });
#undef SELECT
    for (int k = 0; k < 3; k++)
        ch_tensor_release(cp[k]);
    finish(target, out, result);
    return CH_OK;
}

/* ---- axpby --------------------------------------------------------------- */
/* axpby on a GPU: the backend takes x in y's dtype (converted first when it
 * differs; the CPU's mixed-dtype loop converts through float64 instead). */
static ch_status axpby_device(double a, const ch_tensor *x, double b, ch_tensor *y) {
    if (y->numel == 0)
        return CH_OK;
    if (x->dt == y->dt)
        return ch_device_axpby("axpby", a, x, b, y);
    ch_tensor *xc;
    CH_TRY(ch_astype(x, (ch_dtype)y->dt, &xc));
    ch_status st = ch_device_axpby("axpby", a, xc, b, y);
    ch_tensor_release(xc);
    return st;
}

ch_status ch_axpby(double a, const ch_tensor *x, double b, ch_tensor *y) {
    CH_CHECK_ARG(x, "axpby", "x");
    CH_CHECK_ARG(y, "axpby", "y");
    if (x->dev != CH_CPU || y->dev != CH_CPU)
        CH_TRY(ch_same_device("axpby", "x", x, "y", y));
    if (!ch_dtype_is_float((ch_dtype)y->dt))
        return ch_fail(CH_ERR_DTYPE, "axpby: y must be a float tensor (got %s)", ch_dtype_name((ch_dtype)y->dt));
    if (!ch_same_shape(x, y)) {
        char sx[CH_SHAPE_BUF], sy[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "axpby: x has shape %s but y has shape %s (expected the same shape)",
                       ch_shape_str(sx, sizeof sx, x->nd, x->dim), ch_shape_str(sy, sizeof sy, y->nd, y->dim));
    }
    ch_tensor *xc = NULL;
    CH_TRY(unalias(y, x, x->stride, &xc));
    const ch_tensor *xs = xc ? xc : x;
    if (y->dev != CH_CPU) {
        ch_status st = axpby_device(a, xs, b, y);
        ch_tensor_release(xc);
        return st;
    }
    int64_t n = y->numel;
    ch_dtype dt = (ch_dtype)y->dt;
    /* b == 0 does not read y (BLAS convention): NaN garbage in y is dropped */
    if (xs->dt == y->dt && ch_is_contiguous(xs) && ch_is_contiguous(y) && dt != CH_FLOAT16) {
        if (dt == CH_FLOAT32) {
            float *py = (float *)ch_base(y);
            const float *px = (const float *)ch_base(xs);
            float fa = (float)a, fb = (float)b;
            if (b == 0) {
                CH_PAR_FOR(n >= CH_PARALLEL_GRAIN, int64_t i = 0; i < n; i++, py[i] = fa * px[i];);
            } else {
                CH_PAR_FOR(n >= CH_PARALLEL_GRAIN, int64_t i = 0; i < n; i++, py[i] = fa * px[i] + fb * py[i];);
            }
        } else {
            double *py = (double *)ch_base(y);
            const double *px = (const double *)ch_base(xs);
            if (b == 0) {
                CH_PAR_FOR(n >= CH_PARALLEL_GRAIN, int64_t i = 0; i < n; i++, py[i] = a * px[i];);
            } else {
                CH_PAR_FOR(n >= CH_PARALLEL_GRAIN, int64_t i = 0; i < n; i++, py[i] = a * px[i] + b * py[i];);
            }
        }
    } else {
        const int64_t *strides[2] = {y->stride, xs->stride};
        ch_iter it;
        ch_iter_init(&it, y->nd, y->dim, 2, strides);
        ch_dtype xd = (ch_dtype)xs->dt;
        int64_t zy = (int64_t)ch_dtype_size(dt), zx = (int64_t)ch_dtype_size(xd);
        char *yb = ch_base(y);
        const char *xb = ch_base(xs);
        CH_PAR_FOR(n >= CH_PARALLEL_GRAIN && it.outer_count > 1, int64_t pos = 0; pos < it.outer_count; pos++, {
            int64_t off[2];
            ch_iter_offsets(&it, pos, off);
            for (int64_t i = 0; i < it.inner; i++) {
                char *py = yb + (off[0] + i * it.inner_stride[0]) * zy;
                double xv = ch_load(xd, xb + (off[1] + i * it.inner_stride[1]) * zx);
                double v = b == 0 ? a * xv : a * xv + b * ch_load(dt, py);
                ch_store(dt, py, v);
            }
        });
    }
    ch_tensor_release(xc);
    return CH_OK;
}

/*
 * elementwise.c -- the CPU's elementwise kernels: unary and binary ops,
 * clip, where, axpby (front doors, with every dtype and shape decision:
 * runtime/ops/elementwise.c).
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
 */
#include "../core/internal.h"
#include "../core/kernels.h"
#include "../core/scalar_math.h"
#include "elementwise_loops.h"

#include <stdlib.h>
#include <tgmath.h>

#define EW_CLIP CH_NUNARY /* private unary op code: clip(lo, hi) */
#define CHUNK 512         /* elements per conversion buffer */
#define PIECE 32768       /* inner-run elements per parallel task */

/* ---- special functions (double; digamma and erfinv: core/scalar_math.h) -- */
/* lgamma_r: plain lgamma writes the global signgam, a race under OpenMP. */
static double ew_lgamma(double x) {
    int sign;
    return lgamma_r(x, &sign);
}

/* ---- float kernels (float and double instances) -------------------------- */
#define EW_T float
#define EW_NAME(x) x##_f32
#define EW_SM(x) ch_##x##_f32
#include "elementwise_kernels.h"
#define EW_T double
#define EW_NAME(x) x##_f64
#define EW_SM(x) ch_##x##_f64
#include "elementwise_kernels.h"

/* ---- int64 kernels ------------------------------------------------------ */
/* the int64 formulas: core/scalar_math.h */
#define EW_T int64_t

static void binary_i64(int op, void *o, int64_t so, const int64_t *a, int64_t sa, const int64_t *b, int64_t sb,
                       int64_t n) {
    switch (op) {
    case CH_ADD: EW_BIN_LOOP(int64_t, ch_i_add(x, y)); break;
    case CH_SUB: EW_BIN_LOOP(int64_t, ch_i_sub(x, y)); break;
    case CH_MUL: EW_BIN_LOOP(int64_t, ch_i_mul(x, y)); break;
    case CH_FLOOR_DIVIDE: EW_BIN_LOOP(int64_t, ch_i_floordiv(x, y)); break;
    case CH_MOD: EW_BIN_LOOP(int64_t, ch_i_mod(x, y)); break;
    case CH_FMOD: EW_BIN_LOOP(int64_t, ch_i_fmod(x, y)); break;
    case CH_POW: EW_BIN_LOOP(int64_t, ch_i_pow(x, y)); break;
    case CH_MAXIMUM: EW_BIN_LOOP(int64_t, x > y ? x : y); break;
    case CH_MINIMUM: EW_BIN_LOOP(int64_t, x < y ? x : y); break;
    EW_COMPARISON_CASES
    default: break; /* DIV, ARCTAN2, HYPOT, ZETA, POLYGAMMA never compute in int64 */
    }
}

static void unary_i64(int op, void *o, int64_t so, const int64_t *a, int64_t sa, int64_t n, int64_t lo,
                      int64_t hi) {
    switch (op) {
    case CH_NEG: EW_UN_LOOP(int64_t, ch_i_sub(0, x)); break;
    case CH_ABS: EW_UN_LOOP(int64_t, x < 0 ? ch_i_sub(0, x) : x); break;
    case CH_SIGN: EW_UN_LOOP(int64_t, (x > 0) - (x < 0)); break;
    case CH_SQUARE: EW_UN_LOOP(int64_t, ch_i_mul(x, x)); break;
    case CH_LOGICAL_NOT: EW_UN_LOOP(uint8_t, x == 0); break;
    case CH_ISNAN: EW_UN_LOOP(uint8_t, 0 * x); break;
    case CH_ISINF: EW_UN_LOOP(uint8_t, 0 * x); break;
    case CH_ISFINITE: EW_UN_LOOP(uint8_t, 1 + 0 * x); break;
    case EW_CLIP: {
        EW_UN_LOOP(int64_t, (x < lo ? lo : x) > hi ? hi : (x < lo ? lo : x));
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
#define AS_I64(v) ch_sat_i64((double)(v))
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
#define FLOAT_TO_INT(v) ch_sat_i64((double)(v))
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
        default: unary_i64(pl->op, o, so, a, sa, n, ch_sat_i64(pl->lo), ch_sat_i64(pl->hi)); break;
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
    int team = total >= CH_PARALLEL_GRAIN && ntasks > 1 ? ch_threads() : 1;
    if (team > 1) {
#pragma omp parallel for schedule(static) num_threads(team)
        for (int64_t task = 0; task < ntasks; task++)
            ew_task(&c, task);
    } else {
        for (int64_t task = 0; task < ntasks; task++)
            ew_task(&c, task);
    }
}

/* ---- the kernels of the table ---------------------------------------------- */
static bool bool_result(const ch_ew_args *w) {
    return w->nin == 2 ? w->op >= CH_EQ : (w->op >= CH_LOGICAL_NOT && w->op <= CH_ISFINITE);
}

typedef union ew_scalar { float f; double d; int64_t i; } ew_scalar;

ch_status ch_cpu_elementwise(const ch_ew_args *w) {
    ch_tensor *out = w->out;
    int kt = kt_of((ch_dtype)w->ct);
    /* small flat operands: straight into the typed loop, no planning */
    if (w->flat && out->numel < CH_PARALLEL_GRAIN) {
        if (kt == KT_F32)
            binary_f32(w->op, ch_base(out), 1, (const float *)ch_base(w->in[0]), 1, (const float *)ch_base(w->in[1]),
                       1, out->numel);
        else
            binary_f64(w->op, ch_base(out), 1, (const double *)ch_base(w->in[0]), 1,
                       (const double *)ch_base(w->in[1]), 1, out->numel);
        return CH_OK;
    }
    ew_plan pl = {w->op, kt, bool_result(w) ? KT_BOOL : kt, w->nin, w->lo, w->hi};
    ew_scalar sv;
    if (kt == KT_F32)
        sv.f = (float)w->scalar_f;
    else if (kt == KT_F64)
        sv.d = w->scalar_f;
    else
        sv.i = w->scalar_i;
    static const int64_t zero[CH_MAX_DIMS] = {0};
    int64_t s[2][CH_MAX_DIMS];
    ew_operand opd[2];
    for (int k = 0; k < w->nin; k++) {
        if (k == w->scalar_pos) {
            opd[k] = (ew_operand){kt_dtype(kt), (const char *)&sv, zero};
        } else {
            ch_broadcast_strides(w->in[k], out->nd, out->dim, s[k]);
            opd[k] = (ew_operand){(ch_dtype)w->in[k]->dt, ch_base(w->in[k]), s[k]};
        }
    }
    ew_execute(&pl, out, &opd[0], w->nin == 2 ? &opd[1] : NULL);
    return CH_OK;
}

ch_status ch_cpu_where(const ch_tensor *cond, const ch_tensor *a, const ch_tensor *b, ch_tensor *target) {
    const ch_tensor *in[3] = {cond, a, b};
    int nd = target->nd;
    const int64_t *dim = target->dim;
    int64_t s[4][CH_MAX_DIMS];
    for (int k = 0; k < 3; k++)
        ch_broadcast_strides(in[k], nd, dim, s[k + 1]);
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
    return CH_OK;
}

ch_status ch_cpu_axpby(double a, const ch_tensor *xs, double b, ch_tensor *y) {
    int64_t n = y->numel;
    ch_dtype dt = (ch_dtype)y->dt;
    /* b == 0 does not read y (BLAS convention): NaN garbage in y is dropped */
    if (xs->dt == y->dt && ch_contig(xs) && ch_contig(y) && dt != CH_FLOAT16) {
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
    return CH_OK;
}

/*
 * reduce.c -- the CPU's reduction kernels: the (O, R, I) passes of sum,
 * prod, max, min, argmax and argmin, and cumulative sums and products.  The
 * front doors (dtype rules, axes, mean/var/std/logsumexp/all/any composed
 * from these, sum_to) are in runtime/ops/reduce.c.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>
#include <stdlib.h>

enum { RK_SUM = 0, RK_PROD, RK_MAX, RK_MIN, RK_ARGMAX, RK_ARGMIN };

#define RK_LEAF 128          /* pairwise-summation leaf (elements) */
#define RK_TILE_MIN 256      /* columns per rows-pass task: bounds */
#define RK_TILE_MAX 16384
#define RK_RUN_PIECE 65536   /* fixed piece of a long contiguous run */
#define RK_ROW_PIECE 2048    /* fixed piece of a tall row block */

/* The rows kernels (one column per lane, any vector width gives the same
 * bits) are compiled twice, for AVX2 and for the baseline, and the CPU
 * picks one at load time: 256-bit lanes take max over the first axis of a
 * (1000, 10000) matrix from 2.5 to 1.9 ms (one thread, median CPU time). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define RK_ROWS_TARGET __attribute__((target_clones("avx2", "default")))
#endif

/* Recursion levels of the pairwise row sum for n rows (leaves of 8). */
static int64_t rk_depth(int64_t n) {
    int64_t d = 1;
    while (n > 8) {
        n -= n / 2;
        d++;
    }
    return d;
}

/* Width of the column tiles of a rows pass: about one tile per thread, at
 * least RK_TILE_MIN columns, at most RK_TILE_MAX. */
static int64_t rk_tile_width(int64_t O, int64_t I) {
    int64_t per = O >= ch_threads() ? I : (I * O + ch_threads() - 1) / ch_threads();
    if (per < RK_TILE_MIN) per = RK_TILE_MIN;
    if (per > RK_TILE_MAX) per = RK_TILE_MAX;
    per = (per + 15) & ~(int64_t)15;
    return per < I ? per : I;
}

#include "reduce_simd.h"

#define RK_T float
#define RK_NAME(x) x##_f32
#ifdef RS_HAVE
#define RK_FAST_OK() ch_cpu_avx2_fma()
#define RK_FAST_SUM(x, n) rs_sum_run((x), (n), RK_LEAF)
#define RK_FAST_EXTREME(x, n, ismax, m) rs_extreme_run((x), (n), (ismax), (m))
#define RK_FAST_ARG(x, n, ismax, v, i) rs_arg_run((x), (n), (ismax), (v), (i))
#define RK_FAST_SUM_ROWS(x, nrows, ld, w, acc) rs_sum_rows((x), (nrows), (ld), (w), (acc))
#define RK_FAST_ARG_ROWS(x, nrows, ld, w, ismax, base, v, i) \
    rs_arg_rows((x), (nrows), (ld), (w), (ismax), (base), (v), (i))
#endif
#define RK_LOWEST (-INFINITY)
#define RK_HIGHEST INFINITY
#define RK_ISNAN(v) ((v) != (v))
#include "reduce_kernels.h"
#define RK_T double
#define RK_NAME(x) x##_f64
#define RK_LOWEST (-INFINITY)
#define RK_HIGHEST INFINITY
#define RK_ISNAN(v) ((v) != (v))
#include "reduce_kernels.h"
/* integers: max/min/arg on int64, sums and products on uint64 so that
 * overflow wraps (as in NumPy) instead of being undefined behaviour */
#define RK_T int64_t
#define RK_NAME(x) x##_i64
#define RK_LOWEST INT64_MIN
#define RK_HIGHEST INT64_MAX
#define RK_ISNAN(v) 0
#include "reduce_kernels.h"
#define RK_T uint64_t
#define RK_NAME(x) x##_u64
#define RK_LOWEST 0
#define RK_HIGHEST UINT64_MAX
#define RK_ISNAN(v) 0
#include "reduce_kernels.h"

/* One pass over contiguous data of dtype ct. */
static int run_pass(int kop, ch_dtype ct, const void *x, int64_t O, int64_t R, int64_t I, void *out,
                    int64_t *idx) {
    switch (ct) {
    case CH_FLOAT32: return pass_f32(kop, x, O, R, I, out, idx);
    case CH_FLOAT64: return pass_f64(kop, x, O, R, I, out, idx);
    default:
        if (kop == RK_SUM || kop == RK_PROD)
            return pass_u64(kop, x, O, R, I, out, idx);
        return pass_i64(kop, x, O, R, I, out, idx);
    }
}

/*
 * The reduction kernel (core/kernels.h): xc contiguous in its compute type,
 * reduced over the axes flagged in `red`, into out (contiguous, dtype ct or
 * int64 for the arg ops).  Axes are merged into blocks of consecutive kept
 * or reduced axes; each reduced block is removed by one (O, R, I) pass,
 * innermost block first.
 */
ch_status ch_cpu_reduce(int op, const ch_tensor *xc, const uint8_t *red, ch_tensor *out) {
    const char *fn = "reduce";
    int kop;
    switch (op) {
    case CH_SUM: kop = RK_SUM; break;
    case CH_PROD: kop = RK_PROD; break;
    case CH_MAX: kop = RK_MAX; break;
    case CH_MIN: kop = RK_MIN; break;
    case CH_ARGMAX: kop = RK_ARGMAX; break;
    case CH_ARGMIN: kop = RK_ARGMIN; break;
    default: return ch_fail(CH_ERR_INTERNAL, "reduce: op %d has no reduction kernel", op);
    }
    ch_dtype ct = (ch_dtype)xc->dt;
    bool arg = kop == RK_ARGMAX || kop == RK_ARGMIN;
    /* merge axes into blocks, dropping size-1 axes */
    int64_t bsize[CH_MAX_DIMS];
    bool bred[CH_MAX_DIMS];
    int nb = 0;
    for (int i = 0; i < xc->nd; i++) {
        if (xc->dim[i] == 1)
            continue;
        if (nb > 0 && bred[nb - 1] == red[i]) {
            bsize[nb - 1] *= xc->dim[i];
        } else {
            bsize[nb] = xc->dim[i];
            bred[nb] = red[i];
            nb++;
        }
    }
    ch_tensor *cur = (ch_tensor *)xc;
    ch_tensor_retain(cur);
    ch_tensor *idx = NULL;
    for (;;) {
        int b = -1;
        for (int i = nb - 1; i >= 0; i--)
            if (bred[i]) {
                b = i;
                break;
            }
        if (b < 0)
            break;
        int64_t O = 1, I = 1, R = bsize[b];
        for (int i = 0; i < b; i++)
            O *= bsize[i];
        for (int i = b + 1; i < nb; i++)
            I *= bsize[i];
        int64_t n = O * I;
        ch_tensor *next;
        ch_status st = ch_tensor_new(ct, 1, &n, CH_CPU, &next);
        if (st == CH_OK && arg)
            st = ch_tensor_new(CH_INT64, 1, &n, CH_CPU, &idx);
        if (st != CH_OK) {
            ch_tensor_release(next);
            ch_tensor_release(cur);
            return st;
        }
        if (run_pass(kop, ct, ch_base(cur), O, R, I, ch_base(next), idx ? (int64_t *)ch_base(idx) : NULL) != 0) {
            ch_tensor_release(next);
            ch_tensor_release(idx);
            ch_tensor_release(cur);
            return ch_fail(CH_ERR_MEMORY, "%s: out of memory for the partial results", fn);
        }
        ch_tensor_release(cur);
        cur = next;
        /* remove block b, merging its kept neighbours */
        for (int i = b; i < nb - 1; i++) {
            bsize[i] = bsize[i + 1];
            bred[i] = bred[i + 1];
        }
        nb--;
        if (b > 0 && b < nb && !bred[b - 1] && !bred[b]) {
            bsize[b - 1] *= bsize[b];
            for (int i = b; i < nb - 1; i++) {
                bsize[i] = bsize[i + 1];
                bred[i] = bred[i + 1];
            }
            nb--;
        }
    }
    if (arg && !idx) {
        /* nothing to reduce (all reduced axes have size 1): positions are 0 */
        ch_tensor_release(cur);
        memset(ch_base(out), 0, (size_t)out->numel * 8);
        return CH_OK;
    }
    ch_tensor *src = arg ? idx : cur;
    if (arg)
        ch_tensor_release(cur);
    memcpy(ch_base(out), ch_base(src), (size_t)out->numel * ch_dtype_size((ch_dtype)out->dt));
    ch_tensor_release(src);
    return CH_OK;
}

/* ---- cumulative ---------------------------------------------------------- */
/* out (contiguous, x's dtype) = the running sum or product of contiguous x
 * (compute dtype) along the R axis of its (O, R, I) view. */
ch_status ch_cpu_cumulative(int prod, const ch_tensor *xc, int64_t O, int64_t R, int64_t I, ch_tensor *out) {
    const void *src = ch_base(xc);
    void *dst = ch_base(out);
    if (xc->numel == 0)
        return CH_OK;
    switch ((ch_dtype)xc->dt) {
    case CH_FLOAT32: cum_pass_f32(prod, src, O, R, I, dst); break;
    case CH_FLOAT64: cum_pass_f64(prod, src, O, R, I, dst); break;
    default: cum_pass_u64(prod, src, O, R, I, dst); break;
    }
    return CH_OK;
}

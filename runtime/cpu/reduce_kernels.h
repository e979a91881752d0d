/*
 * reduce_kernels.h -- the reduction kernels of reduce.c, written once and
 * instantiated for float, double and int64_t (RK_T, RK_NAME set before each
 * inclusion).
 *
 * A reduction pass works on contiguous data seen as (O, R, I) and reduces
 * the middle axis: out[o, i] = op over r of x[o, r, i].
 *  - I == 1: each output reduces one contiguous run (a "run" kernel).
 *  - I > 1: each output row accumulates R rows of I contiguous values (a
 *    "rows" kernel), walked in tiles of RK_TILE columns so reading stays
 *    sequential and the accumulators stay in L1: summing a (1000, 1000)
 *    matrix over axis 0 is as fast as over axis 1.
 * Long runs and tall row blocks are cut into pieces of a FIXED length
 * (RK_RUN_PIECE elements, RK_ROW_PIECE rows), reduced in parallel into
 * partials and then combined in order, so the blocking -- and the float
 * result -- never depends on the number of threads.
 * An instance may set RK_FAST_SUM(x, n), RK_FAST_EXTREME(x, n, ismax, &m),
 * RK_FAST_ARG(x, n, ismax, &v, &i), RK_FAST_SUM_ROWS(x, nrows, ld, w, acc)
 * and RK_FAST_ARG_ROWS (arg_rows' arguments) (and RK_FAST_OK()) to vector
 * versions of sum_run, max/min_run, arg_run, the leaves of sum_rows and
 * arg_rows that return the same bits (reduce_simd.h).
 */
#ifndef RK_T
#error "define RK_T and RK_NAME before including reduce_kernels.h"
#endif

#ifndef RK_STATIC
#define RK_STATIC static __attribute__((unused))
#endif
#ifndef RK_ROWS_TARGET
#define RK_ROWS_TARGET
#endif

/* Pairwise summation (NumPy's scheme): runs up to RK_LEAF are summed with 8
 * interleaved accumulators, longer ones split in two.  The error grows like
 * O(log n) instead of O(n). */
RK_STATIC RK_T RK_NAME(sum_run)(const RK_T *x, int64_t n) {
#ifdef RK_FAST_SUM
    if (RK_FAST_OK())
        return RK_FAST_SUM(x, n);
#endif
    if (n < 8) {
        RK_T s = 0;
        for (int64_t i = 0; i < n; i++)
            s += x[i];
        return s;
    }
    if (n <= RK_LEAF) {
        RK_T r[8];
        for (int k = 0; k < 8; k++)
            r[k] = x[k];
        int64_t i;
        for (i = 8; i + 8 <= n; i += 8)
            for (int k = 0; k < 8; k++)
                r[k] += x[i + k];
        RK_T s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            s += x[i];
        return s;
    }
    int64_t h = (n / 2) & ~(int64_t)7;
    return RK_NAME(sum_run)(x, h) + RK_NAME(sum_run)(x + h, n - h);
}

/* Pairwise over rows: acc[0..w) = sum of nrows rows (leading dimension ld). */
/* ws: scratch for one w-wide row per recursion level (rk_depth levels). */
RK_STATIC RK_ROWS_TARGET void RK_NAME(sum_rows)(const RK_T *x, int64_t nrows, int64_t ld, int64_t w, RK_T *acc,
                                                RK_T *ws) {
    if (nrows <= 8) {
#ifdef RK_FAST_SUM_ROWS
        if (RK_FAST_OK()) {
            RK_FAST_SUM_ROWS(x, nrows, ld, w, acc);
            return;
        }
#endif
        /* rows are added in order, two per sweep over the accumulator */
        int64_t r = 0;
        for (int64_t j = 0; j < w; j++)
            acc[j] = 0;
        for (; r + 2 <= nrows; r += 2) {
            const RK_T *r0 = x + r * ld, *r1 = r0 + ld;
            for (int64_t j = 0; j < w; j++)
                acc[j] = (acc[j] + r0[j]) + r1[j];
        }
        if (r < nrows) {
            const RK_T *r0 = x + r * ld;
            for (int64_t j = 0; j < w; j++)
                acc[j] += r0[j];
        }
        return;
    }
    int64_t h = nrows / 2;
    RK_T *tmp = ws;
    RK_NAME(sum_rows)(x, h, ld, w, acc, ws + w);
    RK_NAME(sum_rows)(x + h * ld, nrows - h, ld, w, tmp, ws + w);
    for (int64_t j = 0; j < w; j++)
        acc[j] += tmp[j];
}

RK_STATIC RK_T RK_NAME(prod_run)(const RK_T *x, int64_t n) {
    RK_T r[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    int64_t i;
    for (i = 0; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            r[k] *= x[i + k];
    RK_T s = ((r[0] * r[1]) * (r[2] * r[3])) * ((r[4] * r[5]) * (r[6] * r[7]));
    for (; i < n; i++)
        s *= x[i];
    return s;
}

RK_STATIC RK_ROWS_TARGET void RK_NAME(prod_rows)(const RK_T *x, int64_t nrows, int64_t ld, int64_t w, RK_T *acc) {
    for (int64_t j = 0; j < w; j++)
        acc[j] = 1;
    for (int64_t r = 0; r < nrows; r++)
        for (int64_t j = 0; j < w; j++)
            acc[j] *= x[r * ld + j];
}

/* max/min: a NaN anywhere makes the result NaN (v != v is never true for
 * integers, so the test compiles away there).  Once the accumulator is NaN
 * no comparison replaces it. */
#define RK_GT(v, m) ((v) > (m) || RK_ISNAN(v))
#define RK_LT(v, m) ((v) < (m) || RK_ISNAN(v))

#define RK_EXTREME_RUN(NAME, CMP, INIT)                                          \
    RK_STATIC RK_T RK_NAME(NAME)(const RK_T *x, int64_t n) {                       \
        RK_T r[8];                                                              \
        for (int k = 0; k < 8; k++)                                             \
            r[k] = INIT;                                                        \
        int64_t i;                                                              \
        for (i = 0; i + 8 <= n; i += 8)                                         \
            for (int k = 0; k < 8; k++)                                         \
                r[k] = CMP(x[i + k], r[k]) ? x[i + k] : r[k];                   \
        RK_T m = INIT;                                                          \
        for (int k = 0; k < 8; k++)                                             \
            m = CMP(r[k], m) ? r[k] : m;                                        \
        for (; i < n; i++)                                                      \
            m = CMP(x[i], m) ? x[i] : m;                                        \
        return m;                                                               \
    }                                                                           \
    RK_STATIC RK_ROWS_TARGET void RK_NAME(NAME##_rows)(const RK_T *x, int64_t nrows, int64_t ld, int64_t w, \
                                                       RK_T *acc) {                                      \
        for (int64_t j = 0; j < w; j++)                                         \
            acc[j] = INIT;                                                      \
        for (int64_t r = 0; r < nrows; r++) {                                   \
            const RK_T *row = x + r * ld;                                       \
            for (int64_t j = 0; j < w; j++)                                     \
                acc[j] = CMP(row[j], acc[j]) ? row[j] : acc[j];                 \
        }                                                                       \
    }
RK_EXTREME_RUN(max_run, RK_GT, RK_LOWEST)
RK_EXTREME_RUN(min_run, RK_LT, RK_HIGHEST)
#undef RK_EXTREME_RUN

/* argmax/argmin of a run: the first occurrence of the extreme, or the first
 * NaN (NumPy).  *bv gets the value so that pieces can be combined. */
RK_STATIC void RK_NAME(arg_run)(const RK_T *x, int64_t n, int ismax, int64_t base, RK_T *bv, int64_t *bi) {
#ifdef RK_FAST_ARG
    if (RK_FAST_OK() && RK_FAST_ARG(x, n, ismax, bv, bi)) {
        *bi += base;
        return;
    }
#endif
    RK_T best = x[0];
    int64_t at = 0;
    if (!RK_ISNAN(best)) {
        for (int64_t i = 1; i < n; i++) {
            RK_T v = x[i];
            if (RK_ISNAN(v)) {
                best = v;
                at = i;
                break;
            }
            if (ismax ? v > best : v < best) {
                best = v;
                at = i;
            }
        }
    }
    *bv = best;
    *bi = base + at;
}

RK_STATIC RK_ROWS_TARGET void RK_NAME(arg_rows)(const RK_T *x, int64_t nrows, int64_t ld, int64_t w, int ismax,
                                                int64_t base, RK_T *accv, int64_t *acci) {
#ifdef RK_FAST_ARG_ROWS
    if (RK_FAST_OK()) {
        RK_FAST_ARG_ROWS(x, nrows, ld, w, ismax, base, accv, acci);
        return;
    }
#endif
    for (int64_t j = 0; j < w; j++) {
        accv[j] = x[j];
        acci[j] = base;
    }
    for (int64_t r = 1; r < nrows; r++) {
        const RK_T *row = x + r * ld;
        /* branch-free, so that it vectorises */
        if (ismax)
            for (int64_t j = 0; j < w; j++) {
                RK_T v = row[j], b = accv[j];
                bool take = !RK_ISNAN(b) && (RK_ISNAN(v) || v > b);
                accv[j] = take ? v : b;
                acci[j] = take ? base + r : acci[j];
            }
        else
            for (int64_t j = 0; j < w; j++) {
                RK_T v = row[j], b = accv[j];
                bool take = !RK_ISNAN(b) && (RK_ISNAN(v) || v < b);
                accv[j] = take ? v : b;
                acci[j] = take ? base + r : acci[j];
            }
    }
}

/* Combines per-piece (value, index) results in piece order: a later piece
 * wins only when strictly better, or when it found the first NaN. */
RK_STATIC void RK_NAME(arg_merge)(RK_T *bv, int64_t *bi, RK_T v, int64_t i, int ismax) {
    RK_T b = *bv;
    if (!RK_ISNAN(b) && (RK_ISNAN(v) || (ismax ? v > b : v < b))) {
        *bv = v;
        *bi = i;
    }
}

RK_STATIC RK_T RK_NAME(run)(int kop, const RK_T *x, int64_t n) {
    switch (kop) {
    case RK_SUM: return RK_NAME(sum_run)(x, n);
    case RK_PROD: return RK_NAME(prod_run)(x, n);
    default: {
#ifdef RK_FAST_EXTREME
        RK_T m;
        if (RK_FAST_OK() && RK_FAST_EXTREME(x, n, kop == RK_MAX, &m))
            return m;
#endif
        return kop == RK_MAX ? RK_NAME(max_run)(x, n) : RK_NAME(min_run)(x, n);
    }
    }
}

RK_STATIC void RK_NAME(rows)(int kop, const RK_T *x, int64_t nrows, int64_t ld, int64_t w, RK_T *acc, RK_T *ws) {
    switch (kop) {
    case RK_SUM: RK_NAME(sum_rows)(x, nrows, ld, w, acc, ws); break;
    case RK_PROD: RK_NAME(prod_rows)(x, nrows, ld, w, acc); break;
    case RK_MAX: RK_NAME(max_run_rows)(x, nrows, ld, w, acc); break;
    default: RK_NAME(min_run_rows)(x, nrows, ld, w, acc); break;
    }
}

/* One pass: out[o, i] = op_r x[o, r, i].  For RK_ARGMAX/RK_ARGMIN `idx`
 * receives the int64 positions and `out` the values.  Returns 0, or -1 when
 * a scratch buffer cannot be allocated. */
RK_STATIC int RK_NAME(pass)(int kop, const RK_T *x, int64_t O, int64_t R, int64_t I, RK_T *out, int64_t *idx) {
    int arg = kop == RK_ARGMAX || kop == RK_ARGMIN;
    int ismax = kop == RK_ARGMAX;
    int64_t total = O * R * I;
    if (O == 0 || I == 0)
        return 0;   /* empty output; the tiling below would divide by a zero tile width */
    if (I == 1) {
        int64_t np = R > RK_RUN_PIECE ? (R + RK_RUN_PIECE - 1) / RK_RUN_PIECE : 1;
        if (np == 1) {
            CH_PAR_FOR(total >= CH_PARALLEL_GRAIN && O > 1, int64_t o = 0; o < O; o++, {
                if (arg)
                    RK_NAME(arg_run)(x + o * R, R, ismax, 0, out + o, idx + o);
                else
                    out[o] = RK_NAME(run)(kop, x + o * R, R);
            });
            return 0;
        }
        RK_T *pv = malloc((size_t)(O * np) * sizeof(RK_T));
        int64_t *pi = arg ? malloc((size_t)(O * np) * sizeof(int64_t)) : NULL;
        if (!pv || (arg && !pi)) {
            free(pv);
            free(pi);
            return -1;
        }
        CH_PAR_FOR(total >= CH_PARALLEL_GRAIN, int64_t t = 0; t < O * np; t++, {
            int64_t o = t / np, p = t % np;
            int64_t r0 = p * RK_RUN_PIECE, n = R - r0 < RK_RUN_PIECE ? R - r0 : RK_RUN_PIECE;
            if (arg)
                RK_NAME(arg_run)(x + o * R + r0, n, ismax, r0, pv + t, pi + t);
            else
                pv[t] = RK_NAME(run)(kop, x + o * R + r0, n);
        });
        for (int64_t o = 0; o < O; o++) {
            if (arg) {
                out[o] = pv[o * np];
                idx[o] = pi[o * np];
                for (int64_t p = 1; p < np; p++)
                    RK_NAME(arg_merge)(out + o, idx + o, pv[o * np + p], pi[o * np + p], ismax);
            } else {
                out[o] = RK_NAME(run)(kop, pv + o * np, np);
            }
        }
        free(pv);
        free(pi);
        return 0;
    }
    /* Column tiles only split the work (every column is reduced the same
     * way whatever the tiling), so their width may follow the thread
     * count: wide tiles keep row reads long and sequential. */
    int64_t tile = rk_tile_width(O, I);
    int64_t nt = (I + tile - 1) / tile;
    int64_t np = R > RK_ROW_PIECE ? (R + RK_ROW_PIECE - 1) / RK_ROW_PIECE : 1;
    size_t wsz = (size_t)(rk_depth(R < RK_ROW_PIECE ? R : RK_ROW_PIECE) * tile) * sizeof(RK_T);
    int wsfail = 0;
    if (np == 1) {
        CH_PAR_FOR(total >= CH_PARALLEL_GRAIN && O * nt > 1, int64_t t = 0; t < O * nt; t++, {
            int64_t o = t / nt, j0 = (t % nt) * tile, w = I - j0 < tile ? I - j0 : tile;
            const RK_T *src = x + o * R * I + j0;
            if (arg) {
                RK_NAME(arg_rows)(src, R, I, w, ismax, 0, out + o * I + j0, idx + o * I + j0);
            } else {
                RK_T *ws = kop == RK_SUM ? malloc(wsz) : NULL;
                if (kop == RK_SUM && !ws) {
                    ch_flag_set(&wsfail);
                    continue;
                }
                RK_NAME(rows)(kop, src, R, I, w, out + o * I + j0, ws);
                free(ws);
            }
        });
        return wsfail ? -1 : 0;
    }
    /* tall blocks: partials laid out (O, np, I), then combined over np */
    RK_T *pv = malloc((size_t)(O * np * I) * sizeof(RK_T));
    int64_t *pi = arg ? malloc((size_t)(O * np * I) * sizeof(int64_t)) : NULL;
    if (!pv || (arg && !pi)) {
        free(pv);
        free(pi);
        return -1;
    }
    CH_PAR_FOR(total >= CH_PARALLEL_GRAIN, int64_t t = 0; t < O * np * nt; t++, {
        int64_t o = t / (np * nt), p = (t / nt) % np, j0 = (t % nt) * tile;
        int64_t w = I - j0 < tile ? I - j0 : tile;
        int64_t r0 = p * RK_ROW_PIECE, n = R - r0 < RK_ROW_PIECE ? R - r0 : RK_ROW_PIECE;
        const RK_T *src = x + (o * R + r0) * I + j0;
        RK_T *dst = pv + (o * np + p) * I + j0;
        if (arg) {
            RK_NAME(arg_rows)(src, n, I, w, ismax, r0, dst, pi + (o * np + p) * I + j0);
        } else {
            RK_T *ws = kop == RK_SUM ? malloc(wsz) : NULL;
            if (kop == RK_SUM && !ws) {
                ch_flag_set(&wsfail);
                continue;
            }
            RK_NAME(rows)(kop, src, n, I, w, dst, ws);
            free(ws);
        }
    });
    CH_PAR_FOR(O * np * I >= CH_PARALLEL_GRAIN && O * nt > 1, int64_t t = 0; t < O * nt; t++, {
        int64_t o = t / nt, j0 = (t % nt) * tile, w = I - j0 < tile ? I - j0 : tile;
        const RK_T *src = pv + o * np * I + j0;
        if (arg) {
            for (int64_t j = 0; j < w; j++) {
                RK_T *bv = out + o * I + j0 + j;
                int64_t *bi = idx + o * I + j0 + j;
                *bv = src[j];
                *bi = pi[o * np * I + j0 + j];
                for (int64_t p = 1; p < np; p++)
                    RK_NAME(arg_merge)(bv, bi, src[p * I + j], pi[(o * np + p) * I + j0 + j], ismax);
            }
        } else {
            RK_T *ws = kop == RK_SUM ? malloc((size_t)(rk_depth(np) * tile) * sizeof(RK_T)) : NULL;
            if (kop == RK_SUM && !ws) {
                ch_flag_set(&wsfail);
                continue;
            }
            RK_NAME(rows)(kop, src, np, I, w, out + o * I + j0, ws);
            free(ws);
        }
    });
    free(pv);
    free(pi);
    return wsfail ? -1 : 0;
}

/* Cumulative sum/product along the middle axis of (O, R, I). */
RK_STATIC void RK_NAME(cum_pass)(int prod, const RK_T *x, int64_t O, int64_t R, int64_t I, RK_T *out) {
    int64_t total = O * R * I;
    if (total == 0)
        return;     /* empty: the tiling below would divide by a zero tile width */
    if (I == 1) {
        CH_PAR_FOR(total >= CH_PARALLEL_GRAIN && O > 1, int64_t o = 0; o < O; o++, {
            const RK_T *src = x + o * R;
            RK_T *dst = out + o * R;
            RK_T acc = prod ? 1 : 0;
            for (int64_t r = 0; r < R; r++) {
                acc = prod ? acc * src[r] : acc + src[r];
                dst[r] = acc;
            }
        });
        return;
    }
    int64_t tile = rk_tile_width(O, I);
    int64_t nt = (I + tile - 1) / tile;
    CH_PAR_FOR(total >= CH_PARALLEL_GRAIN && O * nt > 1, int64_t t = 0; t < O * nt; t++, {
        int64_t o = t / nt, j0 = (t % nt) * tile, w = I - j0 < tile ? I - j0 : tile;
        const RK_T *src = x + o * R * I + j0;
        RK_T *dst = out + o * R * I + j0;
        if (R == 0)
            continue;
        for (int64_t j = 0; j < w; j++)
            dst[j] = src[j];
        for (int64_t r = 1; r < R; r++) {
            const RK_T *s = src + r * I;
            RK_T *d = dst + r * I, *prev = dst + (r - 1) * I;
            if (prod)
                for (int64_t j = 0; j < w; j++) d[j] = prev[j] * s[j];
            else
                for (int64_t j = 0; j < w; j++) d[j] = prev[j] + s[j];
        }
    });
}

#undef RK_GT
#undef RK_LT
#undef RK_T
#undef RK_NAME
#undef RK_LOWEST
#undef RK_HIGHEST
#undef RK_ISNAN
#undef RK_FAST_SUM
#undef RK_FAST_EXTREME
#undef RK_FAST_ARG
#undef RK_FAST_SUM_ROWS
#undef RK_FAST_ARG_ROWS

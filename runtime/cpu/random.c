/* random.c -- CPU kernels of the samplers on Philox4x32-10 (see core/rng.h
 * for the counter layout).  Front doors (checks, counter reservation,
 * outputs): runtime/ops/random.c.
 *
 * Element i of a draw (C order of the logical tensor) reads the four words of
 * counter first+i, so values do not depend on the thread count; the front
 * door hands a contiguous output (or a contiguous temporary), which gives
 * the same numbers on every device. */
#include "../core/internal.h"
#include "../core/kernels.h"
#include "../core/rng.h"

#include <math.h>
#include <stdlib.h>

/* Fills n contiguous elements of dtype dt at p with counters first..first+n-1. */
static void gen_run(ch_dtype dt, char *p, int64_t n, uint64_t seed, uint64_t first, const ch_random_args *pr) {
    const int par = n >= CH_PARALLEL_GRAIN / 4;  /* each element costs a Philox call */
    const double a = pr->a, b = pr->b;
    size_t z = ch_dtype_size(dt);
    switch (pr->kind) {
    case CH_RANDOM_UNIFORM: {
        double span = b - a;
        if (dt == CH_FLOAT32) {
            float *d = (float *)p;
            float hi = (float)b, below = nextafterf(hi, -INFINITY);
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                uint32_t w[4];
                ch_philox_words(seed, first + (uint64_t)i, 0, w);
                float v = (float)(a + span * ch_u24(w[0]));
                d[i] = (v >= hi && span > 0) ? below : v;   /* rounding must not reach high */
            });
        } else if (dt == CH_FLOAT64) {
            double *d = (double *)p;
            double below = nextafter(b, -INFINITY);
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                uint32_t w[4];
                ch_philox_words(seed, first + (uint64_t)i, 0, w);
                double v = a + span * ch_u53(w[0], w[1]);
                d[i] = (v >= b && span > 0) ? below : v;
            });
        } else { /* float16: 24 bits are plenty for 11 */
            uint16_t hi = ch_float_to_half((float)b);
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                uint32_t w[4];
                ch_philox_words(seed, first + (uint64_t)i, 0, w);
                uint16_t h = ch_float_to_half((float)(a + span * ch_u24(w[0])));
                if (h == hi && span > 0)   /* one half-ulp below high */
                    h = (hi & 0x8000) ? (uint16_t)(hi + 1) : ((hi & 0x7fff) ? (uint16_t)(hi - 1) : (uint16_t)0x8001);
                ((uint16_t *)p)[i] = h;
            });
        }
        break;
    }
    case CH_RANDOM_NORMAL:
        if (dt == CH_FLOAT32) {
            float *d = (float *)p;
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                uint32_t w[4];
                ch_philox_words(seed, first + (uint64_t)i, 0, w);
                d[i] = (float)(a + b * ch_rng_std_normal(w));
            });
        } else {
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                uint32_t w[4];
                ch_philox_words(seed, first + (uint64_t)i, 0, w);
                ch_store(dt, p + i * (int64_t)z, a + b * ch_rng_std_normal(w));
            });
        }
        break;
    case CH_RANDOM_BERNOULLI:
        CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
            uint32_t w[4];
            ch_philox_words(seed, first + (uint64_t)i, 0, w);
            ch_store(dt, p + i * (int64_t)z, ch_u53(w[0], w[1]) < a ? 1.0 : 0.0);
        });
        break;
    case CH_RANDOM_RANDINT: {
        int64_t lo = pr->lo;
        uint64_t range = pr->range;
        if (dt == CH_INT64) {
            int64_t *d = (int64_t *)p;
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                d[i] = (int64_t)((uint64_t)lo + ch_rng_bounded(seed, first + (uint64_t)i, range));
            });
        } else if (dt == CH_INT32) {
            int32_t *d = (int32_t *)p;
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                d[i] = (int32_t)(lo + (int64_t)ch_rng_bounded(seed, first + (uint64_t)i, range));
            });
        } else if (ch_dtype_is_float(dt)) {
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                ch_store(dt, p + i * (int64_t)z,
                         (double)(int64_t)((uint64_t)lo + ch_rng_bounded(seed, first + (uint64_t)i, range)));
            });
        } else {
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                ch_store_i64(dt, p + i * (int64_t)z,
                             (int64_t)((uint64_t)lo + ch_rng_bounded(seed, first + (uint64_t)i, range)));
            });
        }
        break;
    }
    }
}

ch_status ch_cpu_random_fill(const ch_random_args *r, ch_tensor *out) {
    if (out->numel > 0)
        gen_run((ch_dtype)out->dt, ch_base(out), out->numel, r->seed, r->first, r);
    return CH_OK;
}

/* Fisher-Yates (core/rng.h). */
ch_status ch_cpu_permutation(uint64_t seed, uint64_t first, ch_tensor *result) {
    ch_rng_permutation(seed, first, result->numel, (int64_t *)ch_base(result));
    return CH_OK;
}

typedef struct keyed {
    double key;
    int64_t index;
} keyed;

static int by_key_desc(const void *x, const void *y) {
    const keyed *a = (const keyed *)x, *b = (const keyed *)y;
    if (a->key > b->key) return -1;
    if (a->key < b->key) return 1;
    return a->index < b->index ? -1 : (a->index > b->index);
}

ch_status ch_cpu_choice(int64_t n, int replace, ch_tensor *probs, int64_t nonzero, uint64_t seed, uint64_t first,
                        ch_tensor *result) {
    int64_t k = result->numel;
    int64_t *out = (int64_t *)ch_base(result);
    double *p = probs ? (double *)ch_base(probs) : NULL;
    if (replace && !p) {
        CH_PAR_FOR(k >= CH_PARALLEL_GRAIN / 4, int64_t i = 0; i < k; i++, {
            out[i] = (int64_t)ch_rng_bounded(seed, first + (uint64_t)i, (uint64_t)n);
        });
    } else if (replace) {
        /* inverse CDF by binary search (core/rng.h) */
        int64_t last = 0;
        double acc = ch_rng_cdf(p, n, &last);
        CH_PAR_FOR(k >= CH_PARALLEL_GRAIN / 4, int64_t i = 0; i < k; i++, {
            out[i] = ch_rng_cdf_sample(p, n, acc, last, seed, first + (uint64_t)i);
        });
    } else if (!p) {
        /* partial Fisher-Yates (core/rng.h) over a scratch population */
        int64_t *a = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
        if (!a)
            return ch_fail(CH_ERR_MEMORY, "choice: out of memory for a population of %lld", (long long)n);
        ch_rng_partial_shuffle(seed, first, n, k, a, out);
        free(a);
    } else {
        /* Efraimidis-Spirakis keys (core/rng.h), the k largest first */
        keyed *ks = (keyed *)malloc(sizeof(keyed) * (size_t)(nonzero > 0 ? nonzero : 1));
        if (!ks)
            return ch_fail(CH_ERR_MEMORY, "choice: out of memory for %lld keys", (long long)nonzero);
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!(p[i] > 0))
                continue;
            ks[m].key = ch_rng_es_key(p[i], seed, first + (uint64_t)i);
            ks[m].index = i;
            m++;
        }
        qsort(ks, (size_t)m, sizeof(keyed), by_key_desc);
        for (int64_t i = 0; i < k; i++)
            out[i] = ks[i].index;
        free(ks);
    }
    return CH_OK;
}

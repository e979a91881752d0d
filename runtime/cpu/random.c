/* random.c -- samplers on Philox4x32-10 (see core/rng.h for the counter layout).
 *
 * Element i of a draw (C order of the logical tensor) reads the four words of
 * counter offset+i, so values do not depend on the thread count or on the
 * memory layout of `out`.  Draws into non-contiguous or GPU tensors are made
 * in a contiguous CPU temporary and copied, which gives the same numbers on
 * every device. */
#include "../core/internal.h"
#include "../core/rng.h"

#include <math.h>
#include <stdlib.h>

typedef enum { K_UNIFORM, K_NORMAL, K_BERNOULLI, K_RANDINT } kind;

typedef struct params {
    kind k;
    double a, b;       /* uniform: low, high; normal: mean, std; bernoulli: p */
    int64_t lo;        /* randint: low */
    uint64_t range;    /* randint: high - low (>= 1) */
} params;

/* Uniform integer in [0, range), range >= 1, without modulo bias.  Ranges up
 * to 2^32 use Lemire's multiply-shift with rejection (one 32-bit word per
 * try); wider ranges reject 64-bit words below 2^64 mod range.  Extra words
 * for rejected tries come from the same element's counter with attempt 1, 2,... */
static inline uint64_t bounded(uint64_t seed, uint64_t idx, uint64_t range) {
    uint32_t w[4];
    uint32_t attempt = 0;
    ch_philox_words(seed, idx, attempt++, w);
    int j = 0;
    if (range <= 0x100000000ull) {
        uint32_t thresh = (uint32_t)((0x100000000ull - range) % range); /* 2^32 mod range */
        for (;;) {
            if (j == 4) {
                ch_philox_words(seed, idx, attempt++, w);
                j = 0;
            }
            uint64_t m = (uint64_t)w[j++] * range;
            if ((uint32_t)m >= thresh)
                return m >> 32;
        }
    }
    uint64_t rem = (0 - range) % range; /* 2^64 mod range */
    for (;;) {
        if (j == 4) {
            ch_philox_words(seed, idx, attempt++, w);
            j = 0;
        }
        uint64_t x = ((uint64_t)w[j] << 32) | w[j + 1];
        j += 2;
        if (x >= rem)
            return x % range;
    }
}

/* Box-Muller: u1 in (0, 1] and u2 in [0, 1), both with 53 bits, give one
 * standard normal (the cosine branch; the sine branch is dropped so that each
 * element owns its counter). */
static inline double std_normal(const uint32_t w[4]) {
    double u1 = 1.0 - ch_u53(w[0], w[1]);
    double u2 = ch_u53(w[2], w[3]);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Fills n contiguous elements of dtype dt at p with counters first..first+n-1. */
static void gen_run(ch_dtype dt, char *p, int64_t n, uint64_t seed, uint64_t first, const params *pr) {
    const int par = n >= CH_PARALLEL_GRAIN / 4;  /* each element costs a Philox call */
    const double a = pr->a, b = pr->b;
    size_t z = ch_dtype_size(dt);
    switch (pr->k) {
    case K_UNIFORM: {
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
    case K_NORMAL:
        if (dt == CH_FLOAT32) {
            float *d = (float *)p;
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                uint32_t w[4];
                ch_philox_words(seed, first + (uint64_t)i, 0, w);
                d[i] = (float)(a + b * std_normal(w));
            });
        } else {
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                uint32_t w[4];
                ch_philox_words(seed, first + (uint64_t)i, 0, w);
                ch_store(dt, p + i * (int64_t)z, a + b * std_normal(w));
            });
        }
        break;
    case K_BERNOULLI:
        CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
            uint32_t w[4];
            ch_philox_words(seed, first + (uint64_t)i, 0, w);
            ch_store(dt, p + i * (int64_t)z, ch_u53(w[0], w[1]) < a ? 1.0 : 0.0);
        });
        break;
    case K_RANDINT: {
        int64_t lo = pr->lo;
        uint64_t range = pr->range;
        if (dt == CH_INT64) {
            int64_t *d = (int64_t *)p;
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                d[i] = (int64_t)((uint64_t)lo + bounded(seed, first + (uint64_t)i, range));
            });
        } else if (dt == CH_INT32) {
            int32_t *d = (int32_t *)p;
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                d[i] = (int32_t)(lo + (int64_t)bounded(seed, first + (uint64_t)i, range));
            });
        } else if (ch_dtype_is_float(dt)) {
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                ch_store(dt, p + i * (int64_t)z,
                         (double)(int64_t)((uint64_t)lo + bounded(seed, first + (uint64_t)i, range)));
            });
        } else {
            CH_PAR_FOR(par, int64_t i = 0; i < n; i++, {
                ch_store_i64(dt, p + i * (int64_t)z,
                             (int64_t)((uint64_t)lo + bounded(seed, first + (uint64_t)i, range)));
            });
        }
        break;
    }
    }
}

/* Reserves out->numel counters of out's device and fills out. */
static ch_status draw(ch_tensor *out, const params *pr, const char *fn) {
    int64_t n = out->numel;
    uint64_t seed, first;
    if (ch_rng_reserve(out->dev, (uint64_t)n, &seed, &first) != 0)
        return ch_fail(CH_ERR_DEVICE, "%s: no random state for device %d", fn, out->dev);
    if (n == 0)
        return CH_OK;
    ch_dtype dt = (ch_dtype)out->dt;
    if (out->dev == CH_CPU && ch_is_contiguous(out)) {
        gen_run(dt, ch_base(out), n, seed, first, pr);
        return CH_OK;
    }
    ch_tensor *tmp = NULL;
    CH_TRY(ch_tensor_new(dt, out->nd, out->dim, CH_CPU, &tmp));
    gen_run(dt, ch_base(tmp), n, seed, first, pr);
    ch_status st = ch_copy_into(out, tmp);
    ch_tensor_release(tmp);
    return st;
}

static ch_status need_float(const ch_tensor *out, const char *fn) {
    if (!ch_dtype_is_float((ch_dtype)out->dt))
        return ch_fail(CH_ERR_DTYPE, "%s: argument 'out' has dtype %s (expected float16, float32 or float64)", fn,
                       ch_dtype_name((ch_dtype)out->dt));
    return CH_OK;
}

ch_status ch_random_uniform(ch_tensor *out, double low, double high) {
    CH_CHECK_ARG(out, "uniform", "out");
    CH_TRY(need_float(out, "uniform"));
    if (!isfinite(low) || !isfinite(high) || high < low)
        return ch_fail(CH_ERR_ARG, "uniform: need finite low <= high (got low=%g, high=%g)", low, high);
    params pr = {K_UNIFORM, low, high, 0, 0};
    return draw(out, &pr, "uniform");
}

ch_status ch_random_normal(ch_tensor *out, double mean, double std) {
    CH_CHECK_ARG(out, "normal", "out");
    CH_TRY(need_float(out, "normal"));
    if (!isfinite(mean) || !isfinite(std) || std < 0)
        return ch_fail(CH_ERR_ARG, "normal: need a finite mean and std >= 0 (got mean=%g, std=%g)", mean, std);
    params pr = {K_NORMAL, mean, std, 0, 0};
    return draw(out, &pr, "normal");
}

ch_status ch_random_bernoulli(ch_tensor *out, double p) {
    CH_CHECK_ARG(out, "bernoulli", "out");
    if (!(p >= 0.0 && p <= 1.0))
        return ch_fail(CH_ERR_ARG, "bernoulli: p must be in [0, 1] (got %g)", p);
    params pr = {K_BERNOULLI, p, 0, 0, 0};
    return draw(out, &pr, "bernoulli");
}

/* Largest/smallest value of an integer dtype (floats: 2^53, exact integers). */
static void int_limits(ch_dtype dt, int64_t *mn, int64_t *mx) {
    switch (dt) {
    case CH_BOOL: *mn = 0; *mx = 1; break;
    case CH_INT8: *mn = INT8_MIN; *mx = INT8_MAX; break;
    case CH_UINT8: *mn = 0; *mx = UINT8_MAX; break;
    case CH_INT16: *mn = INT16_MIN; *mx = INT16_MAX; break;
    case CH_INT32: *mn = INT32_MIN; *mx = INT32_MAX; break;
    case CH_INT64: *mn = INT64_MIN; *mx = INT64_MAX; break;
    case CH_FLOAT16: *mn = -2048; *mx = 2048; break;
    case CH_FLOAT32: *mn = -16777216; *mx = 16777216; break;
    default: *mn = -9007199254740992LL; *mx = 9007199254740992LL; break;
    }
}

ch_status ch_random_randint(ch_tensor *out, int64_t low, int64_t high) {
    CH_CHECK_ARG(out, "randint", "out");
    if (high <= low)
        return ch_fail(CH_ERR_ARG, "randint: need low < high (got low=%lld, high=%lld)", (long long)low,
                       (long long)high);
    int64_t mn, mx;
    ch_dtype dt = (ch_dtype)out->dt;
    int_limits(dt, &mn, &mx);
    if (low < mn || high - 1 > mx)
        return ch_fail(CH_ERR_ARG, "randint: [%lld, %lld) does not fit dtype %s (values %lld..%lld)", (long long)low,
                       (long long)high, ch_dtype_name(dt), (long long)mn, (long long)mx);
    params pr = {K_RANDINT, 0, 0, low, (uint64_t)high - (uint64_t)low};
    return draw(out, &pr, "randint");
}

/* Moves a fresh CPU result to `device` (when it is not the CPU). */
static ch_status place(ch_tensor *t, int device, ch_tensor **result) {
    if (device == CH_CPU) {
        *result = t;
        return CH_OK;
    }
    ch_status st = ch_to_device(t, device, result);
    ch_tensor_release(t);
    return st;
}

/* Fisher-Yates from the last position down: step i swaps position i with a
 * uniform j in [0, i] drawn from counter offset+i. */
ch_status ch_random_permutation(int64_t n, int device, ch_tensor **result) {
    if (!result)
        return ch_fail(CH_ERR_ARG, "permutation: argument 'result' is NULL");
    if (n < 0)
        return ch_fail(CH_ERR_ARG, "permutation: n must be >= 0 (got %lld)", (long long)n);
    uint64_t seed, first;
    if (ch_rng_reserve(device, (uint64_t)n, &seed, &first) != 0)
        return ch_fail(CH_ERR_DEVICE, "permutation: no random state for device %d", device);
    ch_tensor *t = NULL;
    CH_TRY(ch_tensor_new(CH_INT64, 1, &n, CH_CPU, &t));
    int64_t *a = (int64_t *)ch_base(t);
    for (int64_t i = 0; i < n; i++)
        a[i] = i;
    for (int64_t i = n - 1; i >= 1; i--) {
        int64_t j = (int64_t)bounded(seed, first + (uint64_t)i, (uint64_t)i + 1);
        int64_t x = a[i];
        a[i] = a[j];
        a[j] = x;
    }
    return place(t, device, result);
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

/* Validated probabilities as float64 (normalised to sum 1); *nonzero counts the positive ones. */
static ch_status load_probs(const ch_tensor *probs, int64_t n, double **out, int64_t *nonzero) {
    CH_CHECK_ARG(probs, "choice", "p");
    if (probs->nd != 1 || probs->dim[0] != n)
        return ch_fail(CH_ERR_SHAPE, "choice: p must be 1-d with %lld entries (got %d-d with %lld elements)",
                       (long long)n, probs->nd, (long long)probs->numel);
    double *p = (double *)malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    if (!p)
        return ch_fail(CH_ERR_MEMORY, "choice: out of memory for %lld probabilities", (long long)n);
    ch_tensor *cpu = NULL;
    ch_status st = probs->dev == CH_CPU ? ch_contiguous_as(probs, CH_FLOAT64, &cpu) : CH_OK;
    if (st == CH_OK && probs->dev != CH_CPU) {
        ch_tensor *moved = NULL;
        st = ch_to_device(probs, CH_CPU, &moved);
        if (st == CH_OK) {
            st = ch_contiguous_as(moved, CH_FLOAT64, &cpu);
            ch_tensor_release(moved);
        }
    }
    if (st != CH_OK) {
        free(p);
        return st;
    }
    const double *src = (const double *)ch_base(cpu);
    double sum = 0;
    int64_t nz = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = src[i];
        if (!(v >= 0) || !isfinite(v)) {
            ch_tensor_release(cpu);
            free(p);
            return ch_fail(CH_ERR_ARG, "choice: p[%lld] = %g (probabilities must be finite and >= 0)", (long long)i, v);
        }
        p[i] = v;
        sum += v;
        nz += v > 0;
    }
    ch_tensor_release(cpu);
    /* float32 probabilities rarely sum to 1 exactly; allow their rounding */
    if (fabs(sum - 1.0) > 1e-5) {
        free(p);
        return ch_fail(CH_ERR_ARG, "choice: probabilities p sum to %.9g (expected 1)", sum);
    }
    for (int64_t i = 0; i < n; i++)
        p[i] /= sum;
    *out = p;
    *nonzero = nz;
    return CH_OK;
}

ch_status ch_random_choice(int64_t n, int64_t k, int replace, const ch_tensor *probs, int device, ch_tensor **result) {
    if (!result)
        return ch_fail(CH_ERR_ARG, "choice: argument 'result' is NULL");
    if (n < 0 || k < 0)
        return ch_fail(CH_ERR_ARG, "choice: n and size must be >= 0 (got n=%lld, size=%lld)", (long long)n,
                       (long long)k);
    if (n == 0 && k > 0)
        return ch_fail(CH_ERR_ARG, "choice: cannot take %lld samples from an empty population (n=0)", (long long)k);
    if (!replace && k > n)
        return ch_fail(CH_ERR_ARG,
                       "choice: cannot take %lld samples from %lld without replacement (use replace = true)",
                       (long long)k, (long long)n);
    double *p = NULL;
    int64_t nonzero = n;
    if (probs) {
        CH_TRY(load_probs(probs, n, &p, &nonzero));
        if (!replace && k > nonzero) {
            free(p);
            return ch_fail(CH_ERR_ARG,
                           "choice: only %lld entries of p are non-zero, fewer than size=%lld without replacement",
                           (long long)nonzero, (long long)k);
        }
    }
    /* counters: one per sample, or one per population item for weighted
     * sampling without replacement (every item gets a key) */
    uint64_t used = (probs && !replace) ? (uint64_t)n : (uint64_t)k;
    uint64_t seed, first;
    if (ch_rng_reserve(device, used, &seed, &first) != 0) {
        free(p);
        return ch_fail(CH_ERR_DEVICE, "choice: no random state for device %d", device);
    }
    ch_tensor *t = NULL;
    ch_status st = ch_tensor_new(CH_INT64, 1, &k, CH_CPU, &t);
    if (st != CH_OK) {
        free(p);
        return st;
    }
    int64_t *out = (int64_t *)ch_base(t);
    if (replace && !p) {
        CH_PAR_FOR(k >= CH_PARALLEL_GRAIN / 4, int64_t i = 0; i < k; i++, {
            out[i] = (int64_t)bounded(seed, first + (uint64_t)i, (uint64_t)n);
        });
    } else if (replace) {
        /* inverse CDF by binary search: the first i with cdf[i] > u */
        double acc = 0;
        int64_t last = 0;
        for (int64_t i = 0; i < n; i++) {
            acc += p[i];
            if (p[i] > 0)
                last = i;
            p[i] = acc;
        }
        CH_PAR_FOR(k >= CH_PARALLEL_GRAIN / 4, int64_t i = 0; i < k; i++, {
            uint32_t w[4];
            ch_philox_words(seed, first + (uint64_t)i, 0, w);
            double u = ch_u53(w[0], w[1]) * acc;
            int64_t lo = 0, hi = n;
            while (lo < hi) {
                int64_t mid = lo + (hi - lo) / 2;
                if (p[mid] > u) hi = mid;
                else lo = mid + 1;
            }
            out[i] = lo < n ? lo : last;   /* u == acc only through rounding */
        });
    } else if (!p) {
        /* partial Fisher-Yates: step i swaps i with a uniform j in [i, n) */
        int64_t *a = (int64_t *)malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
        if (!a) {
            ch_tensor_release(t);
            return ch_fail(CH_ERR_MEMORY, "choice: out of memory for a population of %lld", (long long)n);
        }
        for (int64_t i = 0; i < n; i++)
            a[i] = i;
        for (int64_t i = 0; i < k; i++) {
            int64_t j = i + (int64_t)bounded(seed, first + (uint64_t)i, (uint64_t)(n - i));
            int64_t x = a[i];
            a[i] = a[j];
            a[j] = x;
            out[i] = a[i];
        }
        free(a);
    } else {
        /* Efraimidis-Spirakis: key_i = log(u_i) / p_i, the k largest keys are
         * a weighted sample without replacement, in the order sequential
         * drawing would give them. */
        keyed *ks = (keyed *)malloc(sizeof(keyed) * (size_t)(nonzero > 0 ? nonzero : 1));
        if (!ks) {
            free(p);
            ch_tensor_release(t);
            return ch_fail(CH_ERR_MEMORY, "choice: out of memory for %lld keys", (long long)nonzero);
        }
        int64_t m = 0;
        for (int64_t i = 0; i < n; i++) {
            if (!(p[i] > 0))
                continue;
            uint32_t w[4];
            ch_philox_words(seed, first + (uint64_t)i, 0, w);
            double u = 1.0 - ch_u53(w[0], w[1]);   /* (0, 1] */
            ks[m].key = log(u) / p[i];
            ks[m].index = i;
            m++;
        }
        qsort(ks, (size_t)m, sizeof(keyed), by_key_desc);
        for (int64_t i = 0; i < k; i++)
            out[i] = ks[i].index;
        free(ks);
    }
    free(p);
    return place(t, device, result);
}

/*
 * random.cu -- the samplers on the GPU with the CPU's Philox4x32-10 stream
 * (host side: random.c).  Philox, the bounded-integer rejection and
 * Box-Muller are the very functions of runtime/core/rng.h, compiled here
 * as host-and-device inlines, and every sampler gives each element the
 * counter the CPU gives it (runtime/cpu/random.c), so a seed draws the same
 * numbers on both devices:
 *   - random_fill: item i reads counter first + i, exactly as the CPU.
 *     uniform, bernoulli and randint are integer arithmetic and IEEE
 *     products and sums: the same bits.  normal goes through log and cos,
 *     which are CUDA's on a GPU (within an ulp or two of glibc's), so
 *     normals may differ in the last bits of float64 there (float32 and
 *     float16 results are rounded from them and nearly always agree).
 *   - permutation: Fisher-Yates from the last position down is inherently
 *     sequential (each swap depends on the array the earlier ones left), so
 *     it runs as ONE item that reproduces the CPU's swaps exactly: O(n) on
 *     one GPU thread, latency-bound (tens of milliseconds for 10^5
 *     elements).  Shuffles of dataset indices are drawn on the CPU anyway.
 *   - choice: with replacement, one item per sample (uniform: the bounded
 *     integer; weighted: one item builds the CDF in order, as the CPU, then
 *     one binary search per sample).  Without replacement and uniform, the
 *     CPU's partial Fisher-Yates as one item over a scratch population
 *     (sequential, as permutation).  Weighted without replacement, the
 *     CPU's Efraimidis-Spirakis keys (one item per category), then each
 *     key's rank in the CPU's order (key descending, index ascending) by
 *     counting: O(n^2) comparisons, fine up to ~10^5 categories; a device
 *     sort would be the fast version.  The keys use log, so near-ties may
 *     order differently from the CPU's on a GPU.
 *
 * Compiled with --fmad=false so products and sums round as on the CPU.
 * Compiled here, NOT yet executed on a GPU: tests/cuda/test_random.cu runs
 * it emulated on the host against the CPU, bit for bit.
 */
#include "backend.h"
#include "convert.cuh"
#include "launch.cuh"

#define CH_RNG_FN static __host__ __device__ __forceinline__
#include "rng.h"

/* ---- random_fill --------------------------------------------------------- */
struct rf_uniform32 {
    float *d;
    double a, span;
    float hi, below;
    uint64_t seed, first;
    CU_HD void operator()(int64_t i) const {
        uint32_t w[4];
        ch_philox_words(seed, first + (uint64_t)i, 0, w);
        float v = (float)(a + span * ch_u24(w[0]));
        d[i] = (v >= hi && span > 0) ? below : v; /* rounding must not reach high */
    }
};

struct rf_uniform64 {
    double *d;
    double a, span, hi, below;
    uint64_t seed, first;
    CU_HD void operator()(int64_t i) const {
        uint32_t w[4];
        ch_philox_words(seed, first + (uint64_t)i, 0, w);
        double v = a + span * ch_u53(w[0], w[1]);
        d[i] = (v >= hi && span > 0) ? below : v;
    }
};

/* float16: the bits of the rounded value, stepped one half-ulp below high */
CU_HD uint16_t half_bits(float f) {
    __half_raw r = __float2half_rn(f);
    return r.x;
}

struct rf_uniform16 {
    uint16_t *d;
    double a, span;
    uint16_t hi;
    uint64_t seed, first;
    CU_HD void operator()(int64_t i) const {
        uint32_t w[4];
        ch_philox_words(seed, first + (uint64_t)i, 0, w);
        uint16_t h = half_bits((float)(a + span * ch_u24(w[0])));
        if (h == hi && span > 0)
            h = (hi & 0x8000) ? (uint16_t)(hi + 1) : ((hi & 0x7fff) ? (uint16_t)(hi - 1) : (uint16_t)0x8001);
        d[i] = h;
    }
};

template <typename T> struct rf_normal {
    T *d;
    double mean, std;
    uint64_t seed, first;
    CU_HD void operator()(int64_t i) const {
        uint32_t w[4];
        ch_philox_words(seed, first + (uint64_t)i, 0, w);
        d[i] = cu_store<T>::from(mean + std * ch_rng_std_normal(w));
    }
};

template <typename T> struct rf_bernoulli {
    T *d;
    double p;
    uint64_t seed, first;
    CU_HD void operator()(int64_t i) const {
        uint32_t w[4];
        ch_philox_words(seed, first + (uint64_t)i, 0, w);
        d[i] = cu_store<T>::from(ch_u53(w[0], w[1]) < p ? 1.0 : 0.0);
    }
};

/* An integer draw stored as the CPU stores it: float dtypes through double. */
template <typename T> CU_HD T randint_value(int64_t v) { return cu_store<T>::from(v); }
template <> CU_HD float randint_value<float>(int64_t v) { return (float)(double)v; }

template <typename T> struct rf_randint {
    T *d;
    int64_t lo;
    uint64_t range, seed, first;
    CU_HD void operator()(int64_t i) const {
        d[i] = randint_value<T>((int64_t)((uint64_t)lo + ch_rng_bounded(seed, first + (uint64_t)i, range)));
    }
};

extern "C" ch_status cu_random_fill_launch(const ch_random_args *r, int dt, int64_t n, char *out) {
    const char *fn = "random";
    double a = r->a, b = r->b;
    if (r->kind == CH_RANDOM_UNIFORM) {
        if (dt == CH_FLOAT32) {
            float hi = (float)b;
            return cu_each(fn, n, rf_uniform32{(float *)out, a, b - a, hi, nextafterf(hi, -INFINITY), r->seed, r->first});
        }
        if (dt == CH_FLOAT64)
            return cu_each(fn, n, rf_uniform64{(double *)out, a, b - a, b, nextafter(b, -INFINITY), r->seed, r->first});
        return cu_each(fn, n, rf_uniform16{(uint16_t *)out, a, b - a, half_bits((float)b), r->seed, r->first});
    }
    ch_status st = CH_OK;
    cu_dispatch(dt, [&](auto *tag) {
        using T = std::remove_pointer_t<decltype(tag)>;
        T *d = (T *)out;
        if (r->kind == CH_RANDOM_NORMAL)
            st = cu_each(fn, n, rf_normal<T>{d, a, b, r->seed, r->first});
        else if (r->kind == CH_RANDOM_BERNOULLI)
            st = cu_each(fn, n, rf_bernoulli<T>{d, a, r->seed, r->first});
        else
            st = cu_each(fn, n, rf_randint<T>{d, r->lo, r->range, r->seed, r->first});
    });
    return st;
}

/* ---- permutation and choice (the samplers of core/rng.h) ----------------- */
/* Fisher-Yates: one item, the steps are sequential. */
struct perm_steps {
    int64_t *a;
    int64_t n;
    uint64_t seed, first;
    CU_HD void operator()(int64_t) const { ch_rng_permutation(seed, first, n, a); }
};

extern "C" ch_status cu_permutation_launch(uint64_t seed, uint64_t first, int64_t n, int64_t *a) {
    return cu_each("permutation", 1, perm_steps{a, n, seed, first});
}

struct choice_uniform {
    int64_t *out;
    int64_t n;
    uint64_t seed, first;
    CU_HD void operator()(int64_t i) const { out[i] = (int64_t)ch_rng_bounded(seed, first + (uint64_t)i, (uint64_t)n); }
};

/* p becomes its running sum, *acc the total and *last the last positive
 * category (one item: the sum is in order). */
struct choice_cdf {
    double *p, *acc;
    int64_t *last;
    int64_t n;
    CU_HD void operator()(int64_t) const { *acc = ch_rng_cdf(p, n, last); }
};

/* One binary search per sample. */
struct choice_search {
    const double *cdf, *acc;
    const int64_t *last;
    int64_t *out;
    int64_t n;
    uint64_t seed, first;
    CU_HD void operator()(int64_t i) const { out[i] = ch_rng_cdf_sample(cdf, n, *acc, *last, seed, first + (uint64_t)i); }
};

/* Partial Fisher-Yates over the scratch population a: one item. */
struct choice_partial_shuffle {
    int64_t *a, *out;
    int64_t n, k;
    uint64_t seed, first;
    CU_HD void operator()(int64_t) const { ch_rng_partial_shuffle(seed, first, n, k, a, out); }
};

/* The Efraimidis-Spirakis key of category i (counter first + i), for p > 0. */
struct choice_keys {
    const double *p;
    double *key;
    uint64_t seed, first;
    CU_HD void operator()(int64_t i) const {
        if (p[i] > 0)
            key[i] = ch_rng_es_key(p[i], seed, first + (uint64_t)i);
    }
};

/* Category i's place in the CPU's order (key descending, then index); the
 * first k places are the sample. */
struct choice_rank {
    const double *p, *key;
    int64_t *out;
    int64_t n, k;
    CU_HD void operator()(int64_t i) const {
        if (!(p[i] > 0))
            return;
        double ki = key[i];
        int64_t rank = 0;
        for (int64_t j = 0; j < n; j++)
            if (p[j] > 0 && (key[j] > ki || (key[j] == ki && j < i)))
                rank++;
        if (rank < k)
            out[rank] = i;
    }
};

extern "C" ch_status cu_choice_launch(int dev, int64_t n, int replace, double *p, uint64_t seed, uint64_t first,
                                      int64_t k, int64_t *out) {
    const char *fn = "choice";
    if (replace && !p)
        return cu_each(fn, k, choice_uniform{out, n, seed, first});
    /* scratch: two words (total, last) for the CDF, n population entries or n keys */
    size_t bytes = (size_t)(replace ? 2 : n) * 8;
    char *scratch = (char *)cu_scratch(dev, bytes, fn);
    if (!scratch)
        return CH_ERR_MEMORY;
    ch_status st;
    if (replace) {
        double *acc = (double *)scratch;
        int64_t *last = (int64_t *)(scratch + 8);
        st = cu_each(fn, 1, choice_cdf{p, acc, last, n});
        if (st == CH_OK)
            st = cu_each(fn, k, choice_search{p, acc, last, out, n, seed, first});
    } else if (!p) {
        st = cu_each(fn, 1, choice_partial_shuffle{(int64_t *)scratch, out, n, k, seed, first});
    } else {
        double *key = (double *)scratch;
        st = cu_each(fn, n, choice_keys{p, key, seed, first});
        if (st == CH_OK)
            st = cu_each(fn, n, choice_rank{p, key, out, n, k});
    }
    cu_scratch_release(dev, scratch, bytes);
    return st;
}

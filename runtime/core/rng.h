/*
 * rng.h -- Philox4x32-10 and the per-device generator state (internal).
 *
 * Philox4x32-10 is the counter-based generator of Salmon, Moraes, Dror and
 * Shaw, "Parallel random numbers: as easy as 1, 2, 3" (SC'11): ten rounds
 * of a keyed bijection on a 128-bit counter give four 32-bit words.  Since
 * any counter can be evaluated on its own, element i of a draw is a pure
 * function of (seed, offset + i), whichever thread computes it.
 *
 * Counter layout used throughout chainlua:
 *   ctr = { lo32(offset + i), hi32(offset + i), attempt, 0 }
 *   key = { lo32(seed), hi32(seed) }
 * `attempt` is 0 for the first block of four words of an element; rejection
 * samplers that need more words use attempt = 1, 2, ... for the same i.
 */
#ifndef CHAINLUA_RNG_H
#define CHAINLUA_RNG_H

#include <math.h>
#include <stdint.h>

/* The stream is defined once, here: the CPU's samplers (cpu/random.c) and
 * the GPU's (cuda/random.cu, which defines CH_RNG_FN as a host-and-device
 * inline) compile these same functions, so a seed gives the same numbers
 * on both devices. */
#ifndef CH_RNG_FN
#define CH_RNG_FN static inline
#endif

#define CH_PHILOX_M0 0xD2511F53u
#define CH_PHILOX_M1 0xCD9E8D57u
#define CH_PHILOX_W0 0x9E3779B9u
#define CH_PHILOX_W1 0xBB67AE85u

CH_RNG_FN void ch_philox4x32_10(const uint32_t ctr_in[4], const uint32_t key_in[2], uint32_t out[4]) {
    uint32_t c0 = ctr_in[0], c1 = ctr_in[1], c2 = ctr_in[2], c3 = ctr_in[3];
    uint32_t k0 = key_in[0], k1 = key_in[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)CH_PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)CH_PHILOX_M1 * c2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        c0 = hi1 ^ c1 ^ k0;
        c1 = lo1;
        c2 = hi0 ^ c3 ^ k1;
        c3 = lo0;
        k0 += CH_PHILOX_W0;  /* the key schedule: a Weyl sequence */
        k1 += CH_PHILOX_W1;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* The four words for element `index` (absolute counter) and `attempt`. */
CH_RNG_FN void ch_philox_words(uint64_t seed, uint64_t index, uint32_t attempt, uint32_t out[4]) {
    uint32_t ctr[4] = {(uint32_t)index, (uint32_t)(index >> 32), attempt, 0};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    ch_philox4x32_10(ctr, key, out);
}

/* Uniform in [0, 1) with 24 random bits (float32 resolution). */
CH_RNG_FN double ch_u24(uint32_t w) { return (double)(w >> 8) * (1.0 / 16777216.0); }
/* Uniform in [0, 1) with 53 random bits (float64 resolution). */
CH_RNG_FN double ch_u53(uint32_t a, uint32_t b) {
    uint64_t x = ((uint64_t)(a >> 5) << 26) | (b >> 6);
    return (double)x * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, range), range >= 1, without modulo bias.  Ranges up
 * to 2^32 use Lemire's multiply-shift with rejection (one 32-bit word per
 * try); wider ranges reject 64-bit words below 2^64 mod range.  Extra words
 * for rejected tries come from the same element's counter with attempt 1, 2,... */
CH_RNG_FN uint64_t ch_rng_bounded(uint64_t seed, uint64_t idx, uint64_t range) {
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
 * element owns its counter).  On a GPU, log and cos are CUDA's (within an
 * ulp or two of glibc's), so normals may differ in the last bits there. */
CH_RNG_FN double ch_rng_std_normal(const uint32_t w[4]) {
    double u1 = 1.0 - ch_u53(w[0], w[1]);
    double u2 = ch_u53(w[2], w[3]);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* The samplers built on them, shared by both devices as well. */

/* a = a uniform permutation of 0..n-1: Fisher-Yates from the last position
 * down, step i swapping i with a uniform j in [0, i] from counter first+i
 * (sequential: each step reads what the earlier ones left). */
CH_RNG_FN void ch_rng_permutation(uint64_t seed, uint64_t first, int64_t n, int64_t *a) {
    for (int64_t i = 0; i < n; i++)
        a[i] = i;
    for (int64_t i = n - 1; i >= 1; i--) {
        int64_t j = (int64_t)ch_rng_bounded(seed, first + (uint64_t)i, (uint64_t)i + 1);
        int64_t x = a[i];
        a[i] = a[j];
        a[j] = x;
    }
}

/* out = k distinct samples of 0..n-1: partial Fisher-Yates over the
 * population a (n entries, overwritten), step i swapping i with a uniform j
 * in [i, n) from counter first+i. */
CH_RNG_FN void ch_rng_partial_shuffle(uint64_t seed, uint64_t first, int64_t n, int64_t k, int64_t *a,
                                      int64_t *out) {
    for (int64_t i = 0; i < n; i++)
        a[i] = i;
    for (int64_t i = 0; i < k; i++) {
        int64_t j = i + (int64_t)ch_rng_bounded(seed, first + (uint64_t)i, (uint64_t)(n - i));
        int64_t x = a[i];
        a[i] = a[j];
        a[j] = x;
        out[i] = a[i];
    }
}

/* p (n probabilities) becomes its running sum, in order; returns the total,
 * *last = the last category with a positive probability. */
CH_RNG_FN double ch_rng_cdf(double *p, int64_t n, int64_t *last) {
    double acc = 0;
    int64_t l = 0;
    for (int64_t i = 0; i < n; i++) {
        acc += p[i];
        if (p[i] > 0)
            l = i;
        p[i] = acc;
    }
    *last = l;
    return acc;
}

/* A weighted sample from counter idx: the first category whose running sum
 * (cdf, total acc) exceeds u * acc, by binary search. */
CH_RNG_FN int64_t ch_rng_cdf_sample(const double *cdf, int64_t n, double acc, int64_t last, uint64_t seed,
                                    uint64_t idx) {
    uint32_t w[4];
    ch_philox_words(seed, idx, 0, w);
    double u = ch_u53(w[0], w[1]) * acc;
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo < n ? lo : last; /* u == acc only through rounding */
}

/* The Efraimidis-Spirakis key log(u) / p (u in (0, 1] from counter idx) of
 * a category with probability p > 0: the k largest keys are a weighted
 * sample without replacement, in the order sequential drawing gives. */
CH_RNG_FN double ch_rng_es_key(double p, uint64_t seed, uint64_t idx) {
    uint32_t w[4];
    ch_philox_words(seed, idx, 0, w);
    return log(1.0 - ch_u53(w[0], w[1])) / p;
}

/* Reserves `n` counters of `device`'s stream: returns the first one and
 * advances the offset; *seed receives the device's seed.  Returns -1 for
 * a device id outside the supported range, else 0. */
int ch_rng_reserve(int device, uint64_t n, uint64_t *seed, uint64_t *first);

#endif

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

/* Reserves `n` counters of `device`'s stream: returns the first one and
 * advances the offset; *seed receives the device's seed.  Returns -1 for
 * a device id outside the supported range, else 0. */
int ch_rng_reserve(int device, uint64_t n, uint64_t *seed, uint64_t *first);

#endif

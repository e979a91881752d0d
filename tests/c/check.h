/* check.h -- a tiny assertion kit for the C tests (ctest runs each
 * test_*.c as its own program; a non-zero exit is a failure). */
#ifndef CHAINLUA_TEST_CHECK_H
#define CHAINLUA_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chainlua.h"

static int check_failures;

#define CHECK(cond)                                                              \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            check_failures++;                                                    \
        }                                                                        \
    } while (0)

/* Whether the runtime's block caches are on: AddressSanitizer builds and
 * CHAINLUA_NO_BLOCK_CACHE bypass them (every block its own allocation), so
 * checks on cached bytes and carved chunks apply only when this is true. */
static inline int check_block_cache_on(void) {
#if defined(__SANITIZE_ADDRESS__)
    return 0;
#else
    return !getenv("CHAINLUA_NO_BLOCK_CACHE");
#endif
}

/* expr must return CH_OK. */
#define CHECK_OK(expr)                                                           \
    do {                                                                         \
        ch_status st_ = (expr);                                                  \
        if (st_ != CH_OK) {                                                      \
            fprintf(stderr, "%s:%d: %s failed (%d): %s\n", __FILE__, __LINE__, #expr, \
                    (int)st_, ch_last_error());                                  \
            check_failures++;                                                    \
        }                                                                        \
    } while (0)

/* expr must fail with `status` and a message containing every one of the
 * NULL-terminated substrings that follow. */
#define CHECK_ERR(expr, status, ...)                                             \
    do {                                                                         \
        ch_status st_ = (expr);                                                  \
        const char *subs_[] = {__VA_ARGS__, NULL};                               \
        if (st_ != (status)) {                                                   \
            fprintf(stderr, "%s:%d: %s returned %d (expected %d): %s\n", __FILE__, __LINE__, \
                    #expr, (int)st_, (int)(status), ch_last_error());             \
            check_failures++;                                                    \
        } else {                                                                 \
            for (int k_ = 0; subs_[k_]; k_++)                                    \
                if (!strstr(ch_last_error(), subs_[k_])) {                       \
                    fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__, \
                            __LINE__, ch_last_error(), subs_[k_]);               \
                    check_failures++;                                            \
                }                                                                \
        }                                                                        \
    } while (0)

#define CHECK_EQ_I(a, b)                                                         \
    do {                                                                         \
        long long a_ = (long long)(a), b_ = (long long)(b);                      \
        if (a_ != b_) {                                                          \
            fprintf(stderr, "%s:%d: %s == %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); \
            check_failures++;                                                    \
        }                                                                        \
    } while (0)

static inline int check_done(const char *name) {
    if (check_failures) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

/* Element k (flat, C order) of t as a double; NAN on error. */
static inline double at(const ch_tensor *t, int64_t k) {
    double v = 0;
    if (ch_get_flat(t, k, &v) != CH_OK)
        return 0.0 / 0.0;
    return v;
}

#endif

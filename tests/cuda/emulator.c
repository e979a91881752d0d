/* emulator.c -- the backend's error plumbing and test helpers for the
 * emulated kernels (see emulator.h). */
#include "emulator.h"

#include <stdarg.h>

static char last_error[1024];

static ch_status record_failure(ch_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}
ch_status (*cu_fail_fn)(ch_status st, const char *fmt, ...) = record_failure;

ch_status cu_check(int err, const char *fn, const char *what) {
    return err == 0 ? CH_OK : cu_fail(CH_ERR_DEVICE, "%s: %s failed (CUDA error %d)", fn, what, err);
}

/* The emulated machine has one device, cuda:0. */
__attribute__((constructor)) static void one_device(void) { cu_device_count = 1; }

const char *emu_last_error(void) { return last_error; }

ch_tensor emu_on_device(const ch_tensor *t) {
    ch_tensor d = *t;
    d.dev = 0;
    d.refcount = 1;
    return d;
}

void emu_fill_uniform(ch_tensor *t, double lo, double hi, uint64_t seed) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t k = 0; k < t->numel; k++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17; /* xorshift64 */
        ch_set_flat(t, k, lo + (hi - lo) * (double)(s >> 11) / 9007199254740992.0);
    }
}

int64_t emu_bit_mismatches(const ch_tensor *a, const ch_tensor *b) {
    size_t size = cu_dtype_size(a->dt);
    const char *pa = (const char *)ch_tensor_ptr(a), *pb = (const char *)ch_tensor_ptr(b);
    int64_t bad = 0;
    for (int64_t k = 0; k < a->numel; k++)
        bad += memcmp(pa + k * size, pb + k * size, size) != 0;
    return bad;
}

/*
 * cumulative.cu -- cumsum/cumprod along the R axis of the (O, R, I) view,
 * one item per line (o, i): the line's running sum or product in order,
 * as the CPU's cum_pass (runtime/cpu/reduce_kernels.h), including how it
 * starts (I == 1: from 0 or 1; else a copy of the first element, which keeps
 * -0.0), and int64 wrapping through uint64.  Neighbouring items are
 * neighbouring columns, so the reads of a step are coalesced when I > 1;
 * for I == 1 each item walks a whole row (O items: little parallelism for a
 * few long rows, the price of the CPU's sequential order).
 *
 * Compiled with --fmad=false.  Compiled here, NOT yet executed on a GPU:
 * tests/cuda/test_cumulative.cu runs it emulated on the host against the
 * CPU, bit for bit.
 */
#include "backend.h"
#include "launch.cuh"

template <typename T> struct cum_line {
    const T *x;
    T *out;
    int64_t R, I;
    int prod;

    CU_HD void operator()(int64_t line) const {
        int64_t o = line / I, i = line % I;
        const T *src = x + o * R * I + i;
        T *dst = out + o * R * I + i;
        if (I == 1) {
            T acc = prod ? (T)1 : (T)0;
            for (int64_t r = 0; r < R; r++) {
                acc = prod ? acc * src[r] : acc + src[r];
                dst[r] = acc;
            }
            return;
        }
        if (R == 0)
            return;
        T acc = src[0];
        dst[0] = acc;
        for (int64_t r = 1; r < R; r++) {
            acc = prod ? acc * src[r * I] : acc + src[r * I];
            dst[r * I] = acc;
        }
    }
};

template <typename T>
static ch_status launch(int prod, int64_t O, int64_t R, int64_t I, const char *x, char *out) {
    return cu_each(prod ? "cumprod" : "cumsum", O * I, cum_line<T>{(const T *)x, (T *)out, R, I, prod});
}

extern "C" ch_status cu_cumulative_launch(int prod, int dt, int64_t O, int64_t R, int64_t I, const char *x,
                                          char *out) {
    if (dt == CH_FLOAT32)
        return launch<float>(prod, O, R, I, x, out);
    if (dt == CH_FLOAT64)
        return launch<double>(prod, O, R, I, x, out);
    return launch<uint64_t>(prod, O, R, I, x, out); /* int64 wraps, as on the CPU */
}

/* addmul.c -- the CPU kernel of acc += x * y in place over same-shape,
 * C-contiguous float32/float64 operands (the front door, with the general
 * broadcasting route: runtime/ops/addmul.c).  The product is rounded
 * before the add (CMake builds this file with -ffp-contract=off), so it
 * gives the same values as acc + x * y computed in two steps. */
#include "../core/internal.h"
#include "../core/kernels.h"

/* acc[i] = acc[i] + x[i] * y[i] over n dense elements.  The loop is written
 * twice so that small sizes never enter OpenMP: a parallel region whose if()
 * clause is false still builds a libgomp team and makes a futex syscall
 * (~0.4 us), far more than the arithmetic of a small gradient. */
#define ADDMUL_DENSE(T, acc, x, y, n)                                                  \
    do {                                                                               \
        T *pa_ = (T *)ch_base(acc);                                                    \
        const T *px_ = (const T *)ch_base(x), *py_ = (const T *)ch_base(y);            \
        if ((n) >= CH_PARALLEL_GRAIN) {                                                \
            _Pragma("omp parallel for schedule(static)")                               \
            for (int64_t i = 0; i < (n); i++) {                                        \
                T p_ = px_[i] * py_[i];                                                \
                pa_[i] = pa_[i] + p_;                                                  \
            }                                                                          \
        } else {                                                                       \
            for (int64_t i = 0; i < (n); i++) {                                        \
                T p_ = px_[i] * py_[i];                                                \
                pa_[i] = pa_[i] + p_;                                                  \
            }                                                                          \
        }                                                                              \
    } while (0)

ch_status ch_cpu_addmul(ch_tensor *acc, const ch_tensor *x, const ch_tensor *y) {
    int64_t n = acc->numel;
    if (acc->dt == CH_FLOAT32)
        ADDMUL_DENSE(float, acc, x, y, n);
    else
        ADDMUL_DENSE(double, acc, x, y, n);
    return CH_OK;
}

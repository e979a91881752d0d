/* timing.h -- what the C reference programs of bench/ (membw.c, sgemm_c.c,
 * conv_c.c, mpi_allreduce_c.c) share: wall-clock and process CPU time in
 * seconds, and the order of doubles for qsort (minima and medians of
 * repeated runs).  Included by a path relative to the including file, so
 * their one-line build commands need no -I. */
#ifndef BENCH_TIMING_H
#define BENCH_TIMING_H

#include <time.h>

static inline double wall_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline double cpu_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif

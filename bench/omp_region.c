/* omp_region.c -- what one OpenMP parallel region costs a batch-1 inference
 * call (two regions per call: the gemvs of the 784x1000 and 1000x1000
 * layers; bench/README.md, session 12).
 *  1. A FUTEX_WAKE syscall with no waiter: libgomp makes two per region
 *     (the team's start and its closing barrier) whether or not a worker
 *     sleeps, so on a VM where a syscall is slow (page-table isolation) they
 *     are most of the region's cost.
 *  2. An empty region of 2 threads after the main thread has been busy for
 *     a gap of 0 us to 10 ms (Lua work between two calls): within libgomp's
 *     spin time (GOMP_SPINCOUNT, 300000 by default) the worker is awake;
 *     after it, every region pays a futex wake-up of the sleeping worker.
 *   cc -O2 -fopenmp bench/omp_region.c -o omp_region && ./omp_region
 * Compare with GOMP_SPINCOUNT=1000 or OMP_WAIT_POLICY=passive/active. */
#include <linux/futex.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "timing.h"

enum { REPS = 2000 };
static double t[REPS];
static volatile int sink;

static void print(const char *what, int n) {
    qsort(t, n, sizeof *t, cmp_double);
    printf("%-40s best %7.2f  p10 %7.2f  median %7.2f us\n", what, t[0] * 1e6, t[n / 10] * 1e6, t[n / 2] * 1e6);
}

static void busy_for(double seconds) {
    double t0 = wall_now();
    while (wall_now() - t0 < seconds) {
    }
}

int main(void) {
    static int word;
    for (int r = 0; r < REPS; r++) {
        double t0 = wall_now();
        syscall(SYS_futex, &word, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
        t[r] = wall_now() - t0;
    }
    print("futex wake, no waiter", REPS);
    const double gaps_us[] = {0, 100, 300, 1000, 3000, 10000};
    for (int g = 0; g < (int)(sizeof gaps_us / sizeof *gaps_us); g++) {
        int reps = gaps_us[g] >= 1000 ? REPS / 10 : REPS;
        for (int r = 0; r < reps; r++) {
            busy_for(gaps_us[g] * 1e-6);
            double t0 = wall_now();
#pragma omp parallel num_threads(2)
            sink = omp_get_thread_num();
            t[r] = wall_now() - t0;
        }
        char what[64];
        snprintf(what, sizeof what, "2-thread region after %.0f us busy", gaps_us[g]);
        print(what, reps);
    }
    return 0;
}

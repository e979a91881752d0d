/* membw.c -- the memory-bandwidth ceiling for the elementwise benchmarks of
 * bench/workloads.lua: a parallel copy and a parallel read (sum) of 10^7
 * floats, the same size as the elementwise add and sum.  Built by bench/run.
 * Prints `copy_gbs X` (bytes read + written per second) and `read_gbs X`. */
#include <stdio.h>
#include <stdlib.h>
#include "timing.h"

int main(void) {
    const long n = 10000000;
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    if (!a || !b)
        return 1;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) a[i] = (float)(i % 7), b[i] = 0;
    double tc[10], tr[10];
    volatile float sink = 0;
    for (int r = 0; r < 10; r++) {
        double t0 = wall_now();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++) b[i] = a[i];
        tc[r] = wall_now() - t0;
        t0 = wall_now();
        /* 16 independent partial sums per thread so that the adds do not
         * form one dependency chain (which would measure add latency) */
        float s = 0;
#pragma omp parallel reduction(+ : s)
        {
            float p[16] = {0};
#pragma omp for schedule(static)
            for (long i = 0; i < n / 16; i++)
                for (int k = 0; k < 16; k++) p[k] += a[i * 16 + k];
            for (int k = 0; k < 16; k++) s += p[k];
        }
        tr[r] = wall_now() - t0;
        sink += s + b[r];
    }
    qsort(tc, 10, sizeof *tc, cmp_double);
    qsort(tr, 10, sizeof *tr, cmp_double);
    printf("copy_gbs %.2f\nread_gbs %.2f\n", 2.0 * 4 * n / tc[5] / 1e9, 4.0 * n / tr[5] / 1e9);
    free(a), free(b);
    return sink == 12345 ? 2 : 0;
}

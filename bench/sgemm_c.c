/* sgemm_c.c -- the ceiling for bench/sgemm.lua: cblas_sgemm called directly.
 * Build: cc -O2 bench/sgemm_c.c -I/usr/include/x86_64-linux-gnu/openblas-openmp \
 *          -L/usr/lib/x86_64-linux-gnu/openblas-openmp -lopenblas -fopenmp -o /tmp/sgemm_c
 * Prints GFLOP/s of C = A @ B for n = 1024 and 2048 (median of runs), and
 * the latency of a batch-1 product (1x784 @ 784x1000) through sgemm and
 * through sgemv. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include "timing.h"

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static float *randm(size_t n) {
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = (float)rand() / RAND_MAX - 0.5f;
    return p;
}

int main(void) {
    int sizes[2] = {1024, 2048};
    for (int s = 0; s < 2; s++) {
        int n = sizes[s];
        float *a = randm((size_t)n * n), *b = randm((size_t)n * n), *c = randm((size_t)n * n);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n); /* warm-up */
        double t[7];
        int runs = n == 1024 ? 7 : 5;
        for (int r = 0; r < runs; r++) {
            double t0 = wall_now();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
            t[r] = wall_now() - t0;
        }
        printf("cblas_sgemm %d: %.1f GFLOP/s\n", n, 2.0 * n * n * n / median(t, runs) / 1e9);
        free(a), free(b), free(c);
    }
    /* batch 1: x(1x784) @ W(784x1000) */
    int K = 784, N = 1000, reps = 2000;
    float *x = randm((size_t)K), *w = randm((size_t)K * N), *y = randm((size_t)N);
    double t[5];
    for (int r = 0; r < 5; r++) {
        double t0 = wall_now();
        for (int i = 0; i < reps; i++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, N, K, 1, x, K, w, N, 0, y, N);
        t[r] = (wall_now() - t0) / reps;
    }
    printf("batch-1 1x784 @ 784x1000 via sgemm: %.1f us\n", median(t, 5) * 1e6);
    for (int r = 0; r < 5; r++) {
        double t0 = wall_now();
        for (int i = 0; i < reps; i++)
            cblas_sgemv(CblasRowMajor, CblasTrans, K, N, 1, w, N, x, 1, 0, y, 1);
        t[r] = (wall_now() - t0) / reps;
    }
    printf("batch-1 1x784 @ 784x1000 via sgemv: %.1f us\n", median(t, 5) * 1e6);
    free(x), free(w), free(y);
    return 0;
}

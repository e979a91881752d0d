/* mlp_gemms_c.c -- the ceiling of the `mlp` workload's products: the eight
 * GEMMs of one training step of the 784-1000-1000-10 MLP at batch 100,
 * called directly through cblas_sgemm with the same OpenBLAS (OpenMP) as
 * libchainlua, next to cblas_sgemm 2048^3, the roofline `make bench` uses.
 * Build (bench/run does): cc -O2 bench/mlp_gemms_c.c \
 *   -I/usr/include/x86_64-linux-gnu/openblas-openmp \
 *   -L/usr/lib/x86_64-linux-gnu/openblas-openmp -lopenblas -fopenmp -o mlp_gemms_c
 * Run with OMP_NUM_THREADS as the bench.  Prints each product's median time,
 * their sum per step, and that sum as a fraction of the roofline: if the
 * products alone cannot reach a fraction, no framework running them through
 * this BLAS can reach it for the whole step. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include "timing.h"

/* Row-major C(MxN) = op(A) op(B), beta = 0, as the step computes them. */
typedef struct {
    const char *what;
    int m, n, k;
    int ta, tb; /* A is KxM (transposed) / B is NxK (transposed) */
} product;

static const product step[8] = {
    {"x W1^T      (forward l1)", 100, 1000, 784, 0, 1},
    {"h1 W2^T     (forward l2)", 100, 1000, 1000, 0, 1},
    {"h2 W3^T     (forward l3)", 100, 10, 1000, 0, 1},
    {"gy3^T h2    (gW3)", 10, 1000, 100, 1, 0},
    {"gy3 W3      (gh2)", 100, 1000, 10, 0, 0},
    {"gy2^T h1    (gW2)", 1000, 1000, 100, 1, 0},
    {"gy2 W2      (gh1)", 100, 1000, 1000, 0, 0},
    {"gy1^T x     (gW1)", 1000, 784, 100, 1, 0},
};

static float *randm(size_t n) {
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = (float)rand() / RAND_MAX - 0.5f;
    return p;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static void run(const product *p, const float *a, const float *b, float *c) {
    int lda = p->ta ? p->m : p->k, ldb = p->tb ? p->k : p->n;
    cblas_sgemm(CblasRowMajor, p->ta ? CblasTrans : CblasNoTrans, p->tb ? CblasTrans : CblasNoTrans,
                p->m, p->n, p->k, 1, a, lda, b, ldb, 0, c, p->n);
}

int main(void) {
    /* the roofline: 2048^3, median of 5 after a warm-up (as sgemm_c.c) */
    int n = 2048;
    float *a = randm((size_t)n * n), *b = randm((size_t)n * n), *c = randm((size_t)n * n);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
    double t[201];
    for (int r = 0; r < 5; r++) {
        double t0 = wall_now();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1, a, n, b, n, 0, c, n);
        t[r] = wall_now() - t0;
    }
    double roof = 2.0 * n * n * n / median(t, 5) / 1e9;
    free(a), free(b), free(c);

    /* the step's products, each on its own operands (as in the step: no
     * product finds another's output in its cache by design), 200 calls
     * each after 20 of warm-up, interleaved round by round so that the
     * host's drift spreads over all of them */
    enum { ROUNDS = 200, WARM = 20 };
    float *pa[8], *pb[8], *pc[8];
    double times[8][ROUNDS];
    for (int i = 0; i < 8; i++) {
        const product *p = &step[i];
        pa[i] = randm((size_t)p->m * p->k), pb[i] = randm((size_t)p->k * p->n), pc[i] = randm((size_t)p->m * p->n);
    }
    for (int r = 0; r < WARM + ROUNDS; r++)
        for (int i = 0; i < 8; i++) {
            double t0 = wall_now();
            run(&step[i], pa[i], pb[i], pc[i]);
            if (r >= WARM) times[i][r - WARM] = wall_now() - t0;
        }
    double flop = 0, sum = 0;
    for (int i = 0; i < 8; i++) {
        const product *p = &step[i];
        double med = median(times[i], ROUNDS), f = 2.0 * p->m * p->n * p->k;
        printf("%-26s %4d x %4d x %4d  %7.3f ms  %6.1f GFLOP/s\n", p->what, p->m, p->n, p->k, med * 1e3,
               f / med / 1e9);
        flop += f, sum += med;
        free(pa[i]), free(pb[i]), free(pc[i]);
    }
    printf("cblas_sgemm 2048: %.1f GFLOP/s (the roofline)\n", roof);
    printf("the 8 products of a step: %.3f ms, %.1f GFLOP/s = %.0f %% of the roofline "
           "(a step at most %.0f samples/s through this BLAS)\n",
           sum * 1e3, flop / sum / 1e9, 100.0 * flop / sum / 1e9 / roof, 100.0 / sum);
    return 0;
}

/* cache_read.c -- the read-bandwidth ceiling of batch-1 inference: one thread
 * streams a buffer of the size of the bench MLP's weights (784x1000 +
 * 1000x1000 + 1000x10 floats, 7.2 MB, what one call's three gemvs read) and
 * of each layer alone (3.1 MB, 4.0 MB), again and again, with 16-lane
 * AVX-512 loads into eight independent sums (so the loads, not the adds,
 * limit it).  After the first pass the buffer is wherever the caches keep
 * it, as the weights are between two inference calls.  Prints the best and
 * the median GB/s of each size: what a gemv over those rows could reach.
 * With THREADS > 1 each thread streams its own contiguous share (as the
 * gemv splits W's rows), all inside one parallel region per pass.
 * Sizes in MB after REPS replace the three (where the caches end: the MLP's
 * step keeps 14.4 MB of weights and gradients, `./cache_read 2 300 1 4 16 32 64`).
 *   cc -O3 -mavx512f -fopenmp -Ibench bench/cache_read.c -o cache_read && ./cache_read [THREADS] [REPS] [MB...] */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "timing.h"

static float read_all(const float *a, size_t n) {
  __m512 s[8];
  for (int k = 0; k < 8; k++) s[k] = _mm512_setzero_ps();
  for (size_t i = 0; i + 128 <= n; i += 128)
    for (int k = 0; k < 8; k++) s[k] = _mm512_add_ps(s[k], _mm512_loadu_ps(a + i + 16 * k));
  for (int k = 1; k < 8; k++) s[0] = _mm512_add_ps(s[0], s[k]);
  return _mm512_reduce_add_ps(s[0]);
}

/* one pass over a[0..n) by `threads` threads, each over its share */
static float read_split(const float *a, size_t n, int threads) {
  if (threads == 1) return read_all(a, n);
  float total = 0;
#pragma omp parallel num_threads(threads) reduction(+ : total)
  {
    int k = omp_get_thread_num();
    size_t lo = n * k / threads / 128 * 128, hi = k == threads - 1 ? n : n * (k + 1) / threads / 128 * 128;
    total += read_all(a + lo, hi - lo);
  }
  return total;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  int reps = argc > 2 ? atoi(argv[2]) : 2000;
  printf("%d thread(s)\n", threads);
  size_t sizes[64] = { 784 * 1000, 1000 * 1000, 784 * 1000 + 1000 * 1000 + 1000 * 10 };
  const char *names[64] = { "W1 784x1000", "W2 1000x1000", "all three" };
  int count = 3;
  if (argc > 3) {
    for (count = 0; count < argc - 3 && count < 64; count++) {
      sizes[count] = (size_t)(atof(argv[3 + count]) * (1 << 20) / sizeof(float));
      names[count] = argv[3 + count];
    }
  }
  double *t = malloc(reps * sizeof *t);
  volatile float sink = 0;
  for (int s = 0; s < count; s++) {
    size_t n = sizes[s];
    float *a = aligned_alloc(64, (n * sizeof *a + 63) / 64 * 64);
    for (size_t i = 0; i < n; i++) a[i] = (float)(i % 7);
    for (int r = 0; r < 20; r++) sink += read_split(a, n, threads);
    for (int r = 0; r < reps; r++) {
      double t0 = wall_now();
      sink += read_split(a, n, threads);
      t[r] = wall_now() - t0;
    }
    qsort(t, reps, sizeof *t, cmp_double);
    printf("%-14s %6.2f MB: best %6.1f us = %6.1f GB/s, median %6.1f us = %6.1f GB/s\n", names[s],
           n * 4 / 1e6, t[0] * 1e6, n * 4 / t[0] / 1e9, t[reps / 2] * 1e6, n * 4 / t[reps / 2] / 1e9);
    free(a);
  }
  free(t);
  return sink == 12345 ? 1 : 0;
}

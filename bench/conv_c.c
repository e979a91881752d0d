/* conv_c.c -- the LeNet convolutions' three kernels (forward, data
 * gradient, filter gradient) timed one by one through the C API, with
 * process CPU time (usable on a shared machine when run on one thread).
 * Build (from the repo root, after building BUILD):
 *   cc -O2 bench/conv_c.c -Iruntime/include -LBUILD -lchainlua -Wl,-rpath,$PWD/BUILD -o /tmp/conv_c
 *   /tmp/conv_c [threads] [iterations]
 * Prints the minimum and the median over 7 rounds, in ms per call. */
#include "chainlua.h"

#include <stdio.h>
#include <stdlib.h>
#include "timing.h"

static ch_tensor *randt(int nd, const int64_t *shape, float scale) {
    ch_tensor *t = NULL;
    if (ch_empty(CH_FLOAT32, nd, shape, CH_CPU, &t) != CH_OK) {
        fprintf(stderr, "ch_empty: %s\n", ch_last_error());
        exit(1);
    }
    float *p = (float *)t->data + t->offset;
    for (int64_t i = 0; i < t->numel; i++)
        p[i] = scale * ((float)rand() / RAND_MAX * 2 - 1);
    return t;
}

enum { FWD, DATA, FILTER };

static void run(int op, ch_tensor *x, ch_tensor *w, ch_tensor *b, ch_tensor *gy, const int64_t *in, const int64_t *k,
                const int64_t *out) {
    static const int64_t one[2] = {1, 1}, zero[2] = {0, 0};
    ch_tensor *r = NULL;
    ch_status st;
    if (op == FWD)
        st = ch_conv_forward(x, w, b, 2, one, zero, one, out, 1, &r);
    else if (op == DATA)
        st = ch_conv_backward_data(gy, w, 2, one, zero, one, in, 1, &r);
    else
        st = ch_conv_backward_filter(x, gy, 2, one, zero, one, k, 1, &r);
    if (st != CH_OK) {
        fprintf(stderr, "conv: %s\n", ch_last_error());
        exit(1);
    }
    ch_tensor_release(r);
}

static void layer(const char *name, int64_t n, int64_t c, int64_t h, int64_t co, int64_t kk, int iters) {
    int64_t oh = h - kk + 1;
    int64_t xs[4] = {n, c, h, h}, ws[4] = {co, c, kk, kk}, bs[1] = {co}, gs[4] = {n, co, oh, oh};
    int64_t in[2] = {h, h}, k[2] = {kk, kk}, out[2] = {oh, oh};
    ch_tensor *x = randt(4, xs, 1), *w = randt(4, ws, 0.1f), *b = randt(1, bs, 0.1f), *gy = randt(4, gs, 1);
    static const char *names[3] = {"forward", "data grad", "filter grad"};
    double flop = 2.0 * n * co * oh * oh * c * kk * kk;
    for (int op = 0; op < 3; op++) {
        double r[7];
        for (int i = 0; i < 5; i++)
            run(op, x, w, b, gy, in, k, out);
        for (int j = 0; j < 7; j++) {
            double t0 = cpu_now();
            for (int i = 0; i < iters; i++)
                run(op, x, w, b, gy, in, k, out);
            r[j] = (cpu_now() - t0) / iters * 1e3;
        }
        qsort(r, 7, sizeof *r, cmp_double);
        printf("  %s %-12s %8.3f ms min %8.3f ms median  %6.1f GFLOP/s (min)\n", name, names[op], r[0], r[3],
               flop / r[0] * 1e-6);
    }
    ch_tensor_release(x);
    ch_tensor_release(w);
    ch_tensor_release(b);
    ch_tensor_release(gy);
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    int iters = argc > 2 ? atoi(argv[2]) : 50;
    ch_set_num_threads(threads);
    srand(0);
    printf("conv_c: %d threads, process CPU time\n", threads);
    layer("conv1", 64, 1, 28, 20, 5, iters);
    layer("conv2", 64, 20, 12, 50, 5, iters);
    return 0;
}

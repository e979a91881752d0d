/* crf1d.c -- CPU kernels of the linear-chain conditional random field:
 * negative log-likelihood with its gradient (forward-backward), and Viterbi
 * decoding.  Front doors (checks, packing, labels, results):
 * runtime/ops/crf1d.c.
 *
 * Each sequence is independent, works in double and runs in parallel;
 * gradients are written per sequence (gx rows, a K x K block of gcost
 * each), so the result does not depend on the thread count.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>
#include <stdlib.h>

static inline double lse_add(double acc, double v) {
    if (acc == -INFINITY) return v;
    if (v == -INFINITY) return acc;
    return acc > v ? acc + log1p(exp(v - acc)) : v + log1p(exp(acc - v));
}

/* Sequence b (n steps) of the batch: its loss lp[b] and, where g / gcp are
 * given, its gradients.  Returns nonzero when its tables cannot be allocated. */
static int crf_forward_one(const double *x, const double *c, const int64_t *lab, int64_t B, int64_t K, int64_t b,
                           int64_t n, double *lp, double *g, double *gcp) {
    int want_grad = g || gcp;
    double *al = malloc(sizeof(double) * (size_t)(n * K));
    double *be = want_grad ? malloc(sizeof(double) * (size_t)(n * K)) : NULL;
    if (!al || (want_grad && !be)) {
        free(al), free(be);
        return 1;
    }
#define XE(t, j) x[((t) * B + b) * K + (j)]
    for (int64_t j = 0; j < K; j++) al[j] = XE(0, j);
    for (int64_t t = 1; t < n; t++)
        for (int64_t j = 0; j < K; j++) {
            double a = -INFINITY;
            for (int64_t i = 0; i < K; i++) a = lse_add(a, al[(t - 1) * K + i] + c[i * K + j]);
            al[t * K + j] = a + XE(t, j);
        }
    double logz = -INFINITY;
    for (int64_t j = 0; j < K; j++) logz = lse_add(logz, al[(n - 1) * K + j]);
    double score = 0;
    for (int64_t t = 0; t < n; t++) {
        score += XE(t, lab[t * B + b]);
        if (t > 0) score += c[lab[(t - 1) * B + b] * K + lab[t * B + b]];
    }
    lp[b] = logz - score;
    if (want_grad) {
        for (int64_t j = 0; j < K; j++) be[(n - 1) * K + j] = 0;
        for (int64_t t = n - 2; t >= 0; t--)
            for (int64_t i = 0; i < K; i++) {
                double a = -INFINITY;
                for (int64_t j = 0; j < K; j++)
                    a = lse_add(a, c[i * K + j] + XE(t + 1, j) + be[(t + 1) * K + j]);
                be[t * K + i] = a;
            }
        if (g)
            for (int64_t t = 0; t < n; t++) {
                double *gt = g + (t * B + b) * K;
                for (int64_t j = 0; j < K; j++) gt[j] = exp(al[t * K + j] + be[t * K + j] - logz);
                gt[lab[t * B + b]] -= 1.0;
            }
        if (gcp) {
            double *gb = gcp + b * K * K;
            for (int64_t q = 0; q < K * K; q++) gb[q] = 0;
            for (int64_t t = 1; t < n; t++) {
                for (int64_t i = 0; i < K; i++)
                    for (int64_t j = 0; j < K; j++)
                        gb[i * K + j] += exp(al[(t - 1) * K + i] + c[i * K + j] + XE(t, j) +
                                             be[t * K + j] - logz);
                gb[lab[(t - 1) * B + b] * K + lab[t * B + b]] -= 1.0;
            }
        }
    }
#undef XE
    free(al), free(be);
    return 0;
}

ch_status ch_cpu_crf1d(const ch_tensor *xs, const ch_tensor *cost, const ch_tensor *labels, const int64_t *len,
                       ch_tensor *loss, ch_tensor *gx, ch_tensor *gcost) {
    int64_t T = xs->dim[0], B = xs->dim[1], K = xs->dim[2];
    if (gx) memset(ch_base(gx), 0, sizeof(double) * (size_t)gx->numel);
    const double *x = (const double *)ch_base(xs), *c = (const double *)ch_base(cost);
    const int64_t *lab = (const int64_t *)ch_base(labels);
    double *lp = (double *)ch_base(loss);
    double *g = gx ? (double *)ch_base(gx) : NULL, *gcp = gcost ? (double *)ch_base(gcost) : NULL;
    int oom = 0;
    /* sequences differ in length: dynamic schedule, and none of OpenMP for
     * a small batch (a region costs more than a short sequence) */
    int team = B > 1 && T * K * K * B >= 4096 ? ch_threads() : 1;
    if (team > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
        for (int64_t b = 0; b < B; b++)
            if (crf_forward_one(x, c, lab, B, K, b, len[b], lp, g, gcp)) ch_flag_set(&oom);
    } else {
        for (int64_t b = 0; b < B; b++)
            if (crf_forward_one(x, c, lab, B, K, b, len[b], lp, g, gcp)) oom = 1;
    }
    if (oom) return ch_fail(CH_ERR_MEMORY, "crf1d: out of memory for the forward-backward tables");
    return CH_OK;
}

/* The Viterbi path of sequence b (n steps) into p (T, B).  Returns nonzero
 * when its tables cannot be allocated. */
static int crf_viterbi_one(const double *x, const double *c, int64_t B, int64_t K, int64_t b, int64_t n,
                           int32_t *p) {
    double *al = malloc(sizeof(double) * (size_t)(n * K));
    int64_t *bp = malloc(sizeof(int64_t) * (size_t)(n * K));
    if (!al || !bp) {
        free(al), free(bp);
        return 1;
    }
    for (int64_t j = 0; j < K; j++) al[j] = x[b * K + j];
    for (int64_t t = 1; t < n; t++)
        for (int64_t j = 0; j < K; j++) {
            double best = -INFINITY;
            int64_t arg = 0;
            /* first maximum wins, as numpy.argmax */
            for (int64_t i = 0; i < K; i++) {
                double v = al[(t - 1) * K + i] + c[i * K + j];
                if (v > best) best = v, arg = i;
            }
            al[t * K + j] = best + x[(t * B + b) * K + j];
            bp[t * K + j] = arg;
        }
    int64_t cur = 0;
    for (int64_t j = 1; j < K; j++)
        if (al[(n - 1) * K + j] > al[(n - 1) * K + cur]) cur = j;
    for (int64_t t = n - 1; t >= 0; t--) {
        p[t * B + b] = (int32_t)cur;
        if (t > 0) cur = bp[t * K + cur];
    }
    free(al), free(bp);
    return 0;
}

ch_status ch_cpu_crf1d_argmax(const ch_tensor *xs, const ch_tensor *cost, const int64_t *len, ch_tensor *path) {
    int64_t T = xs->dim[0], B = xs->dim[1], K = xs->dim[2];
    const double *x = (const double *)ch_base(xs), *c = (const double *)ch_base(cost);
    int32_t *p = (int32_t *)ch_base(path);
    for (int64_t q = 0; q < path->numel; q++) p[q] = -1;
    int oom = 0;
    /* sequences differ in length: dynamic schedule, and none of OpenMP for
     * a small batch (a region costs more than a short sequence) */
    int team = B > 1 && T * K * K * B >= 4096 ? ch_threads() : 1;
    if (team > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
        for (int64_t b = 0; b < B; b++)
            if (crf_viterbi_one(x, c, B, K, b, len[b], p)) ch_flag_set(&oom);
    } else {
        for (int64_t b = 0; b < B; b++)
            if (crf_viterbi_one(x, c, B, K, b, len[b], p)) oom = 1;
    }
    if (oom) return ch_fail(CH_ERR_MEMORY, "argmax_crf1d: out of memory for the Viterbi tables");
    return CH_OK;
}

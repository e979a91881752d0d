/* ctc.c -- CPU kernel of connectionist temporal classification (Graves et
 * al. 2006).  Front door (checks, lengths, packing, results):
 * runtime/ops/ctc.c.
 *
 * The label sequence l (length L) is extended with blanks to the path
 * b l1 b l2 ... lL b (length 2L+1).  alpha (forward) and beta (backward)
 * are computed in log space, both including the emission of their own
 * step, so the posterior of path position s at time t is
 * alpha+beta-logp(emission)-logZ.  The gradient with respect to the logits
 * of a softmax output is softmax - posterior summed per symbol.  Sequences
 * of a batch are independent and run in parallel; each works in double.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>
#include <stdlib.h>

static inline double lse2(double a, double b) {
    if (a == -INFINITY) return b;
    if (b == -INFINITY) return a;
    double m = a > b ? a : b;
    return m + log(exp(a - m) + exp(b - m));
}

/* One sequence: x (T, B, V) contiguous double, returns -logZ; g (T,B,V) or NULL. */
static double ctc_one(const double *x, int64_t B, int64_t V, int64_t b, int64_t Tb, const int64_t *lab,
                      int64_t Lb, int64_t blank, double *g, int *oom) {
    /* Tb >= 1 (read_lengths): said here so that GCC does not warn about a
     * path where lp's first step is read but never written */
    if (Tb < 1) __builtin_unreachable();
    int64_t S = 2 * Lb + 1;
    double *lp = malloc(sizeof(double) * (size_t)(Tb * V));
    double *al = malloc(sizeof(double) * (size_t)(Tb * S));
    double *be = g ? malloc(sizeof(double) * (size_t)(Tb * S)) : NULL;
    int64_t *path = malloc(sizeof(int64_t) * (size_t)S);
    if (!lp || !al || !path || (g && !be)) {
        free(lp), free(al), free(be), free(path);
        *oom = 1;
        return 0;
    }
    for (int64_t s = 0; s < S; s++) path[s] = (s & 1) ? lab[s / 2] : blank;
    /* log_softmax per step */
    for (int64_t t = 0; t < Tb; t++) {
        const double *xt = x + (t * B + b) * V;
        double m = -INFINITY, sum = 0;
        for (int64_t k = 0; k < V; k++) if (xt[k] > m) m = xt[k];
        for (int64_t k = 0; k < V; k++) sum += exp(xt[k] - m);
        double lse = m + log(sum);
        for (int64_t k = 0; k < V; k++) lp[t * V + k] = xt[k] - lse;
    }
    /* forward */
    for (int64_t s = 0; s < S; s++) al[s] = -INFINITY;
    al[0] = lp[blank];
    if (S > 1) al[1] = lp[path[1]];
    for (int64_t t = 1; t < Tb; t++) {
        const double *prev = al + (t - 1) * S;
        double *cur = al + t * S;
        for (int64_t s = 0; s < S; s++) {
            double a = prev[s];
            if (s >= 1) a = lse2(a, prev[s - 1]);
            if (s >= 2 && path[s] != blank && path[s] != path[s - 2]) a = lse2(a, prev[s - 2]);
            cur[s] = a == -INFINITY ? -INFINITY : a + lp[t * V + path[s]];
        }
    }
    const double *last = al + (Tb - 1) * S;
    double logz = last[S - 1];
    if (S > 1) logz = lse2(logz, last[S - 2]);
    if (g) {
        /* backward */
        for (int64_t s = 0; s < S; s++) be[(Tb - 1) * S + s] = -INFINITY;
        be[(Tb - 1) * S + S - 1] = lp[(Tb - 1) * V + blank];
        if (S > 1) be[(Tb - 1) * S + S - 2] = lp[(Tb - 1) * V + path[S - 2]];
        for (int64_t t = Tb - 2; t >= 0; t--) {
            const double *nxt = be + (t + 1) * S;
            double *cur = be + t * S;
            for (int64_t s = 0; s < S; s++) {
                double a = nxt[s];
                if (s + 1 < S) a = lse2(a, nxt[s + 1]);
                if (s + 2 < S && path[s + 2] != blank && path[s + 2] != path[s]) a = lse2(a, nxt[s + 2]);
                cur[s] = a == -INFINITY ? -INFINITY : a + lp[t * V + path[s]];
            }
        }
        for (int64_t t = 0; t < Tb; t++) {
            double *gt = g + (t * B + b) * V;
            if (logz == -INFINITY) { /* impossible alignment: no gradient */
                for (int64_t k = 0; k < V; k++) gt[k] = 0;
                continue;
            }
            for (int64_t k = 0; k < V; k++) gt[k] = exp(lp[t * V + k]);
            for (int64_t s = 0; s < S; s++) {
                double v = al[t * S + s] + be[t * S + s];
                if (v == -INFINITY) continue;
                gt[path[s]] -= exp(v - lp[t * V + path[s]] - logz);
            }
        }
    }
    free(lp), free(al), free(be), free(path);
    return -logz;
}

/* Sequence b of the batch: lp[b], its gradient into g (when given); sets
 * *oom (atomically) when its tables cannot be allocated. */
static void ctc_sequence(const double *x, int64_t B, int64_t V, int64_t b, const int64_t *tlen, const int64_t *tl,
                         int64_t L, const int64_t *llen, int64_t blank, double *g, double *lp, int *oom) {
    int o = 0;
    lp[b] = ctc_one(x, B, V, b, tlen[b], tl + b * L, llen[b], blank, g, &o);
    if (o) ch_flag_set(oom);
}

ch_status ch_cpu_ctc_loss(const ch_tensor *xs, const ch_tensor *labels, const int64_t *tlen, const int64_t *llen,
                          int64_t blank, ch_tensor *loss, ch_tensor *grad) {
    int64_t T = xs->dim[0], B = xs->dim[1], V = xs->dim[2], L = labels->dim[1];
    if (grad) memset(ch_base(grad), 0, sizeof(double) * (size_t)grad->numel);
    const double *x = (const double *)ch_base(xs);
    const int64_t *tl = (const int64_t *)ch_base(labels);
    double *lp = (double *)ch_base(loss);
    double *g = grad ? (double *)ch_base(grad) : NULL;
    int oom = 0;
    /* sequences differ in length: dynamic schedule, and none of OpenMP for
     * a small batch (a region costs more than a short sequence) */
    int team = B > 1 && T * V * B >= 4096 ? ch_threads() : 1;
    if (team > 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
        for (int64_t b = 0; b < B; b++)
            ctc_sequence(x, B, V, b, tlen, tl, L, llen, blank, g, lp, &oom);
    } else {
        for (int64_t b = 0; b < B; b++)
            ctc_sequence(x, B, V, b, tlen, tl, L, llen, blank, g, lp, &oom);
    }
    if (oom) return ch_fail(CH_ERR_MEMORY, "connectionist_temporal_classification: out of memory for the "
                            "forward-backward tables");
    return CH_OK;
}

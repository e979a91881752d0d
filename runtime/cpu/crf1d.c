/* crf1d.c -- linear-chain conditional random field: negative
 * log-likelihood with its gradient (forward-backward), and Viterbi decoding.
 *
 * Sequences are given time-major as Chainer does: xs[t] holds the rows of
 * the sequences still running at step t, longest first, so sequence b has
 * length len[b] = #{t : B_t > b}.  Each sequence is independent, works in
 * double and runs in parallel; gradients are written per sequence (gx
 * rows, a K x K block of gcost each), so the caller can weight them by the
 * upstream gradient of each loss and the result does not depend on the
 * thread count.
 */
#include "../core/internal.h"

#include <math.h>
#include <stdlib.h>

#define CRF_FN "crf1d"

/* Validates cost and xs and packs the emissions into a (T, B, K) double
 * buffer; len[b] receives each sequence length. */
static ch_status pack_inputs(const char *fn, const ch_tensor *cost, int T, ch_tensor *const *xs, ch_tensor **xpack,
                             ch_tensor **cpack, int64_t **lens) {
    char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
    CH_CHECK_CPU(cost, fn, "cost");
    if (!ch_dtype_is_float((ch_dtype)cost->dt))
        return ch_fail(CH_ERR_DTYPE, "%s: cost must be a float tensor, got %s", fn, ch_dtype_name((ch_dtype)cost->dt));
    if (cost->nd != 2 || cost->dim[0] != cost->dim[1])
        return ch_fail(CH_ERR_SHAPE, "%s: cost must be a square (K, K) matrix, got shape %s", fn,
                       ch_shape_str(b1, sizeof b1, cost->nd, cost->dim));
    if (T < 1 || !xs) return ch_fail(CH_ERR_ARG, "%s: xs must be a non-empty list of (B, K) arrays", fn);
    int64_t K = cost->dim[0];
    for (int i = 0; i < T; i++) {
        CH_CHECK_CPU(xs[i], fn, "xs");
        if (xs[i]->dt != cost->dt)
            return ch_fail(CH_ERR_DTYPE, "%s: xs[%d] is %s but cost is %s", fn, i, ch_dtype_name((ch_dtype)xs[i]->dt),
                           ch_dtype_name((ch_dtype)cost->dt));
        if (xs[i]->nd != 2 || xs[i]->dim[1] != K)
            return ch_fail(CH_ERR_SHAPE, "%s: xs[%d] must have shape (B, %lld) to fit cost %s, got %s", fn, i,
                           (long long)K, ch_shape_str(b1, sizeof b1, cost->nd, cost->dim),
                           ch_shape_str(b2, sizeof b2, xs[i]->nd, xs[i]->dim));
        if (i > 0 && xs[i]->dim[0] > xs[i - 1]->dim[0])
            return ch_fail(CH_ERR_SHAPE, "%s: batch sizes must not grow along the sequence (xs[%d] has %lld rows, "
                           "xs[%d] has %lld); sort the sequences by length, longest first", fn, i,
                           (long long)xs[i]->dim[0], i - 1, (long long)xs[i - 1]->dim[0]);
    }
    int64_t B = xs[0]->dim[0];
    int64_t *len = calloc((size_t)(B > 0 ? B : 1), sizeof(int64_t));
    if (!len) return ch_fail(CH_ERR_MEMORY, "%s: out of memory", fn);
    for (int i = 0; i < T; i++)
        for (int64_t b = 0; b < xs[i]->dim[0]; b++) len[b]++;
    int64_t dim3[3] = {T, B, K};
    ch_tensor *xc = NULL;
    ch_status st = ch_tensor_new(CH_FLOAT64, 3, dim3, CH_CPU, &xc);
    if (st == CH_OK) memset(ch_base(xc), 0, sizeof(double) * (size_t)xc->numel);
    for (int i = 0; i < T && st == CH_OK; i++) {
        if (xs[i]->dim[0] == 0) continue;
        ch_tensor *v = NULL;
        int64_t s2[2] = {K, 1};
        st = ch_view_of(xc, 2, xs[i]->dim, s2, xc->offset + (int64_t)i * B * K, &v);
        if (st == CH_OK) st = ch_cpu_copy(v, xs[i]);
        ch_tensor_release(v);
    }
    if (st == CH_OK) st = ch_contiguous_as(cost, CH_FLOAT64, cpack);
    if (st != CH_OK) {
        free(len);
        ch_tensor_release(xc);
        return st;
    }
    *xpack = xc;
    *lens = len;
    return CH_OK;
}

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

ch_status ch_crf1d(const ch_tensor *cost, int T, ch_tensor *const *xs, ch_tensor *const *ys, ch_tensor **loss,
                   ch_tensor **gx, ch_tensor **gcost) {
    if (!loss) return ch_fail(CH_ERR_ARG, CRF_FN ": loss result pointer is NULL");
    if (!ys) return ch_fail(CH_ERR_ARG, CRF_FN ": ys must be a list of label arrays");
    ch_tensor *xc = NULL, *cc = NULL;
    int64_t *len = NULL;
    CH_TRY(pack_inputs(CRF_FN, cost, T, xs, &xc, &cc, &len));
    int64_t B = xs[0]->dim[0], K = cost->dim[0];
    ch_status st = CH_OK;
    int64_t *lab = malloc(sizeof(int64_t) * (size_t)(T * (B > 0 ? B : 1)));
    if (!lab) st = ch_fail(CH_ERR_MEMORY, CRF_FN ": out of memory");
    for (int i = 0; i < T && st == CH_OK; i++) {
        const ch_tensor *y = ys[i];
        char b1[CH_SHAPE_BUF];
        st = ch_check_tensor(y, CRF_FN, "ys");
        if (st == CH_OK) st = ch_check_cpu(y, CRF_FN, "ys");
        if (st != CH_OK) break;
        if (ch_dtype_is_float((ch_dtype)y->dt) || y->dt == CH_BOOL) {
            st = ch_fail(CH_ERR_DTYPE, CRF_FN ": ys[%d] must be an integer tensor (int32), got %s", i,
                         ch_dtype_name((ch_dtype)y->dt));
            break;
        }
        if (y->nd != 1 || y->dim[0] != xs[i]->dim[0]) {
            st = ch_fail(CH_ERR_SHAPE, CRF_FN ": ys[%d] must have shape (%lld,) to match xs[%d], got %s", i,
                         (long long)xs[i]->dim[0], i, ch_shape_str(b1, sizeof b1, y->nd, y->dim));
            break;
        }
        ch_tensor *yc = NULL;
        st = ch_contiguous_as(y, CH_INT64, &yc);
        if (st != CH_OK) break;
        const int64_t *p = (const int64_t *)ch_base(yc);
        for (int64_t b = 0; b < y->dim[0]; b++) {
            if (p[b] < 0 || p[b] >= K) {
                st = ch_fail(CH_ERR_ARG, CRF_FN ": label ys[%d][%lld] = %lld is out of range for %lld labels "
                             "(expected 0..%lld)", i, (long long)b, (long long)p[b], (long long)K, (long long)(K - 1));
                break;
            }
            lab[i * B + b] = p[b];
        }
        ch_tensor_release(yc);
    }
    ch_tensor *lo = NULL, *go = NULL, *gc = NULL;
    int64_t dim3[3] = {T, B, K}, dimc[3] = {B, K, K};
    if (st == CH_OK) st = ch_tensor_new(CH_FLOAT64, 1, &B, CH_CPU, &lo);
    if (st == CH_OK && gx) st = ch_tensor_new(CH_FLOAT64, 3, dim3, CH_CPU, &go);
    if (st == CH_OK && gcost) st = ch_tensor_new(CH_FLOAT64, 3, dimc, CH_CPU, &gc);
    if (st == CH_OK) {
        if (go) memset(ch_base(go), 0, sizeof(double) * (size_t)go->numel);
        const double *x = (const double *)ch_base(xc), *c = (const double *)ch_base(cc);
        double *lp = (double *)ch_base(lo);
        double *g = go ? (double *)ch_base(go) : NULL, *gcp = gc ? (double *)ch_base(gc) : NULL;
        int oom = 0;
        /* sequences differ in length: dynamic schedule, and none of OpenMP for
         * a small batch (a region costs more than a short sequence) */
        if (B > 1 && (int64_t)T * K * K * B >= 4096) {
#pragma omp parallel for schedule(dynamic, 1)
            for (int64_t b = 0; b < B; b++)
                if (crf_forward_one(x, c, lab, B, K, b, len[b], lp, g, gcp)) ch_flag_set(&oom);
        } else {
            for (int64_t b = 0; b < B; b++)
                if (crf_forward_one(x, c, lab, B, K, b, len[b], lp, g, gcp)) oom = 1;
        }
        if (oom) st = ch_fail(CH_ERR_MEMORY, CRF_FN ": out of memory for the forward-backward tables");
    }
    /* results in the inputs' dtype */
    ch_dtype dt = (ch_dtype)cost->dt;
    ch_tensor *out[3] = {lo, go, gc}, *cast[3] = {NULL, NULL, NULL};
    for (int k = 0; k < 3 && st == CH_OK; k++) {
        if (!out[k]) continue;
        st = ch_tensor_new_like(out[k], dt, &cast[k]);
        if (st == CH_OK) st = ch_cpu_copy(cast[k], out[k]);
    }
    for (int k = 0; k < 3; k++) ch_tensor_release(out[k]);
    free(len);
    free(lab);
    ch_tensor_release(xc);
    ch_tensor_release(cc);
    if (st != CH_OK) {
        for (int k = 0; k < 3; k++) ch_tensor_release(cast[k]);
        return st;
    }
    *loss = cast[0];
    if (gx) *gx = cast[1];
    if (gcost) *gcost = cast[2];
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

ch_status ch_crf1d_argmax(const ch_tensor *cost, int T, ch_tensor *const *xs, ch_tensor **path) {
    if (!path) return ch_fail(CH_ERR_ARG, "argmax_crf1d: path result pointer is NULL");
    ch_tensor *xc = NULL, *cc = NULL;
    int64_t *len = NULL;
    CH_TRY(pack_inputs("argmax_crf1d", cost, T, xs, &xc, &cc, &len));
    int64_t B = xs[0]->dim[0], K = cost->dim[0];
    int64_t dim2[2] = {T, B};
    ch_tensor *po = NULL;
    ch_status st = ch_tensor_new(CH_INT32, 2, dim2, CH_CPU, &po);
    if (st == CH_OK) {
        const double *x = (const double *)ch_base(xc), *c = (const double *)ch_base(cc);
        int32_t *p = (int32_t *)ch_base(po);
        for (int64_t q = 0; q < po->numel; q++) p[q] = -1;
        int oom = 0;
        /* sequences differ in length: dynamic schedule, and none of OpenMP for
         * a small batch (a region costs more than a short sequence) */
        if (B > 1 && (int64_t)T * K * K * B >= 4096) {
#pragma omp parallel for schedule(dynamic, 1)
            for (int64_t b = 0; b < B; b++)
                if (crf_viterbi_one(x, c, B, K, b, len[b], p)) ch_flag_set(&oom);
        } else {
            for (int64_t b = 0; b < B; b++)
                if (crf_viterbi_one(x, c, B, K, b, len[b], p)) oom = 1;
        }
        if (oom) st = ch_fail(CH_ERR_MEMORY, "argmax_crf1d: out of memory for the Viterbi tables");
    }
    free(len);
    ch_tensor_release(xc);
    ch_tensor_release(cc);
    if (st != CH_OK) {
        ch_tensor_release(po);
        return st;
    }
    *path = po;
    return CH_OK;
}

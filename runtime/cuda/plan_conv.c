/*
 * plan_conv.c -- the host-side planning of the cuDNN convolutions
 * (plan_conv.h): descriptors, explicit padding, the algorithm cache and
 * the choice of algorithm.  Tested by tests/c/test_cuda_dnn_plan.c.
 */
#include "plan_conv.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* C-order strides of dim[0..nd); 0 when one exceeds int. */
static int dense_strides(int nd, const int64_t *dim, int *stride) {
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        if (s > INT_MAX)
            return 0;
        stride[i] = (int)s;
        s *= dim[i] > 0 ? dim[i] : 1;
    }
    return s <= INT_MAX;
}

static int to_int(int nd, const int64_t *v, int *out) {
    for (int i = 0; i < nd; i++) {
        if (v[i] > INT_MAX)
            return 0;
        out[i] = (int)v[i];
    }
    return 1;
}

int cu_conv_plan_init(cu_conv_plan *p, const ch_conv_geom *g, char *err, size_t errlen) {
    memset(p, 0, sizeof *p);
    if (g->nsp < 1 || g->nsp > CU_CONV_MAX_SP) {
        snprintf(err, errlen, "cuDNN convolves 1 to %d spatial axes on the GPU (got %d)", CU_CONV_MAX_SP, g->nsp);
        return -1;
    }
    int lead = g->nsp == 1; /* a 1-d convolution gets a unit axis in front */
    int nsp = g->nsp + lead, nd = nsp + 2;
    p->nsp = nsp;
    p->groups = (int)g->groups;
    p->empty = g->N == 0 || g->C == 0 || g->Cout == 0;
    p->workspace_limit = g->workspace_limit > 0 ? (size_t)g->workspace_limit : 0;
    for (int a = 0; a < g->nsp; a++) {
        int64_t dk = g->d[a] * (g->k[a] - 1) + 1, span = g->in[a] + 2 * g->p[a];
        int64_t cudnn_out = span >= dk ? (span - dk) / g->s[a] + 1 : 0;
        if (g->in[a] == 0 || g->out[a] == 0)
            p->empty = 1;
        if (cudnn_out != g->out[a])
            p->window = 1;
    }
    /* extents in int64 first: x's (or its padded copy's), W's and y's */
    int64_t xd[CU_CONV_MAX_ND], wd[CU_CONV_MAX_ND], yd[CU_CONV_MAX_ND], sp[3][CU_CONV_MAX_SP];
    xd[0] = g->N, xd[1] = g->C, wd[0] = g->Cout, wd[1] = g->Cg, yd[0] = g->N, yd[1] = g->Cout;
    p->win_numel = g->N * g->C;
    for (int j = 0; j < nsp; j++) {
        int a = j - lead;
        if (a < 0) {
            xd[2 + j] = wd[2 + j] = yd[2 + j] = 1;
            sp[0][j] = 0, sp[1][j] = 1, sp[2][j] = 1;
            continue;
        }
        int64_t dk = g->d[a] * (g->k[a] - 1) + 1;
        if (p->window && !p->empty) {
            /* the last window ends at (out - 1) s + dk in the padded input */
            p->win_in[a] = (g->out[a] - 1) * g->s[a] + dk;
            p->win_lo[a] = g->p[a];
            p->win_numel *= p->win_in[a];
            xd[2 + j] = p->win_in[a];
            sp[0][j] = 0;
        } else {
            xd[2 + j] = g->in[a];
            sp[0][j] = g->p[a];
        }
        wd[2 + j] = g->k[a];
        yd[2 + j] = g->out[a];
        sp[1][j] = g->s[a];
        sp[2][j] = g->d[a];
    }
    if (!p->window || p->empty)
        p->win_numel = 0;
    int wstride[CU_CONV_MAX_ND];
    if (!to_int(nd, xd, p->xdim) || !to_int(nd, wd, p->wdim) || !to_int(nd, yd, p->ydim) ||
        !to_int(nsp, sp[0], p->pad) || !to_int(nsp, sp[1], p->stride) || !to_int(nsp, sp[2], p->dilation) ||
        !dense_strides(nd, xd, p->xstride) || !dense_strides(nd, yd, p->ystride) || !dense_strides(nd, wd, wstride)) {
        snprintf(err, errlen, "the tensors are too large for cuDNN (an extent or stride beyond %d)", INT_MAX);
        return -1;
    }
    return 0;
}

static size_t shape_str(char *buf, size_t len, const char *name, int64_t d0, int64_t d1, int nsp, const int64_t *sp) {
    int n = snprintf(buf, len, "%s (%lld, %lld", name, (long long)d0, (long long)d1);
    for (int a = 0; a < nsp && n >= 0 && (size_t)n < len; a++)
        n += snprintf(buf + n, len - (size_t)n, ", %lld", (long long)sp[a]);
    if (n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, ")");
    return n < 0 ? 0 : ((size_t)n < len ? (size_t)n : len - 1);
}

void cu_conv_shapes_str(const ch_conv_geom *g, char *buf, size_t len) {
    if (len == 0)
        return;
    buf[0] = 0;
    size_t n = shape_str(buf, len, "x", g->N, g->C, g->nsp, g->in);
    if (n + 1 < len) {
        buf[n++] = ' ';
        buf[n] = 0;
        n += shape_str(buf + n, len - n, "W", g->Cout, g->Cg, g->nsp, g->k);
    }
    if (n + 1 < len) {
        buf[n++] = ' ';
        buf[n] = 0;
        shape_str(buf + n, len - n, "y", g->N, g->Cout, g->nsp, g->out);
    }
}

void cu_conv_key_init(cu_conv_key *k, int pass, int device, int dtype, int math, int deterministic, int autotune,
                      const cu_conv_plan *p) {
    memset(k, 0, sizeof *k); /* compared bytewise: no stray bytes */
    k->pass = pass;
    k->device = device;
    k->dtype = dtype;
    k->math = math;
    k->deterministic = deterministic;
    k->autotune = autotune;
    k->nsp = p->nsp;
    k->groups = p->groups;
    memcpy(k->xdim, p->xdim, sizeof k->xdim);
    memcpy(k->wdim, p->wdim, sizeof k->wdim);
    memcpy(k->ydim, p->ydim, sizeof k->ydim);
    memcpy(k->pad, p->pad, sizeof k->pad);
    memcpy(k->stride, p->stride, sizeof k->stride);
    memcpy(k->dilation, p->dilation, sizeof k->dilation);
    k->workspace_limit = p->workspace_limit;
}

/* FNV-1a over the key's bytes */
static size_t key_hash(const cu_conv_key *k) {
    const unsigned char *b = (const unsigned char *)k;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof *k; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return (size_t)h;
}

/* The slot holding k, or the empty slot where it would go. */
static size_t slot_of(const cu_conv_cache *c, const cu_conv_key *k) {
    size_t i = key_hash(k) & (c->cap - 1);
    while (c->used[i] && memcmp(&c->keys[i], k, sizeof *k) != 0)
        i = (i + 1) & (c->cap - 1);
    return i;
}

int cu_conv_cache_get(const cu_conv_cache *c, const cu_conv_key *k, cu_conv_choice *out) {
    if (c->cap == 0)
        return 0;
    size_t i = slot_of(c, k);
    if (!c->used[i])
        return 0;
    *out = c->vals[i];
    return 1;
}

int cu_conv_cache_put(cu_conv_cache *c, const cu_conv_key *k, const cu_conv_choice *v) {
    if (2 * (c->count + 1) > c->cap) { /* keep the table at most half full */
        cu_conv_cache grown = {0};
        grown.cap = c->cap ? 2 * c->cap : 64;
        grown.keys = (cu_conv_key *)calloc(grown.cap, sizeof *grown.keys);
        grown.vals = (cu_conv_choice *)calloc(grown.cap, sizeof *grown.vals);
        grown.used = (uint8_t *)calloc(grown.cap, 1);
        if (!grown.keys || !grown.vals || !grown.used) {
            cu_conv_cache_clear(&grown);
            return -1;
        }
        for (size_t i = 0; i < c->cap; i++)
            if (c->used[i]) {
                size_t j = slot_of(&grown, &c->keys[i]);
                grown.keys[j] = c->keys[i];
                grown.vals[j] = c->vals[i];
                grown.used[j] = 1;
            }
        grown.count = c->count;
        cu_conv_cache_clear(c);
        *c = grown;
    }
    size_t i = slot_of(c, k);
    if (!c->used[i]) {
        c->used[i] = 1;
        c->keys[i] = *k;
        c->count++;
    }
    c->vals[i] = *v;
    return 0;
}

void cu_conv_cache_clear(cu_conv_cache *c) {
    free(c->keys);
    free(c->vals);
    free(c->used);
    memset(c, 0, sizeof *c);
}

int cu_conv_choose(const cu_conv_perf *perf, int n, size_t limit, int need_deterministic, int only_math) {
    for (int i = 0; i < n; i++) {
        if (!perf[i].ok || perf[i].memory > limit)
            continue;
        if (need_deterministic && !perf[i].deterministic)
            continue;
        if (only_math >= 0 && perf[i].math != only_math)
            continue;
        return i;
    }
    return -1;
}

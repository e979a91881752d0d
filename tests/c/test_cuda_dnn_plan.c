/* test_cuda_dnn_plan.c -- the host-side planning of the cuDNN convolutions
 * (runtime/cuda/plan_conv.c): descriptor extents and strides, when x needs
 * an explicitly padded copy (cover_all, a deconvolution's outsize), the
 * algorithm cache and its key, and the choice among cuDNN's ranked
 * algorithms.  Pure C: runs without a GPU or CUDA toolkit. */
#include "check.h"
#include "plan_conv.h"

#include <string.h>

#define I64(...) ((const int64_t[]){__VA_ARGS__})

/* The geometry as ops/conv.c fills it, for nsp axes. */
static ch_conv_geom geom(int nsp, int64_t N, int64_t C, int64_t Cout, int64_t groups, const int64_t *in,
                         const int64_t *out, const int64_t *k, const int64_t *s, const int64_t *p, const int64_t *d) {
    ch_conv_geom g;
    memset(&g, 0, sizeof g);
    g.nsp = nsp, g.N = N, g.C = C, g.Cout = Cout, g.groups = groups;
    g.Cg = C / groups, g.Coutg = Cout / groups;
    g.Kk = g.Pin = g.P = 1;
    for (int a = 0; a < nsp; a++) {
        g.in[a] = in[a], g.out[a] = out[a], g.k[a] = k[a], g.s[a] = s[a], g.p[a] = p[a], g.d[a] = d[a];
        g.Kk *= k[a], g.Pin *= in[a], g.P *= out[a];
    }
    g.Kg = g.Cg * g.Kk;
    return g;
}

static int same(int n, const int *a, const int *b) { return memcmp(a, b, (size_t)n * sizeof *a) == 0; }
#define INTS(...) ((const int[]){__VA_ARGS__})

static void test_plain_2d(void) {
    /* x (2, 4, 7, 6), W (6, 2, 3, 3), groups 2, stride (2, 1), pad (1, 0),
     * dilate (1, 2): out = ((7+2-3)/2+1, (6-5)/1+1) = (4, 2) */
    ch_conv_geom g = geom(2, 2, 4, 6, 2, I64(7, 6), I64(4, 2), I64(3, 3), I64(2, 1), I64(1, 0), I64(1, 2));
    cu_conv_plan p;
    char err[128];
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0);
    CHECK(p.nsp == 2 && p.groups == 2 && !p.window && !p.empty && p.win_numel == 0);
    CHECK(same(4, p.xdim, INTS(2, 4, 7, 6)) && same(4, p.xstride, INTS(168, 42, 6, 1)));
    CHECK(same(4, p.wdim, INTS(6, 2, 3, 3)));
    CHECK(same(4, p.ydim, INTS(2, 6, 4, 2)) && same(4, p.ystride, INTS(48, 8, 2, 1)));
    CHECK(same(2, p.pad, INTS(1, 0)) && same(2, p.stride, INTS(2, 1)) && same(2, p.dilation, INTS(1, 2)));
    char buf[128];
    cu_conv_shapes_str(&g, buf, sizeof buf);
    CHECK(strcmp(buf, "x (2, 4, 7, 6) W (6, 2, 3, 3) y (2, 6, 4, 2)") == 0);
    /* a short buffer is cut, never overrun */
    cu_conv_shapes_str(&g, buf, 10);
    CHECK(strlen(buf) == 9);
}

static void test_1d_and_3d(void) {
    cu_conv_plan p;
    char err[128];
    /* 1-d: a unit axis in front, with stride and dilation 1 and no padding */
    ch_conv_geom g = geom(1, 3, 2, 5, 1, I64(10), I64(5), I64(3), I64(2), I64(1), I64(1));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0);
    CHECK(p.nsp == 2 && same(4, p.xdim, INTS(3, 2, 1, 10)) && same(4, p.wdim, INTS(5, 2, 1, 3)));
    CHECK(same(4, p.ydim, INTS(3, 5, 1, 5)));
    CHECK(same(2, p.pad, INTS(0, 1)) && same(2, p.stride, INTS(1, 2)) && same(2, p.dilation, INTS(1, 1)));
    /* 3-d is taken as it is */
    g = geom(3, 1, 1, 1, 1, I64(4, 5, 6), I64(2, 3, 4), I64(3, 3, 3), I64(1, 1, 1), I64(0, 0, 0), I64(1, 1, 1));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0);
    CHECK(p.nsp == 3 && same(5, p.xdim, INTS(1, 1, 4, 5, 6)) && same(5, p.xstride, INTS(120, 120, 30, 6, 1)));
    /* 4 spatial axes: not for cuDNN, with a message saying so */
    g = geom(4, 1, 1, 1, 1, I64(2, 2, 2, 2), I64(1, 1, 1, 1), I64(2, 2, 2, 2), I64(1, 1, 1, 1), I64(0, 0, 0, 0),
             I64(1, 1, 1, 1));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == -1 && strstr(err, "1 to 3 spatial axes") &&
          strstr(err, "got 4"));
    /* an extent beyond int */
    g = geom(2, 1, 1, 1, 1, I64(3000000000LL, 1), I64(2999999998LL, 1), I64(3, 1), I64(1, 1), I64(0, 0), I64(1, 1));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == -1 && strstr(err, "too large for cuDNN"));
}

static void test_window(void) {
    cu_conv_plan p;
    char err[128];
    /* cover_all: in 5, k 2, s 2, p 0 gives Chainer 3 outputs, cuDNN 2:
     * x goes through a frame of (3-1)*2+2 = 6 cells, p = 0 in front */
    ch_conv_geom g = geom(2, 2, 3, 4, 1, I64(5, 4), I64(3, 2), I64(2, 2), I64(2, 2), I64(0, 0), I64(1, 1));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0);
    CHECK(p.window && !p.empty);
    CHECK(p.win_in[0] == 6 && p.win_lo[0] == 0 && p.win_in[1] == 4 && p.win_lo[1] == 0);
    CHECK(p.win_numel == 2 * 3 * 6 * 4);
    CHECK(same(4, p.xdim, INTS(2, 3, 6, 4)) && same(2, p.pad, INTS(0, 0)));
    /* with padding and dilation: in 6, k 3, d 2 (dk 5), s 3, p 1; cuDNN
     * gives (8-5)/3+1 = 2, cover_all 3: frame (3-1)*3+5 = 11, p cells in
     * front; every axis takes its padding into the frame */
    g = geom(2, 1, 1, 1, 1, I64(6, 6), I64(3, 2), I64(3, 3), I64(3, 3), I64(1, 1), I64(2, 2));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0);
    CHECK(p.window && p.win_in[0] == 11 && p.win_lo[0] == 1 && p.win_in[1] == 8 && p.win_lo[1] == 1);
    CHECK(same(2, p.pad, INTS(0, 0)) && same(2, p.dilation, INTS(2, 2)) && same(4, p.ydim, INTS(1, 1, 3, 2)));
    /* fewer outputs than cuDNN's (a frame that crops x) */
    g = geom(2, 1, 1, 1, 1, I64(9, 3), I64(2, 1), I64(3, 3), I64(1, 1), I64(0, 0), I64(1, 1));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0);
    CHECK(p.window && p.win_in[0] == 4 && p.win_in[1] == 3);
    /* a kernel larger than the padded input: cuDNN has no output at all */
    g = geom(2, 1, 1, 1, 1, I64(2, 2), I64(1, 1), I64(5, 1), I64(1, 1), I64(1, 0), I64(1, 1));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0);
    CHECK(p.window && p.win_in[0] == 5);
}

static void test_empty(void) {
    cu_conv_plan p;
    char err[128];
    ch_conv_geom g = geom(2, 0, 2, 2, 1, I64(3, 3), I64(1, 1), I64(3, 3), I64(1, 1), I64(0, 0), I64(1, 1));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0 && p.empty);
    g = geom(2, 1, 2, 2, 1, I64(3, 0), I64(1, 0), I64(3, 1), I64(1, 1), I64(0, 0), I64(1, 1));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0 && p.empty && p.win_numel == 0);
}

static void test_key_and_cache(void) {
    cu_conv_plan p, q;
    char err[128];
    ch_conv_geom g = geom(2, 2, 4, 6, 2, I64(7, 6), I64(4, 2), I64(3, 3), I64(2, 1), I64(1, 0), I64(1, 2));
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0);
    g.d[1] = 1, g.out[1] = 4;
    CHECK(cu_conv_plan_init(&q, &g, err, sizeof err) == 0);
    cu_conv_key k1, k2, k3, k4, k5;
    cu_conv_key_init(&k1, CU_CONV_FWD, 0, CH_FLOAT32, 0, 0, 0, &p);
    cu_conv_key_init(&k2, CU_CONV_FWD, 0, CH_FLOAT32, 0, 1, 0, &p); /* deterministic */
    cu_conv_key_init(&k3, CU_CONV_BWD_DATA, 0, CH_FLOAT32, 0, 0, 0, &p);
    cu_conv_key_init(&k4, CU_CONV_FWD, 0, CH_FLOAT32, 0, 0, 0, &q); /* another dilation */
    cu_conv_key_init(&k5, CU_CONV_FWD, 1, CH_FLOAT32, 3, 0, 0, &p); /* device 1, FMA math */
    cu_conv_cache c = {0};
    cu_conv_choice v, got;
    CHECK(!cu_conv_cache_get(&c, &k1, &got));
    v.algo = 1, v.math = 0, v.workspace = 100;
    CHECK(cu_conv_cache_put(&c, &k1, &v) == 0);
    CHECK(cu_conv_cache_get(&c, &k1, &got) && got.algo == 1 && got.workspace == 100);
    CHECK(!cu_conv_cache_get(&c, &k2, &got) && !cu_conv_cache_get(&c, &k3, &got));
    CHECK(!cu_conv_cache_get(&c, &k4, &got) && !cu_conv_cache_get(&c, &k5, &got));
    v.algo = 6;
    CHECK(cu_conv_cache_put(&c, &k4, &v) == 0);
    CHECK(cu_conv_cache_get(&c, &k4, &got) && got.algo == 6);
    CHECK(cu_conv_cache_get(&c, &k1, &got) && got.algo == 1);
    /* growing past the first table keeps every entry */
    for (int i = 0; i < 500; i++) {
        cu_conv_key k;
        cu_conv_key_init(&k, CU_CONV_BWD_FILTER, i, CH_FLOAT64, 0, 0, 0, &p);
        v.algo = i;
        CHECK(cu_conv_cache_put(&c, &k, &v) == 0);
    }
    CHECK(c.count == 502 && c.cap >= 1004);
    int ok = 1;
    for (int i = 0; i < 500; i++) {
        cu_conv_key k;
        cu_conv_key_init(&k, CU_CONV_BWD_FILTER, i, CH_FLOAT64, 0, 0, 0, &p);
        ok &= cu_conv_cache_get(&c, &k, &got) && got.algo == i;
    }
    CHECK(ok);
    CHECK(cu_conv_cache_get(&c, &k1, &got) && got.algo == 1 && got.workspace == 100);
    /* putting a key again replaces its choice */
    v.algo = 7;
    CHECK(cu_conv_cache_put(&c, &k1, &v) == 0 && c.count == 502);
    CHECK(cu_conv_cache_get(&c, &k1, &got) && got.algo == 7);
    cu_conv_cache_clear(&c);
    CHECK(c.cap == 0 && !cu_conv_cache_get(&c, &k1, &got));
}

static void test_choose(void) {
    const size_t MB = (size_t)1 << 20;
    /* ranked: a failed one, one needing 64 MiB, a non-deterministic one,
     * one with tensor-op math (1), a deterministic FMA one (math 3) */
    cu_conv_perf perf[5] = {
        {.algo = 5, .ok = 0, .memory = 0, .deterministic = 1, .math = 0},
        {.algo = 4, .ok = 1, .memory = 64 * MB, .deterministic = 1, .math = 0},
        {.algo = 0, .ok = 1, .memory = MB, .deterministic = 0, .math = 0},
        {.algo = 3, .ok = 1, .memory = 0, .deterministic = 1, .math = 1},
        {.algo = 1, .ok = 1, .memory = 2 * MB, .deterministic = 1, .math = 3},
    };
    CHECK(cu_conv_choose(perf, 5, CU_CONV_WORKSPACE_LIMIT, 0, -1) == 2);
    CHECK(cu_conv_choose(perf, 5, 128 * MB, 0, -1) == 1);
    CHECK(cu_conv_choose(perf, 5, CU_CONV_WORKSPACE_LIMIT, 1, -1) == 3);
    CHECK(cu_conv_choose(perf, 5, CU_CONV_WORKSPACE_LIMIT, 1, 3) == 4);
    CHECK(cu_conv_choose(perf, 5, MB, 1, 3) == -1);
    CHECK(cu_conv_choose(perf, 0, MB, 0, -1) == -1);
}

/* cuda.set_max_workspace_size: the core keeps the limit, the geometry
 * carries it to the plan, the cache key tells limits apart, and the choice
 * keeps under it. */
static void test_workspace_limit(void) {
    const size_t MB = (size_t)1 << 20;
    CHECK(ch_get_cudnn_workspace_limit() == (int64_t)CU_CONV_WORKSPACE_LIMIT); /* Chainer's 8 MiB */
    ch_set_cudnn_workspace_limit(3 * (int64_t)MB);
    CHECK(ch_get_cudnn_workspace_limit() == 3 * (int64_t)MB);
    ch_set_cudnn_workspace_limit(-5);
    CHECK(ch_get_cudnn_workspace_limit() == 0);
    ch_set_cudnn_workspace_limit((int64_t)CU_CONV_WORKSPACE_LIMIT);

    ch_conv_geom g = geom(2, 1, 2, 2, 1, I64(5, 5), I64(3, 3), I64(3, 3), I64(1, 1), I64(0, 0), I64(1, 1));
    g.workspace_limit = (int64_t)(3 * MB);
    cu_conv_plan p, q;
    char err[128];
    CHECK(cu_conv_plan_init(&p, &g, err, sizeof err) == 0 && p.workspace_limit == 3 * MB);
    g.workspace_limit = 0;
    CHECK(cu_conv_plan_init(&q, &g, err, sizeof err) == 0 && q.workspace_limit == 0);
    cu_conv_key kp, kq, kp2;
    cu_conv_key_init(&kp, CU_CONV_FWD, 0, CH_FLOAT32, 0, 0, 0, &p);
    cu_conv_key_init(&kq, CU_CONV_FWD, 0, CH_FLOAT32, 0, 0, 0, &q);
    cu_conv_key_init(&kp2, CU_CONV_FWD, 0, CH_FLOAT32, 0, 0, 0, &p);
    CHECK(memcmp(&kp, &kp2, sizeof kp) == 0);
    CHECK(memcmp(&kp, &kq, sizeof kp) != 0);
    cu_conv_cache c = {0};
    cu_conv_choice small = {.algo = 1, .math = 0, .workspace = 0}, big = {.algo = 6, .math = 0, .workspace = 3 * MB};
    CHECK(cu_conv_cache_put(&c, &kq, &small) == 0 && cu_conv_cache_put(&c, &kp, &big) == 0);
    cu_conv_choice got;
    CHECK(cu_conv_cache_get(&c, &kq, &got) && got.algo == 1);
    CHECK(cu_conv_cache_get(&c, &kp, &got) && got.algo == 6);
    cu_conv_cache_clear(&c);

    /* ranked fastest first: 4 MiB, 3 MiB, 1 MiB, none */
    cu_conv_perf perf[4] = {
        {.algo = 7, .ok = 1, .memory = 4 * MB, .deterministic = 1, .math = 0},
        {.algo = 6, .ok = 1, .memory = 3 * MB, .deterministic = 1, .math = 0},
        {.algo = 2, .ok = 1, .memory = MB, .deterministic = 1, .math = 0},
        {.algo = 0, .ok = 1, .memory = 0, .deterministic = 1, .math = 0},
    };
    CHECK(cu_conv_choose(perf, 4, p.workspace_limit, 0, -1) == 1);  /* 3 MiB: the one needing exactly that */
    CHECK(cu_conv_choose(perf, 4, q.workspace_limit, 0, -1) == 3);  /* 0: only the one without workspace */
    CHECK(cu_conv_choose(perf, 4, 3 * MB - 1, 0, -1) == 2);
    CHECK(cu_conv_choose(perf, 4, CU_CONV_WORKSPACE_LIMIT, 0, -1) == 0);
}

int main(void) {
    test_workspace_limit();
    test_plain_2d();
    test_1d_and_3d();
    test_window();
    test_empty();
    test_key_and_cache();
    test_choose();
    return check_done("test_cuda_dnn_plan");
}

/*
 * grad_hooks.cu -- the gradient hooks on the GPU (host side: grad_hooks.c).
 *
 * grad_transform: g = clip(scale*(g + decay*d), lower, upper) in place, d the
 * parameter or its sign, one item per element.  Contiguous float32/float64
 * operands of one dtype compute in that type, everything else (strided
 * views, float16, a parameter of another dtype) in double with the CPU's
 * conversions: the formulas and branches of runtime/cpu/optimizer_updates.c.
 *
 * sqnorm: the CPU's exact formulation, so both devices give the same bits
 * and the result does not depend on the launch: items are the CPU's blocks
 * of SQNORM_BLOCK elements (C order), each summing its squares in double in
 * order; one more item adds the block sums in order.  A float64 atomicAdd
 * would be faster but makes the sum depend on the thread schedule and differ
 * from the CPU; the backend's reduce would need a float64 copy of x first
 * and sums in another order.  The cost: n / 8192 threads, each reading a
 * run of 8192 elements (uncoalesced), so a 1M-element gradient uses only
 * 128 threads: fine for the once-per-step norm of GradientClipping, not a
 * general-purpose reduction.
 *
 * Compiled with --fmad=false (runtime/cuda/CMakeLists.txt) so products and
 * sums round as on the CPU.  Compiled here, NOT yet executed on a GPU:
 * tests/cuda/test_grad_hooks.cu runs it emulated on the host against the
 * CPU, bit for bit.
 */
#include "backend.h"
#include "convert.cuh"
#include "launch.cuh"

/* The CPU's block size (runtime/cpu/optimizer_updates.c): the block sums and
 * their order are part of the result. */
#define SQNORM_BLOCK 8192

/* NumPy-style clip: NaN passes through. */
template <typename T> CU_HD T gh_clip(T x, T lo, T hi) { return x < lo ? lo : (x > hi ? hi : x); }

/* ---- grad_transform ------------------------------------------------------ */
template <typename T> struct gt_dense {
    T *g;
    const T *p;
    T sc, dc, lo, hi;
    int sign, clip;

    CU_HD void operator()(int64_t i) const {
        T x;
        if (p && sign) {
            T d = p[i] > 0 ? (T)1 : (p[i] < 0 ? (T)-1 : (T)0);
            x = sc * (g[i] + dc * d);
        } else if (p) {
            x = sc * (g[i] + dc * p[i]);
        } else {
            x = sc * g[i];
        }
        g[i] = clip ? gh_clip(x, lo, hi) : x;
    }
};

/* The CPU general path's sign: NaN stays NaN. */
CU_HD double gh_sign(double x) { return x > 0 ? 1.0 : (x < 0 ? -1.0 : (x != x ? x : 0.0)); }

template <typename G, typename P> struct gt_strided {
    cu_kgeom geom;
    G *g;
    const P *p;
    cu_grad_transform_args a;

    CU_HD void operator()(int64_t i) const {
        int64_t og, op;
        cu_offsets(geom, i, og, op);
        double x = cu_load(g[og]);
        if (p) {
            double pv = cu_load(p[op]);
            x += a.decay * (a.sign ? gh_sign(pv) : pv);
        }
        x *= a.scale;
        if (a.clip)
            x = gh_clip(x, a.lower, a.upper);
        g[og] = cu_store<G>::from(x);
    }
};

static cu_kgeom kernel_geom(const cu_geom *g) {
    cu_kgeom k;
    k.nd = g->nd;
    for (int d = 0; d < g->nd; d++) {
        k.dim[d] = g->dim[d];
        k.stride[0][d] = g->stride[0][d];
        k.stride[1][d] = g->stride[1][d];
    }
    return k;
}

template <typename T>
static ch_status dense(const cu_grad_transform_args *a, int64_t n, char *grad, const char *param) {
    gt_dense<T> body = {(T *)grad,    (const T *)param, (T)a->scale, (T)a->decay,
                        (T)a->lower, (T)a->upper,      a->sign,     a->clip};
    return cu_each("grad_transform", n, body);
}

extern "C" ch_status cu_grad_transform_dense(const cu_grad_transform_args *a, int dt, int64_t n, char *grad,
                                             const char *param) {
    return dt == CH_FLOAT32 ? dense<float>(a, n, grad, param) : dense<double>(a, n, grad, param);
}

template <typename G, typename P>
static ch_status strided(const cu_grad_transform_args *a, const cu_geom *g, char *grad, const char *param) {
    gt_strided<G, P> body = {kernel_geom(g), (G *)grad, (const P *)param, *a};
    return cu_each("grad_transform", g->numel, body);
}

template <typename G>
static ch_status strided_p(const cu_grad_transform_args *a, const cu_geom *g, char *grad, int pdt,
                           const char *param) {
    switch (pdt) {
    case CH_FLOAT16: return strided<G, __half>(a, g, grad, param);
    case CH_FLOAT32: return strided<G, float>(a, g, grad, param);
    default: return strided<G, double>(a, g, grad, param);
    }
}

extern "C" ch_status cu_grad_transform_strided(const cu_grad_transform_args *a, const cu_geom *g, int gdt,
                                               char *grad, int pdt, const char *param) {
    switch (gdt) {
    case CH_FLOAT16: return strided_p<__half>(a, g, grad, pdt, param);
    case CH_FLOAT32: return strided_p<float>(a, g, grad, pdt, param);
    default: return strided_p<double>(a, g, grad, pdt, param);
    }
}

/* ---- sqnorm -------------------------------------------------------------- */
/* part[b] = the sum of squares of block b, in element order. */
template <typename T> struct sq_blocks {
    cu_kgeom geom;
    int dense;
    int64_t n;
    const T *x;
    double *part;

    CU_HD void operator()(int64_t b) const {
        int64_t lo = b * SQNORM_BLOCK, hi = lo + SQNORM_BLOCK < n ? lo + SQNORM_BLOCK : n;
        double s = 0;
        for (int64_t i = lo; i < hi; i++) {
            int64_t o = i, unused;
            if (!dense)
                cu_offsets(geom, i, o, unused);
            double v = cu_load(x[o]);
            s += v * v;
        }
        part[b] = s;
    }
};

/* part[nb] = the block sums added in order (one item). */
struct sq_total {
    int64_t nb;
    double *part;

    CU_HD void operator()(int64_t) const {
        double t = 0;
        for (int64_t b = 0; b < nb; b++)
            t += part[b];
        part[nb] = t;
    }
};

template <typename T>
static ch_status sq_launch(const cu_geom *g, const char *x, int64_t nb, double *part) {
    sq_blocks<T> body = {kernel_geom(g), g->contiguous, g->numel, (const T *)x, part};
    CU_TRY(cu_each("sqnorm", nb, body));
    return cu_each("sqnorm", 1, sq_total{nb, part});
}

extern "C" ch_status cu_sqnorm_launch(const cu_geom *g, int dev, int dt, const char *x, double *result) {
    int64_t nb = (g->numel + SQNORM_BLOCK - 1) / SQNORM_BLOCK;
    size_t bytes = (size_t)(nb + 1) * sizeof(double);
    double *part = (double *)cu_scratch(dev, bytes, "sqnorm");
    if (!part)
        return CH_ERR_MEMORY;
    ch_status st = dt == CH_FLOAT16   ? sq_launch<__half>(g, x, nb, part)
                   : dt == CH_FLOAT32 ? sq_launch<float>(g, x, nb, part)
                                      : sq_launch<double>(g, x, nb, part);
    if (st == CH_OK)
        st = cu_download(result, part + nb, sizeof(double), "sqnorm");
    cu_scratch_release(dev, part, bytes);
    return st;
}

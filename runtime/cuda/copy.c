/*
 * copy.c -- the copy and fill hooks: same-shape copies with a dtype cast
 * between any two tensors, where either side may be the CPU.
 *
 *   GPU <- GPU (same device)  dense and same dtype: cudaMemcpyAsync;
 *                             otherwise the cast/strided kernel (copy.cu).
 *   GPU <- GPU (two devices)  the source, made dense on its own device, is
 *                             copied peer-to-peer into a staging buffer on
 *                             the destination, then the kernel scatters it.
 *   GPU <- CPU                dense same dtype: one staged upload; otherwise the
 *                             source is packed densely on the host (in its own
 *                             dtype), uploaded to a staging buffer, and the
 *                             kernel casts and scatters it on the device.
 *   CPU <- GPU                dense same dtype: one staged download; otherwise the
 *                             kernel casts/packs into a dense staging buffer of
 *                             the destination's dtype, which is downloaded
 *                             and, if the destination is strided, scattered
 *                             on the host.
 * Casting always happens on the GPU, so the host never needs float16 code.
 * Everything is queued on the current stream of the device (stream.c);
 * host transfers go through the pinned staging buffers of pinned.c
 * (cu_upload returns once the host data is staged, cu_download once it has
 * arrived), and a copy between two GPUs orders the two devices' current
 * streams with events around the peer copy.
 */
#include "backend.h"

#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

/* Strided host copy of n elements of width z between two layouts (g). */
static void host_move(const cu_geom *g, char *d, const char *s, size_t z) {
    if (g->contiguous) {
        memcpy(d, s, (size_t)g->numel * z);
        return;
    }
    int nd = g->nd;
    int64_t idx[CH_MAX_DIMS] = {0};
    int64_t inner = g->dim[nd - 1], sd = g->stride[0][nd - 1] * (int64_t)z, ss = g->stride[1][nd - 1] * (int64_t)z;
    int64_t outer = g->numel / (inner ? inner : 1);
    for (int64_t o = 0; o < outer; o++) {
        int64_t od = 0, os = 0;
        for (int k = 0; k < nd - 1; k++) {
            od += idx[k] * g->stride[0][k];
            os += idx[k] * g->stride[1][k];
        }
        char *dp = d + od * (int64_t)z;
        const char *sp = s + os * (int64_t)z;
        switch (z) {
#define RUN(T)                                                                         \
    for (int64_t i = 0; i < inner; i++) *(T *)(dp + i * sd) = *(const T *)(sp + i * ss); \
    break;
        case 1: RUN(uint8_t)
        case 2: RUN(uint16_t)
        case 4: RUN(uint32_t)
        case 8: RUN(uint64_t)
#undef RUN
        }
        for (int k = nd - 2; k >= 0; k--) {
            if (++idx[k] < g->dim[k])
                break;
            idx[k] = 0;
        }
    }
}

static const int64_t *dense_strides(int nd, const int64_t *dim, int64_t *buf) {
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        buf[i] = s;
        s *= dim[i];
    }
    return buf;
}

static void geom2(cu_geom *g, const ch_tensor *a, const int64_t *sa, const int64_t *sb) {
    const int64_t *st[2] = {sa, sb};
    cu_geom_init(g, a->nd, a->dim, 2, st);
}

static int is_dense(const ch_tensor *t) {
    cu_geom g;
    const int64_t *st[1] = {t->stride};
    cu_geom_init(&g, t->nd, t->dim, 1, st);
    return g.contiguous;
}

/* Device to device on one GPU. */
static ch_status same_device(ch_tensor *dst, const ch_tensor *src) {
    cu_geom g;
    geom2(&g, dst, dst->stride, src->stride);
    if (dst->dt == src->dt && g.contiguous)
        return cu_check(cudaMemcpyAsync(cu_base(dst), cu_base(src), (size_t)g.numel * cu_dtype_size(dst->dt),
                                        cudaMemcpyDeviceToDevice, (cudaStream_t)cu_stream()),
                        "copy", "cudaMemcpyAsync (device to device)");
    return cu_copy_kernel(&g, dst->dt, cu_base(dst), src->dt, cu_base(src));
}

/* Uploads n dense elements of dtype dt from host memory into a staging
 * buffer on dst's device, then casts/scatters them into dst. */
static ch_status from_dense_host(ch_tensor *dst, const void *host, int dt) {
    int64_t n = 1, dense[CH_MAX_DIMS];
    for (int i = 0; i < dst->nd; i++)
        n *= dst->dim[i];
    size_t bytes = (size_t)n * cu_dtype_size(dt);
    void *stage = cu_scratch(dst->dev, bytes, "copy");
    if (!stage)
        return CH_ERR_MEMORY;
    ch_status st = cu_upload(stage, host, bytes, "copy");
    if (st == CH_OK) {
        cu_geom g;
        geom2(&g, dst, dst->stride, dense_strides(dst->nd, dst->dim, dense));
        st = cu_copy_kernel(&g, dst->dt, cu_base(dst), dt, stage);
    }
    cu_scratch_release(dst->dev, stage, bytes);
    return st;
}

static ch_status host_to_device(ch_tensor *dst, const ch_tensor *src) {
    cu_geom g;
    geom2(&g, dst, dst->stride, src->stride);
    size_t zs = cu_dtype_size(src->dt);
    if (dst->dt == src->dt && g.contiguous)
        return cu_upload(cu_base(dst), cu_base(src), (size_t)g.numel * zs, "copy");
    if (is_dense(src))
        return from_dense_host(dst, cu_base(src), src->dt);
    /* pack the strided source on the host, in its own dtype */
    int64_t dense[CH_MAX_DIMS];
    cu_geom hg;
    geom2(&hg, src, dense_strides(src->nd, src->dim, dense), src->stride);
    char *pack = malloc((size_t)hg.numel * zs);
    if (!pack)
        return cu_fail(CH_ERR_MEMORY, "copy: out of host memory for a %zu-byte staging buffer", (size_t)hg.numel * zs);
    host_move(&hg, pack, cu_base(src), zs);
    ch_status st = from_dense_host(dst, pack, src->dt);
    free(pack);
    return st;
}

static ch_status device_to_host(ch_tensor *dst, const ch_tensor *src) {
    cu_geom g;
    geom2(&g, dst, dst->stride, src->stride);
    size_t zd = cu_dtype_size(dst->dt);
    size_t bytes = (size_t)g.numel * zd;
    if (dst->dt == src->dt && g.contiguous)
        return cu_download(cu_base(dst), cu_base(src), bytes, "copy");
    /* cast/pack on the device into dst's dtype, unless already dense */
    int64_t dense[CH_MAX_DIMS];
    const void *devsrc = cu_base(src);
    void *stage = NULL;
    ch_status st = CH_OK;
    if (!(dst->dt == src->dt && is_dense(src))) {
        stage = cu_scratch(src->dev, bytes, "copy");
        if (!stage)
            return CH_ERR_MEMORY;
        cu_geom dg;
        geom2(&dg, src, dense_strides(src->nd, src->dim, dense), src->stride);
        st = cu_copy_kernel(&dg, dst->dt, stage, src->dt, cu_base(src));
        devsrc = stage;
    }
    if (st == CH_OK) {
        if (is_dense(dst)) {
            st = cu_download(cu_base(dst), devsrc, bytes, "copy");
        } else {
            char *host = malloc(bytes);
            if (!host) {
                st = cu_fail(CH_ERR_MEMORY, "copy: out of host memory for a %zu-byte staging buffer", bytes);
            } else {
                st = cu_download(host, devsrc, bytes, "copy");
                if (st == CH_OK) {
                    cu_geom hg;
                    geom2(&hg, dst, dst->stride, dense_strides(dst->nd, dst->dim, dense));
                    host_move(&hg, cu_base(dst), host, zd);
                }
                free(host);
            }
        }
    }
    if (stage)
        cu_scratch_release(src->dev, stage, bytes);
    return st;
}

/* Between two GPUs: dense source on its device -> peer copy -> kernel. */
static ch_status across_devices(ch_tensor *dst, const ch_tensor *src) {
    size_t zs = cu_dtype_size(src->dt);
    int64_t n = 1, dense[CH_MAX_DIMS];
    for (int i = 0; i < src->nd; i++)
        n *= src->dim[i];
    size_t bytes = (size_t)n * zs;
    const void *from = cu_base(src);
    void *packed = NULL, *stage = NULL;
    ch_status st = CH_OK;
    if (!is_dense(src)) {
        if ((st = cu_use(src->dev, "copy")) != CH_OK)
            return st;
        if (!(packed = cu_scratch(src->dev, bytes, "copy")))
            return CH_ERR_MEMORY;
        cu_geom g;
        geom2(&g, src, dense_strides(src->nd, src->dim, dense), src->stride);
        st = cu_copy_kernel(&g, src->dt, packed, src->dt, cu_base(src));
        from = packed;
    }
    /* the peer copy, on dst's current stream, waits for src's work so far;
     * src's current stream then waits for the peer copy, so src's memory
     * (and the packed buffer) is reused there only after it has been read */
    if (st == CH_OK && (st = cu_stream_order(src->dev, dst->dev, "copy")) == CH_OK) {
        if (!(stage = cu_scratch(dst->dev, bytes, "copy")))
            st = CH_ERR_MEMORY;
        else
            st = cu_check(cudaMemcpyPeerAsync(stage, dst->dev, from, src->dev, bytes, (cudaStream_t)cu_stream()),
                          "copy", "cudaMemcpyPeerAsync");
        if (st == CH_OK && (st = cu_stream_order(dst->dev, src->dev, "copy")) == CH_OK)
            st = cu_use(dst->dev, "copy");
        if (st == CH_OK) {
            cu_geom g;
            geom2(&g, dst, dst->stride, dense_strides(dst->nd, dst->dim, dense));
            st = cu_copy_kernel(&g, dst->dt, cu_base(dst), src->dt, stage);
        }
    }
    /* the staging buffers are reused only by later work on the same stream */
    if (stage)
        cu_scratch_release(dst->dev, stage, bytes);
    if (packed)
        cu_scratch_release(src->dev, packed, bytes);
    return st;
}

ch_status cu_copy(ch_tensor *dst, const ch_tensor *src) {
    if (!dst || !src || (!dst->data && dst->numel) || (!src->data && src->numel))
        return cu_fail(CH_ERR_ARG, "copy: a tensor argument is NULL or has been freed");
    if (dst->nd != src->nd || memcmp(dst->dim, src->dim, sizeof(int64_t) * (size_t)dst->nd) != 0)
        return cu_fail(CH_ERR_SHAPE, "copy: source and destination shapes differ (%d-d and %d-d tensors)", src->nd,
                       dst->nd);
    if (cu_dtype_size(dst->dt) == 0 || cu_dtype_size(src->dt) == 0)
        return cu_fail(CH_ERR_DTYPE, "copy: invalid dtype codes %d -> %d", src->dt, dst->dt);
    if (dst->numel == 0)
        return CH_OK;
    if (dst->dev == CH_CPU && src->dev == CH_CPU)
        return cu_fail(CH_ERR_INTERNAL, "copy: the CUDA backend was asked to copy between two CPU tensors");
    if (src->dev == CH_CPU) {
        CU_TRY(cu_use(dst->dev, "copy"));
        return host_to_device(dst, src);
    }
    if (dst->dev == CH_CPU) {
        CU_TRY(cu_use(src->dev, "copy"));
        return device_to_host(dst, src);
    }
    if (dst->dev == src->dev) {
        CU_TRY(cu_use(dst->dev, "copy"));
        return same_device(dst, src);
    }
    CU_TRY(cu_use(dst->dev, "copy"));
    CU_TRY(cu_use(src->dev, "copy"));
    return across_devices(dst, src);
}

ch_status cu_fill(ch_tensor *t, double value) {
    if (!t || (!t->data && t->numel))
        return cu_fail(CH_ERR_ARG, "fill: the tensor is NULL or has been freed");
    if (t->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(t->dev, "fill"));
    cu_geom g;
    const int64_t *st[1] = {t->stride};
    cu_geom_init(&g, t->nd, t->dim, 1, st);
    if (g.contiguous && value == 0.0)
        return cu_check(cudaMemsetAsync(cu_base(t), 0, (size_t)g.numel * cu_dtype_size(t->dt),
                                        (cudaStream_t)cu_stream()),
                        "fill", "cudaMemsetAsync");
    return cu_fill_kernel(&g, t->dt, cu_base(t), value);
}

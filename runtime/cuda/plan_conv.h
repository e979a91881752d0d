/*
 * plan_conv.h -- the host-side planning of the cuDNN convolutions
 * (conv.c): what cuDNN is told (descriptor extents and strides, padding,
 * groups), when the input needs an explicitly padded copy, the key of the
 * algorithm cache and the cache itself, and the choice among cuDNN's
 * ranked algorithms.
 *
 * Plain C with no CUDA headers (cuDNN's enum values are passed as ints), so
 * that tests/c/test_cuda_dnn_plan.c checks it without a GPU or toolkit.
 */
#ifndef CHAINLUA_CUDA_PLAN_CONV_H
#define CHAINLUA_CUDA_PLAN_CONV_H

#include "chainlua.h"
#include "kernels.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* cuDNN convolves 2 or 3 spatial axes: a 1-d convolution gets a unit axis
 * in front. */
#define CU_CONV_MAX_SP 3
#define CU_CONV_MAX_ND (CU_CONV_MAX_SP + 2)

/* The three passes; also the first field of the cache key. */
typedef enum cu_conv_pass { CU_CONV_FWD = 0, CU_CONV_BWD_DATA = 1, CU_CONV_BWD_FILTER = 2 } cu_conv_pass;

/*
 * One convolution as cuDNN sees it.  x is (N, C, *in) and y (N, Cout,
 * *out); cuDNN derives y's extents from x's as (in + 2p - dk) / s + 1 with
 * dk = d (k - 1) + 1 and symmetric padding.  Chainer's output extents
 * (cover_all, a deconvolution's outsize) can differ: then x goes through
 * a copy padded explicitly (p cells in front, as many behind as the last
 * window needs; `window`) and cuDNN runs without padding on that copy.
 */
typedef struct cu_conv_plan {
    int nsp;                           /* spatial axes given to cuDNN: 2 or 3 */
    int xdim[CU_CONV_MAX_ND], xstride[CU_CONV_MAX_ND];
    int wdim[CU_CONV_MAX_ND];
    int ydim[CU_CONV_MAX_ND], ystride[CU_CONV_MAX_ND];
    int pad[CU_CONV_MAX_SP], stride[CU_CONV_MAX_SP], dilation[CU_CONV_MAX_SP];
    int groups;
    /* the explicitly padded copy of x: extents (in the geometry's spatial
     * axes) and the shift, copy[i] = x[i - lo] (0 outside x) */
    int window;
    int64_t win_in[CH_MAX_DIMS], win_lo[CH_MAX_DIMS];
    int64_t win_numel;                 /* N * C * prod win_in */
    /* some tensor is empty: no cuDNN call (the output is zeros, plus the
     * bias in the forward pass) */
    int empty;
    /* the most workspace an algorithm may take (the geometry's limit) */
    size_t workspace_limit;
} cu_conv_plan;

/* Fills p from g.  Returns 0, or -1 with a message in err (at most errlen
 * bytes) when cuDNN cannot take it: more than 3 spatial axes, or an extent
 * or stride beyond int. */
int cu_conv_plan_init(cu_conv_plan *p, const ch_conv_geom *g, char *err, size_t errlen);

/* "x (2, 3, 5, 5) W (4, 3, 3, 3) y (2, 4, 3, 3)" from g, for messages. */
void cu_conv_shapes_str(const ch_conv_geom *g, char *buf, size_t len);

/*
 * The algorithm cache's key: everything that decides cuDNN's choice.  It
 * is compared bytewise, so cu_conv_key_init zeroes it first.
 */
typedef struct cu_conv_key {
    int pass, device, dtype, math, deterministic, autotune;
    int nsp, groups;
    int xdim[CU_CONV_MAX_ND], wdim[CU_CONV_MAX_ND], ydim[CU_CONV_MAX_ND];
    int pad[CU_CONV_MAX_SP], stride[CU_CONV_MAX_SP], dilation[CU_CONV_MAX_SP];
    uint64_t workspace_limit;          /* another limit may choose another algorithm */
} cu_conv_key;
void cu_conv_key_init(cu_conv_key *k, int pass, int device, int dtype, int math, int deterministic, int autotune,
                      const cu_conv_plan *p);

/* What the cache keeps: the algorithm, its math type and workspace size. */
typedef struct cu_conv_choice {
    int algo, math;
    size_t workspace;
} cu_conv_choice;

/* A growing open-addressing hash map from keys to choices (not locked: the
 * caller holds its lock). */
typedef struct cu_conv_cache {
    cu_conv_key *keys;
    cu_conv_choice *vals;
    uint8_t *used;
    size_t cap, count;
} cu_conv_cache;
/* 1 and *out when found, else 0. */
int cu_conv_cache_get(const cu_conv_cache *c, const cu_conv_key *k, cu_conv_choice *out);
/* 0, or -1 when memory runs out (the cache is unchanged then). */
int cu_conv_cache_put(cu_conv_cache *c, const cu_conv_key *k, const cu_conv_choice *v);
void cu_conv_cache_clear(cu_conv_cache *c);

/* One entry of cuDNN's ranked list (cudnnConvolution*AlgoPerf_t). */
typedef struct cu_conv_perf {
    int algo;
    int ok;                           /* status == CUDNN_STATUS_SUCCESS */
    size_t memory;
    int deterministic;                /* determinism == CUDNN_DETERMINISTIC */
    int math;
} cu_conv_perf;
/* Chainer's default limit on a convolution's workspace
 * (cuda.get_max_workspace_size; the geometry carries the current one). */
#define CU_CONV_WORKSPACE_LIMIT ((size_t)8 << 20)
/* The index of the first (best ranked) usable entry: succeeded, needs at
 * most `limit` bytes, is deterministic when that is required, and uses
 * math type `only_math` unless that is -1.  -1 when none is. */
int cu_conv_choose(const cu_conv_perf *perf, int n, size_t limit, int need_deterministic, int only_math);

#ifdef __cplusplus
}
#endif

#endif

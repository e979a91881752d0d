/*
 * plan.h -- the host-side planning of the CUDA backend's tensor ops:
 * broadcast strides and collapsed index spaces for elementwise kernels, the
 * kept/reduced split of reductions, and the cuBLAS call shape of a matmul.
 *
 * Plain C with no CUDA headers, so that tests/c/test_cuda_plan.c checks it
 * on machines without a GPU or CUDA toolkit.  All strides are in elements.
 */
#ifndef CHAINLUA_CUDA_PLAN_H
#define CHAINLUA_CUDA_PLAN_H

#include "chainlua.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- elementwise (plan_elementwise.c) ----------------------------------- */
#define CU_EW_MAXOPS 4   /* the output and up to three inputs (where: cond, a, b) */

/* Strides of a tensor (xnd, xdim, xstride) read under NumPy broadcasting in
 * the shape (nd, dim): aligned on the right, 0 on broadcast axes.  Returns
 * 0, or -1 when the shapes do not broadcast. */
int cu_broadcast_strides(int xnd, const int64_t *xdim, const int64_t *xstride, int nd, const int64_t *dim,
                         int64_t *out);

/*
 * The index space of an elementwise op over nops operands of one shape
 * (operand 0 the output): size-1 axes dropped, neighbours merged where
 * every operand steps across the pair as one run.
 */
typedef struct cu_ew_plan {
    int nd;                                   /* >= 1 */
    int nops;
    int64_t numel;
    int64_t dim[CH_MAX_DIMS];
    int64_t stride[CU_EW_MAXOPS][CH_MAX_DIMS];
    /* one run in which every input steps by 1 or by 0 (a broadcast single
     * element) and the output by 1: offset = i * stride */
    int dense;
    int index32;                              /* dense, and every index fits in int32 */
} cu_ew_plan;
void cu_ew_plan_init(cu_ew_plan *p, int nd, const int64_t *dim, int nops, const int64_t *const *strides);

/* ---- reductions (plan_reduce.c) ------------------------------------------- */
typedef struct cu_reduce_plan {
    int64_t rows;                 /* outputs: product of the kept extents */
    int64_t count;                /* inputs per output: product of the reduced extents */
    int nk, nr;                   /* kept / reduced axes after merging (0 when none) */
    int64_t kdim[CH_MAX_DIMS], kstride[CH_MAX_DIMS];
    int64_t rdim[CH_MAX_DIMS], rstride[CH_MAX_DIMS];
} cu_reduce_plan;
/* Splits x's axes by red[] (non-zero: reduced), drops size-1 axes and
 * merges neighbours within each group where x steps across them as one run,
 * so that C order over each group is kept (output order, arg positions). */
void cu_reduce_plan_init(cu_reduce_plan *p, int nd, const int64_t *dim, const int64_t *stride, const uint8_t *red);

/* ---- matmul (plan_gemm.c) ------------------------------------------------ */
/*
 * A row-major product C (M x N) = A (M x K) @ B (K x N) is issued to
 * column-major cuBLAS as C^T = B^T A^T: gemm(opB, opA, N, M, K, B, ldb, A,
 * lda, C, N).  A matrix stored row-major (unit column stride) is, read
 * column-major, its own transpose: op N.  One stored column-major (unit row
 * stride) needs op T.  Any other layout is copied densely first.
 */
typedef struct cu_gemm_operand {
    int64_t rows, cols;           /* logical, after transposition */
    int64_t rs, cs;               /* logical strides */
    int op_t;                     /* 1: cuBLAS op T, 0: op N */
    int64_t ld;
    int copy;                     /* fits neither layout: make it dense and plan again */
} cu_gemm_operand;

typedef struct cu_gemm_plan {
    int64_t M, N, K;
    cu_gemm_operand a, b;
    int nb;                       /* batch axes after merging (0: one product) */
    int64_t batch;                /* number of products */
    int64_t bdim[CH_MAX_DIMS];
    int64_t bstride[3][CH_MAX_DIMS];  /* A, B, C per batch axis (0: broadcast) */
} cu_gemm_plan;

/* Plans a @ b (NumPy matmul: a 1-D a is a row, a 1-D b a column, batch axes
 * broadcast) with the last two axes of a/b transposed when trans_a/trans_b;
 * the result is contiguous.  Returns 0, or -1 when the shapes do not fit. */
int cu_gemm_plan_init(cu_gemm_plan *p, int and_, const int64_t *adim, const int64_t *astride, int trans_a, int bnd,
                      const int64_t *bdim, const int64_t *bstride, int trans_b);

/* ---- libraries loaded on first use (plan_libs.c) ------------------------ */
#define CU_LIB_MAX_NAMES 4
#define CU_LIB_MAX_SYMBOLS 16
/* A library and the functions the backend takes from it: label ("cuSOLVER"),
 * the file names tried in order (the first named in errors), the symbol
 * names (NULL-terminated); fns[i] is symbols[i] once loaded. */
typedef struct cu_lazy_lib {
    const char *label;
    const char *names[CU_LIB_MAX_NAMES];
    const char *symbols[CU_LIB_MAX_SYMBOLS];
    void *fns[CU_LIB_MAX_SYMBOLS];
    void *handle;
    int tried;
    char why[256];
} cu_lazy_lib;
/* Loads lib on the first call (thread-safe; a failure is remembered).
 * Returns 1 when it and all its symbols are there, else 0 with err = a
 * message naming the op fn, the library and why. */
int cu_lib_load(cu_lazy_lib *lib, const char *fn, char *err, size_t errlen);
/* The first of n per-matrix status words (LAPACK's info) that is not 0:
 * its position, with *value = the word; -1 when all are 0. */
int64_t cu_first_failure(const int *info, int64_t n, int *value);

#ifdef __cplusplus
}
#endif

#endif

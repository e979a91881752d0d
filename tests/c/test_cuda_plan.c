/* test_cuda_plan.c -- the CUDA backend's host-side planning
 * (runtime/cuda/plan_*.c): broadcast strides and collapsed elementwise index
 * spaces, the kept/reduced split of reductions, and how matmuls map onto
 * cuBLAS.  Pure C: runs without a GPU or CUDA toolkit. */
#include "check.h"
#include "plan.h"

#define I64(...) ((const int64_t[]){__VA_ARGS__})

static void test_broadcast_strides(void) {
    int64_t s[CH_MAX_DIMS];
    /* (3, 1) strides (1, 1) read as (2, 3, 4): new axis, kept axis, size-1 axis */
    CHECK(cu_broadcast_strides(2, I64(3, 1), I64(1, 1), 3, I64(2, 3, 4), s) == 0);
    CHECK(s[0] == 0 && s[1] == 1 && s[2] == 0);
    /* a transposed (4, 3) view keeps its strides */
    CHECK(cu_broadcast_strides(2, I64(4, 3), I64(1, 4), 2, I64(4, 3), s) == 0);
    CHECK(s[0] == 1 && s[1] == 4);
    /* 0-d */
    CHECK(cu_broadcast_strides(0, NULL, NULL, 2, I64(2, 2), s) == 0);
    CHECK(s[0] == 0 && s[1] == 0);
    /* (3,) does not broadcast to (2, 4); more axes than the target neither */
    CHECK(cu_broadcast_strides(1, I64(3), I64(1), 2, I64(2, 4), s) == -1);
    CHECK(cu_broadcast_strides(3, I64(1, 2, 4), I64(8, 4, 1), 2, I64(2, 4), s) == -1);
}

static void plan3(cu_ew_plan *p, int nd, const int64_t *dim, const int64_t *s0, const int64_t *s1,
                  const int64_t *s2) {
    const int64_t *st[3] = {s0, s1, s2};
    cu_ew_plan_init(p, nd, dim, s2 ? 3 : 2, st);
}

static void test_ew_plan(void) {
    cu_ew_plan p;
    /* three contiguous operands: one dense run, 32-bit indexable */
    plan3(&p, 3, I64(2, 3, 4), I64(12, 4, 1), I64(12, 4, 1), I64(12, 4, 1));
    CHECK(p.nd == 1 && p.dim[0] == 24 && p.numel == 24 && p.dense && p.index32);
    /* a bias (4,) over (2, 3, 4): the bias repeats every 4, so only the
     * leading axes merge */
    plan3(&p, 3, I64(2, 3, 4), I64(12, 4, 1), I64(12, 4, 1), I64(0, 0, 1));
    CHECK(p.nd == 2 && p.dim[0] == 6 && p.dim[1] == 4 && !p.dense);
    CHECK(p.stride[0][0] == 4 && p.stride[1][0] == 4 && p.stride[2][0] == 0);
    CHECK(p.stride[0][1] == 1 && p.stride[2][1] == 1);
    /* a broadcast single element stays dense (stride 0) */
    plan3(&p, 2, I64(5, 7), I64(7, 1), I64(7, 1), I64(0, 0));
    CHECK(p.nd == 1 && p.dim[0] == 35 && p.dense && p.stride[2][0] == 0);
    /* a transposed input: no merging, strided kernel */
    plan3(&p, 2, I64(4, 3), I64(3, 1), I64(1, 4), NULL);
    CHECK(p.nd == 2 && !p.dense && !p.index32 && p.stride[1][0] == 1 && p.stride[1][1] == 4);
    /* every other element of the output (a strided view) is not dense */
    plan3(&p, 1, I64(10), I64(2), I64(1), NULL);
    CHECK(p.nd == 1 && !p.dense);
    /* size-1 axes vanish, whatever their strides */
    plan3(&p, 4, I64(1, 3, 1, 4), I64(99, 4, 7, 1), I64(5, 4, 0, 1), NULL);
    CHECK(p.nd == 1 && p.dim[0] == 12 && p.dense);
    /* 0-d and empty tensors */
    plan3(&p, 0, NULL, NULL, NULL, NULL);
    CHECK(p.nd == 1 && p.dim[0] == 1 && p.numel == 1 && p.dense);
    plan3(&p, 2, I64(3, 0), I64(0, 1), I64(0, 1), NULL);
    CHECK(p.numel == 0);
    /* too many elements for 32-bit indices */
    plan3(&p, 2, I64(65536, 65536), I64(65536, 1), I64(65536, 1), NULL);
    CHECK(p.nd == 1 && p.dense && !p.index32);
}

static void test_reduce_plan(void) {
    cu_reduce_plan p;
    const int64_t *dim = I64(2, 3, 4), *st = I64(12, 4, 1);
    /* the middle axis */
    cu_reduce_plan_init(&p, 3, dim, st, (const uint8_t[]){0, 1, 0});
    CHECK(p.rows == 8 && p.count == 3);
    CHECK(p.nk == 2 && p.kdim[0] == 2 && p.kstride[0] == 12 && p.kdim[1] == 4 && p.kstride[1] == 1);
    CHECK(p.nr == 1 && p.rdim[0] == 3 && p.rstride[0] == 4);
    /* the last two axes merge into one run of 12 */
    cu_reduce_plan_init(&p, 3, dim, st, (const uint8_t[]){0, 1, 1});
    CHECK(p.nk == 1 && p.kdim[0] == 2 && p.nr == 1 && p.rdim[0] == 12 && p.rstride[0] == 1);
    /* axes 0 and 2: separate reduced axes, in C order */
    cu_reduce_plan_init(&p, 3, dim, st, (const uint8_t[]){1, 0, 1});
    CHECK(p.nr == 2 && p.rdim[0] == 2 && p.rstride[0] == 12 && p.rdim[1] == 4 && p.rstride[1] == 1);
    CHECK(p.nk == 1 && p.kdim[0] == 3 && p.kstride[0] == 4 && p.rows == 3 && p.count == 8);
    /* a transposed (4, 3) view reduced entirely: C order of the view, not of memory */
    cu_reduce_plan_init(&p, 2, I64(4, 3), I64(1, 4), (const uint8_t[]){1, 1});
    CHECK(p.nr == 2 && p.rdim[0] == 4 && p.rstride[0] == 1 && p.rdim[1] == 3 && p.rstride[1] == 4);
    CHECK(p.nk == 0 && p.rows == 1 && p.count == 12);
    /* size-1 axes drop out of both groups; reducing only them reduces nothing */
    cu_reduce_plan_init(&p, 3, I64(5, 1, 6), I64(6, 6, 1), (const uint8_t[]){0, 1, 0});
    CHECK(p.nr == 0 && p.count == 1 && p.nk == 1 && p.kdim[0] == 30 && p.rows == 30);
    /* a zero-size reduced axis: count 0 (sum gives 0, prod 1) */
    cu_reduce_plan_init(&p, 2, I64(3, 0), I64(0, 1), (const uint8_t[]){0, 1});
    CHECK(p.count == 0 && p.rows == 3);
}

static void test_gemm_plan(void) {
    cu_gemm_plan p;
    /* (2, 3) @ (3, 4), both contiguous: op N for both, ld = row stride */
    CHECK(cu_gemm_plan_init(&p, 2, I64(2, 3), I64(3, 1), 0, 2, I64(3, 4), I64(4, 1), 0) == 0);
    CHECK(p.M == 2 && p.N == 4 && p.K == 3 && p.nb == 0 && p.batch == 1);
    CHECK(!p.a.op_t && p.a.ld == 3 && !p.b.op_t && p.b.ld == 4 && !p.a.copy && !p.b.copy);
    /* transb of a contiguous (4, 3): column-major (3, 4) storage, op T, ld 3 */
    CHECK(cu_gemm_plan_init(&p, 2, I64(2, 3), I64(3, 1), 0, 2, I64(4, 3), I64(3, 1), 1) == 0);
    CHECK(p.N == 4 && p.K == 3 && p.b.op_t && p.b.ld == 3 && !p.b.copy);
    /* a transposed view passed with transa: back to row-major */
    CHECK(cu_gemm_plan_init(&p, 2, I64(3, 2), I64(1, 3), 1, 2, I64(3, 4), I64(4, 1), 0) == 0);
    CHECK(p.M == 2 && p.K == 3 && !p.a.op_t && p.a.ld == 3);
    /* a padded row stride is a leading dimension, not a copy */
    CHECK(cu_gemm_plan_init(&p, 2, I64(2, 3), I64(8, 1), 0, 2, I64(3, 4), I64(4, 1), 0) == 0);
    CHECK(!p.a.copy && p.a.ld == 8);
    /* every other column: fits no layout, copied */
    CHECK(cu_gemm_plan_init(&p, 2, I64(2, 3), I64(6, 2), 0, 2, I64(3, 4), I64(4, 1), 0) == 0);
    CHECK(p.a.copy && !p.b.copy);
    /* a broadcast (stride 0) matrix is copied too */
    CHECK(cu_gemm_plan_init(&p, 2, I64(2, 3), I64(0, 1), 0, 2, I64(3, 4), I64(4, 1), 0) == 0);
    CHECK(p.a.copy);
    /* 1-D @ 2-D: a is one row; a strided vector needs no copy (op T) */
    CHECK(cu_gemm_plan_init(&p, 1, I64(3), I64(1), 0, 2, I64(3, 4), I64(4, 1), 0) == 0);
    CHECK(p.M == 1 && p.K == 3 && !p.a.op_t && p.a.ld == 3);
    CHECK(cu_gemm_plan_init(&p, 1, I64(3), I64(5), 0, 2, I64(3, 4), I64(4, 1), 0) == 0);
    CHECK(!p.a.copy && p.a.op_t && p.a.ld == 5);
    /* 2-D @ 1-D: b is one column */
    CHECK(cu_gemm_plan_init(&p, 2, I64(2, 3), I64(3, 1), 0, 1, I64(3), I64(1), 0) == 0);
    CHECK(p.N == 1 && p.K == 3 && !p.b.copy);
    /* batched, b shared: one strided-batched call with b's stride 0 */
    CHECK(cu_gemm_plan_init(&p, 3, I64(5, 2, 3), I64(6, 3, 1), 0, 2, I64(3, 4), I64(4, 1), 0) == 0);
    CHECK(p.nb == 1 && p.batch == 5 && p.bdim[0] == 5);
    CHECK(p.bstride[0][0] == 6 && p.bstride[1][0] == 0 && p.bstride[2][0] == 8);
    /* (2, 5, 2, 3) @ (5, 3, 4): a's batch axes merge but b's do not */
    CHECK(cu_gemm_plan_init(&p, 4, I64(2, 5, 2, 3), I64(30, 6, 3, 1), 0, 3, I64(5, 3, 4), I64(12, 4, 1), 0) == 0);
    CHECK(p.nb == 2 && p.batch == 10 && p.bdim[0] == 2 && p.bdim[1] == 5);
    CHECK(p.bstride[0][0] == 30 && p.bstride[1][0] == 0 && p.bstride[2][0] == 40);
    CHECK(p.bstride[0][1] == 6 && p.bstride[1][1] == 12 && p.bstride[2][1] == 8);
    /* both operands contiguous over the same batch: one merged batch axis */
    CHECK(cu_gemm_plan_init(&p, 4, I64(2, 5, 2, 3), I64(30, 6, 3, 1), 0, 4, I64(2, 5, 3, 4), I64(60, 12, 4, 1), 0) ==
          0);
    CHECK(p.nb == 1 && p.bdim[0] == 10 && p.bstride[0][0] == 6 && p.bstride[1][0] == 12 && p.bstride[2][0] == 8);
    /* size-1 batch axes broadcast both ways */
    CHECK(cu_gemm_plan_init(&p, 4, I64(2, 1, 2, 3), I64(6, 6, 3, 1), 0, 4, I64(1, 5, 3, 4), I64(60, 12, 4, 1), 0) ==
          0);
    CHECK(p.nb == 2 && p.batch == 10 && p.bstride[0][0] == 6 && p.bstride[0][1] == 0);
    CHECK(p.bstride[1][0] == 0 && p.bstride[1][1] == 12);
    /* shapes that do not fit */
    CHECK(cu_gemm_plan_init(&p, 2, I64(2, 3), I64(3, 1), 0, 2, I64(4, 5), I64(5, 1), 0) == -1);
    CHECK(cu_gemm_plan_init(&p, 3, I64(2, 2, 3), I64(6, 3, 1), 0, 3, I64(3, 3, 4), I64(12, 4, 1), 0) == -1);
}

/* where plans four operands (out, cond, a, b): the fourth constrains
 * merging like the others. */
static void test_where_plan(void) {
    cu_ew_plan p;
    const int64_t *dense[4] = {I64(12, 4, 1), I64(12, 4, 1), I64(12, 4, 1), I64(12, 4, 1)};
    cu_ew_plan_init(&p, 3, I64(2, 3, 4), 4, dense);
    CHECK(p.nops == 4 && p.nd == 1 && p.dim[0] == 24 && p.dense && p.index32);
    /* a per-column a (4,) and a scalar b: only the leading axes merge */
    const int64_t *bias[4] = {I64(12, 4, 1), I64(12, 4, 1), I64(0, 0, 1), I64(0, 0, 0)};
    cu_ew_plan_init(&p, 3, I64(2, 3, 4), 4, bias);
    CHECK(p.nd == 2 && p.dim[0] == 6 && p.dim[1] == 4 && !p.dense);
    CHECK(p.stride[2][0] == 0 && p.stride[2][1] == 1 && p.stride[3][0] == 0 && p.stride[3][1] == 0);
    /* a dense run with a broadcast single-element b stays dense */
    const int64_t *scal[4] = {I64(4, 1), I64(4, 1), I64(4, 1), I64(0, 0)};
    cu_ew_plan_init(&p, 2, I64(3, 4), 4, scal);
    CHECK(p.nd == 1 && p.dense && p.stride[3][0] == 0);
    /* b alone transposed: nothing merges and the run is not dense */
    const int64_t *tr[4] = {I64(4, 1), I64(4, 1), I64(4, 1), I64(1, 3)};
    cu_ew_plan_init(&p, 2, I64(3, 4), 4, tr);
    CHECK(p.nd == 2 && !p.dense && p.stride[3][0] == 1 && p.stride[3][1] == 3);
    /* three operands leave the fourth's strides at 0 */
    cu_ew_plan_init(&p, 2, I64(3, 4), 3, tr);
    CHECK(p.nd == 1 && p.dense && p.stride[3][0] == 0);
}

int main(void) {
    test_broadcast_strides();
    test_ew_plan();
    test_where_plan();
    test_reduce_plan();
    test_gemm_plan();
    return check_done("test_cuda_plan");
}

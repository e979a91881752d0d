/*
 * matmul.c -- the matmul and gemm kernels of the table: NumPy matmul of
 * float16/float32/float64, and BLAS's c = alpha op(a) op(b) + beta c of
 * float32/float64 2-d operands (gemm, linear), on cuBLAS.  plan_gemm.c maps the row-major, possibly transposed, strided and
 * batched operands onto column-major calls (C^T = B^T A^T); an operand whose
 * matrices fit no BLAS layout is first packed densely on the device.  A
 * merged batch axis becomes one cublasGemmStridedBatchedEx call (stride 0
 * for a broadcast operand); further batch axes loop on the host.
 *
 * float16 is multiplied with float32 accumulation (CUBLAS_COMPUTE_32F), as
 * the CPU computes it in float32; float32 uses CUBLAS_COMPUTE_32F, which
 * does not use TF32.  One cuBLAS handle per device, created on first use,
 * runs on the current stream (stream.c) that the copies and kernels use.
 *
 * Compiled and unit-tested on the planning side only: this code has not yet
 * been run on a GPU.
 */
#include "backend.h"
#include "plan.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

static cublasHandle_t handles[CU_MAX_DEVICES];
static void *handle_streams[CU_MAX_DEVICES]; /* the stream each handle is bound to */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

static ch_status blas_check(cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS)
        return CH_OK;
    return cu_fail(s == CUBLAS_STATUS_ALLOC_FAILED ? CH_ERR_MEMORY : CH_ERR_DEVICE, "matmul: %s failed: %s", what,
                   cublasGetStatusString(s));
}

/* The handle of the current device (cu_use has made it current). */
static ch_status handle_for(int device, cublasHandle_t *h) {
    ch_status st = CH_OK;
    pthread_mutex_lock(&handles_lock);
    if (!handles[device]) {
        cublasHandle_t fresh;
        st = blas_check(cublasCreate(&fresh), "cublasCreate");
        if (st == CH_OK) {
            st = blas_check(cublasSetStream(fresh, 0), "cublasSetStream");
            if (st == CH_OK)
                handles[device] = fresh;
            else
                cublasDestroy(fresh);
        }
    }
    *h = handles[device];
    /* follow the current stream (stream.c) */
    if (st == CH_OK && cu_stream_rebind(&handle_streams[device]))
        if ((st = blas_check(cublasSetStream(*h, (cudaStream_t)cu_stream()), "cublasSetStream")) != CH_OK)
            handle_streams[device] = &handle_streams[device]; /* no stream: rebind next time */
    pthread_mutex_unlock(&handles_lock);
    return st;
}

/* A dense (C-order) copy of x in a scratch buffer, described by *view. */
static ch_status pack(const ch_tensor *x, ch_tensor *view, size_t *bytes) {
    *view = *x;
    view->offset = 0;
    int64_t s = 1;
    for (int i = x->nd - 1; i >= 0; i--) {
        view->stride[i] = s;
        s *= x->dim[i];
    }
    *bytes = (size_t)x->numel * cu_dtype_size(x->dt);
    view->data = cu_scratch(x->dev, *bytes, "matmul");
    if (!view->data)
        return CH_ERR_MEMORY;
    const int64_t *st[2] = {view->stride, x->stride};
    cu_geom g;
    cu_geom_init(&g, x->nd, x->dim, 2, st);
    ch_status r = cu_copy_kernel(&g, x->dt, view->data, x->dt, cu_base(x));
    if (r != CH_OK) {
        cu_scratch_release(x->dev, view->data, *bytes);
        view->data = NULL;
    }
    return r;
}

static int fits_int(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* out = alpha * (the products of plan p on the (packed if needed) operands
 * a, b) + beta * out; beta == 0 does not read out. */
static ch_status run(cublasHandle_t h, const cu_gemm_plan *p, const ch_tensor *a, const ch_tensor *b, ch_tensor *out,
                     double alpha_v, double beta_v) {
    int dt = out->dt;
    cudaDataType ty = dt == CH_FLOAT16 ? CUDA_R_16F : dt == CH_FLOAT32 ? CUDA_R_32F : CUDA_R_64F;
    cublasComputeType_t ct = dt == CH_FLOAT64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
    /* the scalars have the compute type's precision */
    const float alpha_f = (float)alpha_v, beta_f = (float)beta_v;
    const void *alpha = dt == CH_FLOAT64 ? (const void *)&alpha_v : (const void *)&alpha_f;
    const void *beta = dt == CH_FLOAT64 ? (const void *)&beta_v : (const void *)&beta_f;
    if (!fits_int(p->M) || !fits_int(p->N) || !fits_int(p->K) || !fits_int(p->a.ld) || !fits_int(p->b.ld))
        return cu_fail(CH_ERR_UNSUPPORTED, "matmul: a dimension exceeds cuBLAS's 32-bit limit (M=%lld, N=%lld, K=%lld)",
                       (long long)p->M, (long long)p->N, (long long)p->K);
    cublasOperation_t opb = p->b.op_t ? CUBLAS_OP_T : CUBLAS_OP_N, opa = p->a.op_t ? CUBLAS_OP_T : CUBLAS_OP_N;
    int m = (int)p->N, n = (int)p->M, k = (int)p->K, ldb = (int)p->b.ld, lda = (int)p->a.ld, ldc = (int)p->N;
    int64_t z = (int64_t)cu_dtype_size(dt);
    const char *A = cu_base(a), *B = cu_base(b);
    char *C = cu_base(out);
    if (p->nb == 0)
        return blas_check(cublasGemmEx(h, opb, opa, m, n, k, alpha, B, ty, ldb, A, ty, lda, beta, C, ty, ldc, ct,
                                       CUBLAS_GEMM_DEFAULT),
                          "cublasGemmEx");
    /* the innermost merged batch axis in one call, the others on the host */
    int last = p->nb - 1;
    int64_t count = p->bdim[last];
    if (!fits_int(count))
        return cu_fail(CH_ERR_UNSUPPORTED, "matmul: %lld products in one batch axis exceed cuBLAS's limit",
                       (long long)count);
    int64_t outer = p->batch / count;
    for (int64_t o = 0; o < outer; o++) {
        int64_t rem = o, oa = 0, ob = 0, oc = 0;
        for (int d = last - 1; d >= 0; d--) {
            int64_t c = rem % p->bdim[d];
            rem /= p->bdim[d];
            oa += c * p->bstride[0][d];
            ob += c * p->bstride[1][d];
            oc += c * p->bstride[2][d];
        }
        CU_TRY(blas_check(cublasGemmStridedBatchedEx(h, opb, opa, m, n, k, alpha, B + ob * z, ty, ldb,
                                                     p->bstride[1][last], A + oa * z, ty, lda, p->bstride[0][last],
                                                     beta, C + oc * z, ty, ldc, p->bstride[2][last], (int)count, ct,
                                                     CUBLAS_GEMM_DEFAULT),
                          "cublasGemmStridedBatchedEx"));
    }
    return CH_OK;
}

static ch_status product(const char *fn, const ch_tensor *a, const ch_tensor *b, int transa, int transb,
                         ch_tensor *out, double alpha, double beta);

ch_status cu_matmul(const ch_tensor *a, const ch_tensor *b, int transa, int transb, ch_tensor *out) {
    if (out && out->dt != CH_FLOAT16 && out->dt != CH_FLOAT32 && out->dt != CH_FLOAT64)
        return cu_fail(CH_ERR_UNSUPPORTED, "matmul: %s @ %s on cuda:%d: integer and bool products run only on the "
                       "CPU (cuBLAS has no such GEMM); convert to a float dtype or move with :to_cpu()",
                       cu_dtype_name(a->dt), cu_dtype_name(b->dt), out->dev);
    return product("matmul", a, b, transa, transb, out, 1.0, 0.0);
}

ch_status cu_gemm(int transa, int transb, double alpha, const ch_tensor *a, const ch_tensor *b, double beta,
                  ch_tensor *c) {
    if (!a || !b || !c || (!c->data && c->numel))
        return cu_fail(CH_ERR_ARG, "gemm: a tensor argument is NULL or has been freed");
    if (a->nd != 2 || b->nd != 2 || c->nd != 2)
        return cu_fail(CH_ERR_SHAPE, "gemm: a, b and c must be 2-d (got %d-d, %d-d and %d-d)", a->nd, b->nd, c->nd);
    if (c->dt != CH_FLOAT32 && c->dt != CH_FLOAT64)
        return cu_fail(CH_ERR_DTYPE, "gemm: c must be float32 or float64 on the GPU (got %s)", cu_dtype_name(c->dt));
    if ((c->dim[0] <= 1 || c->stride[0] == c->dim[1]) && (c->dim[1] <= 1 || c->stride[1] == 1))
        return product("gemm", a, b, transa, transb, c, alpha, beta);
    /* any other layout of c: through a dense scratch copy, written back */
    CU_TRY(cu_use(c->dev, "gemm"));
    ch_tensor dense;
    size_t bytes;
    CU_TRY(pack(c, &dense, &bytes));
    ch_status st = product("gemm", a, b, transa, transb, &dense, alpha, beta);
    if (st == CH_OK) {
        const int64_t *strides[2] = {c->stride, dense.stride};
        cu_geom g;
        cu_geom_init(&g, c->nd, c->dim, 2, strides);
        st = cu_copy_kernel(&g, c->dt, cu_base(c), c->dt, dense.data);
    }
    cu_scratch_release(c->dev, dense.data, bytes);
    return st;
}

/* out = alpha * op(a) @ op(b) + beta * out, out contiguous. */
static ch_status product(const char *fn, const ch_tensor *a, const ch_tensor *b, int transa, int transb,
                         ch_tensor *out, double alpha, double beta) {
    if (!a || !b || !out || (!a->data && a->numel) || (!b->data && b->numel) || (!out->data && out->numel))
        return cu_fail(CH_ERR_ARG, "%s: a tensor argument is NULL or has been freed", fn);
    if ((out->dt != CH_FLOAT16 && out->dt != CH_FLOAT32 && out->dt != CH_FLOAT64) || a->dt != out->dt ||
        b->dt != out->dt)
        return cu_fail(CH_ERR_DTYPE, "%s: the GPU multiplies float16, float32 or float64 operands of one dtype "
                       "(got %s @ %s into %s)", fn, cu_dtype_name(a->dt), cu_dtype_name(b->dt), cu_dtype_name(out->dt));
    if (a->dev != out->dev || b->dev != out->dev)
        return cu_fail(CH_ERR_DEVICE, "%s: operands on devices %d and %d, output on %d", fn, a->dev, b->dev, out->dev);
    cu_gemm_plan p;
    if (cu_gemm_plan_init(&p, a->nd, a->dim, a->stride, transa, b->nd, b->dim, b->stride, transb) != 0)
        return cu_fail(CH_ERR_SHAPE, "%s: the operand shapes do not fit (%d-d @ %d-d)", fn, a->nd, b->nd);
    if (p.batch * p.M * p.N != out->numel)
        return cu_fail(CH_ERR_SHAPE, "%s: the output has %lld elements (expected %lld)", fn, (long long)out->numel,
                       (long long)(p.batch * p.M * p.N));
    if (out->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(out->dev, fn));
    if (p.K == 0)  /* empty sums: out = beta * out */
        return beta == 0 ? cu_fill(out, 0.0) : beta == 1 ? CH_OK : cu_axpby(beta, out, 0.0, out);

    ch_tensor pa, pb;
    size_t na = 0, nb = 0;
    const ch_tensor *A = a, *B = b;
    ch_status st = CH_OK;
    if (p.a.copy) {
        if ((st = pack(a, &pa, &na)) == CH_OK)
            A = &pa;
    }
    if (st == CH_OK && p.b.copy) {
        if ((st = pack(b, &pb, &nb)) == CH_OK)
            B = &pb;
    }
    if (st == CH_OK && (A != a || B != b) &&
        cu_gemm_plan_init(&p, A->nd, A->dim, A->stride, transa, B->nd, B->dim, B->stride, transb) != 0)
        st = cu_fail(CH_ERR_INTERNAL, "%s: planning failed after packing the operands", fn);
    if (st == CH_OK && (p.a.copy || p.b.copy))
        st = cu_fail(CH_ERR_INTERNAL, "%s: a packed operand still fits no BLAS layout", fn);
    cublasHandle_t h = NULL;
    if (st == CH_OK)
        st = handle_for(out->dev, &h);
    if (st == CH_OK)
        st = run(h, &p, A, B, out, alpha, beta);
    /* the scratch buffers return to the cache; later work on the same
     * stream runs after these products */
    if (A != a)
        cu_scratch_release(a->dev, pa.data, na);
    if (B != b)
        cu_scratch_release(b->dev, pb.data, nb);
    return st;
}

/* The raw products of the sequence RNNs (rnn_seq.c): row-major C = op(A)
 * op(B) + beta C, issued as C^T = op(B)^T op(A)^T to cublasGemmEx. */
ch_status cu_gemm_rows(const char *fn, int dev, int dt, int ta, int tb, int64_t M, int64_t N, int64_t K,
                       const void *A, int64_t lda, const void *B, int64_t ldb, double beta_v, void *C, int64_t ldc) {
    if ((dt != CH_FLOAT32 && dt != CH_FLOAT64) || M <= 0 || N <= 0 || K <= 0)
        return cu_fail(CH_ERR_INTERNAL, "%s: the GPU's row products take float32 or float64 and non-empty sizes", fn);
    if (!fits_int(M) || !fits_int(N) || !fits_int(K) || !fits_int(lda) || !fits_int(ldb) || !fits_int(ldc))
        return cu_fail(CH_ERR_UNSUPPORTED, "%s: a product of M=%lld, N=%lld, K=%lld exceeds cuBLAS's 32-bit limit", fn,
                       (long long)M, (long long)N, (long long)K);
    cublasHandle_t h;
    CU_TRY(handle_for(dev, &h));
    cudaDataType ty = dt == CH_FLOAT32 ? CUDA_R_32F : CUDA_R_64F;
    cublasComputeType_t ct = dt == CH_FLOAT64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
    const double one_d = 1.0;
    const float one_f = 1.0f, beta_f = (float)beta_v;
    const void *alpha = dt == CH_FLOAT64 ? (const void *)&one_d : (const void *)&one_f;
    const void *beta = dt == CH_FLOAT64 ? (const void *)&beta_v : (const void *)&beta_f;
    return blas_check(cublasGemmEx(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)N, (int)M,
                                   (int)K, alpha, B, ty, (int)ldb, A, ty, (int)lda, beta, C, ty, (int)ldc, ct,
                                   CUBLAS_GEMM_DEFAULT),
                      "cublasGemmEx");
}

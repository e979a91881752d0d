/*
 * lapack.c -- inv, det, solve and cholesky of the kernel table on cuSOLVER
 * (the dense getrf / getrs / potrf routines), loaded on first use
 * (plan_libs.c): the backend does not link it, and without it these four
 * ops fail with an error naming the op and the library.
 *
 * Row-major and column-major as on the CPU (runtime/cpu/lapack.c): a
 * row-major matrix read column-major is its transpose, so inv factors w as
 * it lies and solves against the identity (inv(A^T) = inv(A)^T), det
 * factors it as it lies (det(A^T) = det(A)), cholesky factors the upper
 * triangle of the column-major reading (the row-major lower one), and solve
 * transposes A and b into column-major scratch and the result back.  The
 * zero pivots and failing minors are found from cuSOLVER's per-matrix info
 * words after the whole batch, and reported like the CPU's (the first
 * failing matrix; 0-based pivot, 1-based order).
 *
 * One cuSOLVER call per matrix (the batch loops on the host): right for the
 * few large matrices these ops see; a batch of many tiny ones would want
 * cuBLAS's batched getrf instead.
 *
 * Compiled only: this code has not yet been run on a GPU.  The per-item
 * kernels it launches (lapack.cu) are tested emulated; the cuSOLVER calls
 * only by the GPU specs.
 */
#include "backend.h"
#include "plan.h"

#include <cuda_runtime_api.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>

/* The few cuSOLVER functions used, with float/double pointers as void *
 * (one signature for both precisions); enums are ints. */
typedef int (*create_fn)(void **handle);
typedef int (*getrf_size_fn)(void *h, int m, int n, void *A, int lda, int *lwork);
typedef int (*getrf_fn)(void *h, int m, int n, void *A, int lda, void *work, int *ipiv, int *info);
typedef int (*getrs_fn)(void *h, int trans, int n, int nrhs, const void *A, int lda, const int *ipiv, void *B,
                        int ldb, int *info);
typedef int (*potrf_size_fn)(void *h, int uplo, int n, void *A, int lda, int *lwork);
typedef int (*potrf_fn)(void *h, int uplo, int n, void *A, int lda, void *work, int lwork, int *info);
typedef int (*set_stream_fn)(void *h, void *stream);
enum { OP_N = 0, FILL_UPPER = 1 }; /* CUBLAS_OP_N, CUBLAS_FILL_MODE_UPPER */

enum {
    CREATE,
    GETRF_SIZE,
    GETRF = GETRF_SIZE + 2,
    GETRS = GETRF + 2,
    POTRF_SIZE = GETRS + 2,
    POTRF = POTRF_SIZE + 2,
    SET_STREAM = POTRF + 2
};
static cu_lazy_lib cusolver = {
    .label = "cuSOLVER",
    .names = {"libcusolver.so.12", "libcusolver.so.13", "libcusolver.so.11", "libcusolver.so"},
    .symbols = {"cusolverDnCreate", "cusolverDnSgetrf_bufferSize", "cusolverDnDgetrf_bufferSize", "cusolverDnSgetrf",
                "cusolverDnDgetrf", "cusolverDnSgetrs", "cusolverDnDgetrs", "cusolverDnSpotrf_bufferSize",
                "cusolverDnDpotrf_bufferSize", "cusolverDnSpotrf", "cusolverDnDpotrf", "cusolverDnSetStream"},
};
static void *handles[CU_MAX_DEVICES];
static void *handle_streams[CU_MAX_DEVICES]; /* the stream each handle is bound to */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;

/* The function `which` in the precision of dt (the S and D entries follow each other). */
#define SOLVER(which, dt) (cusolver.fns[(which) + ((dt) == CH_FLOAT64)])

static ch_status solver_check(int status, const char *fn, const char *what, int64_t p, int64_t n) {
    if (status == 0)
        return CH_OK;
    return cu_fail(status == 2 ? CH_ERR_MEMORY : CH_ERR_DEVICE, "%s: cuSOLVER %s failed (status %d) on matrix %lld "
                   "(%lld x %lld)", fn, what, status, (long long)p, (long long)n, (long long)n);
}

/* cuSOLVER loaded and the handle of the current device (cu_use made it current). */
static ch_status solver_for(const char *fn, int dev, void **h) {
    char err[512];
    if (!cu_lib_load(&cusolver, fn, err, sizeof err))
        return cu_fail(CH_ERR_UNSUPPORTED, "%s", err);
    ch_status st = CH_OK;
    pthread_mutex_lock(&handles_lock);
    if (!handles[dev])
        st = solver_check(((create_fn)cusolver.fns[CREATE])(&handles[dev]), fn, "cusolverDnCreate", 0, 0);
    *h = handles[dev];
    /* follow the current stream (stream.c) */
    if (st == CH_OK && cu_stream_rebind(&handle_streams[dev]) &&
        (st = solver_check(((set_stream_fn)cusolver.fns[SET_STREAM])(*h, cu_stream()), fn, "cusolverDnSetStream", 0,
                           0)) != CH_OK)
        handle_streams[dev] = &handle_streams[dev]; /* no stream: rebind next time */
    pthread_mutex_unlock(&handles_lock);
    return st;
}

/* Scratch of the factorizations: workspace, pivots, per-matrix info words
 * and one more (getrs's), and an optional n x ncols float matrix. */
typedef struct lk_scratch {
    int dev;
    size_t bytes;
    char *base, *work, *mat, *mat2;
    int *ipiv, *info, *info2;
} lk_scratch;

static size_t up8(size_t b) { return (b + 7) & ~(size_t)7; }

static ch_status scratch_take(lk_scratch *s, const char *fn, int dev, size_t work, size_t npiv, int64_t ninfo,
                              size_t mat, size_t mat2) {
    s->dev = dev;
    s->bytes = up8(work) + up8(sizeof(int) * npiv) + up8(sizeof(int) * (size_t)(ninfo + 1)) + up8(mat) + up8(mat2);
    s->base = cu_scratch(dev, s->bytes, fn);
    if (!s->base)
        return CH_ERR_MEMORY;
    char *q = s->base;
    s->work = q, q += up8(work);
    s->ipiv = (int *)q, q += up8(sizeof(int) * npiv);
    s->info = (int *)q, s->info2 = s->info + ninfo, q += up8(sizeof(int) * (size_t)(ninfo + 1));
    s->mat = q, q += up8(mat);
    s->mat2 = q;
    return CH_OK;
}

static void scratch_give(lk_scratch *s) {
    if (s->base)
        cu_scratch_release(s->dev, s->base, s->bytes);
    s->base = NULL;
}

/* The first failing matrix of the batch from the device's info words:
 * *bad = its position (-1: none) and *value its info word; a negative word
 * (an illegal argument) is an internal error. */
static ch_status first_failure(const char *fn, const char *what, const int *dev_info, int64_t nbatch, int64_t *bad,
                               int *value) {
    int *host = malloc(sizeof(int) * (size_t)(nbatch > 0 ? nbatch : 1));
    if (!host)
        return cu_fail(CH_ERR_MEMORY, "%s: out of memory", fn);
    ch_status st = cu_download(host, dev_info, sizeof(int) * (size_t)nbatch, fn);
    *bad = -1;
    if (st == CH_OK)
        *bad = cu_first_failure(host, nbatch, value);
    free(host);
    if (st == CH_OK && *bad >= 0 && *value < 0)
        st = cu_fail(CH_ERR_INTERNAL, "%s: cuSOLVER %s rejected argument %d", fn, what, -*value);
    return st;
}

/* w: contiguous float32/float64 (..., n, n) on a GPU; its n and batch. */
static ch_status square_batch(const char *fn, const ch_tensor *w, int64_t *n, int64_t *nbatch) {
    if (!w || (w->dt != CH_FLOAT32 && w->dt != CH_FLOAT64) || w->nd < 2 || !cu_dense(w, w->dt, w->numel, w->dev) ||
        w->dim[w->nd - 1] != w->dim[w->nd - 2])
        return cu_fail(CH_ERR_INTERNAL, "%s: the GPU factors contiguous float32 or float64 (..., n, n) tensors", fn);
    *n = w->dim[w->nd - 1];
    *nbatch = *n ? w->numel / (*n * *n) : 0;
    if (*n > INT_MAX / 2)
        return cu_fail(CH_ERR_UNSUPPORTED, "%s: matrices of order %lld exceed cuSOLVER's 32-bit sizes", fn,
                       (long long)*n);
    return CH_OK;
}

/* The device made current, cuSOLVER's handle, and the workspace size (in
 * elements) of getrf, or of potrf on the upper triangle, for w's n x n
 * matrices (a0 one of them, or a scratch matrix of that size). */
static ch_status factor_setup(const char *fn, int dev, int dt, int potrf, int64_t n, char *a0, void **h, int *lwork) {
    int ni = (int)n;
    CU_TRY(cu_use(dev, fn));
    CU_TRY(solver_for(fn, dev, h));
    if (potrf)
        return solver_check(((potrf_size_fn)SOLVER(POTRF_SIZE, dt))(*h, FILL_UPPER, ni, a0, ni, lwork), fn,
                            "potrf_bufferSize", 0, n);
    return solver_check(((getrf_size_fn)SOLVER(GETRF_SIZE, dt))(*h, ni, ni, a0, ni, lwork), fn, "getrf_bufferSize", 0,
                        n);
}

/* An in-place factorization of w's matrices, set up: sizes, dtype, the
 * cuSOLVER handle and the workspace size (getrf, or potrf when `potrf`);
 * nbatch 0 when there is nothing to do. */
typedef struct lk_job {
    int64_t n, nbatch;
    int dt, ni, lwork;
    size_t z;
    void *h;
    char *a0;
} lk_job;

static ch_status job_begin(const char *fn, ch_tensor *w, int potrf, lk_job *j) {
    *j = (lk_job){0};
    CU_TRY(square_batch(fn, w, &j->n, &j->nbatch));
    if (j->nbatch == 0)
        return CH_OK;
    j->dt = w->dt;
    j->ni = (int)j->n;
    j->z = cu_dtype_size(w->dt);
    j->a0 = cu_base(w);
    return factor_setup(fn, w->dev, w->dt, potrf, j->n, j->a0, &j->h, &j->lwork);
}

/* After the batch: the first failing matrix into *bad and its info word,
 * less `less`, into *value (inv and solve: the 0-based pivot; cholesky:
 * the order of the minor); releases the scratch. */
static ch_status finish_batch(ch_status st, const char *fn, const char *what, lk_scratch *s, int64_t nbatch,
                              int64_t *bad, int *value, int less) {
    int word = 0;
    if (st == CH_OK)
        st = first_failure(fn, what, s->info, nbatch, bad, &word);
    if (st == CH_OK && *bad >= 0)
        *value = word - less;
    scratch_give(s);
    return st;
}

ch_status cu_inv(ch_tensor *w, int64_t *bad, int *pivot) {
    const char *fn = "inv";
    lk_job j;
    *bad = -1;
    CU_TRY(job_begin(fn, w, 0, &j));
    if (j.nbatch == 0)
        return CH_OK;
    size_t mbytes = j.z * (size_t)(j.n * j.n);
    lk_scratch s = {0};
    CU_TRY(scratch_take(&s, fn, w->dev, j.z * (size_t)j.lwork, (size_t)j.n, j.nbatch, mbytes, 0));
    ch_status st = CH_OK;
    for (int64_t p = 0; p < j.nbatch && st == CH_OK; p++) {
        /* A^T X = I in the column-major reading: X is inv(A) row-major */
        char *a = j.a0 + mbytes * (size_t)p;
        st = solver_check(((getrf_fn)SOLVER(GETRF, j.dt))(j.h, j.ni, j.ni, a, j.ni, s.work, s.ipiv, s.info + p), fn,
                          "getrf", p, j.n);
        if (st == CH_OK)
            st = cu_lapack_items(CU_LK_IDENTITY, j.dt, 1, j.n, j.n, NULL, NULL, s.mat);
        if (st == CH_OK)
            st = solver_check(((getrs_fn)SOLVER(GETRS, j.dt))(j.h, OP_N, j.ni, j.ni, a, j.ni, s.ipiv, s.mat, j.ni,
                                                               s.info2),
                              fn, "getrs", p, j.n);
        if (st == CH_OK)
            st = cu_check(cudaMemcpyAsync(a, s.mat, mbytes, cudaMemcpyDeviceToDevice, (cudaStream_t)cu_stream()), fn,
                          "copy");
    }
    return finish_batch(st, fn, "getrf", &s, j.nbatch, bad, pivot, 1);
}

ch_status cu_det(ch_tensor *w, ch_tensor *out) {
    const char *fn = "det";
    int64_t n = 0, nbatch = 0;
    CU_TRY(square_batch(fn, w, &n, &nbatch));
    if (!out || !cu_dense(out, w->dt, n ? nbatch : out->numel, w->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: out must be contiguous, of w's dtype and device, one per matrix", fn);
    if (out->numel == 0)
        return CH_OK;
    int dt = w->dt, ni = (int)n, lwork = 0;
    size_t z = cu_dtype_size(dt);
    if (n == 0) { /* the empty product: 1 */
        CU_TRY(cu_use(w->dev, fn));
        return cu_lapack_items(CU_LK_DET, dt, out->numel, 0, 0, cu_base(w), NULL, cu_base(out));
    }
    void *h;
    char *a0 = cu_base(w);
    CU_TRY(factor_setup(fn, w->dev, dt, 0, n, a0, &h, &lwork));
    lk_scratch s = {0};
    CU_TRY(scratch_take(&s, fn, w->dev, z * (size_t)lwork, (size_t)(n * nbatch), nbatch, 0, 0));
    ch_status st = CH_OK;
    for (int64_t p = 0; p < nbatch && st == CH_OK; p++)
        st = solver_check(((getrf_fn)SOLVER(GETRF, dt))(h, ni, ni, a0 + z * (size_t)(p * n * n), ni, s.work,
                                                         s.ipiv + p * n, s.info + p),
                          fn, "getrf", p, n);
    /* a zero pivot (info > 0) leaves a zero on the diagonal: det 0, as on the CPU */
    int64_t bad;
    int value = 0;
    if (st == CH_OK)
        st = first_failure(fn, "getrf", s.info, nbatch, &bad, &value);
    if (st == CH_OK)
        st = cu_lapack_items(CU_LK_DET, dt, nbatch, n, n, a0, s.ipiv, cu_base(out));
    scratch_give(&s);
    return st;
}

ch_status cu_solve(const ch_tensor *A, const ch_tensor *B, ch_tensor *out, int64_t *bad, int *pivot) {
    const char *fn = "solve";
    int64_t n = 0, nA = 0;
    *bad = -1;
    CU_TRY(square_batch(fn, A, &n, &nA));
    int dt = A->dt;
    int64_t k = B && B->nd >= 1 ? B->dim[B->nd - 1] : 0;
    int64_t nbatch = n && k ? B->numel / (n * k) : 0;
    if (!B || !cu_dense(B, dt, B->numel, A->dev) || !out || !cu_dense(out, dt, B->numel, A->dev) ||
        (n && k && (nbatch != nA || B->numel != nbatch * n * k)) || k > INT_MAX)
        return cu_fail(CH_ERR_INTERNAL, "%s: b and out must be contiguous (batch, n, k) tensors of a's dtype and "
                       "device, one per matrix of a", fn);
    if (nbatch == 0)
        return CH_OK;
    int ni = (int)n, ki = (int)k, lwork = 0;
    size_t z = cu_dtype_size(dt);
    void *h;
    lk_scratch s = {0};
    /* a scratch matrix first, so that the workspace query sees one */
    CU_TRY(cu_use(A->dev, fn));
    CU_TRY(scratch_take(&s, fn, A->dev, 0, 0, 0, z * (size_t)(n * n), 0));
    ch_status st = factor_setup(fn, A->dev, dt, 0, n, s.mat, &h, &lwork);
    scratch_give(&s);
    if (st != CH_OK)
        return st;
    CU_TRY(scratch_take(&s, fn, A->dev, z * (size_t)lwork, (size_t)n, nbatch, z * (size_t)(n * n),
                        z * (size_t)(n * k)));
    const char *a0 = cu_base(A), *b0 = cu_base(B);
    char *o0 = cu_base(out);
    for (int64_t p = 0; p < nbatch && st == CH_OK; p++) {
        st = cu_lapack_items(CU_LK_TRANSPOSE, dt, 1, n, n, a0 + z * (size_t)(p * n * n), NULL, s.mat);
        if (st == CH_OK)
            st = cu_lapack_items(CU_LK_TRANSPOSE, dt, 1, n, k, b0 + z * (size_t)(p * n * k), NULL, s.mat2);
        if (st == CH_OK)
            st = solver_check(((getrf_fn)SOLVER(GETRF, dt))(h, ni, ni, s.mat, ni, s.work, s.ipiv, s.info + p), fn,
                              "getrf", p, n);
        if (st == CH_OK)
            st = solver_check(((getrs_fn)SOLVER(GETRS, dt))(h, OP_N, ni, ki, s.mat, ni, s.ipiv, s.mat2, ni, s.info2),
                              fn, "getrs", p, n);
        if (st == CH_OK)
            st = cu_lapack_items(CU_LK_TRANSPOSE, dt, 1, k, n, s.mat2, NULL, o0 + z * (size_t)(p * n * k));
    }
    return finish_batch(st, fn, "getrf", &s, nbatch, bad, pivot, 1);
}

ch_status cu_cholesky(ch_tensor *w, int64_t *bad, int *order) {
    const char *fn = "cholesky";
    lk_job j;
    *bad = -1;
    CU_TRY(job_begin(fn, w, 1, &j));
    if (j.nbatch == 0)
        return CH_OK;
    lk_scratch s = {0};
    CU_TRY(scratch_take(&s, fn, w->dev, j.z * (size_t)j.lwork, 0, j.nbatch, 0, 0));
    ch_status st = CH_OK;
    for (int64_t p = 0; p < j.nbatch && st == CH_OK; p++)
        st = solver_check(((potrf_fn)SOLVER(POTRF, j.dt))(j.h, FILL_UPPER, j.ni, j.a0 + j.z * (size_t)(p * j.n * j.n),
                                                           j.ni, s.work, j.lwork, s.info + p),
                          fn, "potrf", p, j.n);
    /* potrf leaves the input in the other triangle */
    if (st == CH_OK)
        st = cu_lapack_items(CU_LK_LOWER, j.dt, j.nbatch, j.n, j.n, NULL, NULL, j.a0);
    return finish_batch(st, fn, "potrf", &s, j.nbatch, bad, order, 0);
}

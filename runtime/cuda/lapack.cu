/*
 * lapack.cu -- the per-item kernels around cuSOLVER's factorizations
 * (lapack.c): transposes between row-major and LAPACK's column-major
 * matrices, identity right-hand sides, the determinant from an LU factor
 * and its pivots (the CPU's formula: the product of the diagonal in double,
 * a sign flip per row exchange), and the zeroed upper triangle of a
 * Cholesky factor.
 *
 * Compiled here, but NOT yet executed on a GPU: tests/cuda/test_lapack.cu
 * runs these items emulated on the host; the cuSOLVER calls are checked
 * only by the GPU specs (spec/cuda/linalg_gpu_spec.lua).
 */
#include "backend.h"
#include "launch.cuh"

/* dst (batch of c x r) = the transposes of src (batch of r x c). */
template <typename T> struct lk_transpose {
    const T *src;
    T *dst;
    int64_t r, c;
    CU_HD void operator()(int64_t k) const {
        int64_t m = k / (r * c), e = k - m * r * c, i = e / c, j = e - i * c;
        dst[m * r * c + j * r + i] = src[k];
    }
};

/* Each of the batch n x n matrices of a = the identity. */
template <typename T> struct lk_identity {
    T *a;
    int64_t n;
    CU_HD void operator()(int64_t k) const {
        int64_t e = k % (n * n);
        a[k] = e / n == e % n ? (T)1 : (T)0;
    }
};

/* out[m] = det of matrix m from its LU factor lu (n x n) and 1-based pivots. */
template <typename T> struct lk_det {
    const T *lu;
    const int *ipiv;
    T *out;
    int64_t n;
    CU_HD void operator()(int64_t m) const {
        const T *a = lu + m * n * n;
        const int *p = ipiv + m * n;
        double det = 1.0;
        for (int64_t i = 0; i < n; i++)
            det *= a[i * n + i] * (p[i] != i + 1 ? -1.0 : 1.0);
        out[m] = (T)det;
    }
};

/* The strict upper triangle of each row-major n x n matrix zeroed. */
template <typename T> struct lk_lower {
    T *a;
    int64_t n;
    CU_HD void operator()(int64_t k) const {
        int64_t e = k % (n * n);
        if (e % n > e / n)
            a[k] = 0;
    }
};

template <typename T> static ch_status run_typed(int what, int64_t batch, int64_t r, int64_t c, const char *src,
                                                 const int *ipiv, char *dst) {
    switch (what) {
    case CU_LK_TRANSPOSE:
        return cu_each("transpose", batch * r * c, lk_transpose<T>{(const T *)src, (T *)dst, r, c});
    case CU_LK_IDENTITY: return cu_each("identity", batch * r * r, lk_identity<T>{(T *)dst, r});
    case CU_LK_DET: return cu_each("det", batch, lk_det<T>{(const T *)src, ipiv, (T *)dst, r});
    default: return cu_each("cholesky", batch * r * r, lk_lower<T>{(T *)dst, r});
    }
}

extern "C" ch_status cu_lapack_items(int what, int dt, int64_t batch, int64_t r, int64_t c, const char *src,
                                     const int *ipiv, char *dst) {
    if (dt == CH_FLOAT32)
        return run_typed<float>(what, batch, r, c, src, ipiv, dst);
    return run_typed<double>(what, batch, r, c, src, ipiv, dst);
}

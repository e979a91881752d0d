/*
 * fft.c -- the fft kernel of the table on cuFFT, loaded on first use
 * (plan_libs.c): the backend does not link it, and without it fft fails
 * with an error naming the op and the library.  Each row of the float64
 * planes re, im (..., n) is one complex transform of a batched Z2Z plan,
 * made for the call and destroyed after it, on the current stream
 * (stream.c) that the backend's other kernels use.
 *
 * Compiled only: this code has not yet been run on a GPU.  The interleaving
 * kernels (fft.cu) are tested emulated; the cuFFT calls only by the GPU specs.
 */
#include "backend.h"
#include "plan.h"

#include <limits.h>

/* The few cuFFT functions used (cufftHandle is an int, enums are ints). */
typedef int (*plan1d_fn)(int *plan, int nx, int type, int batch);
typedef int (*exec_z2z_fn)(int plan, void *idata, void *odata, int direction);
typedef int (*destroy_fn)(int plan);
typedef int (*set_stream_fn)(int plan, void *stream);
enum { CUFFT_Z2Z_TYPE = 0x69, DIR_FORWARD = -1, DIR_INVERSE = 1 };
enum { PLAN1D, EXEC_Z2Z, DESTROY, SET_STREAM };
static cu_lazy_lib cufft = {
    .label = "cuFFT",
    .names = {"libcufft.so.12", "libcufft.so.13", "libcufft.so.11", "libcufft.so"},
    .symbols = {"cufftPlan1d", "cufftExecZ2Z", "cufftDestroy", "cufftSetStream"},
};

static ch_status fft_check(int status, const char *what, int64_t rows, int64_t n) {
    if (status == 0)
        return CH_OK;
    return cu_fail(status == 2 ? CH_ERR_MEMORY : CH_ERR_DEVICE, "fft: cuFFT %s failed (status %d) for %lld rows of "
                   "%lld", what, status, (long long)rows, (long long)n);
}

ch_status cu_fft(ch_tensor *re, ch_tensor *im, int inverse) {
    const char *fn = "fft";
    if (!re || re->dt != CH_FLOAT64 || re->nd < 1 || !cu_dense(re, CH_FLOAT64, re->numel, re->dev) ||
        !cu_dense_as(im, re))
        return cu_fail(CH_ERR_INTERNAL, "%s: re and im must be contiguous float64 tensors of one shape and device", fn);
    int64_t n = re->dim[re->nd - 1], rows = n ? re->numel / n : 0;
    if (rows == 0)
        return CH_OK;
    if (n > INT_MAX || rows > INT_MAX)
        return cu_fail(CH_ERR_UNSUPPORTED, "%s: %lld rows of %lld exceed cuFFT's 32-bit sizes", fn, (long long)rows,
                       (long long)n);
    char err[512];
    if (!cu_lib_load(&cufft, fn, err, sizeof err))
        return cu_fail(CH_ERR_UNSUPPORTED, "%s", err);
    CU_TRY(cu_use(re->dev, fn));
    size_t bytes = 2 * sizeof(double) * (size_t)re->numel;
    char *buf = cu_scratch(re->dev, bytes, fn);
    if (!buf)
        return CH_ERR_MEMORY;
    int plan = 0, planned = 0;
    ch_status st = cu_fft_items(0, re->numel, cu_base(re), cu_base(im), buf, 1.0);
    if (st == CH_OK) {
        st = fft_check(((plan1d_fn)cufft.fns[PLAN1D])(&plan, (int)n, CUFFT_Z2Z_TYPE, (int)rows), "cufftPlan1d", rows, n);
        planned = st == CH_OK;
    }
    if (st == CH_OK)
        st = fft_check(((set_stream_fn)cufft.fns[SET_STREAM])(plan, cu_stream()), "cufftSetStream", rows, n);
    if (st == CH_OK)
        st = fft_check(((exec_z2z_fn)cufft.fns[EXEC_Z2Z])(plan, buf, buf, inverse ? DIR_INVERSE : DIR_FORWARD),
                       "cufftExecZ2Z", rows, n);
    if (st == CH_OK)
        st = cu_fft_items(1, re->numel, cu_base(re), cu_base(im), buf, inverse ? (double)n : 1.0);
    if (planned)
        ((destroy_fn)cufft.fns[DESTROY])(plan);
    cu_scratch_release(re->dev, buf, bytes);
    return st;
}

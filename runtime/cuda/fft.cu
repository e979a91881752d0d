/*
 * fft.cu -- the per-item kernels around cuFFT (fft.c): the float64 planes
 * re, im interleaved into cuFFT's complex numbers and back (divided by n
 * after an inverse transform, as numpy.fft.ifft).
 *
 * Compiled here, but NOT yet executed on a GPU: tests/cuda/test_lapack.cu
 * runs these items emulated on the host; the transform itself (cuFFT) is
 * checked only by the GPU specs (spec/cuda/linalg_gpu_spec.lua).
 */
#include "backend.h"
#include "launch.cuh"

struct fft_interleave {
    double *re, *im, *buf;
    double divide;
    int to_planes;
    CU_HD void operator()(int64_t i) const {
        if (to_planes) {
            re[i] = buf[2 * i] / divide;
            im[i] = buf[2 * i + 1] / divide;
        } else {
            buf[2 * i] = re[i];
            buf[2 * i + 1] = im[i];
        }
    }
};

extern "C" ch_status cu_fft_items(int to_planes, int64_t n, char *re, char *im, char *buf, double divide) {
    return cu_each("fft", n, fft_interleave{(double *)re, (double *)im, (double *)buf, divide, to_planes});
}

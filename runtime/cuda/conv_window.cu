/*
 * conv_window.cu -- the explicitly padded copy that the cuDNN convolutions
 * (conv.c) use when Chainer's output extents are not cuDNN's (cover_all,
 * a deconvolution's outsize): x copied into a larger zero-filled frame
 * before the forward and filter passes, and the data gradient cut back out
 * of that frame afterwards.  Both are one copy, dst[i] = src[i + shift]
 * per spatial axis (zero where that falls outside src), over N * C planes
 * of up to 3 spatial axes.  Elements are moved as raw bits.
 *
 * Compiled, and tested emulated on the host (tests/cuda/test_conv_window.cu,
 * against the CPU's im2col/col2im with a 1-cell kernel); not yet run on a
 * GPU.
 */
#include "backend.h"
#include "launch.cuh"

template <typename T> struct window_step {
    const T *src;
    T *dst;
    int64_t sext[3], dext[3], shift[3];

    CU_HD void operator()(int64_t i) const {
        int64_t rest = i, src_at = 0;
        bool inside = true;
        int64_t pos[3];
        for (int a = 2; a >= 0; a--) {
            pos[a] = rest % dext[a];
            rest /= dext[a];
        }
        int64_t plane = rest; /* what is left is the (n, c) plane */
        src_at = plane;
        for (int a = 0; a < 3; a++) {
            int64_t s = pos[a] + shift[a];
            if (s < 0 || s >= sext[a])
                inside = false;
            src_at = src_at * sext[a] + s;
        }
        dst[i] = inside ? src[src_at] : (T)0;
    }
};

extern "C" ch_status cu_conv_window_launch(int elsize, int nsp, int64_t planes, const int64_t *src_ext,
                                           const int64_t *dst_ext, const int64_t *shift, const char *src, char *dst) {
    if (nsp < 1 || nsp > 3 || (elsize != 4 && elsize != 8))
        return cu_fail(CH_ERR_INTERNAL, "conv_window: %d spatial axes of %d-byte elements", nsp, elsize);
    int64_t sext[3] = {1, 1, 1}, dext[3] = {1, 1, 1}, sh[3] = {0, 0, 0}, n = planes;
    for (int a = 0; a < nsp; a++) {
        int j = 3 - nsp + a;
        sext[j] = src_ext[a];
        dext[j] = dst_ext[a];
        sh[j] = shift[a];
        n *= dst_ext[a];
    }
    if (elsize == 4) {
        window_step<uint32_t> w{(const uint32_t *)src, (uint32_t *)dst, {sext[0], sext[1], sext[2]},
                                {dext[0], dext[1], dext[2]}, {sh[0], sh[1], sh[2]}};
        return cu_each("conv_window", n, w);
    }
    window_step<uint64_t> w{(const uint64_t *)src, (uint64_t *)dst, {sext[0], sext[1], sext[2]},
                            {dext[0], dext[1], dext[2]}, {sh[0], sh[1], sh[2]}};
    return cu_each("conv_window", n, w);
}

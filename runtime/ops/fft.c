/* fft.c -- front door of the discrete Fourier transform over the last axis
 * (numpy.fft.fft / ifft on real + i imag; kernel: runtime/cpu/fft.c).
 * The planes are computed in float64 and returned in the inputs' dtype, as
 * Chainer casts NumPy's complex128 result back. */
#include "prologue.h"

ch_status ch_fft(const ch_tensor *real, const ch_tensor *imag, int inverse, ch_tensor **out_real, ch_tensor **out_imag) {
    const char *fn = inverse ? "ifft" : "fft";
    CH_TRY(ch_want_float(fn, "real", real));
    CH_TRY(ch_want_like(fn, "imag", imag, "real", real, 1));
    if (real->nd < 1)
        return ch_fail(CH_ERR_SHAPE, "%s: real and imag must have at least one axis (got a 0-d tensor)", fn);
    CH_KERNEL(kernel, fft, real->dev, fn);
    const ch_tensor *in[2] = {real, imag};
    ch_tensor *w[2] = {NULL, NULL};
    /* fresh float64 copies the kernel may overwrite */
    for (int k = 0; k < 2; k++) {
        ch_status st = ch_tensor_new(CH_FLOAT64, real->nd, real->dim, real->dev, &w[k]);
        if (st == CH_OK) st = ch_copy_any(w[k], in[k]);
        if (st != CH_OK) {
            ch_release_all(w, 2);
            return st;
        }
    }
    ch_status st = kernel(w[0], w[1], inverse);
    ch_tensor *r[2] = {NULL, NULL};
    for (int k = 0; k < 2 && st == CH_OK; k++) {
        if (real->dt == CH_FLOAT64) {
            r[k] = w[k];
            w[k] = NULL;
        } else {
            st = ch_astype(w[k], (ch_dtype)real->dt, &r[k]);
        }
    }
    ch_release_all(w, 2);
    if (st != CH_OK) {
        ch_release_all(r, 2);
        return st;
    }
    *out_real = r[0], *out_imag = r[1];
    return CH_OK;
}

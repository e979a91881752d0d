/* fft.c -- the CPU's discrete Fourier transform over the last axis
 * (front door: runtime/ops/fft.c).  Every row of n complex numbers, split
 * into real and imaginary planes of float64, is transformed by
 *   - the iterative radix-2 Cooley-Tukey FFT when n is a power of two,
 *   - the direct sum for other n up to DIRECT_MAX (exact angle table),
 *   - Bluestein's chirp-z algorithm otherwise: the transform as a
 *     convolution, computed with power-of-two FFTs of size >= 2n - 1.
 * So every length costs O(n log n) (beyond DIRECT_MAX).  Angles are reduced
 * to integer positions on the unit circle before cos/sin, which keeps the
 * twiddles exact to the last bit for any n.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>
#include <stdlib.h>

#define DIRECT_MAX 64
#define TWO_PI 6.28318530717958647692

static int is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* exp(sign * 2 pi i k / n) for k reduced to 0..n-1 */
static void unit(int64_t k, int64_t n, int sign, double *c, double *s) {
    k %= n;
    double a = TWO_PI * (double)k / (double)n;
    *c = cos(a);
    *s = sign * sin(a);
}

/* In-place radix-2 FFT of (re, im), n a power of two; tw holds
 * exp(sign 2 pi i k / n) for k < n/2. */
static void fft_pow2(double *re, double *im, int64_t n, const double *twr, const double *twi) {
    for (int64_t i = 1, j = 0; i < n; i++) { /* bit-reversal permutation */
        int64_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j |= bit;
        if (i < j) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    for (int64_t len = 2; len <= n; len <<= 1) {
        int64_t half = len >> 1, step = n / len;
        for (int64_t start = 0; start < n; start += len) {
            for (int64_t k = 0; k < half; k++) {
                double wr = twr[k * step], wi = twi[k * step];
                int64_t a = start + k, b = a + half;
                double xr = re[b] * wr - im[b] * wi, xi = re[b] * wi + im[b] * wr;
                re[b] = re[a] - xr, im[b] = im[a] - xi;
                re[a] += xr, im[a] += xi;
            }
        }
    }
}

static void twiddles(int64_t n, int sign, double *twr, double *twi) {
    for (int64_t k = 0; k < n / 2; k++) unit(k, n, sign, &twr[k], &twi[k]);
}

/* Scratch for one call: sized for n (and Bluestein's m). */
typedef struct {
    int64_t n, m;
    double *twr, *twi;       /* pow2 twiddles: for n, or for m (Bluestein) */
    double *cr, *ci;         /* direct: the n roots; Bluestein: the chirp */
    double *br, *bi;         /* Bluestein: FFT of the conjugate chirp (length m) */
    double *ar, *ai;         /* Bluestein work row (length m); direct: output row */
} plan;

static void plan_free(plan *p) {
    free(p->twr), free(p->twi), free(p->cr), free(p->ci), free(p->br), free(p->bi), free(p->ar), free(p->ai);
}

static ch_status plan_make(plan *p, int64_t n, int sign) {
    *p = (plan){.n = n, .m = n};
    if (!is_pow2(n) && n > DIRECT_MAX) {
        int64_t m = 1;
        while (m < 2 * n - 1) m <<= 1;
        p->m = m;
    }
    int64_t m = p->m;
    size_t dm = sizeof(double) * (size_t)(m > 1 ? m : 1), dn = sizeof(double) * (size_t)n;
    p->twr = malloc(dm), p->twi = malloc(dm), p->cr = malloc(dn), p->ci = malloc(dn);
    p->br = malloc(dm), p->bi = malloc(dm), p->ar = malloc(dm), p->ai = malloc(dm);
    if (!p->twr || !p->twi || !p->cr || !p->ci || !p->br || !p->bi || !p->ar || !p->ai) {
        plan_free(p);
        return ch_fail(CH_ERR_MEMORY, "fft: out of memory (row length %lld)", (long long)n);
    }
    if (is_pow2(n)) {
        twiddles(n, sign, p->twr, p->twi);
    } else if (n <= DIRECT_MAX) {
        for (int64_t k = 0; k < n; k++) unit(k, n, sign, &p->cr[k], &p->ci[k]);
    } else {
        /* chirp c_k = exp(sign pi i k^2 / n) = unit(k^2 mod 2n, 2n) */
        for (int64_t k = 0; k < n; k++) unit((k * k) % (2 * n), 2 * n, sign, &p->cr[k], &p->ci[k]);
        twiddles(m, -1, p->twr, p->twi);
        /* b_k = conj(c_|k|) for -n < k < n, wrapped into 0..m-1 */
        for (int64_t k = 0; k < m; k++) p->br[k] = p->bi[k] = 0;
        for (int64_t k = 0; k < n; k++) {
            p->br[k] = p->cr[k], p->bi[k] = -p->ci[k];
            if (k > 0) p->br[m - k] = p->cr[k], p->bi[m - k] = -p->ci[k];
        }
        fft_pow2(p->br, p->bi, m, p->twr, p->twi);
    }
    return CH_OK;
}

/* Transforms one row in place. */
static void transform_row(plan *p, double *re, double *im) {
    int64_t n = p->n, m = p->m;
    if (is_pow2(n)) {
        fft_pow2(re, im, n, p->twr, p->twi);
    } else if (n <= DIRECT_MAX) {
        for (int64_t j = 0; j < n; j++) {
            double sr = 0, si = 0;
            for (int64_t k = 0; k < n; k++) {
                int64_t r = (j * k) % n;
                sr += re[k] * p->cr[r] - im[k] * p->ci[r];
                si += re[k] * p->ci[r] + im[k] * p->cr[r];
            }
            p->ar[j] = sr, p->ai[j] = si;
        }
        for (int64_t j = 0; j < n; j++) re[j] = p->ar[j], im[j] = p->ai[j];
    } else {
        /* a = x * chirp, zero-padded; A = FFT(a); A *= B; a = IFFT(A) via
         * conj(FFT(conj(A))) / m; X_j = chirp_j * a_j */
        for (int64_t k = 0; k < m; k++) p->ar[k] = p->ai[k] = 0;
        for (int64_t k = 0; k < n; k++) {
            p->ar[k] = re[k] * p->cr[k] - im[k] * p->ci[k];
            p->ai[k] = re[k] * p->ci[k] + im[k] * p->cr[k];
        }
        fft_pow2(p->ar, p->ai, m, p->twr, p->twi);
        for (int64_t k = 0; k < m; k++) {
            double xr = p->ar[k] * p->br[k] - p->ai[k] * p->bi[k];
            double xi = p->ar[k] * p->bi[k] + p->ai[k] * p->br[k];
            p->ar[k] = xr, p->ai[k] = -xi;
        }
        fft_pow2(p->ar, p->ai, m, p->twr, p->twi);
        for (int64_t j = 0; j < n; j++) {
            double vr = p->ar[j] / (double)m, vi = -p->ai[j] / (double)m;
            re[j] = vr * p->cr[j] - vi * p->ci[j];
            im[j] = vr * p->ci[j] + vi * p->cr[j];
        }
    }
}

ch_status ch_cpu_fft(ch_tensor *re, ch_tensor *im, int inverse) {
    int64_t n = re->nd ? re->dim[re->nd - 1] : 1;
    if (n == 0 || re->numel == 0) return CH_OK;
    int64_t rows = re->numel / n;
    plan p;
    CH_TRY(plan_make(&p, n, inverse ? 1 : -1));
    double *r = (double *)ch_base(re), *i = (double *)ch_base(im);
    for (int64_t row = 0; row < rows; row++) {
        double *rr = r + row * n, *ii = i + row * n;
        transform_row(&p, rr, ii);
        if (inverse)
            for (int64_t k = 0; k < n; k++) rr[k] /= (double)n, ii[k] /= (double)n;
    }
    plan_free(&p);
    return CH_OK;
}

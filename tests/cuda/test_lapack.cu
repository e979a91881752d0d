/* test_lapack.cu -- the per-item kernels around cuSOLVER and cuFFT
 * (lapack.cu, fft.cu) emulated on the host: transposes, identities, the
 * determinant from an LU factor and its pivots, the zeroed upper triangle
 * of a Cholesky factor, and the interleaving of fft's planes.  The library
 * calls themselves (lapack.c, fft.c) run only on a GPU
 * (spec/cuda/linalg_gpu_spec.lua).
 * emulates: lapack.cu fft.cu */
#include "emulator.h"

#include <math.h>

template <typename T> static void test_items(int dt, const char *name) {
    /* two 2 x 3 matrices transposed into 3 x 2 ones */
    T src[12], dst[12];
    for (int k = 0; k < 12; k++)
        src[k] = (T)(k + 1);
    CHECK_OK(cu_lapack_items(CU_LK_TRANSPOSE, dt, 2, 2, 3, (const char *)src, NULL, (char *)dst));
    for (int m = 0; m < 2; m++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 3; j++)
                if (dst[m * 6 + j * 2 + i] != src[m * 6 + i * 3 + j]) {
                    fprintf(stderr, "%s transpose: matrix %d (%d, %d) wrong\n", name, m, i, j);
                    check_failures++;
                }

    /* identities */
    T id[18];
    for (int k = 0; k < 18; k++)
        id[k] = (T)7;
    CHECK_OK(cu_lapack_items(CU_LK_IDENTITY, dt, 2, 3, 3, NULL, NULL, (char *)id));
    for (int k = 0; k < 18; k++)
        CHECK(id[k] == ((k % 9) / 3 == (k % 9) % 3 ? (T)1 : (T)0));

    /* det from LU: the diagonal's product, one sign flip per exchanged row
     * (1-based pivots; the strict lower triangle, L, does not count) */
    T lu[18] = {2, 9, 9, 5, -3, 9, 5, 5, (T)0.5, /* diag 2, -3, 0.5 */
                1, 0, 0, 4, 4, 0, 4, 4, 0};       /* a zero pivot */
    int ipiv[6] = {2, 2, 3, 1, 3, 3};              /* one exchange; one exchange */
    T det[3] = {0, 0, 0};
    CHECK_OK(cu_lapack_items(CU_LK_DET, dt, 2, 3, 3, (const char *)lu, ipiv, (char *)det));
    CHECK(det[0] == (T)3.0);
    CHECK(det[1] == (T)0.0);
    /* order 0: the empty product */
    CHECK_OK(cu_lapack_items(CU_LK_DET, dt, 3, 0, 0, (const char *)lu, NULL, (char *)det));
    CHECK(det[0] == 1 && det[1] == 1 && det[2] == 1);

    /* the upper triangle of each 3 x 3 matrix zeroed, the rest kept */
    T ch[18];
    for (int k = 0; k < 18; k++)
        ch[k] = (T)(k + 1);
    CHECK_OK(cu_lapack_items(CU_LK_LOWER, dt, 2, 3, 3, NULL, NULL, (char *)ch));
    for (int k = 0; k < 18; k++) {
        int i = (k % 9) / 3, j = (k % 9) % 3;
        CHECK(ch[k] == (j > i ? (T)0 : (T)(k + 1)));
    }
}

static void test_fft_items(void) {
    double re[5] = {1, -2, 3.5, 0, 8}, im[5] = {0.25, 4, -1, 6, 2}, buf[10], re2[5], im2[5];
    CHECK_OK(cu_fft_items(0, 5, (char *)re, (char *)im, (char *)buf, 1.0));
    for (int i = 0; i < 5; i++)
        CHECK(buf[2 * i] == re[i] && buf[2 * i + 1] == im[i]);
    /* back, divided by n after an inverse transform */
    CHECK_OK(cu_fft_items(1, 5, (char *)re2, (char *)im2, (char *)buf, 4.0));
    for (int i = 0; i < 5; i++)
        CHECK(re2[i] == re[i] / 4.0 && im2[i] == im[i] / 4.0);
}

int main(void) {
    test_items<float>(CH_FLOAT32, "float32");
    test_items<double>(CH_FLOAT64, "float64");
    test_fft_items();
    return check_done("test_lapack (emulated)");
}

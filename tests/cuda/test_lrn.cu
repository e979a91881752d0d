/* test_lrn.cu -- the GPU's local response normalisation (lrn.c, lrn.cu)
 * emulated on the host against the CPU's, bit for bit (the host's pow on
 * both sides; on a GPU pow is CUDA's), for windows narrower and wider than
 * the channel axis.
 * emulates: lrn.c lrn.cu */
#include "emulator.h"

static int64_t mismatches(const ch_tensor *a, const ch_tensor *b) { return emu_bit_mismatches(a, b); }

static void compare(ch_dtype dt, int64_t n, int nd) {
    int64_t shape[4] = {2, 7, 5, 3};
    double k = 2, alpha = 1e-2, beta = 0.75;
    ch_tensor *x, *y, *us, *gy, *gx, *y2, *us2, *gx2;
    CHECK_OK(ch_empty(dt, nd, shape, CH_CPU, &x));
    CHECK_OK(ch_empty(dt, nd, shape, CH_CPU, &gy));
    emu_fill_uniform(x, -3, 3, 41);
    emu_fill_uniform(gy, -1, 1, 43);
    CHECK_OK(ch_lrn_forward(x, n, k, alpha, beta, &y, &us));
    CHECK_OK(ch_lrn_backward(x, y, us, gy, n, alpha, beta, &gx));
    CHECK_OK(ch_full(dt, nd, shape, 0.0, CH_CPU, &y2));
    CHECK_OK(ch_full(dt, nd, shape, 0.0, CH_CPU, &us2));
    CHECK_OK(ch_full(dt, nd, shape, 0.0, CH_CPU, &gx2));
    ch_tensor dx = emu_on_device(x), dy = emu_on_device(y2), dus = emu_on_device(us2), dgy = emu_on_device(gy),
              dgx = emu_on_device(gx2);
    CHECK_OK(cu_lrn_forward(&dx, n / 2, k, alpha, beta, &dy, &dus));
    ch_tensor cy = emu_on_device(y), cus = emu_on_device(us); /* the backward from the CPU's forward */
    CHECK_OK(cu_lrn_backward(&dx, &cy, &cus, &dgy, n / 2, alpha, beta, &dgx));
    int64_t bad[3] = {mismatches(y, y2), mismatches(us, us2), mismatches(gx, gx2)};
    for (int j = 0; j < 3; j++)
        if (bad[j]) {
            fprintf(stderr, "lrn %s n=%lld %d-d: %s differs from the CPU in %lld of %lld elements\n",
                    cu_dtype_name(dt), (long long)n, nd, j == 0 ? "y" : j == 1 ? "unit_scale" : "gx",
                    (long long)bad[j], (long long)x->numel);
            check_failures++;
        }
    ch_tensor *all[] = {x, y, us, gy, gx, y2, us2, gx2};
    for (int j = 0; j < 8; j++)
        ch_tensor_release(all[j]);
}

int main(void) {
    ch_dtype dts[2] = {CH_FLOAT32, CH_FLOAT64};
    for (int d = 0; d < 2; d++) {
        compare(dts[d], 5, 4); /* Chainer's default window */
        compare(dts[d], 3, 2); /* (N, C): one position per image */
        compare(dts[d], 20, 3); /* a window wider than the 7 channels */
    }
    /* the contract: a 1-d x is refused, y untouched */
    int64_t n = 4;
    ch_tensor *x, *y;
    CHECK_OK(ch_full(CH_FLOAT32, 1, &n, 1.0, CH_CPU, &x));
    CHECK_OK(ch_full(CH_FLOAT32, 1, &n, 0.0, CH_CPU, &y));
    ch_tensor dx = emu_on_device(x), dy = emu_on_device(y);
    EMU_CHECK_ERR(cu_lrn_forward(&dx, 2, 2, 1e-4, 0.75, &dy, &dy), CH_ERR_INTERNAL,
                  "local_response_normalization: x, y and unit_scale must be");
    CHECK(at(y, 0) == 0.0);
    ch_tensor_release(x);
    ch_tensor_release(y);
    return check_done("test_lrn (emulated)");
}

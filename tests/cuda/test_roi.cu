/* test_roi.cu -- the GPU's ROI pooling family (roi.c, roi.cu) emulated on
 * the host against the CPU's front doors, bit for bit: every forward,
 * scatter and gather kernel, float32 and float64, ROIs partly outside the
 * image, tiny and overlapping ROIs of both images, automatic and fixed
 * sampling, an empty ROI list, and the contract check.
 * emulates: roi.c roi.cu */
#include "emulator.h"

enum { N = 2, C = 3, H = 12, W = 10, R = 6, OH = 3, OW = 4 };
static const double SCALE = 0.6;

static int64_t bad_total(const char *what, ch_dtype dt, const ch_tensor *want, const ch_tensor *got) {
    int64_t bad = emu_bit_mismatches(want, got);
    if (bad) {
        fprintf(stderr, "%s %s: %lld of %lld differ from the CPU\n", what, cu_dtype_name(dt), (long long)bad,
                (long long)want->numel);
        check_failures++;
    }
    return bad;
}

static ch_tensor *full(ch_dtype dt, const int64_t *shape, int nd, double v) {
    ch_tensor *t;
    CHECK_OK(ch_full(dt, nd, shape, v, CH_CPU, &t));
    return t;
}

static void run(ch_dtype dt, int64_t nrois) {
    int64_t xs[4] = {N, C, H, W}, ys[4] = {nrois, C, OH, OW}, rs[2] = {nrois, 4};
    ch_tensor *x, *gy, *rois, *idx;
    CHECK_OK(ch_empty(dt, 4, xs, CH_CPU, &x));
    emu_fill_uniform(x, -1, 1, 3);
    CHECK_OK(ch_empty(dt, 4, ys, CH_CPU, &gy));
    emu_fill_uniform(gy, -1, 1, 4);
    /* (y_min, x_min, y_max, x_max) in image coordinates (scaled by 0.6) */
    const double boxes[R][4] = {{0, 0, 19, 16}, {3.3, 2.2, 9.9, 14.1}, {-4, -3, 6, 5},
                                {10, 8, 30, 25}, {5, 5, 5.4, 5.2},     {1.7, 0.4, 12.5, 7.7}};
    const int64_t images[R] = {0, 1, 0, 1, 0, 0};
    CHECK_OK(ch_empty(CH_FLOAT64, 2, rs, CH_CPU, &rois));
    CHECK_OK(ch_empty(CH_INT64, 1, &nrois, CH_CPU, &idx));
    for (int64_t r = 0; r < nrois; r++) {
        for (int k = 0; k < 4; k++)
            ch_set_flat(rois, 4 * r + k, boxes[r][k]);
        ch_set_flat(idx, r, (double)images[r]);
    }
    ch_tensor dx = emu_on_device(x), dgy = emu_on_device(gy), dr = emu_on_device(rois), di = emu_on_device(idx);

    /* the two max poolings, their scatter and gather */
    for (int chainer7 = 0; chainer7 < 2; chainer7++) {
        ch_tensor *y, *am, *gx, *yg;
        if (chainer7)
            CHECK_OK(ch_roi_max_pooling_2d(x, rois, idx, OH, OW, SCALE, &y, &am));
        else
            CHECK_OK(ch_roi_max_pool_2d(x, rois, idx, OH, OW, SCALE, &y, &am));
        ch_tensor *y2 = full(dt, ys, 4, 5.0), *am2 = full(CH_INT32, ys, 4, 5.0);
        ch_tensor dy2 = emu_on_device(y2), dam2 = emu_on_device(am2), dam = emu_on_device(am);
        if (chainer7)
            CHECK_OK(cu_roi_max_pooling_2d(&dx, &dr, &di, SCALE, &dy2, &dam2));
        else
            CHECK_OK(cu_roi_max_pool_2d(&dx, &dr, &di, SCALE, &dy2, &dam2));
        bad_total(chainer7 ? "roi_max_pooling_2d y" : "roi_max_pool_2d y", dt, y, y2);
        bad_total(chainer7 ? "roi_max_pooling_2d argmax" : "roi_max_pool_2d argmax", dt, am, am2);
        if (!chainer7) {
            CHECK_OK(ch_roi_max_pool_2d_scatter(gy, idx, am, N, H, W, &gx));
            ch_tensor *gx2 = full(dt, xs, 4, 9.0), dgx2 = emu_on_device(gx2);
            CHECK_OK(cu_roi_max_pool_2d_scatter(&dgy, &di, &dam, &dgx2));
            bad_total("roi_max_pool_2d_scatter", dt, gx, gx2);
            CHECK_OK(ch_roi_max_pool_2d_gather(x, idx, am, &yg));
            ch_tensor *yg2 = full(dt, ys, 4, 9.0), dyg2 = emu_on_device(yg2);
            CHECK_OK(cu_roi_max_pool_2d_gather(&dx, &di, &dam, &dyg2));
            bad_total("roi_max_pool_2d_gather", dt, yg, yg2);
            ch_tensor *list[] = {gx, gx2, yg, yg2};
            for (int k = 0; k < 4; k++)
                ch_tensor_release(list[k]);
        }
        ch_tensor *list[] = {y, am, y2, am2};
        for (int k = 0; k < 4; k++)
            ch_tensor_release(list[k]);
    }

    /* average pooling and its gradient */
    {
        ch_tensor *y, *gx;
        CHECK_OK(ch_roi_average_pooling_2d(x, rois, idx, OH, OW, SCALE, &y));
        ch_tensor *y2 = full(dt, ys, 4, 5.0), dy2 = emu_on_device(y2);
        CHECK_OK(cu_roi_average_pooling_2d(&dx, &dr, &di, SCALE, &dy2));
        bad_total("roi_average_pooling_2d", dt, y, y2);
        CHECK_OK(ch_roi_average_pooling_2d_backward(gy, rois, idx, N, H, W, SCALE, &gx));
        ch_tensor *gx2 = full(dt, xs, 4, 9.0), dgx2 = emu_on_device(gx2);
        CHECK_OK(cu_roi_average_pooling_2d_backward(&dgy, &dr, &di, SCALE, &dgx2));
        bad_total("roi_average_pooling_2d backward", dt, gx, gx2);
        ch_tensor *list[] = {y, y2, gx, gx2};
        for (int k = 0; k < 4; k++)
            ch_tensor_release(list[k]);
    }

    /* ROIAlign, average and max, fixed and automatic sampling */
    for (int s = 0; s < 2; s++) {
        int64_t sh = s ? 0 : 2, sw = s ? 0 : 3;
        ch_tensor *y, *gx, *my, *am, *mgx, *mg;
        CHECK_OK(ch_roi_average_align_2d(x, rois, idx, OH, OW, SCALE, sh, sw, &y));
        ch_tensor *y2 = full(dt, ys, 4, 5.0), dy2 = emu_on_device(y2);
        CHECK_OK(cu_roi_average_align_2d(&dx, &dr, &di, SCALE, sh, sw, &dy2));
        bad_total("roi_average_align_2d", dt, y, y2);
        CHECK_OK(ch_roi_average_align_2d_backward(gy, rois, idx, N, H, W, SCALE, sh, sw, &gx));
        ch_tensor *gx2 = full(dt, xs, 4, 9.0), dgx2 = emu_on_device(gx2);
        CHECK_OK(cu_roi_average_align_2d_backward(&dgy, &dr, &di, SCALE, sh, sw, &dgx2));
        bad_total("roi_average_align_2d backward", dt, gx, gx2);

        CHECK_OK(ch_roi_max_align_2d(x, rois, idx, OH, OW, SCALE, sh, sw, &my, &am));
        ch_tensor *my2 = full(dt, ys, 4, 5.0), *am2 = full(CH_INT32, ys, 4, 5.0);
        ch_tensor dmy2 = emu_on_device(my2), dam2 = emu_on_device(am2), dam = emu_on_device(am);
        CHECK_OK(cu_roi_max_align_2d(&dx, &dr, &di, SCALE, sh, sw, &dmy2, &dam2));
        bad_total("roi_max_align_2d y", dt, my, my2);
        bad_total("roi_max_align_2d argmax", dt, am, am2);
        CHECK_OK(ch_roi_max_align_2d_scatter(gy, rois, idx, am, N, H, W, SCALE, sh, sw, &mgx));
        ch_tensor *mgx2 = full(dt, xs, 4, 9.0), dmgx2 = emu_on_device(mgx2);
        CHECK_OK(cu_roi_max_align_2d_scatter(&dgy, &dr, &di, &dam, SCALE, sh, sw, &dmgx2));
        bad_total("roi_max_align_2d_scatter", dt, mgx, mgx2);
        CHECK_OK(ch_roi_max_align_2d_gather(x, rois, idx, am, SCALE, sh, sw, &mg));
        ch_tensor *mg2 = full(dt, ys, 4, 9.0), dmg2 = emu_on_device(mg2);
        CHECK_OK(cu_roi_max_align_2d_gather(&dx, &dr, &di, &dam, SCALE, sh, sw, &dmg2));
        bad_total("roi_max_align_2d_gather", dt, mg, mg2);
        ch_tensor *list[] = {y, y2, gx, gx2, my, am, my2, am2, mgx, mgx2, mg, mg2};
        for (int k = 0; k < 12; k++)
            ch_tensor_release(list[k]);
    }
    ch_tensor *list[] = {x, gy, rois, idx};
    for (int k = 0; k < 4; k++)
        ch_tensor_release(list[k]);
}

static void test_contract(void) {
    int64_t xs[4] = {1, 2, 4, 4}, ys[4] = {1, 2, 2, 2}, rs[2] = {1, 4}, one = 1;
    ch_tensor *x = full(CH_FLOAT32, xs, 4, 1.0), *y = full(CH_FLOAT64, ys, 4, 7.0);
    ch_tensor *rois = full(CH_FLOAT64, rs, 2, 1.0), *idx = full(CH_INT64, &one, 1, 0.0);
    ch_tensor dx = emu_on_device(x), dy = emu_on_device(y), dr = emu_on_device(rois), di = emu_on_device(idx);
    EMU_CHECK_ERR(cu_roi_average_pooling_2d(&dx, &dr, &di, 1.0, &dy), CH_ERR_INTERNAL,
                  "roi_average_pooling_2d: the image planes");
    CHECK(at(y, 0) == 7.0);
    ch_tensor *list[] = {x, y, rois, idx};
    for (int k = 0; k < 4; k++)
        ch_tensor_release(list[k]);
}

int main(void) {
    run(CH_FLOAT32, R);
    run(CH_FLOAT64, R);
    run(CH_FLOAT64, 0);
    test_contract();
    return check_done("test_roi (emulated)");
}

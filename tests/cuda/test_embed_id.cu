/* test_embed_id.cu -- the GPU's embedding lookup and weight gradient
 * (embed_id.c, embed_id.cu) emulated on the host against the CPU's, bit for
 * bit, with repeated ids and ignore_label.
 * emulates: embed_id.c embed_id.cu */
#include "emulator.h"

enum { V = 11, D = 9 };

static void compare(ch_dtype dt, int has_ignore) {
    int64_t idshape[2] = {6, 5}, n = 30, wshape[2] = {V, D}, yshape[3] = {6, 5, D};
    ch_tensor *ids, *w, *y, *ygpu, *gy, *gw, *gwgpu;
    CHECK_OK(ch_empty(CH_INT64, 2, idshape, CH_CPU, &ids));
    for (int64_t i = 0; i < n; i++) /* repeats; -1 where ignored */
        ch_set_flat(ids, i, has_ignore && i % 4 == 1 ? -1.0 : (double)((i * 7) % V));
    CHECK_OK(ch_empty(dt, 2, wshape, CH_CPU, &w));
    emu_fill_uniform(w, -1, 1, 5);
    CHECK_OK(ch_embed_id_forward(ids, w, has_ignore, -1, &y));
    CHECK_OK(ch_full(dt, 3, yshape, 7.0, CH_CPU, &ygpu));
    ch_tensor dids = emu_on_device(ids), dw = emu_on_device(w), dy = emu_on_device(ygpu);
    CHECK_OK(cu_embed_id_forward(&dids, &dw, has_ignore, -1, &dy));
    int64_t bad = emu_bit_mismatches(y, ygpu);
    if (bad) {
        fprintf(stderr, "embed_id forward %s ignore=%d: %lld elements differ from the CPU\n", cu_dtype_name(dt),
                has_ignore, (long long)bad);
        check_failures++;
    }
    if (dt != CH_FLOAT16) {
        CHECK_OK(ch_empty(dt, 3, yshape, CH_CPU, &gy));
        emu_fill_uniform(gy, -1, 1, 7);
        CHECK_OK(ch_embed_id_backward(ids, gy, V, has_ignore, -1, &gw));
        CHECK_OK(ch_full(dt, 2, wshape, 5.0, CH_CPU, &gwgpu)); /* the kernel zeroes it */
        ch_tensor dgy = emu_on_device(gy), dgw = emu_on_device(gwgpu);
        CHECK_OK(cu_embed_id_backward(&dids, &dgy, has_ignore, -1, &dgw));
        bad = emu_bit_mismatches(gw, gwgpu);
        if (bad) {
            fprintf(stderr, "embed_id backward %s ignore=%d: %lld elements differ from the CPU\n", cu_dtype_name(dt),
                    has_ignore, (long long)bad);
            check_failures++;
        }
        ch_tensor_release(gy);
        ch_tensor_release(gw);
        ch_tensor_release(gwgpu);
    }
    ch_tensor_release(ids);
    ch_tensor_release(w);
    ch_tensor_release(y);
    ch_tensor_release(ygpu);
}

int main(void) {
    ch_dtype dts[3] = {CH_FLOAT16, CH_FLOAT32, CH_FLOAT64};
    for (int d = 0; d < 3; d++)
        for (int ig = 0; ig < 2; ig++)
            compare(dts[d], ig);
    /* the contract: ids that are not int64 are refused */
    int64_t n = 3, ws[2] = {4, 2}, ys[2] = {3, 2};
    ch_tensor *ids, *w, *y;
    CHECK_OK(ch_full(CH_INT32, 1, &n, 0.0, CH_CPU, &ids));
    CHECK_OK(ch_full(CH_FLOAT32, 2, ws, 1.0, CH_CPU, &w));
    CHECK_OK(ch_full(CH_FLOAT32, 2, ys, 0.0, CH_CPU, &y));
    ch_tensor di = emu_on_device(ids), dw = emu_on_device(w), dy = emu_on_device(y);
    EMU_CHECK_ERR(cu_embed_id_forward(&di, &dw, 0, 0, &dy), CH_ERR_INTERNAL, "embed_id: ids (contiguous int64)");
    CHECK(at(y, 0) == 0.0);
    ch_tensor_release(ids);
    ch_tensor_release(w);
    ch_tensor_release(y);
    return check_done("test_embed_id (emulated)");
}

/* test_conv_window.cu -- the padded copies of the cuDNN convolutions
 * (conv_window.cu) emulated on the host against the CPU, bit for bit:
 * padding x into a frame is the CPU's im2col with a 1-cell kernel (stride
 * 1, the frame as its output extents), cutting the data gradient out of
 * the frame is its col2im.
 * emulates: conv_window.cu */
#include "emulator.h"

/* x (2, 3, *in) padded by pad[a] in front into a frame of extents frame[a]
 * and cut back out, for nsp spatial axes. */
static void compare(ch_dtype dt, int nsp, const int64_t *in, const int64_t *pad, const int64_t *frame) {
    int64_t xdim[5] = {2, 3}, fdim[5] = {2, 3}, cdim[8] = {2, 3};
    int64_t ones[3] = {1, 1, 1}, shift[3];
    for (int a = 0; a < nsp; a++) {
        xdim[2 + a] = in[a];
        fdim[2 + a] = frame[a];
        cdim[2 + a] = 1;
        cdim[2 + nsp + a] = frame[a];
        shift[a] = -pad[a];
    }
    ch_tensor *x, *col_cpu, *framed, *back_cpu, *back;
    CHECK_OK(ch_empty(dt, 2 + nsp, xdim, CH_CPU, &x));
    emu_fill_uniform(x, -3.0, 3.0, 11);
    CHECK_OK(ch_conv_im2col(x, nsp, ones, ones, pad, ones, frame, &col_cpu));
    CHECK_OK(ch_full(dt, 2 + nsp, fdim, 7.0, CH_CPU, &framed)); /* 7: cells the kernel must overwrite */
    CHECK_OK(cu_conv_window_launch((int)ch_dtype_size(dt), nsp, 6, in, frame, shift, (const char *)x->data,
                                   (char *)framed->data));
    ch_tensor *framed_as_col;
    CHECK_OK(ch_reshape(framed, 2 + 2 * nsp, cdim, &framed_as_col));
    int64_t bad = emu_bit_mismatches(col_cpu, framed_as_col);
    /* the cut: col2im of the frame (as a column tensor) back to x's extents */
    CHECK_OK(ch_conv_col2im(framed_as_col, nsp, ones, pad, ones, in, &back_cpu));
    CHECK_OK(ch_full(dt, 2 + nsp, xdim, 7.0, CH_CPU, &back));
    CHECK_OK(cu_conv_window_launch((int)ch_dtype_size(dt), nsp, 6, frame, in, pad, (const char *)framed->data,
                                   (char *)back->data));
    bad += emu_bit_mismatches(back_cpu, back);
    if (bad) {
        fprintf(stderr, "conv_window %s nsp=%d in0=%lld pad0=%lld frame0=%lld: %lld cells differ from the CPU\n",
                ch_dtype_name(dt), nsp, (long long)in[0], (long long)pad[0], (long long)frame[0], (long long)bad);
        check_failures++;
    }
    ch_tensor *all[] = {x, col_cpu, framed, framed_as_col, back_cpu, back};
    for (int i = 0; i < 6; i++)
        ch_tensor_release(all[i]);
}

int main(void) {
    for (int d = 0; d < 2; d++) {
        ch_dtype dt = d ? CH_FLOAT64 : CH_FLOAT32;
        /* cover_all-like frames: padding in front, more behind */
        compare(dt, 1, (const int64_t[]){5}, (const int64_t[]){1}, (const int64_t[]){9});
        compare(dt, 2, (const int64_t[]){5, 4}, (const int64_t[]){0, 2}, (const int64_t[]){6, 9});
        compare(dt, 3, (const int64_t[]){3, 4, 2}, (const int64_t[]){1, 0, 1}, (const int64_t[]){6, 4, 5});
        /* a frame shorter than x: cropping */
        compare(dt, 2, (const int64_t[]){9, 3}, (const int64_t[]){0, 1}, (const int64_t[]){4, 4});
    }
    /* contract: only 4- and 8-byte elements, 1 to 3 axes */
    int64_t e = 1;
    char buf[8];
    EMU_CHECK_ERR(cu_conv_window_launch(2, 1, 1, &e, &e, &e, buf, buf), CH_ERR_INTERNAL, "conv_window");
    EMU_CHECK_ERR(cu_conv_window_launch(4, 4, 1, &e, &e, &e, buf, buf), CH_ERR_INTERNAL, "conv_window");
    return check_done("test_conv_window (emulated)");
}

/* test_addmul.cu -- the GPU's acc += x * y (addmul.c, addmul.cu) emulated on
 * the host against the CPU's, bit for bit.
 * emulates: addmul.c addmul.cu */
#include "emulator.h"

static void compare(ch_dtype dt) {
    int64_t shape[2] = {33, 31};
    ch_tensor *acc, *acc2, *x, *y;
    CHECK_OK(ch_empty(dt, 2, shape, CH_CPU, &acc));
    CHECK_OK(ch_empty(dt, 2, shape, CH_CPU, &x));
    CHECK_OK(ch_empty(dt, 2, shape, CH_CPU, &y));
    emu_fill_uniform(acc, -1, 1, 1);
    emu_fill_uniform(x, -1, 1, 2);
    emu_fill_uniform(y, -1, 1, 3);
    CHECK_OK(ch_copy(acc, &acc2));
    CHECK_OK(ch_addmul(acc, x, y));
    ch_tensor da = emu_on_device(acc2), dx = emu_on_device(x), dy = emu_on_device(y);
    CHECK_OK(cu_addmul(&da, &dx, &dy));
    int64_t bad = emu_bit_mismatches(acc, acc2);
    if (bad) {
        fprintf(stderr, "addmul %s: %lld of %lld elements differ from the CPU\n", cu_dtype_name(dt), (long long)bad,
                (long long)acc->numel);
        check_failures++;
    }
    ch_tensor *all[] = {acc, acc2, x, y};
    for (int k = 0; k < 4; k++)
        ch_tensor_release(all[k]);
}

int main(void) {
    compare(CH_FLOAT32);
    compare(CH_FLOAT64);
    /* the contract: operands of two dtypes are refused, acc untouched */
    int64_t n = 4;
    ch_tensor *a, *b;
    CHECK_OK(ch_full(CH_FLOAT32, 1, &n, 1.0, CH_CPU, &a));
    CHECK_OK(ch_full(CH_FLOAT64, 1, &n, 2.0, CH_CPU, &b));
    ch_tensor da = emu_on_device(a), db = emu_on_device(b);
    EMU_CHECK_ERR(cu_addmul(&da, &db, &db), CH_ERR_INTERNAL, "addmul: acc, x and y must be contiguous");
    CHECK(at(a, 0) == 1.0);
    ch_tensor_release(a);
    ch_tensor_release(b);
    return check_done("test_addmul (emulated)");
}

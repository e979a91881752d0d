/* The kernel table: a front door looks its kernel up in the table of the
 * operands' device before doing any work, and a device without that kernel
 * gives one clear error naming the op and the device.  No GPU is needed: a
 * tensor whose device field says cuda:0 reaches the lookup, which finds no
 * CUDA table (the backend is not loaded, or has not got the kernel), and
 * fails before touching the data. */
#include "check.h"

int main(void) {
    int64_t base = ch_live_tensors();
    ch_tensor *x = NULL, *r = NULL, *r2 = NULL;
    int64_t s[4] = {2, 3, 4, 4};
    CHECK_OK(ch_full(CH_FLOAT32, 4, s, 1.0, CH_CPU, &x));

    /* on the CPU every front door finds its kernel */
    CHECK_OK(ch_lrn_forward(x, 5, 2.0, 1e-4, 0.75, &r, &r2));
    ch_tensor_release(r);
    ch_tensor_release(r2);
    r = r2 = NULL;
    int32_t axis = 1;
    CHECK_OK(ch_cumsum(x, 1, &r));
    ch_tensor_release(r);
    r = NULL;

    /* the same tensor claiming to live on cuda:0 */
    x->dev = 0;
    CHECK_ERR(ch_lrn_forward(x, 5, 2.0, 1e-4, 0.75, &r, &r2), CH_ERR_DEVICE,
              "local_response_normalization has no kernel for cuda:0 yet", ":to_cpu()");
    CHECK_ERR(ch_cumsum(x, 1, &r), CH_ERR_DEVICE, "cumsum has no kernel for cuda:0");
    CHECK_ERR(ch_unary(CH_EXP, x, NULL, &r), CH_ERR_DEVICE, "exp has no kernel for cuda:0");
    CHECK_ERR(ch_reduce(CH_SUM, x, &axis, 1, 0, 0, &r), CH_ERR_DEVICE, "has no kernel for cuda:0");
    CHECK_ERR(ch_softmax(x, 1, 0, &r), CH_ERR_DEVICE, "softmax has no kernel for cuda:0");
    CHECK(r == NULL && r2 == NULL);
    x->dev = CH_CPU;

    ch_tensor_release(x);
    CHECK_EQ_I(ch_live_tensors(), base);
    return check_done("test_kernel_table");
}

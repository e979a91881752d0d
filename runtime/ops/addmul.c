/* addmul.c -- acc += x * y in place: the multiply-accumulate of a gradient
 * contribution (a product's backward) into a gradient sum.  Without it the
 * product is a new tensor, added and then dropped at once; for the
 * autograd's small tensors that tensor's life costs more than the
 * arithmetic.  Same-shape, C-contiguous float32/float64 operands on one
 * device run the device's addmul kernel (runtime/cpu/addmul.c); anything
 * else, or a device without that kernel, goes through the general
 * broadcasting ops (product, then in-place add).  Both round the product
 * before the add, so they give the same values as acc + x * y computed in
 * two steps. */
#include "prologue.h"

#include <string.h>

static bool fast_operand(const ch_tensor *t, const ch_tensor *acc) {
    return t->dev == acc->dev && ch_same_dense_layout(t, acc) &&
           (t->storage != acc->storage || ch_base(t) == ch_base(acc));
}

ch_status ch_addmul(ch_tensor *acc, const ch_tensor *x, const ch_tensor *y) {
    CH_CHECK_ARG(acc, "addmul", "acc");
    CH_CHECK_ARG(x, "addmul", "x");
    CH_CHECK_ARG(y, "addmul", "y");
    ch_dtype dt = (ch_dtype)acc->dt;
    if ((dt == CH_FLOAT32 || dt == CH_FLOAT64) && acc->data && fast_operand(x, acc) && fast_operand(y, acc) &&
        ch_contig(acc)) {
        ch_addmul_kernel *kernel = ch_kernels(acc->dev)->addmul;
        if (kernel)
            return kernel(acc, x, y);
    }
    CH_TRY(ch_same_device("addmul", "acc", acc, "x", x));
    CH_TRY(ch_same_device("addmul", "acc", acc, "y", y));
    /* x * y must broadcast to exactly acc's shape (checked here so that
     * the error names addmul, not the ops below) */
    int nd, nd2;
    int64_t dim[CH_MAX_DIMS], dim2[CH_MAX_DIMS];
    CH_TRY(ch_broadcast_shape(x->nd, x->dim, y->nd, y->dim, &nd, dim, "addmul"));
    CH_TRY(ch_broadcast_shape(acc->nd, acc->dim, nd, dim, &nd2, dim2, "addmul"));
    if (nd2 != acc->nd || memcmp(dim2, acc->dim, (size_t)nd2 * sizeof dim2[0]) != 0) {
        char sa[CH_SHAPE_BUF], sp[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "addmul: x * y has shape %s, which does not fit acc's shape %s",
                       ch_shape_str(sp, sizeof sp, nd, dim), ch_shape_str(sa, sizeof sa, acc->nd, acc->dim));
    }
    ch_tensor *prod = NULL;
    CH_TRY(ch_binary(CH_MUL, x, y, NULL, &prod));
    ch_status st = ch_binary(CH_ADD, acc, prod, acc, NULL);
    ch_tensor_release(prod);
    return st;
}

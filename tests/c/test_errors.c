/* Bad arguments give a status and a message naming the function and the
 * argument; nothing aborts.  ch_clear_error empties the message. */
#include <math.h>

#include "check.h"

int main(void) {
    int64_t base = ch_live_tensors();
    ch_tensor *t = NULL, *r = NULL;
    int64_t s2[2] = {2, 3}, neg[2] = {2, -1};

    CHECK_ERR(ch_empty(CH_FLOAT32, 2, neg, CH_CPU, &t), CH_ERR_ARG, "empty", "negative dimension");
    CHECK_ERR(ch_empty(CH_FLOAT32, 17, s2, CH_CPU, &t), CH_ERR_ARG, "17 dimensions", "0..16");
    CHECK_ERR(ch_empty((ch_dtype)42, 2, s2, CH_CPU, &t), CH_ERR_DTYPE, "invalid dtype code 42");
    CHECK_ERR(ch_empty(CH_FLOAT32, 2, s2, 0, &t), CH_ERR_DEVICE, "cuda:0");
    CHECK_ERR(ch_arange(0, 5, 0, CH_FLOAT32, CH_CPU, &t), CH_ERR_ARG, "arange", "step");
    CHECK_ERR(ch_arange(0, INFINITY, 1, CH_FLOAT32, CH_CPU, &t), CH_ERR_ARG, "arange", "finite");
    CHECK_ERR(ch_linspace(0, 1, -2, 1, CH_FLOAT32, CH_CPU, &t), CH_ERR_ARG, "linspace", "num");
    CHECK_ERR(ch_from_buffer(CH_FLOAT32, 2, s2, NULL, &t), CH_ERR_ARG, "from_buffer", "NULL");
    CHECK(t == NULL);
    CHECK_EQ_I(ch_live_tensors(), base);

    CHECK_OK(ch_full(CH_FLOAT64, 2, s2, 2.0, CH_CPU, &t));
    double v;
    CHECK_ERR(ch_get_flat(t, 6, &v), CH_ERR_ARG, "position 6", "6 elements");
    CHECK_ERR(ch_get_flat(t, -1, &v), CH_ERR_ARG, "position -1");
    CHECK_ERR(ch_reshape(NULL, 2, s2, &r), CH_ERR_ARG, "reshape", "NULL");
    int32_t dup[2] = {0, 0}, oob[2] = {0, 2};
    CHECK_ERR(ch_permute(t, dup, &r), CH_ERR_ARG, "transpose", "twice");
    CHECK_ERR(ch_permute(t, oob, &r), CH_ERR_ARG, "axis 2", "2-d", "-2..1");
    CHECK_ERR(ch_expand_dims(t, 3, &r), CH_ERR_ARG, "axis 3");
    CHECK_ERR(ch_diagonal(t, 0, 1, 1, &r), CH_ERR_ARG, "diagonal", "axis1 and axis2");
    int64_t big[1] = {100}, st[1] = {1};
    CHECK_ERR(ch_as_strided(t, 1, big, st, 0, &r), CH_ERR_ARG, "as_strided", "outside the storage");
    ch_tensor *other = NULL;
    int64_t s4[1] = {4};
    CHECK_OK(ch_empty(CH_FLOAT32, 1, s4, CH_CPU, &other));
    CHECK_ERR(ch_copy_into(t, other), CH_ERR_SHAPE, "copy_into", "(4,)", "(2, 3)");
    CHECK(r == NULL);

    /* the message stays until the next failure, and can be cleared */
    CHECK(strstr(ch_last_error(), "copy_into") != NULL);
    CHECK_OK(ch_fill(t, 1.0));
    CHECK(strstr(ch_last_error(), "copy_into") != NULL);
    ch_clear_error();
    CHECK(ch_last_error()[0] == '\0');

    /* a freed tensor is refused with a clear message */
    ch_tensor_free_storage(other);
    CHECK_ERR(ch_fill(other, 0), CH_ERR_ARG, "fill", "freed");
    CHECK_ERR(ch_copy(other, &r), CH_ERR_ARG, "copy", "freed");

    ch_tensor_release(other);
    ch_tensor_release(t);
    CHECK_EQ_I(ch_live_tensors(), base);
    CHECK(ch_version() && strcmp(ch_version(), CHAINLUA_VERSION) == 0);
    CHECK(ch_blas_info() && strlen(ch_blas_info()) > 0);
    CHECK(ch_get_num_threads() >= 1);
    return check_done("test_errors");
}

/*
 * kernel_table.c -- the CUDA backend's kernel table (core/kernels.h), handed
 * to the core at load time (init.c).  A kernel missing here is one the GPU
 * does not have yet: the core's front door then fails with "<fn> has no
 * kernel for cuda:N yet; move the tensor with :to_cpu()".  Adding one is
 * its .cu (and host .c) file, its declaration in backend.h (typed by its
 * table entry: `ch_<name>_kernel cu_<name>;`), one line here, and, for a
 * kernel launched with cu_each (launch.cuh), its emulated test in
 * tests/cuda (docs/cuda.md, "Testing kernels without a GPU").
 */
#include "backend.h"

static ch_status softmax_forward(const ch_softmax_args *s) { return cu_softmax(CU_SOFTMAX_FWD, s); }
static ch_status softmax_backward(const ch_softmax_args *s) { return cu_softmax(CU_SOFTMAX_BWD, s); }
static ch_status softmax_cross_entropy(const ch_softmax_args *s) { return cu_softmax(CU_SOFTMAX_SCE, s); }
static ch_status sgd(const ch_opt_args *u) { return cu_opt_update(CU_OPT_SGD, u); }
static ch_status momentum(const ch_opt_args *u) { return cu_opt_update(CU_OPT_MOMENTUM, u); }
static ch_status corrected_momentum(const ch_opt_args *u) { return cu_opt_update(CU_OPT_CMOMENTUM, u); }
static ch_status nesterov(const ch_opt_args *u) { return cu_opt_update(CU_OPT_NESTEROV, u); }
static ch_status adam(const ch_opt_args *u) { return cu_opt_update(CU_OPT_ADAM, u); }
static ch_status adagrad(const ch_opt_args *u) { return cu_opt_update(CU_OPT_ADAGRAD, u); }
static ch_status adadelta(const ch_opt_args *u) { return cu_opt_update(CU_OPT_ADADELTA, u); }
static ch_status rmsprop(const ch_opt_args *u) { return cu_opt_update(CU_OPT_RMSPROP, u); }
static ch_status rmsprop_graves(const ch_opt_args *u) { return cu_opt_update(CU_OPT_GRAVES, u); }
static ch_status smorms3(const ch_opt_args *u) { return cu_opt_update(CU_OPT_SMORMS3, u); }
static ch_status msvag(const ch_opt_args *u) { return cu_opt_update(CU_OPT_MSVAG, u); }

const ch_kernel_table cu_kernels = {
    .fill = cu_fill,
    .elementwise = cu_elementwise,
    .where = cu_where,
    .axpby = cu_axpby,
    .reduce = cu_reduce,
    .matmul = cu_matmul,
    .gemm = cu_gemm,
    .softmax_forward = softmax_forward,
    .softmax_backward = softmax_backward,
    .softmax_cross_entropy = softmax_cross_entropy,
    .sgd_update = sgd,
    .momentum_sgd_update = momentum,
    .corrected_momentum_sgd_update = corrected_momentum,
    .nesterov_ag_update = nesterov,
    .adam_update = adam,
    .adagrad_update = adagrad,
    .adadelta_update = adadelta,
    .rmsprop_update = rmsprop,
    .rmsprop_graves_update = rmsprop_graves,
    .smorms3_update = smorms3,
    .msvag_update = msvag,
    .grad_transform = cu_grad_transform,
    .sqnorm = cu_sqnorm,
    .random_fill = cu_random_fill,
    .permutation = cu_permutation,
    .choice = cu_choice,
    .cumulative = cu_cumulative,
    .addmul = cu_addmul,
    .embed_id_forward = cu_embed_id_forward,
    .embed_id_backward = cu_embed_id_backward,
    .lrn_forward = cu_lrn_forward,
    .lrn_backward = cu_lrn_backward,
    .activation_grad = cu_activation_grad,
    .lstm_forward = cu_lstm_forward,
    .lstm_backward = cu_lstm_backward,
    .lstm_grad_grad = cu_lstm_grad_grad,
    .rnn_seq_forward = cu_rnn_seq_forward,
    .rnn_seq_backward = cu_rnn_seq_backward,
    .inv = cu_inv,
    .det = cu_det,
    .solve = cu_solve,
    .cholesky = cu_cholesky,
    .fft = cu_fft,
    .conv_forward = cu_conv_forward,
    .conv_backward_data = cu_conv_backward_data,
    .conv_backward_filter = cu_conv_backward_filter,
    .max_pool_forward = cu_max_pool_forward,
    .max_pool_scatter = cu_max_pool_scatter,
    .max_pool_gather = cu_max_pool_gather,
    .avg_pool_forward = cu_avg_pool_forward,
    .avg_pool_backward = cu_avg_pool_backward,
    .batch_norm_forward = cu_batch_norm_forward,
    .batch_norm_backward = cu_batch_norm_backward,
    .wrap_indices = cu_wrap_indices,
    .take = cu_take,
    .take_along_axis = cu_take_along_axis,
    .scatter_add = cu_scatter_add,
    .scatter_add_along_axis = cu_scatter_add_along_axis,
    .count_nonzero = cu_count_nonzero,
    .masked_select = cu_masked_select,
    .nonzero = cu_nonzero,
    .im2col = cu_im2col,
    .col2im = cu_col2im,
    .sort = cu_sort,
    .unique_groups = cu_unique_groups,
    .unique_fill = cu_unique_fill,
    .roi_max_pool_2d = cu_roi_max_pool_2d,
    .roi_max_pool_2d_scatter = cu_roi_max_pool_2d_scatter,
    .roi_max_pool_2d_gather = cu_roi_max_pool_2d_gather,
    .roi_average_align_2d = cu_roi_average_align_2d,
    .roi_average_align_2d_backward = cu_roi_average_align_2d_backward,
    .roi_max_pooling_2d = cu_roi_max_pooling_2d,
    .roi_average_pooling_2d = cu_roi_average_pooling_2d,
    .roi_average_pooling_2d_backward = cu_roi_average_pooling_2d_backward,
    .roi_max_align_2d = cu_roi_max_align_2d,
    .roi_max_align_2d_scatter = cu_roi_max_align_2d_scatter,
    .roi_max_align_2d_gather = cu_roi_max_align_2d_gather,
};

/*
 * kernels.h -- the kernel table: what a device backend implements.
 *
 * The runtime is layered as
 *   runtime/ops/    front doors: the public ch_* entry points.  They check
 *                   arguments (with the messages users see), decide dtypes
 *                   and shapes, make operands contiguous where a kernel
 *                   wants that, allocate outputs on the inputs' device, and
 *                   then call one kernel from that device's table;
 *   runtime/cpu/    the CPU's kernels and its table (cpu/kernel_table.c);
 *   runtime/cuda/   the CUDA backend's kernels and its table
 *                   (cuda/kernel_table.c), handed over at load time.
 * A kernel gets only what its front door has checked: it never validates
 * user input and never allocates its outputs (scratch space is its own).
 *
 * Adding a kernel: its signature typedef and one CH_KERNEL_LIST line here,
 * its file under cpu/ (and cuda/), and one line in each device's table.  A
 * device whose table lacks it gives the error of ch_no_kernel(): "softmax
 * has no kernel for cuda:0 yet; move the tensor with :to_cpu()".
 *
 * The table is part of the CUDA backend's ABI: the core and the backend
 * compare CH_KERNEL_LIST_STR at load time, so a backend built against
 * another list is refused instead of calling the wrong slot.
 */
#ifndef CHAINLUA_KERNELS_H
#define CHAINLUA_KERNELS_H

#include "chainlua.h"

/* ---- argument blocks of the kernels with many parameters ---------------- */

/*
 * One elementwise operation: the front door (ops/elementwise.c) has decided
 * every dtype (the result type and the compute type), the output shape,
 * allocated or checked `out` on the inputs' device, and copied inputs that
 * partially overlap `out`.  Inputs broadcast to out's shape (the kernel
 * works out their strides).
 */
typedef struct ch_ew_args {
    const char *name;     /* the op's name, for messages */
    int op;               /* ch_binary_op when nin == 2, ch_unary_op when nin == 1 (CH_NUNARY: clip) */
    int nin;              /* 1 or 2 */
    int ct;               /* compute dtype: CH_FLOAT32 (also for float16), CH_FLOAT64 or CH_INT64 */
    int scalar_pos;       /* -1; or 0/1: that input is the scalar below, not a tensor */
    double scalar_f;      /* the scalar already rounded to the compute type (float ct) */
    int64_t scalar_i;     /* the scalar when ct is CH_INT64 */
    double lo, hi;        /* clip bounds (infinite for no bound) */
    int flat;             /* the front door's fast route: every operand is C-contiguous, of out's shape
                           * and of the compute dtype, and there is no scalar */
    ch_tensor *out;
    const ch_tensor *in[2];
} ch_ew_args;

/*
 * One fused optimizer update.  The front door (ops/optimizer_updates.c) has
 * checked shapes, dtypes and aliasing: param, grad and the states are
 * contiguous tensors of one float dtype on one device.  The fields are
 * Chainer's hyperparameters, already resolved; each kernel reads the ones
 * it needs (see the formulas in chainlua.h).
 */
typedef struct ch_opt_args {
    const char *name;
    double lr, momentum, alpha, rho, beta1, beta2, beta_power, eps, eta, wd, lower, upper;  /* MSVAG's beta is beta1 */
    int bounded, amsgrad, eps_inside_sqrt;
    ch_tensor *param;
    const ch_tensor *grad;
    ch_tensor *state[3];
} ch_opt_args;

/*
 * Softmax-family rows.  Every tensor is contiguous, of the compute dtype
 * (float32 or float64) unless noted, on one device, and viewed as (O, N, I):
 * a row is one (o, i) pair, its N elements I apart.
 */
typedef struct ch_softmax_args {
    const char *name;
    int log;                       /* log_softmax */
    int64_t O, N, I;
    const ch_tensor *x;            /* forward and cross entropy: the input; backward: y */
    const ch_tensor *gy;           /* backward */
    ch_tensor *out;                /* forward: y; backward: gx; cross entropy: the loss per position (O*I) */
    /* cross entropy: labels (int64, O*I, already checked to be in 0..N-1 or
     * ignore_label), optional class weights (N), optional gradient
     * (softmax - onehot) * weight and softmax (both shaped like x) */
    const ch_tensor *labels, *weight;
    int64_t ignore_label;
    ch_tensor *grad, *prob;
} ch_softmax_args;

/* ---- kernel signatures -------------------------------------------------- */
typedef ch_status ch_fill_kernel(ch_tensor *t, double value);
typedef ch_status ch_elementwise_kernel(const ch_ew_args *w);
/* out = cond ? a : b; cond is bool, a, b and out share one dtype, all
 * broadcast to out's shape and none overlaps out partially. */
typedef ch_status ch_where_kernel(const ch_tensor *cond, const ch_tensor *a, const ch_tensor *b, ch_tensor *out);
/* y = a*x + b*y (b == 0: y is not read); x and y of one shape, x in y's
 * dtype or (CPU) any dtype, x not overlapping y partially. */
typedef ch_status ch_axpby_kernel(double a, const ch_tensor *x, double b, ch_tensor *y);
/* out = op over the axes flagged in red[0..x->nd) of x; op is CH_SUM,
 * CH_PROD, CH_MAX, CH_MIN, CH_ARGMAX or CH_ARGMIN.  x has its compute dtype
 * (float32, float64 or int64; integer sums and products wrap); out is a new
 * contiguous tensor of x's dtype (int64 for the arg ops) holding the kept
 * axes in order.  The arg ops give the C-order position within the reduced
 * axes. */
typedef ch_status ch_reduce_kernel(int op, const ch_tensor *x, const uint8_t *red, ch_tensor *out);
/* out = a @ b with NumPy's matmul rules (1-D promotion, broadcast batch
 * axes), transposing the last two axes of a/b when transa/transb; a, b and
 * out share one float dtype and out is contiguous with the result shape. */
/* out (contiguous, x's dtype) = the running sum (prod == 0) or product of
 * contiguous x (float32, float64 or int64, wrapping) along the R axis of its
 * (O, R, I) view. */
typedef ch_status ch_cumulative_kernel(int prod, const ch_tensor *x, int64_t O, int64_t R, int64_t I, ch_tensor *out);
typedef ch_status ch_matmul_kernel(const ch_tensor *a, const ch_tensor *b, int transa, int transb, ch_tensor *out);
/* c = alpha * op(a) @ op(b) + beta * c for 2-d a, b, c of one float dtype,
 * c contiguous (beta == 0: c is not read). */
typedef ch_status ch_gemm_kernel(int transa, int transb, double alpha, const ch_tensor *a, const ch_tensor *b,
                                 double beta, ch_tensor *c);
typedef ch_status ch_softmax_kernel(const ch_softmax_args *s);
typedef ch_status ch_opt_update_kernel(const ch_opt_args *u);
/* Gradient hooks in one pass over grad (in place, any layout):
 * g = clip(scale*(g + decay*d), lower, upper), d = param or sign(param);
 * param NULL when decay is 0. */
typedef ch_status ch_grad_transform_kernel(ch_tensor *grad, const ch_tensor *param, double scale, double decay,
                                           int decay_sign, double lower, double upper);
/* *result = sum of squares of float x in float64, independent of threads. */
typedef ch_status ch_sqnorm_kernel(const ch_tensor *x, double *result);
/* gx = the gradient of activation op (a ch_act_grad_op) from its output y
 * and upstream gy; contiguous tensors of one float dtype (float32/float64)
 * and shape. */
typedef ch_status ch_activation_grad_kernel(int op, const ch_tensor *y, const ch_tensor *gy, ch_tensor *gx);
/* Local response normalization over axis 1 of contiguous x (N, C, S...):
 * y and unit_scale allocated like x; `half` is n / 2. */
typedef ch_status ch_lrn_forward_kernel(const ch_tensor *x, int64_t half, double k, double alpha, double beta,
                                        ch_tensor *y, ch_tensor *unit_scale);
typedef ch_status ch_lrn_backward_kernel(const ch_tensor *x, const ch_tensor *y, const ch_tensor *unit_scale,
                                         const ch_tensor *gy, int64_t half, double alpha, double beta, ch_tensor *gx);

/* conv */
/* The geometry of an N-d convolution (ops/conv.c fills and checks it):
 * N images of C channels in, Cout out, in `groups` groups; per spatial axis
 * the input and output extents, kernel size, stride, padding, dilation. */
typedef struct ch_conv_geom {
    int nsp;
    int64_t N, C, Cout, groups, Coutg, Cg;
    int64_t in[CH_MAX_DIMS], out[CH_MAX_DIMS], k[CH_MAX_DIMS];
    int64_t s[CH_MAX_DIMS], p[CH_MAX_DIMS], d[CH_MAX_DIMS];
    int64_t Kk;  /* prod k */
    int64_t Pin; /* prod in */
    int64_t P;   /* prod out */
    int64_t Kg;  /* Cg * Kk: the column rows of one group */
    int direct;  /* 1x1, stride 1, no padding: the column matrix is x */
    /* chainer.config's cuDNN settings at the call (ch_set_cudnn_config; the
     * CPU kernels are deterministic and ignore them): cudnn_deterministic,
     * use_cudnn_tensor_core (0 never, 1 auto, 2 always), autotune. */
    int deterministic, tensor_core, autotune;
    /* cuda.get_max_workspace_size() at the call (ch_set_cudnn_workspace_limit):
     * the most workspace a cuDNN algorithm may take, in bytes */
    int64_t workspace_limit;
} ch_conv_geom;
/* Every tensor is contiguous, of one dtype (float32 or float64), shaped as
 * g says; outputs are new tensors the kernel fills entirely.
 * y (N, Cout, *out) = conv(x (N, C, *in), W (Cout, Cg, *k)) + b (Cout; may be NULL). */
typedef ch_status ch_conv_forward_kernel(const ch_conv_geom *g, const ch_tensor *x, const ch_tensor *w,
                                         const ch_tensor *b, ch_tensor *y);
/* gx (N, C, *in) from gy (N, Cout, *out) and W. */
typedef ch_status ch_conv_backward_data_kernel(const ch_conv_geom *g, const ch_tensor *gy, const ch_tensor *w,
                                               ch_tensor *gx);
/* gW (Cout, Cg, *k) from x and gy. */
typedef ch_status ch_conv_backward_filter_kernel(const ch_conv_geom *g, const ch_tensor *x, const ch_tensor *gy,
                                                 ch_tensor *gw);
/* Chainer's im2col: col (N, C, *k, *out) from x (N, C, *in) (Cout = groups = 1). */
typedef ch_status ch_im2col_kernel(const ch_conv_geom *g, const ch_tensor *x, ch_tensor *col);
/* col2im, the adjoint: x (N, C, *in) = the sum of col's patches. */
typedef ch_status ch_col2im_kernel(const ch_conv_geom *g, const ch_tensor *col, ch_tensor *x);

/* pooling */
/* The geometry of 1- to 3-d pooling (ops/pooling.c fills and checks it),
 * padded to 3 spatial axes with unit axes in front. */
typedef struct ch_pool_geom {
    int64_t planes;            /* N * C */
    int64_t in[3], out[3];     /* spatial extents */
    int64_t k[3], s[3], p[3];
    int64_t in_n, out_n, kn;   /* cells per plane / per window */
} ch_pool_geom;
/* Tensors are contiguous (N, C, *in) / (N, C, *out) planes; the float ones
 * share one dtype (float32 or float64); window positions (indexes) are
 * int32, flat within the window (out of range: nothing).  Outputs are new
 * tensors the kernel fills entirely.
 * Max pooling: y, and the argmax window positions when indexes != NULL. */
typedef ch_status ch_max_pool_forward_kernel(const ch_pool_geom *g, const ch_tensor *x, ch_tensor *y,
                                             ch_tensor *indexes);
/* gx (in) = the sum of gy (out) at the cells that indexes name. */
typedef ch_status ch_max_pool_scatter_kernel(const ch_pool_geom *g, const ch_tensor *gy, const ch_tensor *indexes,
                                             ch_tensor *gx);
/* y (out) = x (in) at the cells that indexes name (0 out of the input). */
typedef ch_status ch_max_pool_gather_kernel(const ch_pool_geom *g, const ch_tensor *x, const ch_tensor *indexes,
                                            ch_tensor *y);
/* Average pooling; mode 0 divides by the window size, 1 by the cells
 * inside the input, 2 not at all (sum pooling). */
typedef ch_status ch_avg_pool_forward_kernel(const ch_pool_geom *g, int mode, const ch_tensor *x, ch_tensor *y);
typedef ch_status ch_avg_pool_backward_kernel(const ch_pool_geom *g, int mode, const ch_tensor *gy, ch_tensor *gx);

/* batch_norm */
/* Batch normalization over the (A, C, B) view: x (and gy) contiguous,
 * 3-d, float32 or float64; the per-channel inputs gamma, beta, mean and
 * inv_std contiguous float64 of C elements (gamma NULL: 1, beta NULL: 0).
 * Outputs (each may be NULL) are new tensors of x's dtype: y and gx like
 * x, the others (C,).  Statistics over the A*B values of each channel. */
typedef ch_status ch_batch_norm_forward_kernel(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *beta,
                                               double eps, ch_tensor *y, ch_tensor *mean, ch_tensor *var,
                                               ch_tensor *inv_std);
typedef ch_status ch_batch_norm_backward_kernel(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *gy,
                                                const ch_tensor *mean, const ch_tensor *inv_std, ch_tensor *gx,
                                                ch_tensor *ggamma, ch_tensor *gbeta);

/* roi_pooling */
/* ROI pooling over x (N, C, H, W): rois contiguous float64 (R, 4) as
 * (y_min, x_min, y_max, x_max) in image coordinates (times spatial_scale
 * on x), roi_indices contiguous int64 (R) already checked to lie in 0..N-1;
 * float tensors contiguous of one dtype (float32/float64), argmax int32
 * (R, C, outh, outw) flat positions within an H x W plane (out of range:
 * nothing).  Outputs are new tensors the kernel fills entirely; their
 * shapes give outh, outw and the input's (n, C, h, w).
 * ROI max pooling: y and argmax (R, C, outh, outw). */
typedef ch_status ch_roi_max_pool_2d_kernel(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                            double spatial_scale, ch_tensor *y, ch_tensor *argmax);
/* gx (n, C, h, w) = the sum of gy (R, C, outh, outw) at the argmax cells. */
typedef ch_status ch_roi_max_pool_2d_scatter_kernel(const ch_tensor *gy, const ch_tensor *roi_indices,
                                                    const ch_tensor *argmax, ch_tensor *gx);
/* y (argmax's shape) = x at the argmax cells (0 out of range). */
typedef ch_status ch_roi_max_pool_2d_gather_kernel(const ch_tensor *x, const ch_tensor *roi_indices,
                                                   const ch_tensor *argmax, ch_tensor *y);
/* ROIAlign with average, sampling_h x sampling_w points per bin (<= 0:
 * ceil(roi size / bins)), and its gradient gx (n, C, h, w). */
typedef ch_status ch_roi_average_align_2d_kernel(const ch_tensor *x, const ch_tensor *rois,
                                                 const ch_tensor *roi_indices, double spatial_scale,
                                                 int64_t sampling_h, int64_t sampling_w, ch_tensor *y);
typedef ch_status ch_roi_average_align_2d_backward_kernel(const ch_tensor *gy, const ch_tensor *rois,
                                                          const ch_tensor *roi_indices, double spatial_scale,
                                                          int64_t sampling_h, int64_t sampling_w, ch_tensor *gx);
/* Chainer 7's ROI max / average pooling (ROI size max(end - start, 1),
 * no +1): max gives y and argmax (-inf and -1 for an empty bin); average
 * gives the bin means, and its backward gx (n, C, h, w). */
typedef ch_status ch_roi_max_pooling_2d_kernel(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                               double spatial_scale, ch_tensor *y, ch_tensor *argmax);
typedef ch_status ch_roi_average_pooling_2d_kernel(const ch_tensor *x, const ch_tensor *rois,
                                                   const ch_tensor *roi_indices, double spatial_scale, ch_tensor *y);
typedef ch_status ch_roi_average_pooling_2d_backward_kernel(const ch_tensor *gy, const ch_tensor *rois,
                                                            const ch_tensor *roi_indices, double spatial_scale,
                                                            ch_tensor *gx);
/* ROIAlign with max: y and argmax (sample index in the bin, -1: none);
 * scatter gx (n, C, h, w) from gy at the argmax samples' bilinear
 * neighbours; gather y (argmax's shape) = x interpolated there. */
typedef ch_status ch_roi_max_align_2d_kernel(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                             double spatial_scale, int64_t sampling_h, int64_t sampling_w,
                                             ch_tensor *y, ch_tensor *argmax);
typedef ch_status ch_roi_max_align_2d_scatter_kernel(const ch_tensor *gy, const ch_tensor *rois,
                                                     const ch_tensor *roi_indices, const ch_tensor *argmax,
                                                     double spatial_scale, int64_t sampling_h, int64_t sampling_w,
                                                     ch_tensor *gx);
typedef ch_status ch_roi_max_align_2d_gather_kernel(const ch_tensor *x, const ch_tensor *rois,
                                                    const ch_tensor *roi_indices, const ch_tensor *argmax,
                                                    double spatial_scale, int64_t sampling_h, int64_t sampling_w,
                                                    ch_tensor *y);

/* embed_id */
/* ids: contiguous int64, each in 0..n_vocab-1 or (has_ignore) equal to
 * ignore_label.  Forward: y (ids' shape + (D,)) = the rows of contiguous
 * float w (n_vocab, D), zero rows for ignored ids.  Backward: gw
 * (n_vocab, D), float32 or float64 like contiguous gy (ids' shape + (D,)),
 * = the sum of gy's rows by id (the kernel zeroes gw first). */
typedef ch_status ch_embed_id_forward_kernel(const ch_tensor *ids, const ch_tensor *w, int has_ignore,
                                             int64_t ignore_label, ch_tensor *y);
typedef ch_status ch_embed_id_backward_kernel(const ch_tensor *ids, const ch_tensor *gy, int has_ignore,
                                              int64_t ignore_label, ch_tensor *gw);

/* lstm */
/* Chainer's LSTM cell: c_prev (Bc, U, *S), x (B, 4U, *S) with B <= Bc,
 * gates of unit u at x[:, 4u..4u+3] (x.reshape(B, U, 4, *S)); h and gh are
 * (B, U, *S).  Every tensor contiguous, of x's dtype (float32/float64);
 * the gradient inputs gc, gh, ggc_prev, ggx may be NULL (zero).  Outputs
 * are new tensors the kernel fills entirely: c and gc_prev / g_c_prev /
 * g_gc like c_prev, gx / g_x like x, h / g_gh like h. */
typedef ch_status ch_lstm_forward_kernel(const ch_tensor *c_prev, const ch_tensor *x, ch_tensor *c, ch_tensor *h);
typedef ch_status ch_lstm_backward_kernel(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc,
                                          const ch_tensor *gh, ch_tensor *gc_prev, ch_tensor *gx);
typedef ch_status ch_lstm_grad_grad_kernel(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc,
                                           const ch_tensor *gh, const ch_tensor *ggc_prev, const ch_tensor *ggx,
                                           ch_tensor *g_c_prev, ch_tensor *g_x, ch_tensor *g_gc, ch_tensor *g_gh);

/* rnn_seq */
/* One layer and direction of n_step_rnn/lstm/gru over T steps of
 * variable-length sequences (ops/rnn_seq.c checks them): step t has
 * batch[t] rows (non-increasing) starting at row off[t] of x (N, NI).
 * cell is a ch_rnn_cell with G gates (LSTM 4, GRU 3, else 1); every
 * tensor is contiguous, of x's dtype (float32/float64).
 * Forward: wx (G H, NI), wh (G H, H), bx, bh (G H), h0 (and LSTM's c0)
 * (batch[0], H) in; y (N, H), hy (and cy) (batch[0], H) and the gate
 * workspace ws (N, 7H LSTM / 5H GRU / 2H) out.
 * Backward: x, wx, wh, ws_in (the forward's ws) and the optional gy, ghy,
 * gcy in; gh0 (and LSTM's gc0) always, the other gradients when not NULL,
 * out; everything out is filled entirely. */
typedef struct ch_rnn_seq_args {
    const char *name;
    int cell, reverse, T;
    const int64_t *batch, *off;
    int64_t N, NI, H;
    const ch_tensor *x, *wx, *wh, *bx, *bh, *h0, *c0;      /* bx .. c0: forward */
    ch_tensor *y, *hy, *cy, *ws;                           /* forward */
    const ch_tensor *ws_in, *gy, *ghy, *gcy;               /* backward */
    ch_tensor *gx, *gh0, *gc0, *gwx, *gwh, *gbx, *gbh;     /* backward */
} ch_rnn_seq_args;
typedef ch_status ch_rnn_seq_forward_kernel(const ch_rnn_seq_args *a);
typedef ch_status ch_rnn_seq_backward_kernel(const ch_rnn_seq_args *a);

/* addmul */
/* acc += x * y elementwise, the product rounded before the add; acc, x
 * and y C-contiguous of one shape and one float dtype (float32/float64),
 * x and y not overlapping acc partially.  On the gradient-accumulation hot
 * path: small sizes must cost no more than the loop. */
typedef ch_status ch_addmul_kernel(ch_tensor *acc, const ch_tensor *x, const ch_tensor *y);
/* index */
/* idx (contiguous int64, on the device) checked against n in place: entries
 * in [-n, n) are wrapped into [0, n); at the first entry outside, *bad = 1
 * and *value = that entry (the caller reports it), else *bad = 0. */
typedef ch_status ch_wrap_indices_kernel(ch_tensor *idx, int64_t n, int *bad, int64_t *value);
/* out = x taken at idx along axis: x contiguous, idx contiguous int64 in
 * [0, x->dim[axis]), out contiguous of x's dtype shaped
 * x[:axis] + idx.shape + x[axis+1:]. */
typedef ch_status ch_take_kernel(const ch_tensor *x, const ch_tensor *idx, int axis, ch_tensor *out);
/* out = numpy.take_along_axis(x, idx, axis): x any layout, idx int64 in
 * [0, x->dim[axis]) with x's ndim, broadcasting with x off the axis; out
 * contiguous of x's dtype with the broadcast shape. */
typedef ch_status ch_take_along_axis_kernel(const ch_tensor *x, const ch_tensor *idx, int axis, ch_tensor *out);
/* target (any layout) += values at idx, duplicates accumulating in order.
 * scatter_add: numpy.add.at(target, (:,)*axis + (idx,), values);
 * scatter_add_along_axis: the inverse of take_along_axis.  idx is int64 in
 * [0, target->dim[axis]) (contiguous for scatter_add); values has target's
 * dtype and broadcasts to the indexed shape. */
typedef ch_status ch_scatter_add_kernel(ch_tensor *target, int axis, const ch_tensor *idx, const ch_tensor *values);
typedef ch_scatter_add_kernel ch_scatter_add_along_axis_kernel;
/* *count = the number of nonzero elements (-0.0 counts as zero) of x
 * (any layout and dtype) broadcast to (nd, dim). */
typedef ch_status ch_count_nonzero_kernel(const ch_tensor *x, int nd, const int64_t *dim, int64_t *count);
/* out (1-d, x's dtype, as long as the count of true elements of mask
 * broadcast to (nd, dim)) = the elements of x broadcast to (nd, dim) where
 * bool mask is true, in C order. */
typedef ch_status ch_masked_select_kernel(const ch_tensor *x, const ch_tensor *mask, int nd, const int64_t *dim,
                                          ch_tensor *out);
/* out (contiguous int64 (count_nonzero(x), x->nd)) = the multi-indices of
 * x's nonzero elements in C order. */
typedef ch_status ch_nonzero_kernel(const ch_tensor *x, ch_tensor *out);

/* sort */
/* Stable sort of every line of x (any layout) along axis: the sorted values
 * to vals and/or their source positions (int64) to args, either NULL, both
 * contiguous and shaped like x.  Ascending puts NaN last; descending is the
 * exact reverse ranking (NaN first), equal elements in their order. */
typedef ch_status ch_sort_kernel(const ch_tensor *x, int axis, int descending, ch_tensor *vals, ch_tensor *args);
/* unique, on 1-d flat (any stride) and order (contiguous int64, its stable
 * ascending argsort): unique_groups writes each sorted element's group id
 * (0, 1, ...; NaNs form one group) to contiguous int64 group (flat's
 * length) and the number of groups to *ngroups; unique_fill writes the
 * group values to vals (ngroups, flat's dtype) and, when not NULL, the
 * inverse (int64, flat's length) and the counts (int64, ngroups). */
typedef ch_status ch_unique_groups_kernel(const ch_tensor *flat, const ch_tensor *order, ch_tensor *group,
                                          int64_t *ngroups);
typedef ch_status ch_unique_fill_kernel(const ch_tensor *flat, const ch_tensor *order, const ch_tensor *group,
                                        ch_tensor *vals, ch_tensor *inv, ch_tensor *cnt);

/* random */
/* One draw of the samplers on Philox4x32-10 (core/rng.h): element i of the
 * draw (C order) reads counter first + i under key seed, so the numbers do
 * not depend on the device or the thread count. */
enum { CH_RANDOM_UNIFORM, CH_RANDOM_NORMAL, CH_RANDOM_BERNOULLI, CH_RANDOM_RANDINT };
typedef struct ch_random_args {
    int kind;             /* CH_RANDOM_* */
    double a, b;          /* uniform: low, high; normal: mean, std; bernoulli: p */
    int64_t lo;           /* randint: low */
    uint64_t range;       /* randint: high - low (>= 1) */
    uint64_t seed, first; /* the device's seed and the counter of element 0 */
} ch_random_args;
/* Fills contiguous out (float dtypes for uniform/normal, any for
 * bernoulli/randint, randint's range fitting out's dtype). */
typedef ch_status ch_random_fill_kernel(const ch_random_args *r, ch_tensor *out);
/* out (contiguous int64, n) = a uniform permutation of 0..n-1 (Fisher-Yates
 * from the last position down, step i from counter first + i). */
typedef ch_status ch_permutation_kernel(uint64_t seed, uint64_t first, ch_tensor *out);
/* out (contiguous int64, k) = k samples of 0..n-1 (k <= n without
 * replacement).  p: NULL (uniform) or contiguous float64 probabilities on
 * out's device, normalised, `nonzero` of them positive (>= k without
 * replacement); the kernel may overwrite p.  Counters: one per sample, or
 * one per item with p and without replacement. */
typedef ch_status ch_choice_kernel(int64_t n, int replace, ch_tensor *p, int64_t nonzero, uint64_t seed,
                                   uint64_t first, ch_tensor *out);

/* lapack */
/* Batched over the leading axes; every tensor contiguous float32/float64 of
 * one dtype.  A singular matrix stops the kernel with CH_OK, *bad = its
 * batch position and *pivot = the zero pivot (0-based); else *bad = -1.
 * inv: w (..., n, n) inverted in place.  det: out (...) = det of each
 * matrix of w (..., n, n), w overwritten (singular: 0, no report).
 * solve: out (batch, n, k) = A^-1 B for A (batch, n, n), B (batch, n, k). */
typedef ch_status ch_inv_kernel(ch_tensor *w, int64_t *bad, int *pivot);
typedef ch_status ch_det_kernel(ch_tensor *w, ch_tensor *out);
typedef ch_status ch_solve_kernel(const ch_tensor *A, const ch_tensor *B, ch_tensor *out, int64_t *bad, int *pivot);
/* cholesky: w (..., n, n) replaced by the lower factor L of each matrix
 * (L L^T = the matrix, only its lower triangle read; the strict upper
 * triangle of the result zeroed).  A matrix that is not positive definite
 * stops the kernel with CH_OK, *bad = its batch position and *order = the
 * order of the first leading minor that is not positive; else *bad = -1. */
typedef ch_status ch_cholesky_kernel(ch_tensor *w, int64_t *bad, int *order);

/* fft */
/* re, im (..., n): contiguous float64 planes of one shape, replaced by the
 * discrete Fourier transform of each row over the last axis (inverse: the
 * inverse transform, divided by n, as numpy.fft.ifft). */
typedef ch_status ch_fft_kernel(ch_tensor *re, ch_tensor *im, int inverse);

/* crf1d */
/* Linear-chain CRF over packed sequences: xs (T, B, K) contiguous float64
 * emissions (sequence b's step t at [t, b]), cost (K, K) contiguous
 * float64, len a host array of the B sequence lengths (each 1..T).
 * crf1d: loss (B) = each sequence's negative log-likelihood for labels
 * (T, B) contiguous int64 in 0..K-1 (entries past a length unread); gx
 * (T, B, K, zero past a length) and gcost (B, K, K, per sequence) its
 * gradients, either NULL.  crf1d_argmax: path (T, B) int32 = the Viterbi
 * labels, -1 past a length.  All float64 outputs contiguous. */
typedef ch_status ch_crf1d_kernel(const ch_tensor *xs, const ch_tensor *cost, const ch_tensor *labels,
                                  const int64_t *len, ch_tensor *loss, ch_tensor *gx, ch_tensor *gcost);
typedef ch_status ch_crf1d_argmax_kernel(const ch_tensor *xs, const ch_tensor *cost, const int64_t *len,
                                         ch_tensor *path);

/* ctc */
/* CTC loss over packed steps: xs (T, B, V) contiguous float64 logits,
 * labels (B, L) contiguous int64 (entries j < llen[b] in 0..V-1, blank in
 * 0..V-1), tlen and llen host arrays of B lengths (1..T and 0..L).
 * loss (B) float64 = -log p(labels | x) per sequence; grad (T, B, V)
 * float64 or NULL = its gradient with respect to the logits (zero past a
 * length or for an impossible alignment). */
typedef ch_status ch_ctc_loss_kernel(const ch_tensor *xs, const ch_tensor *labels, const int64_t *tlen,
                                     const int64_t *llen, int64_t blank, ch_tensor *loss, ch_tensor *grad);

/* ---- the list ------------------------------------------------------------ */
/* X(name): the table field `name` of type ch_<name>_kernel. */
#define CH_KERNEL_LIST(X)      \
    X(fill)                    \
    X(elementwise)             \
    X(where)                   \
    X(axpby)                   \
    X(reduce)                  \
    X(cumulative)              \
    X(matmul)                  \
    X(gemm)                    \
    X(softmax_forward)         \
    X(softmax_backward)        \
    X(softmax_cross_entropy)   \
    X(sgd_update)              \
    X(momentum_sgd_update)     \
    X(corrected_momentum_sgd_update) \
    X(nesterov_ag_update)      \
    X(adagrad_update)          \
    X(adadelta_update)         \
    X(adam_update)             \
    X(rmsprop_update)          \
    X(rmsprop_graves_update)   \
    X(smorms3_update)          \
    X(msvag_update)            \
    X(grad_transform)          \
    X(sqnorm)                  \
    X(activation_grad)         \
    X(lrn_forward)             \
    X(lrn_backward)            \
    /* conv */                 \
    X(conv_forward)            \
    X(conv_backward_data)      \
    X(conv_backward_filter)    \
    X(im2col)                  \
    X(col2im)                  \
    /* pooling */              \
    X(max_pool_forward)        \
    X(max_pool_scatter)        \
    X(max_pool_gather)         \
    X(avg_pool_forward)        \
    X(avg_pool_backward)       \
    /* batch_norm */           \
    X(batch_norm_forward)      \
    X(batch_norm_backward)     \
    /* roi_pooling */          \
    X(roi_max_pool_2d)         \
    X(roi_max_pool_2d_scatter) \
    X(roi_max_pool_2d_gather)  \
    X(roi_average_align_2d)    \
    X(roi_average_align_2d_backward) \
    X(roi_max_pooling_2d)      \
    X(roi_average_pooling_2d)  \
    X(roi_average_pooling_2d_backward) \
    X(roi_max_align_2d)        \
    X(roi_max_align_2d_scatter) \
    X(roi_max_align_2d_gather) \
    /* embed_id */             \
    X(embed_id_forward)        \
    X(embed_id_backward)       \
    /* lstm */                 \
    X(lstm_forward)            \
    X(lstm_backward)           \
    X(lstm_grad_grad)          \
    /* rnn_seq */              \
    X(rnn_seq_forward)         \
    X(rnn_seq_backward)        \
    /* addmul */               \
    X(addmul)                  \
    /* index */                \
    X(wrap_indices)            \
    X(take)                    \
    X(take_along_axis)         \
    X(scatter_add)             \
    X(scatter_add_along_axis)  \
    X(count_nonzero)           \
    X(masked_select)           \
    X(nonzero)                 \
    /* sort */                 \
    X(sort)                    \
    X(unique_groups)           \
    X(unique_fill)             \
    /* random */               \
    X(random_fill)             \
    X(permutation)             \
    X(choice)                  \
    /* lapack */               \
    X(inv)                     \
    X(det)                     \
    X(solve)                   \
    X(cholesky)                \
    X(fft)                     \
    /* crf1d */                \
    X(crf1d)                   \
    X(crf1d_argmax)            \
    /* ctc */                  \
    X(ctc_loss)

/* several entries share a signature */
typedef ch_softmax_kernel ch_softmax_forward_kernel, ch_softmax_backward_kernel, ch_softmax_cross_entropy_kernel;
typedef ch_opt_update_kernel ch_sgd_update_kernel, ch_momentum_sgd_update_kernel,
    ch_corrected_momentum_sgd_update_kernel, ch_nesterov_ag_update_kernel, ch_adagrad_update_kernel,
    ch_adadelta_update_kernel, ch_adam_update_kernel, ch_rmsprop_update_kernel, ch_rmsprop_graves_update_kernel,
    ch_smorms3_update_kernel, ch_msvag_update_kernel;

#define CH_KERNEL_FIELD(name) ch_##name##_kernel *name;
typedef struct ch_kernel_table {
    CH_KERNEL_LIST(CH_KERNEL_FIELD)
} ch_kernel_table;

/* The list as one string ("fill elementwise where ..."), for the ABI check. */
#define CH_KERNEL_NAME_STR(name) #name " "
#define CH_KERNEL_LIST_STR CH_KERNEL_LIST(CH_KERNEL_NAME_STR)

#endif

/*
 * backend.h -- declarations shared by the files of libchainlua_cuda.
 *
 * The backend is self-contained: it links the CUDA libraries but not
 * libchainlua, and talks to the core only through the ch_cuda_hooks struct
 * (runtime/core/cuda_hooks.h), which carries its kernel table.  Errors go through cu_fail, which forwards to
 * the core's ch_fail so that ch_last_error() shows them.
 */
#ifndef CHAINLUA_CUDA_BACKEND_H
#define CHAINLUA_CUDA_BACKEND_H

#include "chainlua.h"
#include "kernels.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CU_MAX_DEVICES 16

/* ---- errors (init.c) -------------------------------------------------- */
/* The core's ch_fail; set by chainlua_cuda_init. */
extern ch_status (*cu_fail_fn)(ch_status st, const char *fmt, ...);
#define cu_fail(...) cu_fail_fn(__VA_ARGS__)
#define CU_TRY(expr)                   \
    do {                               \
        ch_status cu_try_st_ = (expr); \
        if (cu_try_st_ != CH_OK)       \
            return cu_try_st_;         \
    } while (0)
/* Turns a cudaError_t (passed as int so C files need no CUDA headers) into
 * a failure naming `fn` and `what`. */
ch_status cu_check(int err, const char *fn, const char *what);

/* ---- devices (device.c) ------------------------------------------------ */
extern int cu_device_count;
/* Makes `device` current on this thread; fails with a message naming fn. */
ch_status cu_use(int device, const char *fn);
ch_status cu_synchronize(int device);
/* Size in bytes of an element of dt (the backend's own table). */
size_t cu_dtype_size(int dt);
const char *cu_dtype_name(int dt);

/* ---- streams, events and pinned transfers (stream.c, pinned.c,
 * plan_pinned.c) ------------------------------------------------------------
 * Each device has a current stream per host thread (its legacy default
 * stream unless ch_cuda_stream_use chose another); every kernel, library
 * call and copy of the backend is queued on the current stream of the
 * current device.  Under CU_EMULATE a stream is an ordering token and all
 * work runs synchronously on the host. */
/* The device the calling thread last made current (cu_use sets it). */
extern __thread int cu_current_device;
/* The calling thread's current stream of a device (NULL: its default). */
ch_cuda_stream *cu_current_stream(int device);
/* The native stream (a cudaStream_t) that launches on the current device
 * use; NULL is the legacy default stream. */
void *cu_stream(void);
/* 1 when the current stream of the current device differs from *bound (a
 * library handle's stream), which is then updated: the caller re-binds the
 * handle (cublasSetStream, cudnnSetStream, ...) to cu_stream(). */
int cu_stream_rebind(void **bound);
/* Work queued from now on the current stream of device `later` waits for
 * the work queued so far on the current stream of device `earlier` (an
 * event between them; leaves `later` current). */
ch_status cu_stream_order(int earlier, int later, const char *fn);
/* Cached blocks freed while stream s (a ch_cuda_stream *) was current move
 * to the default stream's bins (s has finished; allocator.c). */
void cu_alloc_forget_stream(int device, const void *s);
/* Host <-> device copies of n bytes on the current stream of the current
 * device, staged through the pinned buffers of pinned.c.  cu_upload returns
 * once `host` may be reused (the data may still be in flight); cu_download
 * once the data is in `host`. */
ch_status cu_upload(void *dev, const void *host, size_t n, const char *fn);
ch_status cu_download(void *host, const void *dev, size_t n, const char *fn);
/* The services of the hooks table (stream.c). */
extern const struct ch_cuda_stream_services cu_stream_services;
int64_t cu_pinned_bytes(int device);
int64_t cu_pinned_free_count(int device);
void cu_pinned_free_all(int device);

/* ---- caching allocator (allocator.c) ----------------------------------- */
void cu_alloc_init(void);
void *cu_alloc(int device, size_t nbytes);
void cu_free(int device, void *p, size_t nbytes);
void cu_cache_free_all(int device);
int64_t cu_cache_bytes(int device);
/* Scratch buffers for staging copies: taken from and returned to the cache. */
void *cu_scratch(int device, size_t nbytes, const char *fn);
void cu_scratch_release(int device, void *p, size_t nbytes);

/* ---- geometry (geometry.c) --------------------------------------------- */
/*
 * The index space of a same-shape operation on up to two operands, with
 * size-1 dimensions dropped and neighbours merged where every operand is
 * contiguous across them, so kernels do as little index arithmetic as
 * possible.  Strides are in elements.
 */
typedef struct cu_geom {
    int nd;
    int contiguous;                  /* every operand is a dense forward run */
    int64_t numel;
    int64_t dim[CH_MAX_DIMS];
    int64_t stride[2][CH_MAX_DIMS];
} cu_geom;
void cu_geom_init(cu_geom *g, int nd, const int64_t *dim, int nops, const int64_t *const *strides);
/* Address of element 0 of t's view (data + offset * itemsize). */
char *cu_base(const ch_tensor *t);
/* The operand checks of the kernels' host sides (the front doors have
 * checked the user's arguments; these guard the backend's own contract):
 * t is live (has data unless empty), C-contiguous, of dtype dt, with n
 * elements, on device dev. */
int cu_dense(const ch_tensor *t, int dt, int64_t n, int dev);
/* t is cu_dense and of ref's dtype, device and shape. */
int cu_dense_as(const ch_tensor *t, const ch_tensor *ref);

/* ---- kernels (copy.cu, fill.cu) ----------------------------------------- */
/* dst[i] = (dst dtype) src[i] over g on the current device (both on it). */
ch_status cu_copy_kernel(const cu_geom *g, int dt_dst, void *dst, int dt_src, const void *src);
ch_status cu_fill_kernel(const cu_geom *g, int dt, void *dst, double value);

/* ---- tensor ops (elementwise.c/.cu, reduce.c/.cu, matmul.c) ------------- */
struct cu_ew_plan;
struct cu_reduce_plan;
/* What an elementwise kernel needs besides its index space; operand 0 is
 * the output, 1 and 2 the inputs (NULL pointer: the scalar). */
typedef struct cu_ew_args {
    int op, nin, ct;
    int dt[3];
    char *ptr[3];
    int scalar_pos;         /* -1, or the input (0/1) that is the scalar */
    double scalar_f;
    int64_t scalar_i;
    double lo, hi;          /* clip bounds; lo_i/hi_i for int64 compute */
    int64_t lo_i, hi_i;
} cu_ew_args;
ch_status cu_ew_launch(const char *fn, const struct cu_ew_plan *p, const cu_ew_args *a);
/* op is a ch_reduce_op (SUM, PROD, MAX, MIN, ARGMAX, ARGMIN); x of dtype
 * float32/float64/int64; out contiguous (rows elements). */
ch_status cu_reduce_launch(const char *fn, int op, int dt, const struct cu_reduce_plan *p, const char *x, void *out);

/* out[i] = cond[i] ? a[i] : b[i] over plan p (operands out, cond, a, b);
 * cond is bool, the others share one element size `size` (1, 2, 4 or 8). */
ch_status cu_where_launch(const struct cu_ew_plan *p, int size, char *out, const char *cond, const char *a,
                          const char *b);
/* y = a*x + b*y over plan p (operands y, x) of float dtype dt; b == 0
 * does not read y. */
ch_status cu_axpby_launch(const struct cu_ew_plan *p, int dt, double a, const char *x, double b, char *y);
/* One fused optimizer update over n contiguous elements of dtype dt
 * (float32/float64): param, grad and up to three states. */
typedef enum cu_opt_kind {
    CU_OPT_SGD,        /* p -= lr*g */
    CU_OPT_MOMENTUM,   /* v = momentum*v - lr*g; p += v */
    CU_OPT_CMOMENTUM,  /* v = momentum*v - g; p += lr*v */
    CU_OPT_NESTEROV,   /* v = momentum*v - lr*g; p += momentum^2*v - (1+momentum)*lr*g */
    CU_OPT_ADAM,       /* Adam / AdamW / AMSGrad / AdaBound (ch_adam_update) */
    CU_OPT_ADAGRAD,    /* the other updates: the formulas of chainlua.h */
    CU_OPT_ADADELTA,
    CU_OPT_RMSPROP,
    CU_OPT_GRAVES,
    CU_OPT_SMORMS3,
    CU_OPT_MSVAG
} cu_opt_kind;
ch_status cu_opt_launch(int kind, const ch_opt_args *u, int dt, int64_t n, char *param, const char *grad,
                        char *s0, char *s1, char *s2);

/* The gradient hooks (grad_hooks.c, grad_hooks.cu): grad_transform's
 * scalars (sign: d = sign(param); clip: lower/upper are not both infinite),
 * its typed pass over n contiguous float32/float64 elements (param NULL or
 * of grad's dtype), its double pass over g (operands grad, param) for any
 * float dtypes, and sqnorm over g (operand x) into the host's *result. */
typedef struct cu_grad_transform_args {
    double scale, decay, lower, upper;
    int sign, clip;
} cu_grad_transform_args;
ch_status cu_grad_transform_dense(const cu_grad_transform_args *a, int dt, int64_t n, char *grad, const char *param);
ch_status cu_grad_transform_strided(const cu_grad_transform_args *a, const cu_geom *g, int gdt, char *grad, int pdt,
                                    const char *param);
ch_status cu_sqnorm_launch(const cu_geom *g, int dev, int dt, const char *x, double *result);

/* The samplers (random.c, random.cu) on the CPU's Philox stream: fill n
 * contiguous elements of dtype dt; the permutation of 0..n-1 into a; k
 * samples of 0..n-1 into out (p: NULL or n float64 probabilities, which
 * the kernel may overwrite). */
ch_status cu_random_fill_launch(const ch_random_args *r, int dt, int64_t n, char *out);
ch_status cu_permutation_launch(uint64_t seed, uint64_t first, int64_t n, int64_t *a);
ch_status cu_choice_launch(int dev, int64_t n, int replace, double *p, uint64_t seed, uint64_t first, int64_t k,
                           int64_t *out);

/* cumsum/cumprod (cumulative.c/.cu) along R of contiguous (O, R, I) data
 * of dtype dt (float32, float64, int64). */
ch_status cu_cumulative_launch(int prod, int dt, int64_t O, int64_t R, int64_t I, const char *x, char *out);
/* acc += x * y over n contiguous elements of float dtype dt (addmul.c/.cu). */
ch_status cu_addmul_launch(int dt, int64_t n, char *acc, const char *x, const char *y);
/* embed_id (embed_id.c/.cu): n ids, rows of D elements of `size` bytes
 * (forward) or of float dtype dt (backward; gw has total elements). */
ch_status cu_embed_id_forward_launch(int size, int64_t n, int64_t D, const int64_t *ids, int has_ignore,
                                     int64_t ignore, const char *w, char *y);
ch_status cu_embed_id_backward_launch(int dt, int64_t n, int64_t total, int64_t D, const int64_t *ids,
                                      int has_ignore, int64_t ignore, const char *gy, char *gw);

/* LRN across channels (lrn.c/.cu) over contiguous (N, C, S) data of float
 * dtype dt, window half-width h. */
ch_status cu_lrn_forward_launch(int dt, int64_t N, int64_t C, int64_t S, int64_t h, double k, double al, double be,
                                const char *x, char *y, char *us);
ch_status cu_lrn_backward_launch(int dt, int64_t N, int64_t C, int64_t S, int64_t h, double al, double be,
                                 const char *x, const char *y, const char *us, const char *gy, char *gx);

/* The rows of a softmax-family op (see ch_softmax_args): plain pointers,
 * checked by softmax.c. */
typedef enum cu_softmax_kind { CU_SOFTMAX_FWD, CU_SOFTMAX_BWD, CU_SOFTMAX_SCE } cu_softmax_kind;
ch_status cu_softmax_launch(int kind, const ch_softmax_args *s, int dt, const char *x, const char *gy, char *out,
                            const int64_t *labels, const char *weight, char *grad, char *prob);

/* gx[i] from y[i] and gy[i] for activation op over n contiguous elements
 * of dtype dt (float32/float64). */
ch_status cu_activation_grad_launch(int op, int dt, int64_t n, const char *y, const char *gy, char *gx);

/* ---- cuDNN convolution (conv.c, conv_window.cu, plan_conv.c) ------------ */
/* dst[i] = src[i + shift] over planes planes of nsp (1..3) spatial axes,
 * zero where that falls outside src; elements of elsize (4 or 8) bytes
 * moved as raw bits (the padded copies of the convolutions). */
ch_status cu_conv_window_launch(int elsize, int nsp, int64_t planes, const int64_t *src_ext, const int64_t *dst_ext,
                                const int64_t *shift, const char *src, char *dst);

/* ---- pooling (pooling.c, pooling.cu) ------------------------------------ */
typedef enum cu_pool_kind {
    CU_POOL_MAX_FWD,     /* y and (ix_out != NULL) the window positions from x */
    CU_POOL_MAX_SCATTER, /* gx from gy at the positions ix */
    CU_POOL_MAX_GATHER,  /* y from x at the positions ix */
    CU_POOL_AVG_FWD,     /* y from x, divisor `mode` (ch_avg_pool_forward_kernel) */
    CU_POOL_AVG_BWD      /* gx from gy, divisor `mode` */
} cu_pool_kind;
ch_status cu_pool_launch(int kind, int mode, const ch_pool_geom *g, int dt, const char *src, const int32_t *ix,
                         char *dst, int32_t *ix_out);

/* ---- batch normalization (batch_norm.c, batch_norm.cu) ------------------ */
/* See ch_batch_norm_forward_kernel: st is 3 C doubles of scratch; the
 * per-channel inputs are float64 (NULL gamma: 1, beta: 0), outputs of
 * dtype dt or NULL. */
ch_status cu_batch_norm_forward_launch(int dt, int64_t A, int64_t C, int64_t B, const char *x, const double *gamma,
                                       const double *beta, double eps, double *st, char *y, char *mean, char *var,
                                       char *istd);
/* acc is 2 C doubles of scratch. */
ch_status cu_batch_norm_backward_launch(int dt, int64_t A, int64_t C, int64_t B, const char *x, const double *gamma,
                                        const char *gy, const double *mean, const double *istd, double *acc, char *gx,
                                        char *ggamma, char *gbeta);
/* ---- indexing (index.c, index.cu, staging.c) ---------------------------- */
/* Device scratch and small synchronous transfers (host memory when
 * emulated). */
void *cu_stage_alloc(int device, size_t nbytes, const char *fn);
void cu_stage_free(int device, void *p, size_t nbytes);
ch_status cu_to_host(void *host, const void *dev, size_t nbytes, const char *fn);
ch_status cu_to_device(void *dev, const void *host, size_t nbytes, const char *fn);
/* An index space walked in C order, with the element strides of up to
 * three operands. */
typedef struct cu_space {
    int nd;
    int64_t dim[CH_MAX_DIMS];
    int64_t st[3][CH_MAX_DIMS];
} cu_space;
enum { CU_CHUNK = 2048 }; /* elements per item of the counting kernels */
/* idx[i] of n entries wrapped into [0, len); *first = the smallest i out of
 * [-len, len) (left at its value when none). */
ch_status cu_wrap_launch(int64_t *idx, int64_t numel, int64_t len, unsigned long long *first);
/* out[(i, j, r)] = x[(i, idx[j], r)] for elements of z bytes. */
ch_status cu_take_launch(size_t z, const char *x, const int64_t *idx, char *out, int64_t count, int64_t n,
                         int64_t ni, int64_t post);
/* out[o] (contiguous over s) = x[s0 + idx[s1] * xax]. */
ch_status cu_take_along_launch(size_t z, const cu_space *s, const char *x, const int64_t *idx, int64_t xax,
                               char *out);
/* For each item of `items` (operands target, values, idx), in the C order of
 * `loop`: t[t0 + idx[i0] * tax] += v[v0] in dtype dt. */
ch_status cu_scatter_launch(int dt, const cu_space *items, const cu_space *loop, char *t, const char *v,
                            const int64_t *idx, int64_t tax);
/* counts[c] = the nonzero elements of operand 0 (dtype dt) in chunk c of s;
 * then counts becomes its exclusive prefix sum, the total at counts[nchunks]. */
ch_status cu_count_launch(int dt, const cu_space *s, const char *x, int64_t *counts, int64_t nchunks);
/* counts[0..n) -> its exclusive prefix sums, the total at counts[n] (one item). */
ch_status cu_scan_launch(int64_t *counts, int64_t n);
/* out[starts[c] + k] = operand 0 (z bytes) at the k-th true mask (operand 1) of chunk c. */
ch_status cu_masked_select_launch(size_t z, const cu_space *s, const char *x, const uint8_t *mask,
                                  const int64_t *starts, char *out);
/* out rows starts[c] + k = the multi-index of the k-th nonzero of chunk c. */
ch_status cu_nonzero_launch(int dt, const cu_space *s, const char *x, const int64_t *starts, int64_t *out);

/* ---- im2col, col2im (im2col.c, im2col.cu) ------------------------------- */
/* col (n elements) from x, and x (n elements) gathered from col, of float dtype dt. */
ch_status cu_im2col_launch(const ch_conv_geom *g, int dt, const char *x, char *col, int64_t n);
ch_status cu_col2im_launch(const ch_conv_geom *g, int dt, const char *col, char *x, int64_t n);

/* ---- sort, unique (sort.c, sort.cu; prefix sums from index.cu) ---------- */
/* Sorts the lines of x (dtype dt) along an axis of n elements (x steps xs,
 * the results os); `lines` walks the other axes (operand 0: x, 1: the
 * results).  vals (dt) and args (int64) may be NULL; scratch holds 2 n
 * 16-byte pairs per line. */
ch_status cu_sort_launch(int dt, const cu_space *lines, int64_t n, int64_t xs, int64_t os, int desc, const char *x,
                         char *vals, int64_t *args, void *scratch);
/* group[i] of the sorted elements flat[ord[i] * fs]; counts: chunk scratch
 * (n / CU_CHUNK + 2), the number of groups at counts[nchunks]. */
ch_status cu_unique_groups_launch(int dt, const char *flat, int64_t fs, int64_t n, const int64_t *ord,
                                  int64_t *group, int64_t *counts);
/* vals, inv (may be NULL) and counts (may be NULL; then starts too) of unique. */
ch_status cu_unique_fill_launch(int dt, const char *flat, int64_t fs, int64_t n, const int64_t *ord,
                                const int64_t *group, char *vals, int64_t ngroups, int64_t *inv, int64_t *counts,
                                int64_t *starts);

/* ---- ROI pooling family (roi.c, roi.cu) ---------------------------------- */
typedef enum cu_roi_kind {
    CU_ROI_MAX_POOL,          /* roi_max_pool_2d: y, argmax */
    CU_ROI_MAX_POOLING,       /* roi_max_pooling_2d (Chainer 7) */
    CU_ROI_AVG_POOLING,       /* roi_average_pooling_2d */
    CU_ROI_ALIGN_AVG,         /* roi_average_align_2d */
    CU_ROI_ALIGN_MAX,         /* roi_max_align_2d: y, argmax */
    CU_ROI_MAX_POOL_GATHER,   /* y = x at the argmax cells */
    CU_ROI_ALIGN_MAX_GATHER,  /* y = x interpolated at the argmax samples */
    /* gradients: one item per input plane */
    CU_ROI_MAX_POOL_SCATTER,
    CU_ROI_AVG_POOLING_BACK,
    CU_ROI_ALIGN_AVG_BACK,
    CU_ROI_ALIGN_MAX_SCATTER
} cu_roi_kind;
/* What a ROI kernel reads (device pointers): planes (N, C, H, W), per-ROI
 * planes (R, C, OH, OW). */
typedef struct cu_roi_job {
    int kind;
    const double *rois;
    const int64_t *idx;
    int32_t *argmax;
    int64_t R, C, N, H, W, OH, OW;
    double scale;
    int64_t sh, sw;
} cu_roi_job;
/* in: x (or gy for gradients); out: y (or gx), of float dtype dt. */
ch_status cu_roi_launch(const cu_roi_job *j, int dt, const char *in, char *out);

/* ---- user kernels (kernel.c) -------------------------------------------- */
ch_status cu_compile(const char *src, const char *name, const char *arch, char **image, size_t *size);
void cu_image_free(void *p);
int cu_nvrtc_newest_arch(void);
ch_status cu_kernel_load(int device, const void *image, const char *name, void **kernel);
ch_status cu_launch(int device, void *kernel, uint32_t blocks, uint32_t threads, uint32_t shmem, void **args);
int cu_device_arch(int device);
/* raw kernels: a 3-D grid and block (kernel.c); NVTX ranges (nvtx.c: NULL
 * when the toolkit has no NVTX 3 headers) */
ch_status cu_launch_grid(int device, void *kernel, const uint32_t grid[3], const uint32_t block[3], uint32_t shmem,
                         void **args);
extern void (*const cu_nvtx_push)(const char *name);
extern void (*const cu_nvtx_pop)(void);

/* ---- host side of copies (copy.c) --------------------------------------- */
ch_status cu_copy(ch_tensor *dst, const ch_tensor *src);

/* ---- the kernel table (kernel_table.c), and kernels that serve several of
 * its entries ------------------------------------------------------------ */
extern const ch_kernel_table cu_kernels;
/* the kernels of the table, typed by their entries */
ch_fill_kernel cu_fill;
ch_elementwise_kernel cu_elementwise;
ch_where_kernel cu_where;
ch_axpby_kernel cu_axpby;
ch_reduce_kernel cu_reduce;
ch_matmul_kernel cu_matmul;
ch_gemm_kernel cu_gemm;
ch_activation_grad_kernel cu_activation_grad;
ch_grad_transform_kernel cu_grad_transform;
ch_sqnorm_kernel cu_sqnorm;
ch_random_fill_kernel cu_random_fill;
ch_permutation_kernel cu_permutation;
ch_choice_kernel cu_choice;
ch_cumulative_kernel cu_cumulative;
ch_addmul_kernel cu_addmul;
ch_embed_id_forward_kernel cu_embed_id_forward;
ch_embed_id_backward_kernel cu_embed_id_backward;
ch_lrn_forward_kernel cu_lrn_forward;
ch_lrn_backward_kernel cu_lrn_backward;
ch_conv_forward_kernel cu_conv_forward;
ch_conv_backward_data_kernel cu_conv_backward_data;
ch_conv_backward_filter_kernel cu_conv_backward_filter;
ch_max_pool_forward_kernel cu_max_pool_forward;
ch_max_pool_scatter_kernel cu_max_pool_scatter;
ch_max_pool_gather_kernel cu_max_pool_gather;
ch_avg_pool_forward_kernel cu_avg_pool_forward;
ch_avg_pool_backward_kernel cu_avg_pool_backward;
ch_batch_norm_forward_kernel cu_batch_norm_forward;
ch_batch_norm_backward_kernel cu_batch_norm_backward;
ch_wrap_indices_kernel cu_wrap_indices;
ch_take_kernel cu_take;
ch_take_along_axis_kernel cu_take_along_axis;
ch_scatter_add_kernel cu_scatter_add;
ch_scatter_add_along_axis_kernel cu_scatter_add_along_axis;
ch_count_nonzero_kernel cu_count_nonzero;
ch_masked_select_kernel cu_masked_select;
ch_nonzero_kernel cu_nonzero;
ch_im2col_kernel cu_im2col;
ch_col2im_kernel cu_col2im;
ch_sort_kernel cu_sort;
ch_unique_groups_kernel cu_unique_groups;
ch_unique_fill_kernel cu_unique_fill;
ch_roi_max_pool_2d_kernel cu_roi_max_pool_2d;
ch_roi_max_pool_2d_scatter_kernel cu_roi_max_pool_2d_scatter;
ch_roi_max_pool_2d_gather_kernel cu_roi_max_pool_2d_gather;
ch_roi_average_align_2d_kernel cu_roi_average_align_2d;
ch_roi_average_align_2d_backward_kernel cu_roi_average_align_2d_backward;
ch_roi_max_pooling_2d_kernel cu_roi_max_pooling_2d;
ch_roi_average_pooling_2d_kernel cu_roi_average_pooling_2d;
ch_roi_average_pooling_2d_backward_kernel cu_roi_average_pooling_2d_backward;
ch_roi_max_align_2d_kernel cu_roi_max_align_2d;
ch_roi_max_align_2d_scatter_kernel cu_roi_max_align_2d_scatter;
ch_roi_max_align_2d_gather_kernel cu_roi_max_align_2d_gather;

ch_status cu_opt_update(int kind, const ch_opt_args *u);
ch_status cu_softmax(int kind, const ch_softmax_args *s);

/* ---- recurrent cells (lstm.c/.cu) ------------------------------------------ */
ch_lstm_forward_kernel cu_lstm_forward;
ch_lstm_backward_kernel cu_lstm_backward;
ch_lstm_grad_grad_kernel cu_lstm_grad_grad;
/* The operands of one LSTM-cell pass (runtime/core/kernels.h, "lstm"): c_prev
 * (Bc, U, S...), x (B, 4U, S...), the optional gradients, and up to four
 * outputs in the order of the entry's arguments. */
typedef enum cu_lstm_pass { CU_LSTM_FORWARD, CU_LSTM_BACKWARD, CU_LSTM_GRAD_GRAD } cu_lstm_pass;
typedef struct cu_lstm_ptrs {
    const char *c_prev, *x, *gc, *gh, *ggc_prev, *ggx;
    char *out[4];
    int64_t B, U, S;
} cu_lstm_ptrs;
/* One item per element of c_prev (n of them) on the current device. */
ch_status cu_lstm_launch(int pass, int dt, const cu_lstm_ptrs *q, int64_t n);

/* ---- sequence RNNs (rnn_seq.c/.cu; products in matmul.c) ------------------- */
ch_rnn_seq_forward_kernel cu_rnn_seq_forward;
ch_rnn_seq_backward_kernel cu_rnn_seq_backward;
/* C (M, N) = op(A) op(B) + beta C on row-major float32/float64 matrices of
 * device `dev` whose rows are lda/ldb/ldc elements apart; M, N, K > 0. */
ch_status cu_gemm_rows(const char *fn, int dev, int dt, int ta, int tb, int64_t M, int64_t N, int64_t K,
                       const void *A, int64_t lda, const void *B, int64_t ldb, double beta, void *C, int64_t ldc);
/* One step of a sequence RNN: its first workspace row (W wide), the running
 * state h (and LSTM's c; their gradients in the backward), its first output
 * row y (forward) or output-gradient row gy (backward, NULL: zero), GRU's
 * recurrent product q and bias bh (forward), the gate-gradient rows dgx and
 * GRU's dgh (backward). */
typedef struct cu_rnn_step_ptrs {
    const char *name;
    char *ws, *h, *c, *y;
    const char *q, *bh, *gy;
    char *dgx, *dgh;
    int64_t H, W, GH;
    int cell;
} cu_rnn_step_ptrs;
/* The cell of one step over its Bt rows (forward, or backward when `backward`). */
ch_status cu_rnn_step(int backward, int dt, const cu_rnn_step_ptrs *s, int64_t Bt);
/* ws's N rows (W apart), first GH columns, += bx (+ bh when not NULL). */
ch_status cu_rnn_add_bias(const char *fn, int dt, char *ws, const char *bx, const char *bh, int64_t N, int64_t W,
                          int64_t GH);
/* rows x width elements from src (lds apart; NULL: zeros) to dst (ldd apart). */
ch_status cu_rnn_copy_rows(const char *fn, int dt, char *dst, int64_t ldd, const char *src, int64_t lds,
                           int64_t rows, int64_t width);
/* out[j] = the column sums of a (n rows of m), in double, rows in order. */
ch_status cu_rnn_colsum(const char *fn, int dt, const char *a, int64_t n, int64_t m, char *out);

/* ---- linear algebra and FFT (lapack.c/.cu, fft.c/.cu; cuSOLVER and cuFFT
 * are loaded on first use, plan_libs.c) ------------------------------------ */
ch_inv_kernel cu_inv;
ch_det_kernel cu_det;
ch_solve_kernel cu_solve;
ch_cholesky_kernel cu_cholesky;
ch_fft_kernel cu_fft;
/* The per-item kernels around the factorizations, on `batch` matrices of
 * float dtype dt:
 *   CU_LK_TRANSPOSE  dst (c x r each) = src (r x c each) transposed;
 *   CU_LK_IDENTITY   dst (r x r each) = the identity;
 *   CU_LK_DET        dst[m] = det from LU factor src (r x r) and 1-based ipiv;
 *   CU_LK_LOWER      the strict upper triangle of dst (r x r, row-major) = 0. */
enum { CU_LK_TRANSPOSE, CU_LK_IDENTITY, CU_LK_DET, CU_LK_LOWER };
ch_status cu_lapack_items(int what, int dt, int64_t batch, int64_t r, int64_t c, const char *src, const int *ipiv,
                          char *dst);
/* n float64 complex numbers: buf (re, im interleaved) from the planes re, im
 * (to_planes 0), or back to them, each divided by `divide` (to_planes 1). */
ch_status cu_fft_items(int to_planes, int64_t n, char *re, char *im, char *buf, double divide);

/* ---- NCCL (nccl.c, plan_nccl.c; libnccl.so.2 loaded on first use) ---------- */
struct ch_cuda_hooks;
/* Fills the NCCL services of the hooks table. */
void cu_nccl_hooks(struct ch_cuda_hooks *hooks);

#ifdef __cplusplus
}
#endif

#endif

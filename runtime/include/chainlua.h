/*
 * chainlua.h -- the one public C API of the chainlua runtime (prefix ch_).
 *
 * Conventions
 *  - Every function that can fail returns a ch_status; CH_OK is 0.  The
 *    message of the last failure on this thread is ch_last_error().
 *    Nothing in the library aborts, exits or longjmps.
 *  - A function that hands back a tensor through `ch_tensor **result`
 *    hands back a NEW reference: the caller owns it and releases it with
 *    ch_tensor_release().  Functions taking `ch_tensor *out` write into an
 *    existing tensor instead; when `out` is non-NULL, `result` may be NULL.
 *  - Positions (indices, axes) are 0-based; negative axes count from the end.
 *  - Strides and offsets are counted in elements, not bytes.
 *
 * The part between CH_FFI_BEGIN and CH_FFI_END is plain C that LuaJIT's
 * ffi.cdef can parse: lua/chainer/_ffi.lua is generated from it by
 * scripts/gen-ffi.lua (never edit _ffi.lua by hand).
 */
#ifndef CHAINLUA_H
#define CHAINLUA_H

#include <stddef.h>
#include <stdint.h>

#include "chainlua_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define CH_API __declspec(dllexport)
#else
#define CH_API __attribute__((visibility("default")))
#endif

#define CHAINLUA_VERSION "0.1.0"

/* CH_FFI_BEGIN */

enum { CH_MAX_DIMS = 16 };

/* Element types.  The order is the promotion lattice used by ch_promote. */
typedef enum ch_dtype {
    CH_DTYPE_LIST(CH_OP_ENUM)
    CH_NDTYPES
} ch_dtype;

typedef enum ch_status {
    CH_OK = 0,
    CH_ERR_ARG,         /* a bad argument value (axis out of range, ...) */
    CH_ERR_SHAPE,       /* shapes that do not fit together */
    CH_ERR_DTYPE,       /* a dtype the operation does not support */
    CH_ERR_DEVICE,      /* tensors on different or unavailable devices */
    CH_ERR_MEMORY,      /* out of memory */
    CH_ERR_IO,          /* a file could not be opened, read or written */
    CH_ERR_FORMAT,      /* a file is corrupt or not of the expected format */
    CH_ERR_UNSUPPORTED, /* not implemented for this device or combination */
    CH_ERR_INTERNAL
} ch_status;

/* Devices: -1 is the CPU, 0.. are CUDA devices. */
enum { CH_CPU = -1 };

typedef struct ch_storage ch_storage;

/*
 * A tensor is a view (dtype, device, shape, strides, offset) onto a
 * refcounted storage.  The fields are public so that the Lua binding can
 * read them without a call; only the runtime writes them.  Their names are
 * short on purpose: the Lua API exposes `shape`, `dtype`, `ndim`, `size`
 * as friendlier properties computed from these.
 */
typedef struct ch_tensor {
    int32_t dt;                    /* ch_dtype */
    int32_t dev;                   /* CH_CPU or a CUDA device id */
    int32_t nd;                    /* number of dimensions, 0..CH_MAX_DIMS */
    int32_t refcount;              /* owned references to this struct */
    int64_t numel;                 /* product of dim[0..nd) */
    int64_t offset;                /* first element, in elements from data */
    int64_t dim[CH_MAX_DIMS];      /* extents */
    int64_t stride[CH_MAX_DIMS];   /* element strides; 0 for broadcast axes */
    void *data;                    /* storage base (NULL once freed) */
    ch_storage *storage;
} ch_tensor;

/* ---- errors, version, threads, memory ---------------------------------- */
CH_API const char *ch_last_error(void);
CH_API void ch_clear_error(void);
CH_API const char *ch_version(void);
CH_API const char *ch_library_path(void);  /* file libchainlua was loaded from, or NULL */
CH_API const char *ch_blas_info(void);       /* e.g. "OpenBLAS 0.3.21 (OpenMP)" */
CH_API void ch_set_num_threads(int n);       /* OpenMP and BLAS together */
CH_API int ch_get_num_threads(void);
/* Adaptive threads (on by default; CHAINLUA_ADAPTIVE_THREADS=0 turns it off
 * at start): while another process keeps our cores busy, parallel work runs
 * on one thread, and returns to ch_get_num_threads() when the cores are free
 * again (docs/threads.md).  ch_threads_in_use() is the count in use now. */
CH_API void ch_set_adaptive_threads(int on);
CH_API int ch_threads_in_use(void);
CH_API int64_t ch_live_bytes(int device);    /* bytes held by live storages */
CH_API int64_t ch_peak_bytes(int device);
CH_API void ch_reset_peak_bytes(int device);
CH_API int64_t ch_live_tensors(void);        /* live ch_tensor structs */
CH_API void ch_cache_free_all(int device);   /* return cached blocks to the OS/driver */
CH_API int64_t ch_cache_bytes(int device);   /* bytes held in the allocator cache */
CH_API int64_t ch_fresh_bytes(void);         /* CPU bytes of cacheable blocks taken from the
                                                system so far (cache misses; monotone) */

/* ---- dtypes ------------------------------------------------------------ */
CH_API size_t ch_dtype_size(ch_dtype dt);
CH_API const char *ch_dtype_name(ch_dtype dt); /* "float32", ... */
CH_API int ch_dtype_from_name(const char *name); /* -1 when unknown */
CH_API int ch_dtype_is_float(ch_dtype dt);
CH_API int ch_dtype_is_signed(ch_dtype dt);
/* NumPy's result_type of two arrays. */
CH_API ch_dtype ch_promote(ch_dtype a, ch_dtype b);
/* Result type of an array with a Python-like scalar: a scalar only lifts
 * the kind (bool < int < float), never the width: float32 + 1.5 is float32,
 * int32 + 1.5 is float64, uint8 + 3 is uint8. */
CH_API ch_dtype ch_promote_scalar(ch_dtype a, int scalar_is_float, int scalar_is_bool);
CH_API float ch_half_to_float(uint16_t h);
CH_API uint16_t ch_float_to_half(float f);

/* ---- lifetime ---------------------------------------------------------- */
CH_API void ch_tensor_retain(ch_tensor *t);
CH_API void ch_tensor_release(ch_tensor *t);  /* NULL is fine */
/* Drop t's hold on its storage now (t:free() in Lua); t stays a valid,
 * empty struct until released, and kernels refuse it with a clear error. */
CH_API void ch_tensor_free_storage(ch_tensor *t);
CH_API int ch_is_contiguous(const ch_tensor *t);
CH_API void *ch_tensor_ptr(const ch_tensor *t);  /* address of the first element */

/* ---- creation ---------------------------------------------------------- */
CH_API ch_status ch_empty(ch_dtype dt, int ndim, const int64_t *shape, int device, ch_tensor **result);
CH_API ch_status ch_full(ch_dtype dt, int ndim, const int64_t *shape, double value, int device, ch_tensor **result);
CH_API ch_status ch_arange(double start, double stop, double step, ch_dtype dt, int device, ch_tensor **result);
CH_API ch_status ch_linspace(double start, double stop, int64_t num, int endpoint, ch_dtype dt, int device, ch_tensor **result);
CH_API ch_status ch_eye(int64_t n, int64_t m, int64_t k, ch_dtype dt, int device, ch_tensor **result);
/* Copies `data` (C order, packed, of dtype dt) into a new CPU tensor. */
CH_API ch_status ch_from_buffer(ch_dtype dt, int ndim, const int64_t *shape, const void *data, ch_tensor **result);
/* Wraps memory the caller keeps alive (no copy, no free). */
CH_API ch_status ch_wrap_buffer(ch_dtype dt, int ndim, const int64_t *shape, void *data, ch_tensor **result);
CH_API ch_status ch_fill(ch_tensor *t, double value);
/* Element at a flat C-order position of the logical tensor, as a double. */
CH_API ch_status ch_get_flat(const ch_tensor *t, int64_t pos, double *value);
CH_API ch_status ch_set_flat(ch_tensor *t, int64_t pos, double value);
/* 64-bit integer element access, exact for int64 tensors. */
CH_API ch_status ch_get_flat_i64(const ch_tensor *t, int64_t pos, int64_t *value);

/* ---- views (no copy; the result shares x's storage) -------------------- */
/* A dimension of -1 is inferred.  Copies only when no view is possible. */
CH_API ch_status ch_reshape(const ch_tensor *x, int ndim, const int64_t *shape, ch_tensor **result);
CH_API ch_status ch_view(const ch_tensor *x, int ndim, const int64_t *shape, ch_tensor **result); /* never copies */
CH_API ch_status ch_permute(const ch_tensor *x, const int32_t *axes, ch_tensor **result); /* axes has x->nd entries */
CH_API ch_status ch_expand_dims(const ch_tensor *x, int axis, ch_tensor **result);
/* Removes the given size-1 axes, or all size-1 axes when naxes == 0. */
CH_API ch_status ch_squeeze(const ch_tensor *x, const int32_t *axes, int naxes, ch_tensor **result);
CH_API ch_status ch_broadcast_to(const ch_tensor *x, int ndim, const int64_t *shape, ch_tensor **result);
CH_API ch_status ch_diagonal(const ch_tensor *x, int64_t offset, int axis1, int axis2, ch_tensor **result);
CH_API ch_status ch_as_strided(const ch_tensor *x, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset, ch_tensor **result);

/* Basic indexing: one entry per index term, Python semantics. */
typedef enum ch_index_kind {
    CH_IDX_INT = 0,     /* start: an integer index (negative from the end) */
    CH_IDX_SLICE,       /* start:stop:step with has_* flags for omitted parts */
    CH_IDX_NEWAXIS,
    CH_IDX_ELLIPSIS
} ch_index_kind;
typedef struct ch_index {
    int32_t kind;
    int32_t has_start, has_stop, has_step;
    int64_t start, stop, step;
} ch_index;
CH_API ch_status ch_slice(const ch_tensor *x, const ch_index *idx, int n, ch_tensor **result);
CH_API ch_status ch_flip(const ch_tensor *x, int axis, ch_tensor **result); /* a negative-stride view */

/* ---- copies and casts -------------------------------------------------- */
CH_API ch_status ch_contiguous(const ch_tensor *x, ch_tensor **result); /* x itself (retained) when already C-contiguous */
CH_API ch_status ch_copy(const ch_tensor *x, ch_tensor **result);
CH_API ch_status ch_astype(const ch_tensor *x, ch_dtype dt, ch_tensor **result);
CH_API ch_status ch_to_device(const ch_tensor *x, int device, ch_tensor **result);
/* dst[...] = src, broadcasting src to dst's shape and casting to dst's dtype. */
CH_API ch_status ch_copy_into(ch_tensor *dst, const ch_tensor *src);

/* ---- elementwise ------------------------------------------------------- */
typedef enum ch_unary_op {
    CH_UNARY_OP_LIST(CH_OP_ENUM)
    CH_NUNARY
} ch_unary_op;

typedef enum ch_binary_op {
    CH_BINARY_OP_LIST(CH_OP_ENUM)
    CH_NBINARY
} ch_binary_op;

/* Math unary ops on integer or bool inputs compute in float64 (NumPy's
 * rule); NEG/ABS/SIGN/SQUARE keep the input dtype.  float16 computes in
 * float32 and rounds once. */
CH_API ch_status ch_unary(ch_unary_op op, const ch_tensor *x, ch_tensor *out, ch_tensor **result);
/* Broadcasting; the result dtype is ch_promote(a, b) (DIV of integers gives
 * float64), bool for comparisons and logic.  `out` may alias an input. */
CH_API ch_status ch_binary(ch_binary_op op, const ch_tensor *a, const ch_tensor *b, ch_tensor *out, ch_tensor **result);
/* a (op) s, or s (op) a when scalar_first; s is a weak Python-like scalar. */
CH_API ch_status ch_binary_scalar(ch_binary_op op, const ch_tensor *a, double s, int scalar_is_float, int scalar_first, ch_tensor *out, ch_tensor **result);
/* NaN bound means no bound on that side. */
CH_API ch_status ch_clip(const ch_tensor *x, double lo, double hi, ch_tensor *out, ch_tensor **result);
CH_API ch_status ch_where(const ch_tensor *cond, const ch_tensor *a, const ch_tensor *b, ch_tensor *out, ch_tensor **result);
/* y = a*x + b*y on same-shape float tensors (optimizers, accumulation). */
CH_API ch_status ch_axpby(double a, const ch_tensor *x, double b, ch_tensor *y);
/* acc += x * y in place (x * y broadcasts to acc's shape and dtype); same
 * values as the product and the add done separately. */
CH_API ch_status ch_addmul(ch_tensor *acc, const ch_tensor *x, const ch_tensor *y);

/* ---- reductions -------------------------------------------------------- */
typedef enum ch_reduce_op {
    CH_REDUCE_OP_LIST(CH_OP_ENUM)
    CH_NREDUCE
} ch_reduce_op;
/* axes == NULL reduces over every axis.  ARGMAX/ARGMIN take at most one
 * axis (none: over the flattened tensor) and give int64.  `param` is ddof
 * for VAR/STD.  Integer sums give int64, integer means float64. */
CH_API ch_status ch_reduce(ch_reduce_op op, const ch_tensor *x, const int32_t *axes, int naxes, int keepdims, double param, ch_tensor **result);
CH_API ch_status ch_cumsum(const ch_tensor *x, int axis, ch_tensor **result);
CH_API ch_status ch_cumprod(const ch_tensor *x, int axis, ch_tensor **result);
/* Sums x down to `shape` (the inverse of broadcasting). */
CH_API ch_status ch_sum_to(const ch_tensor *x, int ndim, const int64_t *shape, ch_tensor **result);

/* ---- linear algebra ---------------------------------------------------- */
/* NumPy matmul (1-D promotion, broadcast batch axes), with optional
 * transposition of the last two axes of a and b. */
CH_API ch_status ch_matmul(const ch_tensor *a, const ch_tensor *b, int transa, int transb, ch_tensor **result);
/* c = alpha * op(a) @ op(b) + beta * c for 2-D a, b, c (in place on c). */
CH_API ch_status ch_gemm(int transa, int transb, double alpha, const ch_tensor *a, const ch_tensor *b, double beta, ch_tensor *c);
/* y = x W^T + b (b may be NULL): x (M, K), W (N, K), b (N,); float32/float64, one dtype. */
CH_API ch_status ch_linear(const ch_tensor *x, const ch_tensor *W, const ch_tensor *b, ch_tensor **result);
CH_API ch_status ch_dot(const ch_tensor *a, const ch_tensor *b, ch_tensor **result);   /* numpy.dot */
CH_API ch_status ch_tensordot(const ch_tensor *a, const ch_tensor *b, const int32_t *axes_a, const int32_t *axes_b, int naxes, ch_tensor **result);
CH_API ch_status ch_outer(const ch_tensor *a, const ch_tensor *b, ch_tensor **result);
CH_API ch_status ch_trace(const ch_tensor *x, ch_tensor **result);
/* On the last two axes, batched over the others. */
CH_API ch_status ch_inv(const ch_tensor *x, ch_tensor **result);
CH_API ch_status ch_det(const ch_tensor *x, ch_tensor **result);
CH_API ch_status ch_solve(const ch_tensor *a, const ch_tensor *b, ch_tensor **result);
/* Cholesky factor of each (n, n) matrix on the last two axes: the lower
 * triangular L with L L^T = x, reading only x's lower triangle (NumPy's
 * linalg.cholesky).  A matrix that is not positive definite is an error. */
CH_API ch_status ch_cholesky(const ch_tensor *x, ch_tensor **result);
/* Discrete Fourier transform of real + i imag over the last axis
 * (numpy.fft.fft; inverse != 0: numpy.fft.ifft, divided by n), any length;
 * computed in float64, returned as two planes in the inputs' float dtype. */
CH_API ch_status ch_fft(const ch_tensor *real, const ch_tensor *imag, int inverse, ch_tensor **out_real,
                        ch_tensor **out_imag);

/* ---- joining, indexing, reordering ------------------------------------- */
CH_API ch_status ch_concatenate(ch_tensor *const *xs, int n, int axis, ch_tensor **result);
CH_API ch_status ch_stack(ch_tensor *const *xs, int n, int axis, ch_tensor **result);
/* Splits at the given ascending indices into nidx+1 views written to results[]. */
CH_API ch_status ch_split(const ch_tensor *x, const int64_t *indices, int nidx, int axis, ch_tensor **results);
/* numpy.take with an integer index tensor of any shape; axis < -nd..nd-1.
 * flat != 0 takes from the flattened x (axis ignored). */
CH_API ch_status ch_take(const ch_tensor *x, const ch_tensor *indices, int axis, int flat, ch_tensor **result);
/* numpy.take_along_axis. */
CH_API ch_status ch_take_along_axis(const ch_tensor *x, const ch_tensor *indices, int axis, ch_tensor **result);
/* numpy.add.at(target, (:,..., indices along axis), values): in place. */
CH_API ch_status ch_scatter_add(ch_tensor *target, int axis, const ch_tensor *indices, const ch_tensor *values);
/* numpy.put_along_axis with accumulation (for the gradient of take_along_axis). */
CH_API ch_status ch_scatter_add_along_axis(ch_tensor *target, int axis, const ch_tensor *indices, const ch_tensor *values);
CH_API ch_status ch_masked_select(const ch_tensor *x, const ch_tensor *mask, ch_tensor **result);  /* 1-D */
CH_API ch_status ch_nonzero(const ch_tensor *x, ch_tensor **result);   /* (count, ndim) int64 */
CH_API ch_status ch_roll(const ch_tensor *x, int64_t shift, int axis, int flat, ch_tensor **result);
CH_API ch_status ch_tile(const ch_tensor *x, int n, const int64_t *reps, ch_tensor **result);
/* numpy.repeat: counts has 1 entry (same for all) or dim[axis] entries. */
CH_API ch_status ch_repeat(const ch_tensor *x, const int64_t *counts, int ncounts, int axis, int flat, ch_tensor **result);
typedef enum ch_pad_mode {
    CH_PAD_MODE_LIST(CH_OP_ENUM)
    CH_NPAD_MODES
} ch_pad_mode;
/* pads has 2*x->nd entries: (before, after) per axis. */
CH_API ch_status ch_pad(const ch_tensor *x, const int64_t *pads, ch_pad_mode mode, double value, ch_tensor **result);
/* Stable sort along an axis. */
CH_API ch_status ch_sort(const ch_tensor *x, int axis, int descending, ch_tensor **result);
CH_API ch_status ch_argsort(const ch_tensor *x, int axis, int descending, ch_tensor **result);
/* Sorted unique values of the flattened x; inverse and counts optional (NULL). */
CH_API ch_status ch_unique(const ch_tensor *x, ch_tensor **values, ch_tensor **inverse, ch_tensor **counts);

/* ---- random (Philox4x32-10, counter based) ----------------------------- */
/* Every element's value depends only on (seed, draw counter, position), so
 * results are the same for every thread count. */
CH_API void ch_rng_seed(int device, uint64_t seed);
CH_API uint64_t ch_rng_get_seed(int device);
CH_API uint64_t ch_rng_get_offset(int device);
CH_API void ch_rng_set_state(int device, uint64_t seed, uint64_t offset);
CH_API ch_status ch_random_uniform(ch_tensor *out, double low, double high);
CH_API ch_status ch_random_normal(ch_tensor *out, double mean, double std);
CH_API ch_status ch_random_bernoulli(ch_tensor *out, double p);
CH_API ch_status ch_random_randint(ch_tensor *out, int64_t low, int64_t high); /* [low, high) */
CH_API ch_status ch_random_permutation(int64_t n, int device, ch_tensor **result);  /* int64 */
/* k draws from 0..n-1; probs (float, n entries, sums to 1) may be NULL. */
CH_API ch_status ch_random_choice(int64_t n, int64_t k, int replace, const ch_tensor *probs, int device, ch_tensor **result);

/* ---- files ------------------------------------------------------------- */
CH_API ch_status ch_npy_save(const char *path, const ch_tensor *t);
CH_API ch_status ch_npy_load(const char *path, ch_tensor **result);
/* Parse/emit .npy from memory (used by npz and tests). */
CH_API ch_status ch_npy_from_memory(const void *bytes, size_t nbytes, const char *what, ch_tensor **result);

typedef struct ch_npz_writer ch_npz_writer;
typedef struct ch_npz_reader ch_npz_reader;
/* Writes to path.tmp-XXXX and renames into place on close (atomic). */
CH_API ch_status ch_npz_writer_open(const char *path, int compress, ch_npz_writer **w);
CH_API ch_status ch_npz_writer_add(ch_npz_writer *w, const char *name, const ch_tensor *t);
CH_API ch_status ch_npz_writer_close(ch_npz_writer *w);  /* commits */
CH_API void ch_npz_writer_abort(ch_npz_writer *w);        /* discards */
CH_API ch_status ch_npz_reader_open(const char *path, ch_npz_reader **r);
CH_API int ch_npz_reader_count(const ch_npz_reader *r);
CH_API const char *ch_npz_reader_name(const ch_npz_reader *r, int i);  /* without ".npy" */
CH_API ch_status ch_npz_reader_load(ch_npz_reader *r, const char *name, ch_tensor **result);
CH_API void ch_npz_reader_close(ch_npz_reader *r);
/* String arrays: NumPy '<U<n>' (UTF-32, n characters per item) and '|S<n>'
 * (n bytes).  The _ex readers give them as a tensor with one more, last axis
 * of length n: int32 code points (*kind = 'U') or uint8 bytes (*kind = 'S');
 * numeric arrays give *kind = 0.  The plain readers refuse string arrays.
 * The _ex writers take kind 0 (numeric), 'U' or 'S' for such a tensor; 'U'
 * code points must be Unicode scalar values (<= 0x10FFFF, no surrogates).
 * HDF5: fixed- and variable-length string datasets read as 'S' (their
 * bytes, UTF-8 or ASCII, null padding kept); ch_h5_write_ex takes kind 0 or
 * 'S', written as fixed-length null-padded strings with the UTF-8 character
 * set (h5py reads them as bytes, '|S<n>'). */
CH_API ch_status ch_npy_load_ex(const char *path, ch_tensor **result, char *kind);
CH_API ch_status ch_npy_save_ex(const char *path, const ch_tensor *t, char kind);
CH_API ch_status ch_npz_reader_load_ex(ch_npz_reader *r, const char *name, ch_tensor **result, char *kind);
/* Member `name` (numbers only) converted to dt as it is decoded: no tensor of
 * the stored dtype is made when the stored bytes can be read in place. */
CH_API ch_status ch_npz_reader_load_as(ch_npz_reader *r, const char *name, ch_dtype dt, ch_tensor **result);
CH_API ch_status ch_npz_writer_add_ex(ch_npz_writer *w, const char *name, const ch_tensor *t, char kind);

typedef struct ch_h5_file ch_h5_file;
/* mode: 'r' read, 'w' create/truncate (atomic: written to a temporary and
 * renamed on close), 'a' read/write. */
CH_API ch_status ch_h5_open(const char *path, char mode, ch_h5_file **f);
CH_API ch_status ch_h5_close(ch_h5_file *f);
CH_API void ch_h5_abort(ch_h5_file *f);
/* Dataset paths like "predictor/l1/W"; groups are created as needed. */
CH_API ch_status ch_h5_write(ch_h5_file *f, const char *path, const ch_tensor *t);
CH_API ch_status ch_h5_read(ch_h5_file *f, const char *path, ch_tensor **result);
CH_API ch_status ch_h5_read_ex(ch_h5_file *f, const char *path, ch_tensor **result, char *kind);
CH_API ch_status ch_h5_write_ex(ch_h5_file *f, const char *path, const ch_tensor *t, char kind);
CH_API int ch_h5_exists(ch_h5_file *f, const char *path);
/* Number of datasets below the root (recursively) and their paths; count
 * is -1 (ch_last_error says why) when the groups cannot be listed. */
CH_API int ch_h5_count(ch_h5_file *f);
CH_API const char *ch_h5_name(ch_h5_file *f, int i);

/* Writes nbytes of data to path atomically: a temporary beside it, renamed
 * into place when complete (the npz, HDF5 and image writers do the same). */
CH_API ch_status ch_write_file_atomic(const char *path, const void *data, size_t nbytes);

/* MNIST-style IDX files, gzip-compressed or plain. */
CH_API ch_status ch_idx_load(const char *path, ch_tensor **result);

/* Images (runtime/io/image.c): PNG or JPEG, told apart by magic bytes, to a
 * new (H, W, C) uint8 tensor; C is what the file stores: 1 gray, 2 gray +
 * alpha, 3 RGB, 4 RGBA (palettes expand; 16-bit samples become 8-bit). */
CH_API ch_status ch_image_load(const char *path, ch_tensor **result);
/* Writes an (H, W) or (H, W, C) uint8 tensor as PNG (C 1..4) or JPEG (C 1
 * or 3, quality 1..100) by the path's extension; atomic. */
CH_API ch_status ch_image_save(const char *path, const ch_tensor *t, int quality);

/* Decodes the bytes of a PNG or JPEG file (a 1-D uint8 CPU tensor) as
 * ch_image_load does; `what` names the image in errors. */
CH_API ch_status ch_image_decode(const ch_tensor *bytes, const char *what, ch_tensor **result);
/* The largest image (height * width) the readers decode, checked from the
 * header before anything is allocated; Pillow's 178,956,970 by default.
 * Sets it to `limit` (0: back to the default) and returns the old value;
 * a negative `limit` only returns the current one. */
CH_API int64_t ch_image_max_pixels(int64_t limit);

/* Zip archives read member by member (runtime/io/zip.c, the reader behind
 * npz): stored and deflate members, zip64, CRC-checked; a damaged archive is
 * CH_ERR_FORMAT naming the file.  `fn` names the caller in errors. */
typedef struct ch_zip ch_zip;
CH_API ch_status ch_zip_archive_open(const char *path, const char *fn, ch_zip **z);
CH_API int ch_zip_archive_count(const ch_zip *z);
/* Member i's name as stored (NULL when i is out of range). */
CH_API const char *ch_zip_archive_name(const ch_zip *z, int i);
/* Index of the member called name (the last of duplicates), or -1. */
CH_API int ch_zip_archive_find(const ch_zip *z, const char *name);
/* Member i's bytes as a new 1-D uint8 tensor. */
CH_API ch_status ch_zip_archive_read(ch_zip *z, int i, const char *fn, ch_tensor **result);
CH_API void ch_zip_archive_close(ch_zip *z);

/* Python pickles, the data subset (runtime/io/pickle.c), for
 * chainer.datasets.PickleDataset: protocols 2 to 5 holding None, bools,
 * ints (up to 64 bits), floats, str, bytes, tuples, lists, dicts and NumPy
 * arrays/scalars.  Any other global, call or BUILD is refused (CH_ERR_FORMAT
 * naming `what`, the offset and the opcode): no code from a file is run.
 * A parsed pickle is a set of values referred to by index; containers hold
 * indices (a dict holds key, value, key, value, ...), and the same index may
 * appear twice (Python's shared references, cycles included). */
typedef struct ch_pickle ch_pickle;
typedef enum ch_pickle_value_kind {
    CH_PICKLE_NONE = 0,
    CH_PICKLE_BOOL,
    CH_PICKLE_INT,
    CH_PICKLE_FLOAT,
    CH_PICKLE_STR,     /* UTF-8 text */
    CH_PICKLE_BYTES,
    CH_PICKLE_TUPLE,
    CH_PICKLE_LIST,
    CH_PICKLE_DICT,
    CH_PICKLE_TENSOR   /* a NumPy array (a CPU tensor) */
} ch_pickle_value_kind;
/* Parses one pickle at the start of bytes[0..n); *used gets its length
 * (the STOP opcode included).  `base` is added to offsets in errors (the
 * pickle's position in its file). */
CH_API ch_status ch_pickle_parse(const void *bytes, size_t n, size_t base, const char *what, ch_pickle **out,
                                 size_t *used);
CH_API void ch_pickle_free(ch_pickle *p);
CH_API int32_t ch_pickle_root(const ch_pickle *p);
/* The number of value slots (indices are below it). */
CH_API int32_t ch_pickle_size(const ch_pickle *p);
/* A ch_pickle_value_kind, or -1 for an index that is not a value. */
CH_API int ch_pickle_kind(const ch_pickle *p, int32_t v);
CH_API int64_t ch_pickle_int(const ch_pickle *p, int32_t v);      /* INT, BOOL (0/1) */
CH_API double ch_pickle_float(const ch_pickle *p, int32_t v);
/* STR and BYTES: the bytes (NUL-terminated, may hold NULs) and their count. */
CH_API const char *ch_pickle_string(const ch_pickle *p, int32_t v, size_t *len);
/* TUPLE and LIST: items; DICT: pairs. */
CH_API int64_t ch_pickle_length(const ch_pickle *p, int32_t v);
/* Item i of a TUPLE or LIST, or entry i of a DICT's key, value, ... list. */
CH_API int32_t ch_pickle_item(const ch_pickle *p, int32_t v, int64_t i);
/* TENSOR: borrowed (retain to keep it past ch_pickle_free). */
CH_API ch_tensor *ch_pickle_tensor(const ch_pickle *p, int32_t v);
/* A file of consecutive pickles (Chainer's PickleDataset): mapped read-only,
 * every pickle parsed once at open (a damaged file fails there). */
typedef struct ch_pickle_file ch_pickle_file;
CH_API ch_status ch_pickle_file_open(const char *path, ch_pickle_file **f);
CH_API int64_t ch_pickle_file_count(const ch_pickle_file *f);
/* Pickle i (0-based) of the file. */
CH_API ch_status ch_pickle_file_get(const ch_pickle_file *f, int64_t i, ch_pickle **out);
CH_API void ch_pickle_file_close(ch_pickle_file *f);

/* Caffe models (runtime/io/caffe.c): a binary .caffemodel (a NetParameter
 * message, its `layer` list or the V1 `layers` list) parsed with protobuf-c
 * from runtime/io/caffe.proto, for chainer.links.caffe.CaffeFunction.
 * Without protobuf-c at build time ch_caffe_available() is 0 and
 * ch_caffe_open fails with a message saying what to install. */
typedef struct ch_caffe_net ch_caffe_net;
/* The parameters of one layer, Caffe's defaults where a field is unset
 * (the *_param message absent: all defaults).  The pointers point into the
 * net and live until ch_caffe_close. */
typedef struct ch_caffe_params {
    /* convolution_param */
    int64_t conv_num_output, conv_bias_term, conv_group, conv_axis;
    int64_t conv_pad_h, conv_pad_w, conv_kernel_h, conv_kernel_w, conv_stride_h, conv_stride_w;
    int32_t conv_npad, conv_nkernel_size, conv_nstride, conv_ndilation;
    const uint32_t *conv_pad, *conv_kernel_size, *conv_stride, *conv_dilation;
    /* pooling_param: pool 0 MAX, 1 AVE, 2 STOCHASTIC */
    int64_t pool_method, pool_pad, pool_pad_h, pool_pad_w, pool_kernel_size, pool_kernel_h, pool_kernel_w;
    int64_t pool_stride, pool_stride_h, pool_stride_w, pool_global_pooling;
    /* inner_product_param */
    int64_t ip_num_output, ip_bias_term, ip_axis, ip_transpose;
    /* lrn_param: norm_region 0 ACROSS_CHANNELS, 1 WITHIN_CHANNEL */
    int64_t lrn_local_size, lrn_norm_region;
    double lrn_alpha, lrn_beta, lrn_k;
    double relu_negative_slope, dropout_ratio;
    /* eltwise_param: operation 0 PROD, 1 SUM, 2 MAX */
    int64_t eltwise_operation;
    int32_t eltwise_ncoeff;
    const float *eltwise_coeff;
    int64_t concat_axis, concat_concat_dim;
    int64_t softmax_axis, softmax_engine, sigmoid_engine;
    int64_t bn_use_global_stats;
    double bn_moving_average_fraction, bn_eps;
    int64_t scale_axis, scale_num_axes, scale_bias_term;
    int64_t reshape_axis, reshape_num_axes;
    int32_t reshape_ndim;
    const int64_t *reshape_dim;
    int64_t slice_axis, slice_has_axis, slice_slice_dim, slice_has_slice_dim;
    int32_t slice_npoint;
    const uint32_t *slice_point;
} ch_caffe_params;
CH_API int ch_caffe_available(void);
CH_API ch_status ch_caffe_open(const char *path, ch_caffe_net **net);
CH_API void ch_caffe_close(ch_caffe_net *net);
/* 1 when the layers come from the V1 `layers` list. */
CH_API int ch_caffe_is_v1(const ch_caffe_net *net);
CH_API int ch_caffe_layer_count(const ch_caffe_net *net);
/* Layer i's name and type ("Convolution"; V1 types by their current names,
 * unknown V1 types as "V1:<number>"); "" when unset, NULL out of range. */
CH_API const char *ch_caffe_layer_name(const ch_caffe_net *net, int i);
CH_API const char *ch_caffe_layer_type(const ch_caffe_net *net, int i);
CH_API int ch_caffe_layer_bottom_count(const ch_caffe_net *net, int i);
CH_API const char *ch_caffe_layer_bottom(const ch_caffe_net *net, int i, int k);
CH_API int ch_caffe_layer_top_count(const ch_caffe_net *net, int i);
CH_API const char *ch_caffe_layer_top(const ch_caffe_net *net, int i, int k);
CH_API int ch_caffe_layer_blob_count(const ch_caffe_net *net, int i);
/* Blob k of layer i as a new float32 tensor shaped by its BlobShape, else by
 * its legacy (num, channels, height, width), else 1-D; double_data is
 * converted.  A value count that does not match the shape is an error. */
CH_API ch_status ch_caffe_layer_blob(const ch_caffe_net *net, int i, int k, ch_tensor **result);
CH_API ch_status ch_caffe_layer_params(const ch_caffe_net *net, int i, ch_caffe_params *out);

/* Minibatch gathering (runtime/io/batch_loader.c).  Sources are CPU tensors
 * with equal row counts whose rows (axis 0) are contiguous; indices are 1-D,
 * 0-based.  results[k] gets rows `indices` of sources[k] (new tensors). */
CH_API ch_status ch_gather_rows(ch_tensor *const *sources, int n, const ch_tensor *indices, ch_tensor **results);
/* A pool of worker threads doing ch_gather_rows in the background: submit
 * allocates the results and queues the copy; wait hands them over (new
 * references) once copied, running the job itself if no worker took it yet;
 * free drops queued jobs and joins the threads. */
typedef struct ch_loader ch_loader;
CH_API ch_status ch_loader_new(int n_threads, ch_loader **result);
CH_API ch_status ch_loader_submit(ch_loader *l, ch_tensor *const *sources, int n, const ch_tensor *indices, int64_t *ticket);
CH_API ch_status ch_loader_wait(ch_loader *l, int64_t ticket, ch_tensor **results);
CH_API int ch_loader_pending(const ch_loader *l);
CH_API void ch_loader_free(ch_loader *l);

/* ---- neural-network kernels --------------------------------------------
 * Stateless forward and gradient kernels behind chainer.functions.  Each
 * family adds its declarations inside its own section below. */

/* nn: activations and softmax (functions/activation, functions/math) */
/* softmax (log_softmax when `log` is non-zero) of x along `axis`; float
 * dtypes; stable (the maximum is subtracted first). */
CH_API ch_status ch_softmax(const ch_tensor *x, int axis, int log, ch_tensor **result);
/* Gradient of softmax from its output y and upstream gy (same shape):
 *   log == 0:  gx = y * (gy - sum(gy * y, axis))
 *   log != 0:  gx = gy - exp(y) * sum(gy, axis)      (y = log_softmax(x)) */
CH_API ch_status ch_softmax_grad(const ch_tensor *y, const ch_tensor *gy, int axis, int log, ch_tensor **result);
/* Elementwise activation gradients from the output y and upstream gy. */
typedef enum ch_act_grad_op {
    CH_ACT_GRAD_OP_LIST(CH_OP_ENUM)
    CH_NACT_GRAD
} ch_act_grad_op;
CH_API ch_status ch_activation_grad(ch_act_grad_op op, const ch_tensor *y, const ch_tensor *gy, ch_tensor **result);
/* end nn: activation */

/* nn: array (functions/array: im2col, resize, spatial transformer, ...) */
/* end nn: array */

/* nn: convolution (functions/connection) */
/* chainer.config's cuDNN settings, mirrored here by lua/chainer/config.lua:
 * cudnn_deterministic, use_cudnn_tensor_core (0 'never', 1 'auto', 2
 * 'always') and autotune.  The convolution front doors hand them to their
 * kernel (ch_conv_geom); the GPU's picks its cuDNN algorithms by them. */
CH_API void ch_set_cudnn_config(int deterministic, int tensor_core, int autotune);
CH_API void ch_get_cudnn_config(int *deterministic, int *tensor_core, int *autotune);
/* The most workspace a cuDNN convolution algorithm may take, in bytes
 * (Chainer's cuda.get/set_max_workspace_size; 8 MiB unless set). */
CH_API void ch_set_cudnn_workspace_limit(int64_t bytes);
CH_API int64_t ch_get_cudnn_workspace_limit(void);
/* N-d convolution over nsp spatial axes (float32/float64, x and w of one
 * dtype): x (N, C, *in), w (Cout, C/groups, *k), b (Cout) or NULL gives
 * y (N, Cout, *out_size).  The caller picks out_size (cover_all). */
CH_API ch_status ch_conv_forward(const ch_tensor *x, const ch_tensor *w, const ch_tensor *b, int nsp, const int64_t *stride, const int64_t *pad, const int64_t *dilate, const int64_t *out_size, int groups, ch_tensor **result);
/* Gradient of ch_conv_forward with respect to x, i.e. the transposed
 * convolution: gy (N, Cout, *out), w (Cout, C/groups, *k) -> (N, C, *in_size). */
CH_API ch_status ch_conv_backward_data(const ch_tensor *gy, const ch_tensor *w, int nsp, const int64_t *stride, const int64_t *pad, const int64_t *dilate, const int64_t *in_size, int groups, ch_tensor **result);
/* Gradient with respect to w: x (N, C, *in), gy (N, Cout, *out) -> (Cout, C/groups, *ksize). */
CH_API ch_status ch_conv_backward_filter(const ch_tensor *x, const ch_tensor *gy, int nsp, const int64_t *stride, const int64_t *pad, const int64_t *dilate, const int64_t *ksize, int groups, ch_tensor **result);
/* Chainer's im2col: x (N, C, *in) -> (N, C, *k, *out_size); zero outside. */
CH_API ch_status ch_conv_im2col(const ch_tensor *x, int nsp, const int64_t *ksize, const int64_t *stride, const int64_t *pad, const int64_t *dilate, const int64_t *out_size, ch_tensor **result);
/* Its adjoint: col (N, C, *k, *out) summed back into (N, C, *in_size). */
CH_API ch_status ch_conv_col2im(const ch_tensor *col, int nsp, const int64_t *stride, const int64_t *pad, const int64_t *dilate, const int64_t *in_size, ch_tensor **result);
/* embed_id: y (x.shape..., D) = rows of w (V, D) picked by integer ids x;
 * ids equal to ignore_label (when has_ignore) give zero rows. */
CH_API ch_status ch_embed_id_forward(const ch_tensor *x, const ch_tensor *w, int has_ignore, int64_t ignore_label, ch_tensor **result);
/* Its weight gradient: gy rows scatter-added into a (n_vocab, D) zero tensor. */
CH_API ch_status ch_embed_id_backward(const ch_tensor *x, const ch_tensor *gy, int64_t n_vocab, int has_ignore, int64_t ignore_label, ch_tensor **result);
/* end nn: convolution */

/* nn: recurrent cells (functions/rnn, lstm) */
/* Chainer's LSTM cell (float32/float64, one dtype): x (B, 4U, *S) holds the
 * gate pre-activations interleaved per unit (x.reshape(B, U, 4, *S) gives
 * a, i, f, o); c_prev (Bc, U, *S) with Bc >= B.  c (Bc, U, *S) is
 * tanh(a)σ(i) + σ(f)c_prev on the first B rows and c_prev below;
 * h (B, U, *S) = σ(o)tanh(c). */
CH_API ch_status ch_lstm_forward(const ch_tensor *c_prev, const ch_tensor *x, ch_tensor **c, ch_tensor **h);
/* Its gradient from gc (Bc, U, *S) and gh (B, U, *S), either NULL for zero:
 * gc_prev (Bc, U, *S) and gx (B, 4U, *S). */
CH_API ch_status ch_lstm_backward(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc, const ch_tensor *gh, ch_tensor **gc_prev, ch_tensor **gx);
/* Second order: the gradients of <ggc_prev, gc_prev> + <ggx, gx> (the
 * outputs of ch_lstm_backward; ggc_prev/ggx NULL for zero) with respect to
 * c_prev, x, gc and gh (shaped like them; gc/gh get full shapes even when
 * passed NULL). */
CH_API ch_status ch_lstm_grad_grad(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc, const ch_tensor *gh, const ch_tensor *ggc_prev, const ch_tensor *ggx, ch_tensor **g_c_prev, ch_tensor **g_x, ch_tensor **g_gc, ch_tensor **g_gh);

/* Whole-sequence recurrent layers behind F.n_step_lstm/gru/rnn: one layer
 * and direction per call.  x (N, I) stacks the T steps' inputs time-major
 * (step t owns rows off_t .. off_t + batch[t], batch non-increasing,
 * batch[0] = B); h0, c0 (B, H) (c0 for LSTM only).  Weights are stacked
 * gate-blocked: wx (G*H, I), wh (G*H, H), bx, bh (G*H), with the gate
 * blocks LSTM (a, i, f, o), G = 4; GRU (r, z, h~), G = 3; RNN G = 1.
 * The input projections of all steps are one GEMM.  reverse runs the
 * steps from T-1 down to 0.  y (N, H) gets every step's output, hy/cy
 * (B, H) the final states, ws a workspace that the backward needs. */
typedef enum ch_rnn_cell {
    CH_RNN_CELL_LIST(CH_OP_ENUM)
    CH_NRNN_CELLS
} ch_rnn_cell;
CH_API ch_status ch_rnn_seq_forward(ch_rnn_cell cell, int reverse, int T, const int64_t *batch, const ch_tensor *x, const ch_tensor *h0, const ch_tensor *c0, const ch_tensor *wx, const ch_tensor *wh, const ch_tensor *bx, const ch_tensor *bh, ch_tensor **y, ch_tensor **hy, ch_tensor **cy, ch_tensor **ws);
/* Its gradient from gy (N, H), ghy, gcy (B, H) (each NULL for zero): gx
 * (N, I), gh0, gc0 (B, H) (gc0 for LSTM), gwx, gwh, gbx, gbh shaped like
 * the weights.  Any result pointer may be NULL when not wanted. */
CH_API ch_status ch_rnn_seq_backward(ch_rnn_cell cell, int reverse, int T, const int64_t *batch, const ch_tensor *x, const ch_tensor *wx, const ch_tensor *wh, const ch_tensor *ws, const ch_tensor *gy, const ch_tensor *ghy, const ch_tensor *gcy, ch_tensor **gx, ch_tensor **gh0, ch_tensor **gc0, ch_tensor **gwx, ch_tensor **gwh, ch_tensor **gbx, ch_tensor **gbh);
/* end nn: recurrent */

/* nn: losses and evaluation (functions/loss, functions/evaluation) */
/* Softmax cross-entropy over axis 1 of x (N, C, d1, ...) with integer
 * labels t (N, d1, ...), in one pass over the logits:
 *   loss[n, d] = -w[t] * log_softmax(x)[n, t, d]   (0 where t == ignore_label)
 * with w = class_weight (C,) or 1.  A label outside 0..C-1 that is not
 * ignore_label is an error.  grad (optional) gets
 * (softmax(x) - onehot(t)) * w[t] * valid, shaped like x; y (optional)
 * gets softmax(x); count (optional) the number of non-ignored labels. */
CH_API ch_status ch_softmax_cross_entropy(const ch_tensor *x, const ch_tensor *t, const ch_tensor *class_weight, int64_t ignore_label, ch_tensor **loss, ch_tensor **grad, ch_tensor **y, int64_t *count);
/* Connectionist temporal classification: xs[0..T) are (B, V) logits, t
 * (B, L) labels, input_length / label_length (B,) or NULL (T and L).
 * loss (B,) = -log p(t | x); grad (optional, (T, B, V)) is the gradient of
 * loss[b] with respect to the logits (zero past input_length). */
CH_API ch_status ch_ctc_loss(int T, ch_tensor *const *xs, const ch_tensor *t, const ch_tensor *input_length, const ch_tensor *label_length, int64_t blank, ch_tensor **loss, ch_tensor **grad);
/* Linear-chain CRF: cost (K, K) (cost[i][j]: label i followed by j), xs[t]
 * (B_t, K) with B_0 >= B_1 >= ... and ys[t] (B_t,) integer labels.
 * loss (B,) = logZ - score per sequence; gx (optional, (T, B, K), zero
 * past a sequence's end) and gcost (optional, (B, K, K)) are the gradients
 * of loss[b]. */
CH_API ch_status ch_crf1d(const ch_tensor *cost, int T, ch_tensor *const *xs, ch_tensor *const *ys, ch_tensor **loss, ch_tensor **gx, ch_tensor **gcost);
/* Viterbi decoding of the same model: path (T, B) int32 (-1 past a
 * sequence's end). */
CH_API ch_status ch_crf1d_argmax(const ch_tensor *cost, int T, ch_tensor *const *xs, ch_tensor **path);
/* end nn: loss */

/* nn: normalization, pooling, noise */
/* Pooling over the nsp (1..3) trailing axes of x (N, C, *in), float32 or
 * float64.  Window o covers cells o*stride - pad + (0 .. ksize-1) on each
 * axis; the caller picks out_size (Chainer's cover_all).  Max pooling
 * treats cells outside the input as -inf; y is (N, C, *out) and indexes
 * (optional, int32, same shape) the flat position of the first maximum
 * inside its window (0 .. prod(ksize)-1), as Chainer's return_indices. */
CH_API ch_status ch_max_pool_forward(const ch_tensor *x, int nsp, const int64_t *ksize, const int64_t *stride, const int64_t *pad, const int64_t *out_size, ch_tensor **y, ch_tensor **indexes);
/* Scatter-add by window positions: result (N, C, *in_size) is zero except
 * result[window cell indexes[o]] += g[o] (cells outside are dropped).  Max
 * pooling's backward and upsampling_2d's forward.  indexes: any integer dtype. */
CH_API ch_status ch_max_pool_scatter(const ch_tensor *g, const ch_tensor *indexes, int nsp, const int64_t *ksize, const int64_t *stride, const int64_t *pad, const int64_t *in_size, ch_tensor **result);
/* Its adjoint, a gather: result[o] = x[window cell indexes[o]] (0 outside
 * x), shaped like indexes (N, C, *out). */
CH_API ch_status ch_max_pool_gather(const ch_tensor *x, const ch_tensor *indexes, int nsp, const int64_t *ksize, const int64_t *stride, const int64_t *pad, ch_tensor **result);
/* Average pooling (same geometry, cells outside count as 0).  mode 0
 * divides by prod(ksize), 1 by the number of window cells inside x
 * (Chainer's pad_value=None), 2 not at all (window sums). */
CH_API ch_status ch_avg_pool_forward(const ch_tensor *x, int nsp, const int64_t *ksize, const int64_t *stride, const int64_t *pad, const int64_t *out_size, int mode, ch_tensor **result);
/* Its adjoint: every gy[o] (divided as in the forward) added to the cells
 * of window o, giving (N, C, *in_size).  (Also unpooling's forward.) */
CH_API ch_status ch_avg_pool_backward(const ch_tensor *gy, int nsp, const int64_t *ksize, const int64_t *stride, const int64_t *pad, const int64_t *in_size, int mode, ch_tensor **result);
/* Batch normalization of x viewed as (A, C, B) (a 3-d float32/float64
 * tensor): per c, the statistics of its A*B cells, mean and biased var,
 * inv_std = 1 / sqrt(var + eps), y = gamma[c] (x - mean) inv_std + beta[c]
 * (gamma / beta NULL: 1 / 0).  Layer and group normalization use it with
 * A = 1.  Every output is optional; mean, var, inv_std are (C). */
CH_API ch_status ch_batch_norm_forward(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *beta, double eps, ch_tensor **y, ch_tensor **mean, ch_tensor **var, ch_tensor **inv_std);
/* Its gradient from x, gamma (or NULL), gy (A, C, B) and the forward's
 * mean, inv_std: gbeta = sum gy, ggamma = sum gy xhat,
 * gx = gamma inv_std (gy - (xhat ggamma + gbeta) / (A B)).  Outputs optional. */
CH_API ch_status ch_batch_norm_backward(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *gy, const ch_tensor *mean, const ch_tensor *inv_std, ch_tensor **gx, ch_tensor **ggamma, ch_tensor **gbeta);
/* Local response normalization across axis 1 of x (N, C, ...):
 * unit_scale = k + alpha * sum_{|c'-c| <= n/2} x[c']^2, y = x unit_scale^-beta. */
CH_API ch_status ch_lrn_forward(const ch_tensor *x, int64_t n, double k, double alpha, double beta, ch_tensor **y, ch_tensor **unit_scale);
/* Its gradient: gx = gy unit_scale^-beta
 *                  - 2 alpha beta x sum_{window} (y gy / unit_scale). */
CH_API ch_status ch_lrn_backward(const ch_tensor *x, const ch_tensor *y, const ch_tensor *unit_scale, const ch_tensor *gy, int64_t n, double alpha, double beta, ch_tensor **gx);
/* ROI pooling of x (N, C, H, W) float32/float64 over rois (R, 4) float
 * (y_min, x_min, y_max, x_max, scaled by spatial_scale) of images
 * roi_indices (R, any integer dtype): y (R, C, outh, outw) is the max of
 * each bin (0 for an empty bin), argmax (int32) its flat h*W + w position
 * (-1 when empty).  Scatter (gradient, result (n, C, h, w)) and gather
 * (its adjoint, shaped like argmax) move values along argmax. */
CH_API ch_status ch_roi_max_pool_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh, int64_t outw, double spatial_scale, ch_tensor **y, ch_tensor **argmax);
CH_API ch_status ch_roi_max_pool_2d_scatter(const ch_tensor *g, const ch_tensor *roi_indices, const ch_tensor *argmax, int64_t n, int64_t h, int64_t w, ch_tensor **result);
CH_API ch_status ch_roi_max_pool_2d_gather(const ch_tensor *x, const ch_tensor *roi_indices, const ch_tensor *argmax, ch_tensor **result);
/* ROIAlign with average over sampling_h x sampling_w bilinear samples per
 * bin (<= 0: ceil(roi size / out size)); same argument layout.  Its
 * backward (the adjoint, linear in gy) gives (n, C, h, w). */
CH_API ch_status ch_roi_average_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh, int64_t outw, double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor **result);
CH_API ch_status ch_roi_average_align_2d_backward(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t n, int64_t h, int64_t w, double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor **result);
/* Chainer 7's roi_max_pooling_2d / roi_average_pooling_2d: same layout;
 * corners rounded, a ROI spans max(end - start, 1) cells (no +1), bins as
 * above.  Max: an empty bin gives -inf with argmax -1 (gradient: the
 * scatter / gather above).  Average: the mean of each bin (0 when empty);
 * its backward (the adjoint) spreads gy / bin size over the bin. */
CH_API ch_status ch_roi_max_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh, int64_t outw, double spatial_scale, ch_tensor **y, ch_tensor **argmax);
CH_API ch_status ch_roi_average_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh, int64_t outw, double spatial_scale, ch_tensor **result);
CH_API ch_status ch_roi_average_pooling_2d_backward(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t n, int64_t h, int64_t w, double spatial_scale, ch_tensor **result);
/* ROIAlign with max over the bilinear samples of each bin (sampling as
 * ch_roi_average_align_2d): y and argmax (int32, the sample's index
 * iy * grid_w + ix in its bin; -1 with y = -inf when no sample lies in the
 * image).  Scatter (gradient, (n, C, h, w)) spreads gy over the four
 * bilinear neighbours of each argmax sample; gather (its adjoint, shaped
 * like argmax) reads x there. */
CH_API ch_status ch_roi_max_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh, int64_t outw, double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor **y, ch_tensor **argmax);
CH_API ch_status ch_roi_max_align_2d_scatter(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices, const ch_tensor *argmax, int64_t n, int64_t h, int64_t w, double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor **result);
CH_API ch_status ch_roi_max_align_2d_gather(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, const ch_tensor *argmax, double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor **result);
/* end nn: normalization */

/* ---- optimizer updates (fused, one pass over each parameter) ---------- */
/* optimizers */
/* One pass over the parameter per call: `param` and every state tensor are
 * updated in place from `grad` (same shape; float16/32/64 on the CPU).
 * State tensors have the parameter's dtype and shape.  Scalars are Chainer's
 * hyperparameters, already resolved by the caller (e.g. Adam's alpha_t). */
CH_API ch_status ch_sgd_update(ch_tensor *param, const ch_tensor *grad, double lr);
/* v = momentum*v - lr*g; p += v */
CH_API ch_status ch_momentum_sgd_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *v, double lr, double momentum);
/* v = momentum*v - g; p += lr*v */
CH_API ch_status ch_corrected_momentum_sgd_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *v, double lr, double momentum);
/* v = momentum*v - lr*g; p += momentum^2*v - (1+momentum)*lr*g */
CH_API ch_status ch_nesterov_ag_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *v, double lr, double momentum);
/* h += g^2; p -= lr*g/(sqrt(h)+eps) */
CH_API ch_status ch_adagrad_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *h, double lr, double eps);
/* msg = rho*msg + (1-rho)*g^2; dx = sqrt((msdx+eps)/(msg+eps))*g;
 * msdx = rho*msdx + (1-rho)*dx^2; p -= dx */
CH_API ch_status ch_adadelta_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *msg, ch_tensor *msdx, double rho, double eps);
/* m += (1-beta1)(g-m); v += (1-beta2)(g^2-v); vhat = max(vhat, v) when vhat
 * is non-NULL (AMSGrad); step = alpha_t/(sqrt(vhat or v)+eps), clipped to
 * [lower, upper] when `bounded` (AdaBound); p = (1-eta*wd)*p - eta*step*m */
CH_API ch_status ch_adam_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *m, ch_tensor *v, ch_tensor *vhat, double alpha_t, double beta1, double beta2, double eps, double eta, double weight_decay_rate, int bounded, double lower, double upper);
/* ms = alpha*ms + (1-alpha)*g^2; p -= lr*g/(sqrt(ms)+eps), or
 * lr*g/sqrt(ms+eps) with eps_inside_sqrt */
CH_API ch_status ch_rmsprop_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *ms, double lr, double alpha, double eps, int eps_inside_sqrt);
/* n = alpha*n + (1-alpha)*g^2; gm = alpha*gm + (1-alpha)*g;
 * delta = momentum*delta - lr*g/sqrt(n - gm^2 + eps); p += delta */
CH_API ch_status ch_rmsprop_graves_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *n, ch_tensor *gm, ch_tensor *delta, double lr, double alpha, double momentum, double eps);
/* Simon Funk's SMORMS3 (states mem, g, g2; mem starts at 1). */
CH_API ch_status ch_smorms3_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *mem, ch_tensor *g, ch_tensor *g2, double lr, double eps);
/* M-SVAG: `beta_power` is beta^t, `rho` the variance factor for this step. */
CH_API ch_status ch_msvag_update(ch_tensor *param, const ch_tensor *grad, ch_tensor *m, ch_tensor *v, double lr, double beta, double beta_power, double rho, double eta, double weight_decay_rate);
/* Gradient hooks in one pass: g = clip(scale*(g + decay*d), lower, upper)
 * with d = param (decay_sign = 0) or sign(param) (1); param may be NULL
 * when decay is 0.  WeightDecay, Lasso, GradientClipping, hard clipping
 * and LARS are all this one kernel. */
CH_API ch_status ch_grad_transform(ch_tensor *grad, const ch_tensor *param, double scale, double decay, int decay_sign, double lower, double upper);
/* Sum of squares of x in float64 (fixed blocking: independent of threads). */
CH_API ch_status ch_sqnorm(const ch_tensor *x, double *result);
/* end optimizers */

/* ---- devices (CUDA backend, loaded at run time) ------------------------ */
/* Loads libchainlua_cuda if present; 0 when no backend or no GPU. */
CH_API int ch_cuda_load(const char *libpath);
CH_API int ch_cuda_available(void);
CH_API int ch_cuda_device_count(void);
CH_API const char *ch_cuda_info(void);        /* versions, or why not loaded */
CH_API ch_status ch_cuda_synchronize(int device);
/* User kernels (chainer.cuda.elementwise/reduce).  Compiles CUDA source with
 * NVRTC for arch "sm_XY" (CUBIN) or "compute_XY" (PTX); needs the backend and
 * NVRTC but no GPU.  *image is freed with ch_cuda_image_free. */
CH_API ch_status ch_cuda_compile(const char *src, const char *name, const char *arch, char **image, size_t *size);
CH_API void ch_cuda_image_free(void *image);
CH_API int ch_cuda_nvrtc_arch(void);          /* newest compute_XY NVRTC targets, 0 without it */
CH_API ch_status ch_cuda_kernel_load(int device, const void *image, const char *name, void **kernel);
/* 1-D launch on the device's default stream; args as for cudaLaunchKernel. */
CH_API ch_status ch_cuda_launch(int device, void *kernel, uint32_t blocks, uint32_t threads, uint32_t shmem,
                                void **args);
CH_API int ch_cuda_arch(int device);          /* compute capability major*10+minor, 0 if none */
/* Raw kernels (cuda.raw): a launch with a 3-D grid and block, shmem bytes of
 * dynamic shared memory, on the device's current stream. */
CH_API ch_status ch_cuda_launch_grid(int device, void *kernel, const uint32_t grid[3], const uint32_t block[3],
                                     uint32_t shmem, void **args);
/* NVTX ranges (CUDAProfileHook): need the backend, not a GPU; they do
 * nothing unless a profiler is attached. */
CH_API ch_status ch_cuda_nvtx_push(const char *name);
CH_API ch_status ch_cuda_nvtx_pop(void);

/* ---- NCCL: collectives between GPUs (multi-GPU, chainermn 'pure_nccl') --
 * libnccl.so.2 is loaded by the CUDA backend on first use ($CHAINLUA_NCCL_LIB
 * first); without it, or without a GPU, every call fails saying why.  A
 * communicator is an opaque handle; the collectives are queued on the
 * buffers' device's current stream and return without waiting.  Calls for
 * several communicators of one process go between group_start and
 * group_end (NCCL's ncclGroupStart/End). */
typedef enum ch_nccl_op { CH_NCCL_SUM, CH_NCCL_PROD, CH_NCCL_MAX, CH_NCCL_MIN, CH_NCCL_AVG } ch_nccl_op;
enum { CH_NCCL_ID_BYTES = 128 };
CH_API ch_status ch_nccl_version(int *version);    /* NCCL's code, e.g. 22105 for 2.21.5 */
CH_API ch_status ch_nccl_unique_id(uint8_t *id);    /* CH_NCCL_ID_BYTES bytes */
/* One rank of nranks (over processes; id from rank 0's ch_nccl_unique_id), on device. */
CH_API ch_status ch_nccl_comm_init_rank(void **comm, int nranks, const uint8_t *id, int rank, int device);
/* One communicator per device of devices[0..ndev) of this process (rank k on devices[k]). */
CH_API ch_status ch_nccl_comm_init_all(void **comms, int ndev, const int *devices);
CH_API ch_status ch_nccl_comm_destroy(void *comm);
CH_API ch_status ch_nccl_group_start(void);
CH_API ch_status ch_nccl_group_end(void);
/* recv := op over the ranks of send (send == recv: in place). */
CH_API ch_status ch_nccl_all_reduce(void *comm, const ch_tensor *send, ch_tensor *recv, int op);
/* On rank root, recv := op over the ranks of send; recv may be NULL elsewhere. */
CH_API ch_status ch_nccl_reduce(void *comm, const ch_tensor *send, ch_tensor *recv, int op, int root);
/* recv := root's send on every rank; send may be NULL off the root. */
CH_API ch_status ch_nccl_broadcast(void *comm, const ch_tensor *send, ch_tensor *recv, int root);

/* Streams and events (runtime/cuda/stream.c; docs/cuda.md "Streams and
 * events").  Each device has a current stream per host thread, its default
 * stream unless ch_cuda_stream_use chose another; the device's kernels,
 * library calls and copies are queued on it.  A NULL stream stands for a
 * device's default stream.  Host <-> device copies go through a small cache
 * of pinned (page-locked) host buffers: an upload returns once the host data
 * has been staged, a download once the data is on the host. */
typedef struct ch_cuda_stream ch_cuda_stream;
typedef struct ch_cuda_event ch_cuda_event;
CH_API ch_status ch_cuda_stream_create(int device, int non_blocking, ch_cuda_stream **stream);
/* Waits for the stream's work, then frees it (NULL: nothing). */
CH_API void ch_cuda_stream_free(ch_cuda_stream *stream);
CH_API int ch_cuda_stream_device(const ch_cuda_stream *stream);
/* The native handle (a cudaStream_t; NULL for the default stream). */
CH_API void *ch_cuda_stream_native(const ch_cuda_stream *stream);
CH_API ch_status ch_cuda_stream_use(int device, ch_cuda_stream *stream);
CH_API ch_cuda_stream *ch_cuda_stream_current(int device);
CH_API ch_status ch_cuda_stream_synchronize(int device, ch_cuda_stream *stream);
CH_API ch_status ch_cuda_stream_query(int device, ch_cuda_stream *stream, int *done);
/* Work queued on the stream from now waits until the event has happened. */
CH_API ch_status ch_cuda_stream_wait_event(int device, ch_cuda_stream *stream, const ch_cuda_event *event);
/* An event of `device`; interprocess needs disable_timing. */
CH_API ch_status ch_cuda_event_create(int device, int blocking, int disable_timing, int interprocess,
                                      ch_cuda_event **event);
CH_API void ch_cuda_event_free(ch_cuda_event *event);
CH_API int ch_cuda_event_device(const ch_cuda_event *event);
/* Records the event on a stream of the event's device. */
CH_API ch_status ch_cuda_event_record(ch_cuda_event *event, ch_cuda_stream *stream);
CH_API ch_status ch_cuda_event_synchronize(const ch_cuda_event *event);
CH_API ch_status ch_cuda_event_query(const ch_cuda_event *event, int *done);
/* Milliseconds between two recorded, completed timing events. */
CH_API ch_status ch_cuda_event_elapsed(const ch_cuda_event *start, const ch_cuda_event *end, float *ms);
/* The pinned staging buffers of a device: bytes held, idle buffers, and
 * freeing the idle ones. */
CH_API int64_t ch_cuda_pinned_bytes(int device);
CH_API int64_t ch_cuda_pinned_free_blocks(int device);
CH_API void ch_cuda_pinned_free_all(int device);

/* CH_FFI_END */

#ifdef __cplusplus
}
#endif
#endif /* CHAINLUA_H */

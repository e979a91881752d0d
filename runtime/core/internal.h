/*
 * internal.h -- helpers shared by the runtime's C files; not public API.
 *
 * Every kernel file includes this.  It gives:
 *  - error reporting (ch_fail) with a printf-style message,
 *  - tensor construction (ch_tensor_new*, ch_view_of),
 *  - shape helpers (broadcasting, axis normalisation, formatting),
 *  - a strided N-D iterator used by the generic (non-contiguous) paths,
 *  - typed element access (load/store a double at an element pointer).
 */
#ifndef CHAINLUA_INTERNAL_H
#define CHAINLUA_INTERNAL_H

#include "chainlua.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define CH_UNUSED(x) ((void)(x))
#define CH_INTERNAL __attribute__((visibility("hidden")))

/* Elementwise work below this many elements stays on one thread: OpenMP's
 * fork/join costs a few microseconds, more than small loops take. */
#define CH_PARALLEL_GRAIN 32768

/* for (header) { body } on OpenMP's threads when `cond` holds, else on this
 * thread without entering OpenMP at all.  Not `#pragma omp parallel for
 * if (cond)`: a region whose if() clause is false still builds a libgomp
 * team and ends with a futex syscall (~0.4 us), more than a small tensor's
 * arithmetic.  The body must not contain preprocessor directives.
 *   CH_PAR_FOR(n >= CH_PARALLEL_GRAIN, int64_t i = 0; i < n; i++, y[i] = 2 * x[i];);  */
#define CH_PAR_FOR(cond, header, ...) CH_PAR_FOR_SCHEDULED_(static, 1, cond, header, __VA_ARGS__)

/* CH_PAR_FOR with iterations handed out `chunk` at a time as threads come
 * free (schedule(dynamic, chunk)): for pieces of work on cores that do not
 * run at the same speed.  On the bench VM one vCPU runs the same kernels
 * 20-30 % slower than the other for seconds at a time (either one); with
 * static halves the faster thread waited in libgomp for 13.6 % of a
 * ResNet step's samples.  chunk 1 for few large pieces (the products of a
 * Winograd chunk); ch_dynamic_chunk(n) for many small ones (its planes,
 * batch normalization's channels), where handing out one at a time made
 * the two threads contend for libgomp's counter (tens of thousands of 4x4
 * planes a call).  Only for bodies whose results do not depend on which
 * thread runs them. */
#define CH_PAR_FOR_DYNAMIC(cond, chunk, header, ...)                                                             \
    CH_PAR_FOR_SCHEDULED_(CH_DYNAMIC_CHUNKS_, chunk, cond, header, __VA_ARGS__)
#define CH_DYNAMIC_CHUNKS_ dynamic, ch_chunk_

#define CH_PRAGMA_(text) _Pragma(#text)
#define CH_PAR_FOR_SCHEDULED_(sched, chunk, cond, header, ...)              \
    do {                                                                    \
        int ch_team_ = (cond) ? ch_threads() : 1;                           \
        if (ch_team_ > 1) {                                                 \
            int ch_chunk_ = (int)(chunk);                                   \
            (void)ch_chunk_;                                                \
            CH_PRAGMA_(omp parallel for schedule(sched) num_threads(ch_team_)) \
            for (header) { __VA_ARGS__ }                                    \
        } else {                                                            \
            for (header) { __VA_ARGS__ }                                    \
        }                                                                   \
    } while (0)

/* *flag = 1, atomically when called on OpenMP's threads: how a CH_PAR_FOR
 * body reports a failure (it cannot hold an `omp atomic` directive). */
static inline void ch_flag_set(int *flag) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
    *flag = 1;
}

/* ---- errors ------------------------------------------------------------ */
/* Records a message for ch_last_error() and returns `st`. */
ch_status ch_fail(ch_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Formats a shape as "(2, 3)" into buf (returns buf). */
const char *ch_shape_str(char *buf, size_t n, int nd, const int64_t *dim);
#define CH_SHAPE_BUF 256

/* Propagates a failing status. */
#define CH_TRY(expr)                     \
    do {                                 \
        ch_status ch_try_st_ = (expr);   \
        if (ch_try_st_ != CH_OK)         \
            return ch_try_st_;           \
    } while (0)

/* Checks that a tensor argument is usable (non-NULL, not freed).  Inline,
 * since every front door checks each operand: the failure's message is
 * built out of line (error.c). */
ch_status ch_bad_tensor(const ch_tensor *t, const char *fn, const char *arg);
static inline ch_status ch_check_tensor(const ch_tensor *t, const char *fn, const char *arg) {
    return t && (t->data || t->numel <= 0) ? CH_OK : ch_bad_tensor(t, fn, arg);
}
/* For kernels that exist only on the CPU so far. */
ch_status ch_check_cpu(const ch_tensor *t, const char *fn, const char *arg);
#define CH_CHECK_ARG(t, fn, arg) CH_TRY(ch_check_tensor((t), (fn), (arg)))
#define CH_CHECK_CPU(t, fn, arg)             \
    do {                                     \
        CH_TRY(ch_check_tensor((t), (fn), (arg))); \
        CH_TRY(ch_check_cpu((t), (fn), (arg)));    \
    } while (0)

/* ---- storage and tensors ----------------------------------------------- */
struct ch_storage {
    void *data;
    size_t nbytes;
    int device;
    int owns;         /* CH_OWNS_*: who frees the data, and how (storage.c) */
    int refcount;
    int held;         /* CH_OWNS_HEADER: 1 while nbytes count in the live bytes */
};
enum { CH_OWNS_BORROWED = 0, CH_OWNS_BLOCK = 1, CH_OWNS_INLINE = 2, CH_OWNS_HEADER = 3 };

ch_storage *ch_storage_new(size_t nbytes, int device);
void ch_storage_retain(ch_storage *s);
void ch_storage_release(ch_storage *s);
/* Blocks up to CH_SMALL_BLOCK_MAX bytes (tensor headers, small storages)
 * from a cache of free lists (small_blocks.c); free with the same size. */
#define CH_SMALL_BLOCK_MAX 1024
void *ch_small_alloc(size_t nbytes);
void ch_small_free(void *p, size_t nbytes);
void ch_small_blocks_release(void);
size_t ch_small_blocks_cached(void);
/* CPU allocator with a cache of large blocks (see storage.c). */
void *ch_cpu_alloc(size_t nbytes);
void ch_cpu_free(void *p, size_t nbytes);
/* Whether the block caches are on: off under AddressSanitizer and with
 * CHAINLUA_NO_BLOCK_CACHE set, so that memory checkers see every block
 * (small_blocks.c). */
bool ch_block_cache_enabled(void);
/* Fresh cache blocks of up to CH_CARVE_MAX bytes carved from chunks on
 * huge pages (chunks.c); all of these run under storage.c's cache lock. */
#define CH_CARVE_MAX ((size_t)16 << 20)
bool ch_chunk_carves(size_t rounded);       /* blocks of this class size come from chunks */
void *ch_chunk_carve(size_t rounded);       /* NULL when out of memory */
void ch_chunks_count_begin(void);           /* counting which chunks are idle: */
void ch_chunks_count_cached(const void *block); /*   each carved block in the cache once */
bool ch_chunk_idle(const void *block);      /*   all of its chunk's blocks were counted */
size_t ch_chunks_unmap_idle(void);          /*   unmaps the idle chunks; returns how many */

/* The widest kernels CHAINLUA_CPU allows: 2 AVX-512, 1 AVX2 + FMA, 0 the
 * build's baseline (cpu_cap.c).  The two tests below include it. */
int ch_cpu_cap(void);

#if defined(__x86_64__) && defined(__GNUC__)
/* The CPU runs AVX2 and FMA: the target of the hand-vectorised float32
 * kernels (cpu/conv_direct.h, conv_winograd.h, gemm_skinny.h). */
static inline bool ch_cpu_avx2_fma(void) {
    static int ok = -1;
    if (ok < 0) {
        __builtin_cpu_init();
        ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && ch_cpu_cap() >= 1;
    }
    return ok;
}
/* ... and AVX-512 (the batch-1 rows of cpu/gemv_rows.h, cpu/sgemm512.c,
 * the Winograd transforms, batch normalization). */
static inline bool ch_cpu_avx512f(void) {
    static int ok = -1;
    if (ok < 0) {
        __builtin_cpu_init();
        ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") && ch_cpu_cap() >= 2;
    }
    return ok;
}
#endif

/* The last step of a function that makes one tensor: on success hand t
 * over to *result, on failure release it.  Returns st. */
static inline ch_status ch_hand_over(ch_status st, ch_tensor *t, ch_tensor **result) {
    if (st != CH_OK) {
        ch_tensor_release(t);
        return st;
    }
    *result = t;
    return CH_OK;
}
/* A CPU kernel written once per float dtype, as NAME_float and NAME_double
 * with one signature (the element data as void pointers): the instance for
 * dtype dt (CH_FLOAT32 or CH_FLOAT64), called as
 *   CH_FLOAT_KERNEL(x->dt, roi_avg)(ch_base(x), ..., y->data); */
#define CH_FLOAT_KERNEL(dt, NAME) ((dt) == CH_FLOAT32 ? NAME##_float : NAME##_double)

/* A new C-contiguous tensor with fresh, uninitialised storage. */
ch_status ch_tensor_new(ch_dtype dt, int nd, const int64_t *dim, int device, ch_tensor **out);
/* A new tensor shaped like x (C-contiguous), optionally with another dtype. */
ch_status ch_tensor_new_like(const ch_tensor *x, ch_dtype dt, ch_tensor **out);
/* A new view struct onto x's storage with the given geometry. */
ch_status ch_view_of(const ch_tensor *x, int nd, const int64_t *dim, const int64_t *stride, int64_t offset, ch_tensor **out);
/* A shape from the user: 0..CH_MAX_DIMS dims, none negative, and a size in
 * bytes that fits in 64 bits; errors name fn. */
ch_status ch_check_shape(int nd, const int64_t *dim, const char *fn);
/* Fills stride[] with C-contiguous strides for dim[]; returns numel. */
int64_t ch_contiguous_strides(int nd, const int64_t *dim, int64_t *stride);
int64_t ch_numel(int nd, const int64_t *dim);

/* Bytes per element of each dtype, in CH_DTYPE_LIST's order: ch_dtype_size
 * (dtype.c) reads it, and so does ch_base below, inline, because every op
 * result takes a few element pointers and a call through the library's
 * exported ch_dtype_size costs more than the lookup. */
static const unsigned char ch_dtype_bytes[] = {1, 1, 1, 2, 4, 8, 2, 4, 8};
_Static_assert(sizeof ch_dtype_bytes == CH_NDTYPES, "dtype sizes: one per entry of CH_DTYPE_LIST");

/* Element pointer of the first element (data + offset*itemsize). */
static inline char *ch_base(const ch_tensor *t) {
    int64_t z = (unsigned)t->dt < CH_NDTYPES ? ch_dtype_bytes[t->dt] : 0;
    return (char *)t->data + t->offset * z;
}

/* ---- shapes ------------------------------------------------------------ */
/* Normalises axis into [0, nd); errors name fn. */
ch_status ch_norm_axis(int *axis, int nd, const char *fn);
/* Broadcast shape of a and b into out_dim/out_nd (NumPy rules). */
ch_status ch_broadcast_shape(int nda, const int64_t *da, int ndb, const int64_t *db,
                             int *out_nd, int64_t *out_dim, const char *fn);
/* Strides of x seen with shape (nd, dim): 0 on broadcast axes.  x must be
 * broadcastable to that shape. */
void ch_broadcast_strides(const ch_tensor *x, int nd, const int64_t *dim, int64_t *stride);
/* Same shape on both tensors. */
bool ch_same_shape(const ch_tensor *a, const ch_tensor *b);
/* ch_is_contiguous inline, for the per-op fast paths (the exported one is
 * a call through the PLT). */
static inline bool ch_contig(const ch_tensor *t) {
    int64_t expect = 1;
    for (int i = t->nd - 1; i >= 0; i--) {
        if (t->dim[i] != 1 && t->stride[i] != expect)
            return false;
        expect *= t->dim[i];
    }
    return true;
}
/* t has the dtype, shape and strides of ref, a tensor the caller knows to be
 * C-contiguous, so t is C-contiguous too: the per-node fast paths' test
 * (ops/elementwise.c, ops/addmul.c) in one pass and no calls.  Contiguous
 * tensors that differ only in the strides of size-1 axes fail it and take
 * the general path, which gives the same values. */
static inline bool ch_same_dense_layout(const ch_tensor *t, const ch_tensor *ref) {
    if (t->dt != ref->dt || t->nd != ref->nd)
        return false;
    for (int i = 0; i < t->nd; i++)
        if (t->dim[i] != ref->dim[i] || t->stride[i] != ref->stride[i])
            return false;
    return true;
}

/* ---- strided iteration ------------------------------------------------- */
/*
 * Iterates an N-D index space for up to 4 operands with their own strides
 * (in elements).  Dimensions that are contiguous for all operands are merged
 * first, so the innermost run is as long as possible; callers loop over
 * `inner` elements with stride inner_stride[k] per operand.
 */
#define CH_ITER_MAX_OPS 4
typedef struct ch_iter {
    int nops;
    int nd;                                   /* outer dims after merging (excludes inner) */
    int64_t inner;                            /* length of the innermost run */
    int64_t inner_stride[CH_ITER_MAX_OPS];
    int64_t dim[CH_MAX_DIMS];
    int64_t stride[CH_ITER_MAX_OPS][CH_MAX_DIMS];
    int64_t outer_count;                      /* product of dim[0..nd) */
} ch_iter;
/* strides[k] points to nd strides for operand k. */
void ch_iter_init(ch_iter *it, int nd, const int64_t *dim, int nops, const int64_t *const *strides);
/* Element offsets (in elements) of outer position `pos` for every operand. */
void ch_iter_offsets(const ch_iter *it, int64_t pos, int64_t *offs);

/* ---- typed element access (slow path; fast paths use typed loops) ------ */
double ch_load(ch_dtype dt, const char *p);
void ch_store(ch_dtype dt, char *p, double v);
int64_t ch_load_i64(ch_dtype dt, const char *p);
void ch_store_i64(ch_dtype dt, char *p, int64_t v);

/* Casting copy between same-shaped CPU tensors of any dtype and layout. */
ch_status ch_cpu_copy(ch_tensor *dst, const ch_tensor *src);
/* x itself (retained) when it already has dtype dt and is contiguous,
 * otherwise a contiguous cast copy.  Kernels use it to normalise inputs. */
ch_status ch_contiguous_as(const ch_tensor *x, ch_dtype dt, ch_tensor **out);

/* Threads: the number a parallel region should use now: the user's count,
 * or one while the busy-neighbour guard holds (threads.c).  Call it on the
 * way into parallel work and pass it as num_threads(...). */
int ch_threads(void);

/* CH_PAR_FOR_DYNAMIC's chunk for n small, equal pieces: about 16 chunks per
 * thread, so the last ones even out unequal cores. */
static inline int ch_dynamic_chunk(int64_t n) {
    int64_t c = n / (16 * (int64_t)ch_threads());
    return c < 1 ? 1 : c > (1 << 30) ? (1 << 30) : (int)c;
}

#endif

/* tensor.c -- tensor lifetime, creation and element access. */
#include "local.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ch_status ch_check_shape(int nd, const int64_t *dim, const char *fn) {
    if (nd < 0 || nd > CH_MAX_DIMS)
        return ch_fail(CH_ERR_ARG, "%s: %d dimensions requested (expected 0..%d)", fn, nd, CH_MAX_DIMS);
    for (int i = 0; i < nd; i++)
        if (dim[i] < 0)
            return ch_fail(CH_ERR_ARG, "%s: negative dimension %lld at axis %d", fn, (long long)dim[i], i);
    /* The element count, byte size and strides are int64 products: a shape
     * like (1e12, 1e12) would overflow them (UB) and ask malloc for garbage.
     * Zero dims are skipped so the strides of an empty tensor stay exact. */
    int64_t n = 1;
    for (int i = 0; i < nd; i++) {
        if (dim[i] != 0 && (__builtin_mul_overflow(n, dim[i], &n) || n > INT64_MAX / 16)) {
            char sh[CH_SHAPE_BUF];
            return ch_fail(CH_ERR_ARG, "%s: shape %s is too big (its size in bytes does not fit in 64 bits)", fn,
                           ch_shape_str(sh, sizeof sh, nd, dim));
        }
    }
    return CH_OK;
}

static ch_status check_dtype(ch_dtype dt, const char *fn) {
    if ((unsigned)dt >= CH_NDTYPES)
        return ch_fail(CH_ERR_DTYPE, "%s: invalid dtype code %d", fn, (int)dt);
    return CH_OK;
}

/* A zeroed header with one reference, counted live: from the small-block
 * cache, `extra` bytes more for what shares its block. */
static inline __attribute__((always_inline)) ch_tensor *alloc_struct(ch_local *l, size_t extra) {
    ch_tensor *t = ch_small_alloc_at(l, sizeof *t + extra);
    if (t) {
        memset(t, 0, sizeof *t);
        t->refcount = 1;
        ch_count_tensors(l, 1);
    }
    return t;
}

/* Small CPU tensors are one block: the header, then the storage, then the
 * data (16-byte aligned as malloc's, like every small storage's: the kernels
 * assume no more), so a new one is one allocation and freeing it is one
 * free.  The storage counts its users and its header's life (storage.c). */
#define HEADER_BLOCK_DATA_MAX (CH_SMALL_BLOCK_MAX - sizeof(ch_tensor) - sizeof(ch_storage))
_Static_assert(sizeof(ch_tensor) % 16 == 0 && sizeof(ch_storage) % 16 == 0, "header block data alignment");

static bool in_header_block(const ch_tensor *t) {
    /* only a storage inside t's own block can sit right after the header */
    return t->storage == (const ch_storage *)(t + 1) && t->storage->owns == CH_OWNS_HEADER;
}

/* ch_tensor_new once dtype, shape and device are known to be valid. */
static ch_status new_tensor(ch_dtype dt, int nd, const int64_t *dim, int device, ch_tensor **out) {
    ch_local *l = ch_here();
    int64_t numel = 1;
    for (int i = 0; i < nd; i++)
        numel *= dim[i];
    size_t nbytes = (size_t)numel * ch_dtype_bytes[dt];
    bool one_block = device == CH_CPU && nbytes <= HEADER_BLOCK_DATA_MAX;
    ch_tensor *t = alloc_struct(l, one_block ? sizeof(ch_storage) + nbytes : 0);
    if (!t)
        return ch_fail(CH_ERR_MEMORY, "out of memory allocating a tensor header");
    t->dt = dt;
    t->dev = device;
    t->nd = nd;
    for (int i = 0; i < nd; i++)
        t->dim[i] = dim[i];
    t->numel = ch_contiguous_strides(nd, dim, t->stride);
    if (one_block) {
        ch_storage *s = (ch_storage *)(t + 1);
        s->data = s + 1;
        s->nbytes = nbytes;
        s->device = device;
        s->owns = CH_OWNS_HEADER;
        s->refcount = 3;          /* the header as user (2) and its life (1) */
        s->held = 1;
        ch_count_cpu_bytes(l, (int64_t)nbytes);
        t->storage = s;
        t->data = s->data;
        *out = t;
        return CH_OK;
    }
    t->storage = ch_storage_new_at(l, nbytes, device);
    if (!t->storage) {
        char s[CH_SHAPE_BUF];
        ch_tensor_release(t);
        return ch_fail(CH_ERR_MEMORY, "out of memory allocating %zu bytes for a %s tensor of shape %s on %s",
                       nbytes, ch_dtype_name(dt), ch_shape_str(s, sizeof s, nd, dim),
                       device == CH_CPU ? "the CPU" : "the GPU");
    }
    t->data = t->storage->data;
    *out = t;
    return CH_OK;
}

ch_status ch_tensor_new(ch_dtype dt, int nd, const int64_t *dim, int device, ch_tensor **out) {
    CH_TRY(check_dtype(dt, "empty"));
    CH_TRY(ch_check_shape(nd, dim, "empty"));
    if (device != CH_CPU && !ch_cuda_available())
        return ch_fail(CH_ERR_DEVICE, "cannot allocate on cuda:%d: the CUDA backend is not available (%s)", device,
                       ch_cuda_info());
    return new_tensor(dt, nd, dim, device, out);
}

ch_status ch_tensor_new_like(const ch_tensor *x, ch_dtype dt, ch_tensor **out) {
    /* x's shape and device are valid: the per-op results skip their checks */
    CH_TRY(check_dtype(dt, "empty"));
    return new_tensor(dt, x->nd, x->dim, x->dev, out);
}

ch_status ch_view_of(const ch_tensor *x, int nd, const int64_t *dim, const int64_t *stride, int64_t offset,
                     ch_tensor **out) {
    ch_tensor *t = alloc_struct(ch_here(), 0);
    if (!t)
        return ch_fail(CH_ERR_MEMORY, "out of memory allocating a tensor header");
    t->dt = x->dt;
    t->dev = x->dev;
    t->nd = nd;
    for (int i = 0; i < nd; i++) {
        t->dim[i] = dim[i];
        t->stride[i] = stride[i];
    }
    t->numel = ch_numel(nd, dim);
    t->offset = offset;
    t->data = x->data;
    t->storage = x->storage;
    ch_storage_retain(t->storage);
    *out = t;
    return CH_OK;
}

void ch_tensor_retain(ch_tensor *t) {
    if (t)
        __atomic_add_fetch(&t->refcount, 1, __ATOMIC_RELAXED);
}

void ch_tensor_release(ch_tensor *t) {
    /* The last reference needs no atomic decrement (as ch_storage_release);
     * the count is still zeroed, for host.c's check of released tensors. */
    if (!t || (__atomic_load_n(&t->refcount, __ATOMIC_ACQUIRE) != 1 &&
               __atomic_sub_fetch(&t->refcount, 1, __ATOMIC_ACQ_REL) != 0))
        return;
    t->refcount = 0;
    ch_local *l = ch_here();
    ch_count_tensors(l, -1);
    if (in_header_block(t)) {
        /* the header goes, and its use of the data unless freed before;
         * with no view left (the usual case) that is the whole block */
        ch_storage *s = t->storage;
        if (t->data && __atomic_load_n(&s->refcount, __ATOMIC_ACQUIRE) == 3) {
            ch_count_cpu_bytes(l, -(int64_t)s->nbytes);
            ch_small_free_at(l, t, sizeof *t + sizeof *s + s->nbytes);
        } else {
            ch_header_block_drop(l, s, t->data ? 3 : 1);
        }
        return;
    }
    ch_storage_release_at(l, t->storage);
    ch_small_free_at(l, t, sizeof *t);
}

void ch_tensor_free_storage(ch_tensor *t) {
    if (!t || !t->storage)
        return;
    if (in_header_block(t)) {
        /* the storage stays in the block until the header goes: only the
         * header's use of it ends (once) */
        if (t->data) {
            t->data = NULL;
            ch_header_block_drop(ch_here(), t->storage, 2);
        }
        return;
    }
    ch_storage_release(t->storage);
    t->storage = NULL;
    t->data = NULL;
}

int ch_is_contiguous(const ch_tensor *t) { return ch_contig(t); }

void *ch_tensor_ptr(const ch_tensor *t) { return t->data ? ch_base(t) : NULL; }

/* ---- creation ---------------------------------------------------------- */
ch_status ch_empty(ch_dtype dt, int ndim, const int64_t *shape, int device, ch_tensor **result) {
    return ch_tensor_new(dt, ndim, shape, device, result);
}

ch_status ch_from_buffer(ch_dtype dt, int ndim, const int64_t *shape, const void *data, ch_tensor **result) {
    ch_tensor *t;
    CH_TRY(ch_tensor_new(dt, ndim, shape, CH_CPU, &t));
    if (t->numel > 0) {
        if (!data) {
            ch_tensor_release(t);
            return ch_fail(CH_ERR_ARG, "from_buffer: data is NULL");
        }
        memcpy(t->data, data, (size_t)t->numel * ch_dtype_size(dt));
    }
    *result = t;
    return CH_OK;
}

ch_status ch_wrap_buffer(ch_dtype dt, int ndim, const int64_t *shape, void *data, ch_tensor **result) {
    CH_TRY(check_dtype(dt, "wrap_buffer"));
    CH_TRY(ch_check_shape(ndim, shape, "wrap_buffer"));
    ch_tensor *t = alloc_struct(ch_here(), 0);
    ch_storage *s = ch_small_alloc(sizeof *s);
    if (!t || !s) {
        ch_small_free(s, sizeof *s);
        ch_tensor_release(t);
        return ch_fail(CH_ERR_MEMORY, "wrap_buffer: out of memory");
    }
    t->dt = dt;
    t->dev = CH_CPU;
    t->nd = ndim;
    memcpy(t->dim, shape, sizeof(int64_t) * (size_t)ndim);
    t->numel = ch_contiguous_strides(ndim, shape, t->stride);
    s->data = data;
    s->nbytes = (size_t)t->numel * ch_dtype_size(dt);
    s->device = CH_CPU;
    s->owns = CH_OWNS_BORROWED;
    s->refcount = 1;
    s->held = 0;
    t->storage = s;
    t->data = data;
    *result = t;
    return CH_OK;
}

static ch_status flat_ptr(const ch_tensor *t, int64_t pos, char **p, const char *fn) {
    /* CPU only: one element through a host pointer (Lua's t:get moves device tensors to the CPU first) */
    CH_CHECK_CPU(t, fn, "t");
    if (pos < 0 || pos >= t->numel)
        return ch_fail(CH_ERR_ARG, "%s: position %lld is out of range for a tensor of %lld elements", fn,
                       (long long)pos, (long long)t->numel);
    int64_t off = 0;
    for (int i = t->nd - 1; i >= 0; i--) {
        off += (pos % t->dim[i]) * t->stride[i];
        pos /= t->dim[i];
    }
    *p = ch_base(t) + off * (int64_t)ch_dtype_size((ch_dtype)t->dt);
    return CH_OK;
}

ch_status ch_get_flat(const ch_tensor *t, int64_t pos, double *value) {
    char *p = NULL;
    CH_TRY(flat_ptr(t, pos, &p, "get"));
    *value = ch_load((ch_dtype)t->dt, p);
    return CH_OK;
}

ch_status ch_get_flat_i64(const ch_tensor *t, int64_t pos, int64_t *value) {
    char *p = NULL;
    CH_TRY(flat_ptr(t, pos, &p, "get"));
    *value = ch_load_i64((ch_dtype)t->dt, p);
    return CH_OK;
}

ch_status ch_set_flat(ch_tensor *t, int64_t pos, double value) {
    char *p = NULL;
    CH_TRY(flat_ptr(t, pos, &p, "set"));
    ch_store((ch_dtype)t->dt, p, value);
    return CH_OK;
}

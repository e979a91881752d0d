/*
 * index.cu -- integer and boolean indexing on the GPU, item-parallel with
 * cu_each (launch.cuh), with the semantics of runtime/cpu/index.c:
 *   - wrap_indices: one item per index; an index out of range records the
 *     smallest such position with an atomic minimum (the host reads it back);
 *   - take, take_along_axis: one item per output element, raw element moves;
 *   - scatter_add(_along_axis): one item per target line.  The axes of the
 *     indexed shape split into the target's own axes (items: each writes
 *     target elements no other item writes) and the axes the target does
 *     not move along (the indexed and broadcast ones: the item loops over
 *     them in C order).  So there are no atomics and every target element
 *     receives its terms in the CPU's order: the same bits as the CPU for
 *     every dtype, deterministic.  The cost: a scatter whose target has few
 *     lines (e.g. (V, D) rows gathered along axis 0 -> D items) runs each
 *     line's whole loop on one thread; float32/float64 atomics over every
 *     element would be faster there but order-dependent;
 *   - count_nonzero, masked_select, nonzero: one item per chunk of CU_CHUNK
 *     elements counts its nonzeros; one item makes the counts an exclusive
 *     prefix sum (serial over numel / CU_CHUNK chunks); each chunk then
 *     writes its results from its start.  Results are exact and in C order.
 *
 * Compiled; the per-item code is tested emulated on the host against the
 * CPU (tests/cuda/test_index.cu).  NOT yet run on a GPU.
 */
#include <type_traits>

#include "backend.h"
#include "convert.cuh"
#include "launch.cuh"

/* A position of a cu_space walked in C order, with the operands' offsets. */
struct cu_walker {
    int64_t c[CH_MAX_DIMS];
    int64_t o[3];
    CU_HD void start(const cu_space &s, int64_t i) {
        o[0] = o[1] = o[2] = 0;
        for (int k = s.nd - 1; k >= 0; k--) {
            int64_t d = s.dim[k];
            c[k] = i % d;
            i /= d;
            for (int j = 0; j < 3; j++)
                o[j] += c[k] * s.st[j][k];
        }
    }
    CU_HD void next(const cu_space &s) {
        for (int k = s.nd - 1; k >= 0; k--) {
            for (int j = 0; j < 3; j++)
                o[j] += s.st[j][k];
            if (++c[k] < s.dim[k])
                return;
            for (int j = 0; j < 3; j++)
                o[j] -= s.st[j][k] * s.dim[k];
            c[k] = 0;
        }
    }
};

CU_HD int64_t space_numel(const cu_space &s) {
    int64_t n = 1;
    for (int k = 0; k < s.nd; k++)
        n *= s.dim[k];
    return n;
}

/* Unsigned integer of z bytes: element moves copy raw bits. */
template <size_t Z> struct raw_of;
template <> struct raw_of<1> { typedef uint8_t T; };
template <> struct raw_of<2> { typedef uint16_t T; };
template <> struct raw_of<4> { typedef uint32_t T; };
template <> struct raw_of<8> { typedef unsigned long long T; };

/* Calls f((U *)0) with the unsigned type of z bytes. */
template <typename F> static ch_status by_size(size_t z, F &&f) {
    switch (z) {
    case 1: return f((uint8_t *)0);
    case 2: return f((uint16_t *)0);
    case 4: return f((uint32_t *)0);
    default: return f((unsigned long long *)0);
    }
}

/* ---- wrap_indices --------------------------------------------------------- */
struct wrap_body {
    int64_t *idx;
    int64_t len;
    unsigned long long *first;
    CU_HD void operator()(int64_t i) const {
        int64_t v = idx[i];
        if (v < -len || v >= len) {
#ifdef __CUDA_ARCH__
            atomicMin(first, (unsigned long long)i);
#else
            if ((unsigned long long)i < *first)
                *first = (unsigned long long)i;
#endif
        } else if (v < 0) {
            idx[i] = v + len;
        }
    }
};

extern "C" ch_status cu_wrap_launch(int64_t *idx, int64_t numel, int64_t len, unsigned long long *first) {
    return cu_each("wrap_indices", numel, wrap_body{idx, len, first});
}

/* ---- take ------------------------------------------------------------------ */
template <typename U> struct take_body {
    const U *x;
    const int64_t *idx;
    U *out;
    int64_t n, ni, post;
    CU_HD void operator()(int64_t o) const {
        int64_t r = o % post, p = o / post;
        int64_t j = p % ni, i = p / ni;
        out[o] = x[(i * n + idx[j]) * post + r];
    }
};

extern "C" ch_status cu_take_launch(size_t z, const char *x, const int64_t *idx, char *out, int64_t count, int64_t n,
                                    int64_t ni, int64_t post) {
    return by_size(z, [&](auto *u) {
        typedef typename std::remove_pointer<decltype(u)>::type U;
        return cu_each("take", count, take_body<U>{(const U *)x, idx, (U *)out, n, ni, post});
    });
}

template <typename U> struct take_along_body {
    cu_space s;
    const U *x;
    const int64_t *idx;
    int64_t xax;
    U *out;
    CU_HD void operator()(int64_t o) const {
        cu_walker w;
        w.start(s, o);
        out[o] = x[w.o[0] + idx[w.o[1]] * xax];
    }
};

extern "C" ch_status cu_take_along_launch(size_t z, const cu_space *s, const char *x, const int64_t *idx, int64_t xax,
                                          char *out) {
    return by_size(z, [&](auto *u) {
        typedef typename std::remove_pointer<decltype(u)>::type U;
        return cu_each("take_along_axis", space_numel(*s), take_along_body<U>{*s, (const U *)x, idx, xax, (U *)out});
    });
}

/* ---- scatter_add ---------------------------------------------------------- */
/* Items of the target's own axes; each walks the loop axes in C order. */
template <typename T> struct scatter_body {
    cu_space items, loop;
    int64_t nloop;
    T *t;
    const T *v;
    const int64_t *idx;
    int64_t tax;
    CU_HD void operator()(int64_t i) const {
        cu_walker a, b;
        a.start(items, i);
        b.start(loop, 0);
        for (int64_t k = 0; k < nloop; k++, b.next(loop)) {
            T *p = t + a.o[0] + idx[a.o[2] + b.o[2]] * tax;
            /* the CPU's sum: widened to int64 or double, stored back */
            *p = cu_store<T>::from(cu_load(*p) + cu_load(v[a.o[1] + b.o[1]]));
        }
    }
};

extern "C" ch_status cu_scatter_launch(int dt, const cu_space *items, const cu_space *loop, char *t, const char *v,
                                       const int64_t *idx, int64_t tax) {
    ch_status st = CH_OK;
    cu_dispatch(dt, [&](auto *e) {
        typedef typename std::remove_pointer<decltype(e)>::type T;
        st = cu_each("scatter_add", space_numel(*items),
                     scatter_body<T>{*items, *loop, space_numel(*loop), (T *)t, (const T *)v, idx, tax});
    });
    return st;
}

/* ---- counting, masked_select, nonzero ------------------------------------- */
/* Whether the element at p is nonzero (-0.0 is zero), as the CPU decides. */
CU_HD bool elem_nonzero(int dt, const char *p) {
    switch (dt) {
    case CH_BOOL: case CH_INT8: case CH_UINT8: return *(const uint8_t *)p != 0;
    case CH_INT16: return *(const uint16_t *)p != 0;
    case CH_FLOAT16: return (*(const uint16_t *)p & 0x7fff) != 0;
    case CH_INT32: return *(const uint32_t *)p != 0;
    case CH_FLOAT32: return *(const float *)p != 0.0f;
    case CH_FLOAT64: return *(const double *)p != 0.0;
    default: return *(const unsigned long long *)p != 0;
    }
}

/* The bounds of chunk c of n elements. */
CU_HD int64_t chunk_len(int64_t c, int64_t n) {
    int64_t a = c * CU_CHUNK;
    return n - a < (int64_t)CU_CHUNK ? n - a : (int64_t)CU_CHUNK;
}

struct count_body {
    cu_space s;
    int64_t n;
    int dt;
    size_t z;
    const char *x;
    int64_t *counts;
    CU_HD void operator()(int64_t c) const {
        cu_walker w;
        w.start(s, c * CU_CHUNK);
        int64_t m = chunk_len(c, n), k = 0;
        for (int64_t e = 0; e < m; e++, w.next(s))
            k += elem_nonzero(dt, x + w.o[0] * (int64_t)z);
        counts[c] = k;
    }
};

/* counts[0..n) -> exclusive prefix sums, the total at counts[n]; one item. */
struct scan_body {
    int64_t *counts;
    int64_t n;
    CU_HD void operator()(int64_t) const {
        int64_t sum = 0;
        for (int64_t c = 0; c < n; c++) {
            int64_t k = counts[c];
            counts[c] = sum;
            sum += k;
        }
        counts[n] = sum;
    }
};

extern "C" ch_status cu_count_launch(int dt, const cu_space *s, const char *x, int64_t *counts, int64_t nchunks) {
    int64_t n = space_numel(*s);
    CU_TRY(cu_each("count_nonzero", nchunks, count_body{*s, n, dt, cu_dtype_size(dt), x, counts}));
    return cu_scan_launch(counts, nchunks);
}

extern "C" ch_status cu_scan_launch(int64_t *counts, int64_t n) {
    return cu_each("prefix sum", 1, scan_body{counts, n});
}

template <typename U> struct select_body {
    cu_space s;
    int64_t n;
    const U *x;
    const uint8_t *mask;
    const int64_t *starts;
    U *out;
    CU_HD void operator()(int64_t c) const {
        cu_walker w;
        w.start(s, c * CU_CHUNK);
        U *o = out + starts[c];
        int64_t m = chunk_len(c, n);
        for (int64_t e = 0; e < m; e++, w.next(s))
            if (mask[w.o[1]])
                *o++ = x[w.o[0]];
    }
};

extern "C" ch_status cu_masked_select_launch(size_t z, const cu_space *s, const char *x, const uint8_t *mask,
                                             const int64_t *starts, char *out) {
    int64_t n = space_numel(*s);
    return by_size(z, [&](auto *u) {
        typedef typename std::remove_pointer<decltype(u)>::type U;
        return cu_each("masked_select", (n + CU_CHUNK - 1) / CU_CHUNK,
                       select_body<U>{*s, n, (const U *)x, mask, starts, (U *)out});
    });
}

struct nonzero_body {
    cu_space s;
    int64_t n;
    int dt;
    size_t z;
    const char *x;
    const int64_t *starts;
    int64_t *out;
    CU_HD void operator()(int64_t c) const {
        cu_walker w;
        w.start(s, c * CU_CHUNK);
        int64_t *o = out + starts[c] * s.nd;
        int64_t m = chunk_len(c, n);
        for (int64_t e = 0; e < m; e++, w.next(s))
            if (elem_nonzero(dt, x + w.o[0] * (int64_t)z))
                for (int d = 0; d < s.nd; d++)
                    *o++ = w.c[d];
    }
};

extern "C" ch_status cu_nonzero_launch(int dt, const cu_space *s, const char *x, const int64_t *starts, int64_t *out) {
    int64_t n = space_numel(*s);
    return cu_each("nonzero", (n + CU_CHUNK - 1) / CU_CHUNK,
                   nonzero_body{*s, n, dt, cu_dtype_size(dt), x, starts, out});
}

/*
 * sort.cu -- stable sort / argsort along an axis and unique on the GPU,
 * item-parallel with cu_each, with the semantics of runtime/cpu/sort.c:
 * float keys compare as double (NaN last ascending, first descending),
 * integer keys as int64, equal keys keep their order.
 *   - sort: one item per line.  Each line is loaded into (key, position)
 *     pairs in a device scratch buffer (2 line lengths of 16-byte pairs
 *     per line: 32 bytes per element) and merge-sorted there (insertion
 *     sort on runs of 16, then bottom-up merges).  A stable sort's result
 *     is unique, so it equals the CPU's exactly.  The cost: a line is
 *     sorted by one thread, O(n log n) serial work, so a few long lines
 *     (e.g. one line of 10^6 elements) use a tiny part of the GPU; a
 *     segmented radix/merge sort (CUB) would fix that but cannot be
 *     emulated on the host;
 *   - unique_groups: a group starts where a sorted element differs from the
 *     previous one; chunks of CU_CHUNK elements count their starts, one
 *     item turns the counts into offsets (index.cu), each chunk numbers
 *     its elements from its offset;
 *   - unique_fill: one item per sorted element writes the group's value at
 *     the group's start, the inverse, and the group's start position; one
 *     item per group turns the starts into counts.  No atomics: exact and
 *     deterministic.
 *
 * Compiled; the per-item code is tested emulated on the host against the
 * CPU (tests/cuda/test_sort.cu).  NOT yet run on a GPU.
 */
#include <type_traits>

#include "backend.h"
#include "convert.cuh"
#include "launch.cuh"

template <typename K> struct sort_pair {
    K k;
    int64_t i;
};

/* b goes strictly before a (float keys: NaN last ascending, first descending). */
CU_HD bool goes_before(const sort_pair<double> &b, const sort_pair<double> &a, bool desc) {
    bool bn = b.k != b.k, an = a.k != a.k;
    return desc ? (b.k > a.k || (bn && !an)) : (b.k < a.k || (an && !bn));
}
CU_HD bool goes_before(const sort_pair<int64_t> &b, const sort_pair<int64_t> &a, bool desc) {
    return desc ? b.k > a.k : b.k < a.k;
}

/* Stable bottom-up merge sort of v[0..n) with tmp[0..n); the result in v. */
template <typename P> CU_HD void merge_sort(P *v, P *tmp, int64_t n, bool desc) {
    const int64_t run = 16;
    for (int64_t s = 0; s < n; s += run) {
        int64_t e = s + run < n ? s + run : n;
        for (int64_t i = s + 1; i < e; i++) {
            P x = v[i];
            int64_t j = i;
            while (j > s && goes_before(x, v[j - 1], desc)) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
    }
    P *src = v, *dst = tmp;
    for (int64_t w = run; w < n; w *= 2) {
        for (int64_t s = 0; s < n; s += 2 * w) {
            int64_t m = s + w < n ? s + w : n, e = s + 2 * w < n ? s + 2 * w : n;
            int64_t i = s, j = m, k = s;
            while (i < m && j < e)
                dst[k++] = goes_before(src[j], src[i], desc) ? src[j++] : src[i++];
            while (i < m)
                dst[k++] = src[i++];
            while (j < e)
                dst[k++] = src[j++];
        }
        P *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        for (int64_t i = 0; i < n; i++)
            v[i] = src[i];
}

/* The lines of a sort: operand 0 of `lines` is x, operand 1 the results
 * (contiguous); along the axis x steps xs, the results os. */
template <typename T, typename K> struct sort_body {
    cu_space lines;
    int64_t n, xs, os;
    bool desc;
    const T *x;
    T *vals;
    int64_t *args;
    sort_pair<K> *scratch;
    CU_HD void operator()(int64_t l) const {
        int64_t rem = l, xo = 0, oo = 0;
        for (int d = lines.nd - 1; d >= 0; d--) {
            int64_t k = rem % lines.dim[d];
            rem /= lines.dim[d];
            xo += k * lines.st[0][d];
            oo += k * lines.st[1][d];
        }
        sort_pair<K> *v = scratch + l * 2 * n;
        for (int64_t i = 0; i < n; i++) {
            v[i].k = (K)cu_load(x[xo + i * xs]);
            v[i].i = i;
        }
        merge_sort(v, v + n, n, desc);
        for (int64_t i = 0; i < n; i++) {
            if (args)
                args[oo + i * os] = v[i].i;
            if (vals)
                vals[oo + i * os] = x[xo + v[i].i * xs];
        }
    }
};

extern "C" ch_status cu_sort_launch(int dt, const cu_space *lines, int64_t n, int64_t xs, int64_t os, int desc,
                                    const char *x, char *vals, int64_t *args, void *scratch) {
    ch_status st = CH_OK;
    int64_t count = 1;
    for (int d = 0; d < lines->nd; d++)
        count *= lines->dim[d];
    cu_dispatch(dt, [&](auto *e) {
        typedef typename std::remove_pointer<decltype(e)>::type T;
        typedef typename std::conditional<std::is_same<decltype(cu_load(T())), double>::value, double, int64_t>::type K;
        st = cu_each("sort", count,
                     sort_body<T, K>{*lines, n, xs, os, desc != 0, (const T *)x, (T *)vals, args,
                                     (sort_pair<K> *)scratch});
    });
    return st;
}

/* ---- unique ---------------------------------------------------------------- */
/* Sorted element i (of flat at ord[i]) starts a group: it differs from
 * element i - 1 (NaNs are one group). */
template <typename T> struct unique_view {
    const T *flat;
    int64_t fs;
    const int64_t *ord;
    CU_HD bool starts(int64_t i) const {
        if (i == 0)
            return true;
        auto a = cu_load(flat[ord[i - 1] * fs]), b = cu_load(flat[ord[i] * fs]);
        return !(a == b || (a != a && b != b));
    }
};

template <typename T> struct group_count_body {
    unique_view<T> u;
    int64_t n;
    int64_t *counts;
    CU_HD void operator()(int64_t c) const {
        int64_t a = c * CU_CHUNK, e = n - a < (int64_t)CU_CHUNK ? n : a + CU_CHUNK, k = 0;
        for (int64_t i = a; i < e; i++)
            k += u.starts(i);
        counts[c] = k;
    }
};

template <typename T> struct group_number_body {
    unique_view<T> u;
    int64_t n;
    const int64_t *offsets;
    int64_t *group;
    CU_HD void operator()(int64_t c) const {
        int64_t a = c * CU_CHUNK, e = n - a < (int64_t)CU_CHUNK ? n : a + CU_CHUNK, g = offsets[c] - 1;
        for (int64_t i = a; i < e; i++) {
            g += u.starts(i);
            group[i] = g;
        }
    }
};

extern "C" ch_status cu_unique_groups_launch(int dt, const char *flat, int64_t fs, int64_t n, const int64_t *ord,
                                             int64_t *group, int64_t *counts) {
    ch_status st = CH_OK;
    int64_t nchunks = (n + CU_CHUNK - 1) / CU_CHUNK;
    cu_dispatch(dt, [&](auto *e) {
        typedef typename std::remove_pointer<decltype(e)>::type T;
        unique_view<T> u = {(const T *)flat, fs, ord};
        st = cu_each("unique", nchunks, group_count_body<T>{u, n, counts});
        if (st == CH_OK)
            st = cu_scan_launch(counts, nchunks);
        if (st == CH_OK)
            st = cu_each("unique", nchunks, group_number_body<T>{u, n, counts, group});
    });
    return st;
}

template <typename T> struct unique_fill_body {
    const T *flat;
    int64_t fs;
    const int64_t *ord, *group;
    T *vals;
    int64_t *inv, *starts;
    CU_HD void operator()(int64_t i) const {
        int64_t g = group[i];
        if (i == 0 || g != group[i - 1]) {
            vals[g] = flat[ord[i] * fs];
            if (starts)
                starts[g] = i;
        }
        if (inv)
            inv[ord[i]] = g;
    }
};

/* counts[g] = the next group's start (n after the last) - this one's. */
struct unique_count_body {
    const int64_t *starts;
    int64_t ngroups, n;
    int64_t *counts;
    CU_HD void operator()(int64_t g) const {
        counts[g] = (g + 1 < ngroups ? starts[g + 1] : n) - starts[g];
    }
};

extern "C" ch_status cu_unique_fill_launch(int dt, const char *flat, int64_t fs, int64_t n, const int64_t *ord,
                                           const int64_t *group, char *vals, int64_t ngroups, int64_t *inv,
                                           int64_t *counts, int64_t *starts) {
    ch_status st = CH_OK;
    cu_dispatch(dt, [&](auto *e) {
        typedef typename std::remove_pointer<decltype(e)>::type T;
        st = cu_each("unique", n, unique_fill_body<T>{(const T *)flat, fs, ord, group, (T *)vals, inv, starts});
    });
    if (st == CH_OK && counts)
        st = cu_each("unique", ngroups, unique_count_body{starts, ngroups, n, counts});
    return st;
}

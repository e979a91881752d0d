/*
 * embed_id.cu -- the embedding lookup and its weight gradient on the GPU
 * (host side: embed_id.c).
 *
 * Forward: one item per element of y, copying W's element bits (a zero row
 * for an ignored id): the CPU's values exactly.
 *
 * Backward: gW is zeroed (one item per element), then one item per COLUMN j
 * adds gy[i, j] into gW[ids[i], j] for i in order, skipping ignored ids.
 * That is the CPU's order of additions for every element, so the result is
 * the CPU's bits and independent of the launch; no two items write the
 * same element, so no atomics are needed.  (A cu_atomic_add per element of
 * gy would use more threads but sum repeated ids in the schedule's order:
 * non-deterministic, and different from the CPU.)  The cost: only D items,
 * each walking all n ids (coalesced across neighbouring columns): fine for
 * embedding widths in the hundreds, slow for very narrow embeddings over
 * very many ids.
 *
 * Compiled with --fmad=false.  Compiled here, NOT yet executed on a GPU:
 * tests/cuda/test_embed_id.cu runs it emulated on the host against the CPU,
 * bit for bit.
 */
#include "backend.h"
#include "launch.cuh"

/* U: an unsigned integer of the element's size (the bits are copied). */
template <typename U> struct embed_rows {
    const int64_t *ids;
    const U *w;
    U *y;
    int64_t D, ignore;
    int has_ignore;
    CU_HD void operator()(int64_t e) const {
        int64_t i = e / D, j = e % D, id = ids[i];
        y[e] = (has_ignore && id == ignore) ? (U)0 : w[id * D + j];
    }
};

extern "C" ch_status cu_embed_id_forward_launch(int size, int64_t n, int64_t D, const int64_t *ids, int has_ignore,
                                                int64_t ignore, const char *w, char *y) {
    int64_t total = n * D;
    switch (size) {
    case 2: return cu_each("embed_id", total, embed_rows<uint16_t>{ids, (const uint16_t *)w, (uint16_t *)y, D, ignore, has_ignore});
    case 4: return cu_each("embed_id", total, embed_rows<uint32_t>{ids, (const uint32_t *)w, (uint32_t *)y, D, ignore, has_ignore});
    default: return cu_each("embed_id", total, embed_rows<uint64_t>{ids, (const uint64_t *)w, (uint64_t *)y, D, ignore, has_ignore});
    }
}

template <typename T> struct zero_items {
    T *p;
    CU_HD void operator()(int64_t i) const { p[i] = (T)0; }
};

template <typename T> struct embed_grad_column {
    const int64_t *ids;
    const T *gy;
    T *gw;
    int64_t n, D, ignore;
    int has_ignore;
    CU_HD void operator()(int64_t j) const {
        for (int64_t i = 0; i < n; i++) {
            int64_t id = ids[i];
            if (has_ignore && id == ignore)
                continue;
            gw[id * D + j] += gy[i * D + j];
        }
    }
};

template <typename T>
static ch_status backward(int64_t n, int64_t total, int64_t D, const int64_t *ids, int has_ignore, int64_t ignore,
                          const char *gy, char *gw) {
    CU_TRY(cu_each("embed_id", total, zero_items<T>{(T *)gw}));
    return cu_each("embed_id", D, embed_grad_column<T>{ids, (const T *)gy, (T *)gw, n, D, ignore, has_ignore});
}

extern "C" ch_status cu_embed_id_backward_launch(int dt, int64_t n, int64_t total, int64_t D, const int64_t *ids,
                                                 int has_ignore, int64_t ignore, const char *gy, char *gw) {
    if (dt == CH_FLOAT32)
        return backward<float>(n, total, D, ids, has_ignore, ignore, gy, gw);
    return backward<double>(n, total, D, ids, has_ignore, ignore, gy, gw);
}

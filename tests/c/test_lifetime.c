/* Reference counts, live-tensor and live-byte counters, storage sharing
 * and freeing: everything must return to the baseline. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

int main(void) {
    int64_t base_tensors = ch_live_tensors();
    int64_t base_bytes = ch_live_bytes(CH_CPU);
    int64_t shape[2] = {3, 4};

    ch_tensor *a = NULL;
    CHECK_OK(ch_full(CH_FLOAT32, 2, shape, 1.5, CH_CPU, &a));
    CHECK_EQ_I(a->refcount, 1);
    CHECK_EQ_I(a->numel, 12);
    CHECK_EQ_I(ch_live_tensors(), base_tensors + 1);
    CHECK(ch_live_bytes(CH_CPU) >= base_bytes + 48);
    CHECK(ch_peak_bytes(CH_CPU) >= ch_live_bytes(CH_CPU));

    /* retain/release pairs */
    ch_tensor_retain(a);
    CHECK_EQ_I(a->refcount, 2);
    ch_tensor_release(a);
    CHECK_EQ_I(a->refcount, 1);

    /* a view shares the storage and keeps it alive after the base dies */
    int64_t flat[1] = {12};
    ch_tensor *v = NULL;
    CHECK_OK(ch_reshape(a, 1, flat, &v));
    CHECK(v != a);
    CHECK(v->data == a->data);
    CHECK(ch_tensor_ptr(v) == ch_tensor_ptr(a));
    CHECK_EQ_I(ch_live_tensors(), base_tensors + 2);
    CHECK_OK(ch_set_flat(v, 5, 7.0));
    CHECK(at(a, 5) == 7.0);       /* a[1, 1] */
    int64_t bytes_with_both = ch_live_bytes(CH_CPU);
    ch_tensor_release(a);
    CHECK_EQ_I(ch_live_tensors(), base_tensors + 1);
    CHECK_EQ_I(ch_live_bytes(CH_CPU), bytes_with_both);   /* storage still held by v */
    CHECK(at(v, 5) == 7.0);
    CHECK(at(v, 0) == 1.5);
    ch_tensor_release(v);
    CHECK_EQ_I(ch_live_tensors(), base_tensors);
    CHECK_EQ_I(ch_live_bytes(CH_CPU), base_bytes);

    /* ch_contiguous of a contiguous tensor is the tensor itself, retained */
    ch_tensor *b = NULL, *c = NULL;
    CHECK_OK(ch_empty(CH_FLOAT64, 2, shape, CH_CPU, &b));
    CHECK_OK(ch_contiguous(b, &c));
    CHECK(c == b);
    CHECK_EQ_I(b->refcount, 2);
    ch_tensor_release(c);
    /* ... and a copy otherwise */
    int32_t perm[2] = {1, 0};
    ch_tensor *bt = NULL;
    CHECK_OK(ch_permute(b, perm, &bt));
    CHECK(!ch_is_contiguous(bt));
    CHECK_OK(ch_contiguous(bt, &c));
    CHECK(c != bt && c->data != b->data && ch_is_contiguous(c));
    ch_tensor_release(c);
    ch_tensor_release(bt);

    /* free_storage drops the bytes now; the struct stays valid */
    int64_t before = ch_live_bytes(CH_CPU);
    ch_tensor_free_storage(b);
    CHECK(ch_live_bytes(CH_CPU) == before - 12 * 8);
    CHECK(b->data == NULL);
    double x;
    CHECK_ERR(ch_get_flat(b, 0, &x), CH_ERR_ARG, "freed");
    ch_tensor_release(b);
    ch_tensor_release(NULL);   /* allowed */

    /* Small CPU tensors are one block with their storage (core/tensor.c):
     * a view keeps the data when the tensor is freed or released first, and
     * every path brings the counters back. */
    {
        int64_t b0 = ch_live_bytes(CH_CPU), n0 = ch_live_tensors();
        int64_t s6[1] = {6}, s23v[2] = {2, 3};
        ch_tensor *p = NULL, *pv = NULL;
        /* freed with a view alive: the bytes stay until the view goes */
        CHECK_OK(ch_full(CH_FLOAT32, 1, s6, 3.0, CH_CPU, &p));
        CHECK(ch_live_bytes(CH_CPU) == b0 + 24);
        CHECK_OK(ch_reshape(p, 2, s23v, &pv));
        ch_tensor_free_storage(p);
        ch_tensor_free_storage(p);            /* twice is fine */
        CHECK(p->data == NULL);
        CHECK_ERR(ch_get_flat(p, 0, &x), CH_ERR_ARG, "freed");
        CHECK(ch_live_bytes(CH_CPU) == b0 + 24);
        CHECK(at(pv, 5) == 3.0);
        ch_tensor_release(pv);
        CHECK(ch_live_bytes(CH_CPU) == b0);
        CHECK_EQ_I(ch_live_tensors(), n0 + 1);
        ch_tensor_release(p);
        CHECK_EQ_I(ch_live_tensors(), n0);
        /* freed with a view, the tensor released before the view */
        CHECK_OK(ch_full(CH_FLOAT32, 1, s6, 4.0, CH_CPU, &p));
        CHECK_OK(ch_reshape(p, 2, s23v, &pv));
        ch_tensor_free_storage(p);
        ch_tensor_release(p);
        CHECK(ch_live_bytes(CH_CPU) == b0 + 24);
        CHECK(at(pv, 0) == 4.0);
        ch_tensor_release(pv);
        CHECK(ch_live_bytes(CH_CPU) == b0);
        /* a view of a view, released in every order; retained tensors */
        ch_tensor *pv2 = NULL;
        CHECK_OK(ch_full(CH_FLOAT64, 1, s6, 5.0, CH_CPU, &p));
        CHECK_OK(ch_reshape(p, 2, s23v, &pv));
        CHECK_OK(ch_reshape(pv, 1, s6, &pv2));
        ch_tensor_retain(p);
        ch_tensor_release(p);
        ch_tensor_release(pv);
        ch_tensor_release(p);
        CHECK(ch_live_bytes(CH_CPU) == b0 + 48);
        CHECK(at(pv2, 2) == 5.0);
        ch_tensor_release(pv2);
        /* freed without views: the bytes go at once; an empty tensor too */
        CHECK_OK(ch_full(CH_FLOAT32, 1, s6, 1.0, CH_CPU, &p));
        ch_tensor_free_storage(p);
        CHECK(ch_live_bytes(CH_CPU) == b0);
        ch_tensor_release(p);
        int64_t s0[1] = {0};
        CHECK_OK(ch_empty(CH_FLOAT32, 1, s0, CH_CPU, &p));
        CHECK_OK(ch_reshape(p, 1, s0, &pv));
        ch_tensor_free_storage(p);
        ch_tensor_release(pv);
        ch_tensor_release(p);
        CHECK(ch_live_bytes(CH_CPU) == b0);
        CHECK_EQ_I(ch_live_tensors(), n0);
        /* the peak follows the growth, and a reset brings it to the live bytes */
        ch_reset_peak_bytes(CH_CPU);
        CHECK_EQ_I(ch_peak_bytes(CH_CPU), b0);
        int64_t s100[1] = {100};
        CHECK_OK(ch_empty(CH_FLOAT64, 1, s100, CH_CPU, &p));
        CHECK_OK(ch_empty(CH_FLOAT64, 1, s100, CH_CPU, &pv));
        ch_tensor_release(pv);
        ch_tensor_release(p);
        CHECK_EQ_I(ch_peak_bytes(CH_CPU), b0 + 1600);
        ch_reset_peak_bytes(CH_CPU);
        CHECK_EQ_I(ch_peak_bytes(CH_CPU), b0);
        /* data of the one-block tensors is 16-byte aligned */
        for (int i = 0; i < 40; i++) {
            int64_t si[1] = {i};
            CHECK_OK(ch_empty(CH_FLOAT32, 1, si, CH_CPU, &p));
            CHECK(((uintptr_t)p->data & 15) == 0);
            ch_tensor_release(p);
        }
    }

    /* wrapped buffers are not counted and not freed */
    float buf[6] = {1, 2, 3, 4, 5, 6};
    int64_t s23[2] = {2, 3};
    ch_tensor *w = NULL;
    int64_t bytes0 = ch_live_bytes(CH_CPU);
    CHECK_OK(ch_wrap_buffer(CH_FLOAT32, 2, s23, buf, &w));
    CHECK(w->data == (void *)buf);
    CHECK_OK(ch_set_flat(w, 4, 50));
    CHECK(buf[4] == 50);
    ch_tensor_release(w);
    CHECK_EQ_I(ch_live_bytes(CH_CPU), bytes0);
    CHECK(buf[0] == 1);

    /* from_buffer copies */
    ch_tensor *f = NULL;
    CHECK_OK(ch_from_buffer(CH_FLOAT32, 2, s23, buf, &f));
    buf[0] = 100;
    CHECK(at(f, 0) == 1);
    ch_tensor_release(f);

    /* many short-lived tensors: counters come back exactly */
    for (int i = 0; i < 1000; i++) {
        int64_t s[1] = {i};
        ch_tensor *t = NULL, *u = NULL;
        CHECK_OK(ch_empty(CH_INT32, 1, s, CH_CPU, &t));
        CHECK_OK(ch_astype(t, CH_FLOAT64, &u));
        ch_tensor_release(t);
        ch_tensor_release(u);
    }
    CHECK_EQ_I(ch_live_tensors(), base_tensors);
    CHECK_EQ_I(ch_live_bytes(CH_CPU), base_bytes);

    /* the small-block cache (small_blocks.c): freed headers and small
     * storages are kept for reuse, counted in ch_cache_bytes, and a new
     * small tensor takes them back (bypassed under AddressSanitizer and with
     * CHAINLUA_NO_BLOCK_CACHE set) */
#if !defined(__SANITIZE_ADDRESS__)
    if (!getenv("CHAINLUA_NO_BLOCK_CACHE")) {
        CHECK(ch_cache_bytes(CH_CPU) > 0);
        int64_t cached = ch_cache_bytes(CH_CPU);
        ch_tensor *s = NULL;
        CHECK_OK(ch_full(CH_FLOAT32, 2, shape, 2.0, CH_CPU, &s));
        CHECK(ch_cache_bytes(CH_CPU) < cached);
        CHECK(((float *)ch_tensor_ptr(s))[11] == 2.0f);
        ch_tensor_release(s);
        CHECK_EQ_I(ch_cache_bytes(CH_CPU), cached);
    }
#endif
    ch_cache_free_all(CH_CPU);
    CHECK_EQ_I(ch_cache_bytes(CH_CPU), 0);
    return check_done("test_lifetime");
}

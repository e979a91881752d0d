/* The small-block cache across threads (runtime/core/small_blocks.c): small
 * tensors made on one thread and freed on another, threads that exit with
 * blocks in their own lists, and ch_cache_free_all while another thread
 * holds some.  The live counters must come back to the baseline, values
 * must survive recycled blocks, and ch_cache_bytes must count every block
 * held and none after a release.  (Run it under valgrind or a sanitizer
 * too: CHAINLUA_NO_BLOCK_CACHE / AddressSanitizer bypass the cache, so the
 * checks on cached bytes are skipped there.) */
#include "check.h"

#include <pthread.h>
#include <stdlib.h>

#define PER_THREAD 2000
#define THREADS 4

/* Makes PER_THREAD small tensors (of 1..40 float32 elements: several size
 * classes) and checks each one's values. */
static void *make_tensors(void *arg) {
    ch_tensor **out = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        int64_t n[1] = {1 + i % 40};
        CHECK_OK(ch_full(CH_FLOAT32, 1, n, (double)i, CH_CPU, &out[i]));
        CHECK(((float *)ch_tensor_ptr(out[i]))[n[0] - 1] == (float)i);
    }
    return NULL;
}

static void *free_tensors(void *arg) {
    ch_tensor **t = arg;
    for (int i = 0; i < PER_THREAD; i++)
        ch_tensor_release(t[i]);
    return NULL;
}

/* Frees its tensors, then waits on `go` and makes one more, which drops the
 * lists a release on another thread made stale. */
typedef struct holder {
    ch_tensor **t;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go;
    int64_t cached_before_use;
} holder;

static void *hold_then_use(void *arg) {
    holder *h = arg;
    free_tensors(h->t);
    pthread_mutex_lock(&h->mu);
    h->go = 1;                                   /* freed: let main release */
    pthread_cond_broadcast(&h->cv);
    while (h->go != 2)
        pthread_cond_wait(&h->cv, &h->mu);
    pthread_mutex_unlock(&h->mu);
    h->cached_before_use = ch_cache_bytes(CH_CPU);
    int64_t n[1] = {3};
    ch_tensor *t = NULL;
    CHECK_OK(ch_full(CH_FLOAT32, 1, n, 7.0, CH_CPU, &t));
    CHECK(((float *)ch_tensor_ptr(t))[2] == 7.0f);
    ch_tensor_release(t);
    return NULL;
}

int main(void) {
    int64_t base_tensors = ch_live_tensors();
    int64_t base_bytes = ch_live_bytes(CH_CPU);
    static ch_tensor *made[THREADS][PER_THREAD];
    pthread_t th[THREADS];

    /* made on worker threads, freed here */
    for (int k = 0; k < THREADS; k++)
        CHECK(pthread_create(&th[k], NULL, make_tensors, made[k]) == 0);
    for (int k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    CHECK_EQ_I(ch_live_tensors(), base_tensors + THREADS * PER_THREAD);
    for (int k = 0; k < THREADS; k++)
        free_tensors(made[k]);
    CHECK_EQ_I(ch_live_tensors(), base_tensors);
    CHECK_EQ_I(ch_live_bytes(CH_CPU), base_bytes);
    if (check_block_cache_on())
        CHECK(ch_cache_bytes(CH_CPU) > 0);

    /* made here, freed on worker threads that then exit (their lists go to
     * the shared cache) */
    for (int k = 0; k < THREADS; k++)
        make_tensors(made[k]);
    int64_t cached = ch_cache_bytes(CH_CPU);
    for (int k = 0; k < THREADS; k++)
        CHECK(pthread_create(&th[k], NULL, free_tensors, made[k]) == 0);
    for (int k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    CHECK_EQ_I(ch_live_tensors(), base_tensors);
    CHECK_EQ_I(ch_live_bytes(CH_CPU), base_bytes);
    if (check_block_cache_on())
        CHECK(ch_cache_bytes(CH_CPU) > cached);

    /* recycled blocks hold fresh values */
    make_tensors(made[0]);
    free_tensors(made[0]);

    ch_cache_free_all(CH_CPU);
    CHECK_EQ_I(ch_cache_bytes(CH_CPU), 0);

    /* a release while another thread holds blocks in its own lists: they
     * are counted until that thread's next use drops them */
    make_tensors(made[1]);
    holder h = {.t = made[1], .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    CHECK(pthread_create(&th[0], NULL, hold_then_use, &h) == 0);
    pthread_mutex_lock(&h.mu);
    while (h.go != 1)
        pthread_cond_wait(&h.cv, &h.mu);
    ch_cache_free_all(CH_CPU);
    h.go = 2;
    pthread_cond_broadcast(&h.cv);
    pthread_mutex_unlock(&h.mu);
    pthread_join(th[0], NULL);
    if (check_block_cache_on())
        CHECK(h.cached_before_use > 0);
    CHECK_EQ_I(ch_live_tensors(), base_tensors);
    CHECK_EQ_I(ch_live_bytes(CH_CPU), base_bytes);
    ch_cache_free_all(CH_CPU);
    CHECK_EQ_I(ch_cache_bytes(CH_CPU), 0);
    return check_done("test_small_blocks");
}

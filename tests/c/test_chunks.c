/* Cache blocks carved from huge-page chunks (runtime/core/chunks.c,
 * storage.c): values survive when blocks are recycled between size
 * classes and threads, ch_cache_free_all unmaps a chunk once all its blocks
 * are cached and gives back the pages of cached blocks whose chunk a live
 * block still holds, and the live and cached byte counts come back to their
 * baselines.  (Under AddressSanitizer or CHAINLUA_NO_BLOCK_CACHE nothing is
 * carved: the value checks still run, the memory checks are skipped.) */
#include "check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* This process's virtual and resident sizes in bytes (/proc/self/statm). */
static void sizes(int64_t *virt, int64_t *res) {
    FILE *f = fopen("/proc/self/statm", "r");
    long v = 0, r = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &v, &r) != 2) v = r = 0;
        fclose(f);
    }
    *virt = (int64_t)v * 4096;
    *res = (int64_t)r * 4096;
}

static ch_tensor *filled(int64_t n, double v) {
    ch_tensor *t = NULL;
    int64_t shape[1] = {n};
    CHECK_OK(ch_full(CH_FLOAT32, 1, shape, v, CH_CPU, &t));
    return t;
}

/* every element of t equals v */
static int holds(ch_tensor *t, int64_t n, float v) {
    const float *p = ch_tensor_ptr(t);
    for (int64_t i = 0; i < n; i++)
        if (p[i] != v) return 0;
    return 1;
}

#define THREADS 4
#define ROUNDS 200

/* Tensors of several size classes (16 KiB to 6 MiB) made, checked and
 * freed in turn: every block that comes back from the cache still holds
 * exactly what its new tensor wrote. */
static void *churn(void *arg) {
    int seed = *(int *)arg;
    static const int64_t sizes_[] = {4096, 5000, 40000, 100000, 250000, 1500000};
    for (int r = 0; r < ROUNDS; r++) {
        ch_tensor *held[3];
        int64_t n[3];
        for (int k = 0; k < 3; k++) {
            n[k] = sizes_[(seed + r + 2 * k) % 6];
            held[k] = filled(n[k], seed * 1000 + r * 3 + k);
        }
        for (int k = 0; k < 3; k++) {
            CHECK(holds(held[k], n[k], (float)(seed * 1000 + r * 3 + k)));
            ch_tensor_release(held[k]);
        }
    }
    return NULL;
}

static void threads_recycle_blocks(void) {
    pthread_t th[THREADS];
    int seeds[THREADS];
    for (int i = 0; i < THREADS; i++) {
        seeds[i] = i + 1;
        CHECK(pthread_create(&th[i], NULL, churn, &seeds[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++) pthread_join(th[i], NULL);
}

static void free_all_gives_memory_back(void) {
    ch_cache_free_all(CH_CPU);
    int64_t live0 = ch_live_bytes(CH_CPU), v0, r0, v1, r1, v2, r2, v3, r3;
    CHECK(ch_cache_bytes(CH_CPU) == 0);
    sizes(&v0, &r0);

    /* two 8 MB tensors: carved one after the other from one chunk */
    int64_t n = 2000000;
    ch_tensor *a = filled(n, 1.0), *b = filled(n, 2.0);
    sizes(&v1, &r1);
    CHECK(r1 - r0 >= 15000000);

    /* a cached, b live: the chunk stays, a's pages go */
    ch_tensor_release(a);
    CHECK(ch_cache_bytes(CH_CPU) >= 8000000);
    ch_cache_free_all(CH_CPU);
    sizes(&v2, &r2);
    CHECK(holds(b, n, 2.0f));
    if (check_block_cache_on()) {
        CHECK(ch_cache_bytes(CH_CPU) >= 8000000);   /* a's block, listed until its chunk goes */
        CHECK(r1 - r2 >= 7000000);
    }

    /* the cached block serves the next request of its class */
    ch_tensor *c = filled(n, 3.0);
    CHECK(holds(c, n, 3.0f) && holds(b, n, 2.0f));
    ch_tensor_release(c);
    ch_tensor_release(b);

    /* both cached: the chunk is unmapped */
    ch_cache_free_all(CH_CPU);
    sizes(&v3, &r3);
    CHECK(ch_cache_bytes(CH_CPU) == 0);
    CHECK(ch_live_bytes(CH_CPU) == live0);
    if (check_block_cache_on()) CHECK(v1 - v3 >= 60000000);   /* the 64 MiB chunk's address space */
}

int main(void) {
    threads_recycle_blocks();
    free_all_gives_memory_back();
    threads_recycle_blocks();
    ch_cache_free_all(CH_CPU);
    CHECK(ch_cache_bytes(CH_CPU) == 0);
    return check_done("test_chunks");
}

/*
 * counters.c -- the live counters (ch_live_bytes for the CPU,
 * ch_live_tensors, ch_peak_bytes for the CPU) as per-thread slots.
 *
 * Each thread that makes or frees a tensor takes a slot of `slots` the first
 * time (under `lock`) and adds to it with plain stores (local.h says why);
 * a pthread key's destructor gives the slot up when the thread exits, and
 * the next thread to start counting takes it over, values included.  So the
 * sum over the slots ever used (`nslots`) is the count, and readers add them
 * up without a lock.  Once all MAX_SLOTS are held, further threads share the
 * `shared` slot, which they add to atomically.
 *
 * The CPU peak: every growth of a slot adds the slots up and raises `peak`
 * when the sum passes it (a compare-exchange only then).  With one thread
 * counting, the sum is that thread's slot and the peak exact; with several,
 * a sum taken while others allocate may mix older and newer values of their
 * slots, as any reading of counters that other threads are changing does.
 */
#include "local.h"

#include <pthread.h>

#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#define CH_BENIGN_RACE(p, n) ANNOTATE_BENIGN_RACE_SIZED((p), (n), "per-thread counters read by the sums")
#endif
#endif
#ifndef CH_BENIGN_RACE
#define CH_BENIGN_RACE(p, n) ((void)(p), (void)(n))
#endif

#define MAX_SLOTS 64

static ch_counters slots[MAX_SLOTS];
static ch_counters shared = {.in_use = 1, .shared = 1};
static _Atomic int nslots;             /* slots[0..nslots) have been used */
static _Atomic int64_t peak;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_key_t exit_key;
static bool exit_key_made;

static void thread_exit(void *arg) {
    ch_counters *c = arg;
    /* a tensor freed by a later destructor on this thread takes a slot again */
    ch_tls.counters = NULL;
    /* (under the lock, which also hands the values over to the next thread) */
    pthread_mutex_lock(&lock);
    atomic_store_explicit(&c->in_use, 0, memory_order_relaxed);
    pthread_mutex_unlock(&lock);
}

ch_counters *ch_counters_attach(ch_local *t) {
    pthread_mutex_lock(&lock);
    if (!exit_key_made) {
        exit_key_made = pthread_key_create(&exit_key, thread_exit) == 0;
        CH_BENIGN_RACE(&nslots, sizeof nslots);
        CH_BENIGN_RACE(&shared, sizeof shared);
    }
    ch_counters *c = &shared;
    if (exit_key_made) {
        int n = atomic_load_explicit(&nslots, memory_order_relaxed);
        int i = 0;
        while (i < n && atomic_load_explicit(&slots[i].in_use, memory_order_relaxed))
            i++;
        if (i < MAX_SLOTS && pthread_setspecific(exit_key, &slots[i]) == 0) {
            c = &slots[i];
            atomic_store_explicit(&c->in_use, 1, memory_order_relaxed);
            if (i == n)
                atomic_store_explicit(&nslots, n + 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&lock);
    /* The readers' sums (ch_live_bytes, the peak) read slots that their
     * threads write: relaxed atomics, which valgrind's race detectors do not
     * know from plain accesses (ThreadSanitizer does). */
    CH_BENIGN_RACE(c, sizeof *c);
    t->counters = c;
    return c;
}

static int64_t sum_cpu_bytes(void) {
    int n = atomic_load_explicit(&nslots, memory_order_acquire);
    int64_t s = atomic_load_explicit(&shared.cpu_bytes, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        s += atomic_load_explicit(&slots[i].cpu_bytes, memory_order_relaxed);
    return s;
}

void ch_counters_note_growth(void) {
    int64_t now = sum_cpu_bytes();
    int64_t p = atomic_load_explicit(&peak, memory_order_relaxed);
    while (now > p && !atomic_compare_exchange_weak_explicit(&peak, &p, now, memory_order_relaxed,
                                                             memory_order_relaxed)) {
    }
}

int64_t ch_cpu_live_bytes(void) { return sum_cpu_bytes(); }
int64_t ch_cpu_peak_bytes(void) { return atomic_load_explicit(&peak, memory_order_relaxed); }
void ch_cpu_reset_peak_bytes(void) { atomic_store_explicit(&peak, sum_cpu_bytes(), memory_order_relaxed); }

int64_t ch_live_tensors(void) {
    int n = atomic_load_explicit(&nslots, memory_order_acquire);
    int64_t s = atomic_load_explicit(&shared.tensors, memory_order_relaxed);
    for (int i = 0; i < n; i++)
        s += atomic_load_explicit(&slots[i].tensors, memory_order_relaxed);
    return s;
}

/* An unloaded library must not leave its destructor on the key. */
__attribute__((destructor)) static void counters_unload(void) {
    if (exit_key_made)
        pthread_key_delete(exit_key);
}

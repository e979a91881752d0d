/* threads.c -- one thread count shared by OpenMP loops and OpenBLAS, and the
 * busy-neighbour guard that drops it to one while another process takes our
 * cores (busy_guard.h says why and when).
 * We link the OpenMP flavour of OpenBLAS, so both use the same OpenMP pool
 * and never oversubscribe the cores (see PERFORMANCE.md). */
#include "internal.h"
#include "busy_guard.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

void openblas_set_num_threads(int n);
char *openblas_get_config(void);
int openblas_get_parallel(void);

static _Atomic int num_threads = 0;   /* the user's count (ch_set_num_threads) */

/* ---- the guard's state ---------------------------------------------------- */
static atomic_flag guard_busy = ATOMIC_FLAG_INIT;  /* one thread samples at a time */
static _Atomic int guard_enabled = -1;             /* -1: not decided yet */
static int guard_verbose;                          /* CHAINLUA_ADAPTIVE_THREADS=verbose */
static _Atomic int guard_full = 1;                 /* 1: all threads, 0: one */
static _Atomic long long guard_next_ns = 0;        /* next sample, coarse monotonic clock */
static ch_busy_guard guard;                        /* under guard_busy */
static double prev_wall, prev_ran, prev_waited;    /* under guard_busy */
static int have_prev;                              /* under guard_busy */

static long long coarse_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Seconds the process's threads have run and waited on a run queue, summed
 * over the threads alive now; 0 when /proc cannot tell. */
static int read_schedstat(double *ran, double *waited) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    unsigned long long run_ns = 0, wait_ns = 0;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[64], buf[128];
        snprintf(path, sizeof path, "/proc/self/task/%.20s/schedstat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;  /* the thread ended meanwhile */
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = 0;
        unsigned long long r, w;
        if (sscanf(buf, "%llu %llu", &r, &w) == 2) {
            run_ns += r;
            wait_ns += w;
            found = 1;
        }
    }
    closedir(d);
    *ran = (double)run_ns * 1e-9;
    *waited = (double)wait_ns * 1e-9;
    return found;
}

/* The guard needs /proc's counts: off where they cannot be read. */
static int proc_readable(void) {
    double r, w;
    return read_schedstat(&r, &w);
}

static int guard_wanted(void) {
    const char *v = getenv("CHAINLUA_ADAPTIVE_THREADS");
    if (v && (strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "false") == 0)) return 0;
    guard_verbose = v && strcmp(v, "verbose") == 0;
    return proc_readable();
}

static void apply_team(int n) {
#ifdef _OPENMP
    omp_set_num_threads(n);
#endif
    openblas_set_num_threads(n);
}

/* Takes a sample when one is due and applies the guard's decision; called
 * on the way into parallel work, never inside a region. */
static void guard_tick(int full_threads) {
    long long now_ns = coarse_ns();
    if (now_ns < atomic_load_explicit(&guard_next_ns, memory_order_relaxed)) return;
#ifdef _OPENMP
    if (omp_in_parallel()) return;
#endif
    if (atomic_flag_test_and_set(&guard_busy)) return;
    atomic_store_explicit(&guard_next_ns, now_ns + (long long)(CH_BUSY_INTERVAL * 1e9), memory_order_relaxed);
    double now = (double)now_ns * 1e-9, ran, waited;
    if (read_schedstat(&ran, &waited)) {
        if (have_prev) {
            double d_ran = ran - prev_ran, d_waited = waited - prev_waited;
            /* a thread that ended takes its counts with it: never below 0 */
            int full = ch_busy_guard_step(&guard, now, now - prev_wall, d_ran > 0 ? d_ran : 0,
                                          d_waited > 0 ? d_waited : 0);
            if (full != atomic_load(&guard_full)) {
                atomic_store(&guard_full, full);
                apply_team(full ? full_threads : 1);
                if (guard_verbose)
                    fprintf(stderr, "chainlua: adaptive threads: %s (last %.0f ms: ran %.0f ms, waited %.0f ms)\n",
                            full ? (guard.reduced ? "probing at full width" : "cores free, back to full width")
                                 : "cores busy, one thread",
                            (now - prev_wall) * 1e3, d_ran * 1e3, d_waited * 1e3);
            }
        }
        prev_wall = now;
        prev_ran = ran;
        prev_waited = waited;
        have_prev = 1;
    }
    atomic_flag_clear(&guard_busy);
}

static int user_threads(void) {
    int n = atomic_load_explicit(&num_threads, memory_order_relaxed);
    if (n <= 0) {
#ifdef _OPENMP
        n = omp_get_max_threads();
#else
        n = 1;
#endif
        atomic_store(&num_threads, n);
    }
    return n;
}

int ch_threads(void) {
    int n = user_threads();
    if (n <= 1) return n;
    int on = atomic_load_explicit(&guard_enabled, memory_order_relaxed);
    if (on < 0) {
        on = guard_wanted();
        atomic_store(&guard_enabled, on);
    }
    if (!on) return n;
    guard_tick(n);
    return atomic_load_explicit(&guard_full, memory_order_relaxed) ? n : 1;
}

int ch_threads_in_use(void) { return ch_threads(); }

/* Starting over: full width, no history. */
static void guard_reset(void) {
    while (atomic_flag_test_and_set(&guard_busy)) {
    }
    memset(&guard, 0, sizeof guard);
    have_prev = 0;
    atomic_store(&guard_full, 1);
    atomic_store(&guard_next_ns, 0);
    atomic_flag_clear(&guard_busy);
}

void ch_set_num_threads(int n) {
    if (n < 1)
        n = 1;
    atomic_store(&num_threads, n);
    guard_reset();
    apply_team(n);
}

int ch_get_num_threads(void) { return user_threads(); }

void ch_set_adaptive_threads(int on) {
    guard_reset();
    atomic_store(&guard_enabled, on ? proc_readable() : 0);
    apply_team(user_threads());
}

const char *ch_version(void) { return CHAINLUA_VERSION; }


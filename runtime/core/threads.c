/* threads.c -- one thread count shared by OpenMP loops and OpenBLAS.
 * We link the OpenMP flavour of OpenBLAS, so both use the same OpenMP pool
 * and never oversubscribe the cores (see PERFORMANCE.md). */
#include "internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void openblas_set_num_threads(int n);
char *openblas_get_config(void);
int openblas_get_parallel(void);

static int num_threads = 0;

int ch_threads(void) {
    if (num_threads <= 0) {
#ifdef _OPENMP
        num_threads = omp_get_max_threads();
#else
        num_threads = 1;
#endif
    }
    return num_threads;
}

void ch_set_num_threads(int n) {
    if (n < 1)
        n = 1;
    num_threads = n;
#ifdef _OPENMP
    omp_set_num_threads(n);
#endif
    openblas_set_num_threads(n);
}

int ch_get_num_threads(void) { return ch_threads(); }

const char *ch_version(void) { return CHAINLUA_VERSION; }

const char *ch_blas_info(void) {
    static char buf[256];
    const char *par = "sequential";
    switch (openblas_get_parallel()) {
    case 1: par = "pthreads"; break;
    case 2: par = "OpenMP"; break;
    }
    snprintf(buf, sizeof buf, "%s (%s)", openblas_get_config(), par);
    return buf;
}

/*
 * plan_libs.c -- the libraries the backend loads only when an op first
 * needs them (cuSOLVER for inv/det/solve/cholesky, cuFFT for fft), and the
 * host-side reading of their per-matrix status words.
 *
 * They are large (cuSOLVER ~140 MB, cuFFT ~290 MB), most programs never use
 * them, and a build copied to a GPU machine should not require them: so
 * the backend does not link them, and dlopen()s them on first use (the
 * backend's RPATH, the toolkit's lib64, is searched like the system path).
 * Without them those ops fail with an error naming the op and the library;
 * everything else works.
 *
 * Plain C without CUDA headers: tests/c/test_cuda_plan_libs.c checks it on
 * machines without a GPU.
 */
#include "plan.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t libs_lock = PTHREAD_MUTEX_INITIALIZER;

int cu_lib_load(cu_lazy_lib *lib, const char *fn, char *err, size_t errlen) {
    pthread_mutex_lock(&libs_lock);
    if (!lib->tried) {
        lib->tried = 1;
        lib->why[0] = 0;
        for (int k = 0; k < CU_LIB_MAX_NAMES && lib->names[k] && !lib->handle; k++) {
            lib->handle = dlopen(lib->names[k], RTLD_NOW | RTLD_LOCAL);
            if (!lib->handle && k == 0) {
                const char *why = dlerror();
                snprintf(lib->why, sizeof lib->why, "%s", why ? why : "not found");
            }
        }
        for (int s = 0; lib->handle && s < CU_LIB_MAX_SYMBOLS && lib->symbols[s]; s++) {
            lib->fns[s] = dlsym(lib->handle, lib->symbols[s]);
            if (!lib->fns[s]) {
                snprintf(lib->why, sizeof lib->why, "%s has no symbol %s (too old a version?)", lib->names[0],
                         lib->symbols[s]);
                dlclose(lib->handle);
                lib->handle = NULL;
            }
        }
    }
    int ok = lib->handle != NULL;
    pthread_mutex_unlock(&libs_lock);
    if (!ok)
        snprintf(err, errlen, "%s on the GPU needs %s (%s), which could not be loaded: %s; install it with the CUDA "
                 "toolkit or move the tensor with :to_cpu()", fn, lib->label, lib->names[0], lib->why);
    return ok;
}

int64_t cu_first_failure(const int *info, int64_t n, int *value) {
    for (int64_t p = 0; p < n; p++)
        if (info[p] != 0) {
            *value = info[p];
            return p;
        }
    return -1;
}

/*
 * init.c -- chainlua_cuda_init, the one exported symbol of libchainlua_cuda:
 * checks the hooks ABI, counts devices, writes the version line and fills
 * the hooks table.  With no driver or no GPU it reports device_count 0 and
 * says why in `info`; it never aborts.
 */
#include "backend.h"
#include "cuda_hooks.h"

#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Used until the core hands us its ch_fail (and if it never does). */
static ch_status fail_silently(ch_status st, const char *fmt, ...) {
    (void)fmt;
    return st;
}
ch_status (*cu_fail_fn)(ch_status st, const char *fmt, ...) = fail_silently;

ch_status cu_check(int err, const char *fn, const char *what) {
    if (err == cudaSuccess)
        return CH_OK;
    cudaError_t e = (cudaError_t)err;
    /* clear a non-sticky error so that the next call starts clean */
    (void)cudaGetLastError();
    return cu_fail(e == cudaErrorMemoryAllocation ? CH_ERR_MEMORY : CH_ERR_DEVICE, "%s: %s failed: %s (%s)", fn,
                   what, cudaGetErrorString(e), cudaGetErrorName(e));
}

/* "13.0" from CUDA's 1000*major + 10*minor encoding; "none" for 0. */
static void cuda_version_str(char *buf, size_t n, int v) {
    if (v <= 0)
        snprintf(buf, n, "none");
    else
        snprintf(buf, n, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Appends printf output to buf (bounded; truncates quietly). */
static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t n, const char *fmt, ...) {
    size_t len = strlen(buf);
    if (len + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

static void libraries_str(char *buf, size_t n, int *cudnn_version) {
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);   /* 0 when no driver is installed */
    char rts[32], drvs[32];
    cuda_version_str(rts, sizeof rts, rt);
    cuda_version_str(drvs, sizeof drvs, drv);
    int bl_major = 0, bl_minor = 0, bl_patch = 0;
    cublasGetProperty(MAJOR_VERSION, &bl_major);
    cublasGetProperty(MINOR_VERSION, &bl_minor);
    cublasGetProperty(PATCH_LEVEL, &bl_patch);
    /* cuDNN 9 encodes major*10000 + minor*100 + patch; 8 and older major*1000 + minor*100 + patch. */
    size_t dn = cudnnGetVersion();
    int dmaj = dn >= 90000 ? (int)(dn / 10000) : (int)(dn / 1000);
    int dmin = dn >= 90000 ? (int)(dn / 100 % 100) : (int)(dn / 100 % 10);
    int dpat = (int)(dn % 100);
    *cudnn_version = (int)dn;
    snprintf(buf, n, "CUDA runtime %s, driver %s, cuBLAS %d.%d.%d, cuDNN %d.%d.%d", rts, drvs, bl_major, bl_minor,
             bl_patch, dmaj, dmin, dpat);
}

__attribute__((visibility("default"))) int chainlua_cuda_init(ch_cuda_hooks *hooks);

int chainlua_cuda_init(ch_cuda_hooks *hooks) {
    if (!hooks)
        return -1;
    if (hooks->abi != CH_CUDA_ABI) {
        /* The layout may differ: touch nothing but the leading fields,
         * which every ABI version shares. */
        hooks->device_count = 0;
        snprintf(hooks->info, sizeof hooks->info,
                 "libchainlua_cuda was built for hooks ABI %d but libchainlua uses %d; rebuild both together",
                 CH_CUDA_ABI, hooks->abi);
        return -1;
    }
    if (hooks->fail)
        cu_fail_fn = hooks->fail;
    /* compiling user kernels needs NVRTC, not a GPU */
    hooks->compile = cu_compile;
    hooks->image_free = cu_image_free;
    hooks->nvrtc_arch = cu_nvrtc_newest_arch;
    /* NVTX ranges need no GPU either */
    hooks->nvtx_push = cu_nvtx_push;
    hooks->nvtx_pop = cu_nvtx_pop;

    char libs[200];
    libraries_str(libs, sizeof libs, &hooks->cudnn_version);

    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count <= 0) {
        (void)cudaGetLastError();
        int drv = 0;
        cudaDriverGetVersion(&drv);
        /* cudart says "driver version is insufficient" also when there is
         * no driver at all; say which */
        const char *why = e == cudaSuccess ? "cudaGetDeviceCount found 0 devices"
                          : drv == 0       ? "no NVIDIA driver is installed (libcuda.so.1 not found)"
                                           : cudaGetErrorString(e);
        snprintf(hooks->info, sizeof hooks->info, "no CUDA device: %s (%s); %s", why,
                 e != cudaSuccess ? cudaGetErrorName(e) : "no GPU", libs);
        hooks->device_count = 0;
        return 0;
    }
    if (count > CU_MAX_DEVICES)
        count = CU_MAX_DEVICES;
    cu_device_count = count;
    cu_alloc_init();

    snprintf(hooks->info, sizeof hooks->info, "%s", libs);
    for (int d = 0; d < count; d++) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, d) != cudaSuccess) {
            (void)cudaGetLastError();
            append(hooks->info, sizeof hooks->info, "; cuda:%d (properties unavailable)", d);
            continue;
        }
        append(hooks->info, sizeof hooks->info, "; cuda:%d %s (sm_%d%d, %.1f GiB)", d, prop.name, prop.major,
               prop.minor, (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    }

    hooks->device_count = count;
    hooks->alloc = cu_alloc;
    hooks->free = cu_free;
    hooks->cache_free_all = cu_cache_free_all;
    hooks->cache_bytes = cu_cache_bytes;
    hooks->copy = cu_copy;
    hooks->synchronize = cu_synchronize;
    hooks->kernel_load = cu_kernel_load;
    hooks->launch = cu_launch;
    hooks->device_arch = cu_device_arch;
    hooks->launch_grid = cu_launch_grid;
    hooks->kernels = &cu_kernels;
    hooks->kernel_list = CH_KERNEL_LIST_STR;
    cu_nccl_hooks(hooks);   /* NCCL loads on first use (nccl.c) */
    hooks->streams = &cu_stream_services;
    return 0;
}

/*
 * kernel.c -- user-defined kernels: NVRTC compilation, loading and launch.
 *
 * The Lua layer (lua/chainer/user_kernel/cuda_backend.lua) generates CUDA source,
 * caches compiled images in memory and on disk, and calls these through the
 * hooks table.  NVRTC is dlopened the first time a kernel is compiled, so
 * the backend loads (and everything else works) without it; compiling needs
 * no GPU, which lets a machine without one check the generated source.
 * Loading uses the runtime's library API (cudaLibraryLoadData), so the
 * backend still needs no link against the driver library.
 */
#define _GNU_SOURCE
#include "backend.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The NVRTC entry points we use, resolved once. */
static struct {
    int tried, ok;
    char why[256];
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                          const char *const *);
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*destroy)(nvrtcProgram *);
    nvrtcResult (*log_size)(nvrtcProgram, size_t *);
    nvrtcResult (*log)(nvrtcProgram, char *);
    nvrtcResult (*ptx_size)(nvrtcProgram, size_t *);
    nvrtcResult (*ptx)(nvrtcProgram, char *);
    nvrtcResult (*cubin_size)(nvrtcProgram, size_t *);
    nvrtcResult (*cubin)(nvrtcProgram, char *);
    const char *(*error_string)(nvrtcResult);
} nv;
static pthread_mutex_t nv_lock = PTHREAD_MUTEX_INITIALIZER;

static void *open_nvrtc(void) {
    const char *env = getenv("CHAINLUA_NVRTC_LIB");
    if (env && *env)
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    /* the soname of the toolkit we were built with first (found through our
     * RUNPATH, which names the toolkit's library directory), then any */
    char name[64];
    snprintf(name, sizeof name, "libnvrtc.so.%d", CUDART_VERSION / 1000);
    void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libnvrtc.so", RTLD_NOW | RTLD_LOCAL);
    return h;
}

static int load_nvrtc(void) {
    pthread_mutex_lock(&nv_lock);
    if (!nv.tried) {
        nv.tried = 1;
        void *h = open_nvrtc();
        if (!h) {
            const char *e = dlerror();
            snprintf(nv.why, sizeof nv.why, "%s", e ? e : "libnvrtc.so not found");
        } else {
#define NV_SYM(field, sym)                                                       \
    do {                                                                         \
        *(void **)&nv.field = dlsym(h, sym);                                     \
        if (!nv.field && !nv.why[0])                                             \
            snprintf(nv.why, sizeof nv.why, "%s missing from libnvrtc", sym);    \
    } while (0)
            NV_SYM(create, "nvrtcCreateProgram");
            NV_SYM(compile, "nvrtcCompileProgram");
            NV_SYM(destroy, "nvrtcDestroyProgram");
            NV_SYM(log_size, "nvrtcGetProgramLogSize");
            NV_SYM(log, "nvrtcGetProgramLog");
            NV_SYM(ptx_size, "nvrtcGetPTXSize");
            NV_SYM(ptx, "nvrtcGetPTX");
            NV_SYM(cubin_size, "nvrtcGetCUBINSize");
            NV_SYM(cubin, "nvrtcGetCUBIN");
            NV_SYM(error_string, "nvrtcGetErrorString");
#undef NV_SYM
            nv.ok = nv.why[0] == 0;
        }
    }
    pthread_mutex_unlock(&nv_lock);
    return nv.ok;
}

/* Compiles `src` for `arch`: "sm_XY" gives a CUBIN, "compute_XY" PTX.  On a
 * compile error the message carries NVRTC's log (truncated to fit). */
ch_status cu_compile(const char *src, const char *name, const char *arch, char **image, size_t *size) {
    *image = NULL;
    *size = 0;
    if (!load_nvrtc())
        return cu_fail(CH_ERR_DEVICE, "kernel %s: cannot load NVRTC: %s", name, nv.why);
    int cubin = strncmp(arch, "sm_", 3) == 0;
    if (!cubin && strncmp(arch, "compute_", 8) != 0)
        return cu_fail(CH_ERR_ARG, "kernel %s: arch must be sm_XY or compute_XY (got %s)", name, arch);
    nvrtcProgram prog;
    char file[128];
    snprintf(file, sizeof file, "%s.cu", name);
    nvrtcResult r = nv.create(&prog, src, file, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return cu_fail(CH_ERR_DEVICE, "kernel %s: nvrtcCreateProgram failed: %s", name, nv.error_string(r));
    char archopt[64];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", arch);
    const char *opts[] = {archopt, "--std=c++17", "-default-device"};
    r = nv.compile(prog, 3, opts);
    if (r != NVRTC_SUCCESS) {
        size_t n = 0;
        char log[1536] = "";
        if (nv.log_size(prog, &n) == NVRTC_SUCCESS && n > 1) {
            char *full = malloc(n);
            if (full && nv.log(prog, full) == NVRTC_SUCCESS)
                snprintf(log, sizeof log, "%s", full);
            free(full);
        }
        nv.destroy(&prog);
        return cu_fail(CH_ERR_ARG, "kernel %s: NVRTC could not compile the CUDA source for %s: %s", name,
                       arch, log[0] ? log : nv.error_string(r));
    }
    size_t n = 0;
    r = cubin ? nv.cubin_size(prog, &n) : nv.ptx_size(prog, &n);
    char *buf = r == NVRTC_SUCCESS ? malloc(n ? n : 1) : NULL;
    if (buf)
        r = cubin ? nv.cubin(prog, buf) : nv.ptx(prog, buf);
    nv.destroy(&prog);
    if (!buf)
        return cu_fail(CH_ERR_MEMORY, "kernel %s: cannot read the compiled image (%zu bytes)", name, n);
    if (r != NVRTC_SUCCESS) {
        free(buf);
        return cu_fail(CH_ERR_DEVICE, "kernel %s: reading the compiled image failed: %s", name, nv.error_string(r));
    }
    *image = buf;
    *size = n;
    return CH_OK;
}

void cu_image_free(void *p) { free(p); }

/* Loads a CUBIN or PTX image and finds `name` in it.  The library stays
 * loaded for the life of the process (the Lua cache holds the handle). */
ch_status cu_kernel_load(int device, const void *image, const char *name, void **kernel) {
    CU_TRY(cu_use(device, "kernel load"));
    cudaLibrary_t lib;
    CU_TRY(cu_check(cudaLibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0), name, "cudaLibraryLoadData"));
    cudaKernel_t k;
    ch_status st = cu_check(cudaLibraryGetKernel(&k, lib, name), name, "cudaLibraryGetKernel");
    if (st != CH_OK) {
        cudaLibraryUnload(lib);
        return st;
    }
    *kernel = (void *)k;
    return CH_OK;
}

ch_status cu_launch(int device, void *kernel, uint32_t blocks, uint32_t threads, uint32_t shmem, void **args) {
    const uint32_t grid[3] = {blocks, 1, 1}, block[3] = {threads, 1, 1};
    return cu_launch_grid(device, kernel, grid, block, shmem, args);
}

/* A launch with a 3-D grid and block, as the caller gives them (cuda.raw);
 * an empty grid launches nothing.  The limits are checked here so that a
 * bad geometry reads as the caller's mistake, not as a CUDA error. */
ch_status cu_launch_grid(int device, void *kernel, const uint32_t grid[3], const uint32_t block[3], uint32_t shmem,
                         void **args) {
    CU_TRY(cu_use(device, "kernel launch"));
    if (grid[0] == 0 || grid[1] == 0 || grid[2] == 0)
        return CH_OK;
    if (block[0] == 0 || block[1] == 0 || block[2] == 0 || (uint64_t)block[0] * block[1] * block[2] > 1024)
        return cu_fail(CH_ERR_ARG, "kernel launch: the block (%u, %u, %u) must have 1 to 1024 threads", block[0],
                       block[1], block[2]);
    if (grid[1] > 65535 || grid[2] > 65535)
        return cu_fail(CH_ERR_ARG, "kernel launch: grid dimensions y and z must be at most 65535 (got %u, %u)",
                       grid[1], grid[2]);
    dim3 g = {grid[0], grid[1], grid[2]}, b = {block[0], block[1], block[2]};
    CU_TRY(cu_check(cudaLaunchKernel((const void *)kernel, g, b, args, shmem, (cudaStream_t)cu_stream()), "kernel launch",
                    "cudaLaunchKernel"));
    return cu_check(cudaGetLastError(), "kernel launch", "the launch");
}

/* Compute capability as major*10 + minor (90 for sm_90); 0 if unknown. */
int cu_device_arch(int device) {
    if (device < 0 || device >= cu_device_count)
        return 0;
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return major * 10 + minor;
}

/* The newest virtual architecture this NVRTC can target, as "compute_XY"
 * (for checking generated source without a GPU); 0 when NVRTC is missing. */
int cu_nvrtc_newest_arch(void) {
    if (!load_nvrtc())
        return 0;
    int (*num)(int *) = NULL;
    int (*archs)(int *) = NULL;
    void *h = open_nvrtc();
    if (h) {
        *(void **)&num = dlsym(h, "nvrtcGetNumSupportedArchs");
        *(void **)&archs = dlsym(h, "nvrtcGetSupportedArchs");
    }
    int n = 0, best = 0;
    if (num && archs && num(&n) == 0 && n > 0 && n < 256) {
        int list[256];
        if (archs(list) == 0)
            for (int j = 0; j < n; j++)
                if (list[j] > best)
                    best = list[j];
    }
    if (h)
        dlclose(h);
    return best;
}

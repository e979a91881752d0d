/*
 * cuda_loader.c -- finds and loads libchainlua_cuda at run time.
 *
 * The CUDA backend is a separate shared library so that a CPU-only build or
 * a machine without a GPU never needs the CUDA runtime.  When it loads it
 * fills a ch_cuda_hooks table (runtime/core/cuda_hooks.h) through which the
 * core forwards work for tensors whose device is a GPU.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "cuda_hooks.h"

#include <dlfcn.h>
#include <stdlib.h>

extern void *(*ch_device_alloc_hook)(int device, size_t nbytes);
extern void (*ch_device_free_hook)(int device, void *p, size_t nbytes);
extern void (*ch_device_cache_free_hook)(int device);
extern int64_t (*ch_device_cache_bytes_hook)(int device);

ch_cuda_hooks ch_cuda_table;
ch_status (*ch_device_copy_hook)(ch_tensor *dst, const ch_tensor *src) = NULL;
static int loaded = -1;            /* -1 not tried, 0 failed, 1 loaded */
static char info[768] = "CUDA backend not loaded";

static void *open_backend(const char *libpath) {
    if (libpath && *libpath)
        return dlopen(libpath, RTLD_NOW | RTLD_LOCAL);
    const char *env = getenv("CHAINLUA_CUDA_LIB");
    if (env && *env)
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    /* next to libchainlua itself, then the loader's search path */
    Dl_info self;
    if (dladdr((void *)&ch_cuda_load, &self) && self.dli_fname) {
        char path[4096];
        snprintf(path, sizeof path, "%s", self.dli_fname);
        char *slash = strrchr(path, '/');
        if (slash) {
            snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "libchainlua_cuda.so");
            void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
            if (h)
                return h;
        }
    }
    return dlopen("libchainlua_cuda.so", RTLD_NOW | RTLD_LOCAL);
}

int ch_cuda_load(const char *libpath) {
    if (loaded == 1)
        return ch_cuda_table.device_count;
    void *h = open_backend(libpath);
    if (!h) {
        const char *why = dlerror();
        snprintf(info, sizeof info, "CUDA backend not loaded: %s", why ? why : "libchainlua_cuda.so not found");
        loaded = 0;
        return 0;
    }
    ch_cuda_init_fn init = (ch_cuda_init_fn)dlsym(h, "chainlua_cuda_init");
    if (!init) {
        snprintf(info, sizeof info, "CUDA backend not loaded: chainlua_cuda_init missing");
        dlclose(h);
        loaded = 0;
        return 0;
    }
    memset(&ch_cuda_table, 0, sizeof ch_cuda_table);
    ch_cuda_table.abi = CH_CUDA_ABI;
    ch_cuda_table.fail = ch_fail;
    if (init(&ch_cuda_table) != 0 || ch_cuda_table.device_count <= 0) {
        snprintf(info, sizeof info, "CUDA backend loaded but no usable GPU: %s",
                 ch_cuda_table.info[0] ? ch_cuda_table.info : "no device");
        /* keep the library resident but do not route work to it */
        loaded = 0;
        return 0;
    }
    if (!ch_cuda_table.kernels || !ch_cuda_table.kernel_list ||
        strcmp(ch_cuda_table.kernel_list, CH_KERNEL_LIST_STR) != 0) {
        snprintf(info, sizeof info, "CUDA backend not used: libchainlua_cuda was built against another kernel "
                 "list than libchainlua; rebuild both together");
        memset(&ch_cuda_table, 0, sizeof ch_cuda_table);
        loaded = 0;
        return 0;
    }
    snprintf(info, sizeof info, "%s", ch_cuda_table.info);
    ch_device_alloc_hook = ch_cuda_table.alloc;
    ch_device_free_hook = ch_cuda_table.free;
    ch_device_cache_free_hook = ch_cuda_table.cache_free_all;
    ch_device_cache_bytes_hook = ch_cuda_table.cache_bytes;
    ch_device_copy_hook = ch_cuda_table.copy;
    loaded = 1;
    return ch_cuda_table.device_count;
}

/* The first question about CUDA (e.g. allocating on 'cuda:0') tries to load
 * the backend once, so that device tensors work without an explicit
 * ch_cuda_load; a failed attempt is remembered until ch_cuda_load is called
 * again. */
int ch_cuda_available(void) {
    if (loaded == -1)
        ch_cuda_load(NULL);
    return loaded == 1;
}

int ch_cuda_device_count(void) { return ch_cuda_available() ? ch_cuda_table.device_count : 0; }

const char *ch_cuda_info(void) { return info; }

ch_status ch_cuda_synchronize(int device) {
    if (!ch_cuda_available())
        return ch_fail(CH_ERR_DEVICE, "synchronize: the CUDA backend is not available (%s)", info);
    if (device < 0 || device >= ch_cuda_table.device_count)
        return ch_fail(CH_ERR_DEVICE, "synchronize: no device cuda:%d (%d GPU%s available)", device,
                       ch_cuda_table.device_count, ch_cuda_table.device_count == 1 ? "" : "s");
    return ch_cuda_table.synchronize(device);
}

/* ---- user kernels ---------------------------------------------------------
 * Compiling needs only the backend and NVRTC, so it is reachable without a
 * GPU; loading and launching need a device. */
static int backend_resident(void) {
    if (loaded == -1)
        ch_cuda_load(NULL);
    return ch_cuda_table.compile != NULL;
}

ch_status ch_cuda_compile(const char *src, const char *name, const char *arch, char **image, size_t *size) {
    if (!src || !name || !arch || !image || !size)
        return ch_fail(CH_ERR_ARG, "ch_cuda_compile: NULL argument");
    if (!backend_resident())
        return ch_fail(CH_ERR_DEVICE, "kernel %s: the CUDA backend is not available (%s)", name, info);
    return ch_cuda_table.compile(src, name, arch, image, size);
}

void ch_cuda_image_free(void *image) {
    if (image && ch_cuda_table.image_free)
        ch_cuda_table.image_free(image);
}

int ch_cuda_nvrtc_arch(void) { return backend_resident() && ch_cuda_table.nvrtc_arch ? ch_cuda_table.nvrtc_arch() : 0; }

static ch_status need_device(int device, const char *fn) {
    if (!ch_cuda_available())
        return ch_fail(CH_ERR_DEVICE, "%s: the CUDA backend is not available (%s)", fn, info);
    if (device < 0 || device >= ch_cuda_table.device_count)
        return ch_fail(CH_ERR_DEVICE, "%s: no device cuda:%d (%d GPU%s available)", fn, device,
                       ch_cuda_table.device_count, ch_cuda_table.device_count == 1 ? "" : "s");
    return CH_OK;
}

ch_status ch_cuda_kernel_load(int device, const void *image, const char *name, void **kernel) {
    CH_TRY(need_device(device, "kernel load"));
    return ch_cuda_table.kernel_load(device, image, name, kernel);
}

ch_status ch_cuda_launch(int device, void *kernel, uint32_t blocks, uint32_t threads, uint32_t shmem, void **args) {
    CH_TRY(need_device(device, "kernel launch"));
    return ch_cuda_table.launch(device, kernel, blocks, threads, shmem, args);
}

/* ---- raw kernels (cuda.raw) and NVTX ranges (CUDAProfileHook) ---------- */
ch_status ch_cuda_launch_grid(int device, void *kernel, const uint32_t grid[3], const uint32_t block[3],
                              uint32_t shmem, void **args) {
    if (!kernel || !grid || !block)
        return ch_fail(CH_ERR_ARG, "ch_cuda_launch_grid: NULL argument");
    CH_TRY(need_device(device, "kernel launch"));
    return ch_cuda_table.launch_grid(device, kernel, grid, block, shmem, args);
}

/* NVTX needs the backend (it carries the NVTX header) but no GPU. */
static ch_status need_nvtx(const char *fn) {
    if (!backend_resident())
        return ch_fail(CH_ERR_DEVICE, "%s: the CUDA backend is not available (%s)", fn, info);
    if (!ch_cuda_table.nvtx_push || !ch_cuda_table.nvtx_pop)
        return ch_fail(CH_ERR_DEVICE, "%s: the CUDA backend was built without NVTX 3's headers "
                       "(nvtx3/nvToolsExt.h in the CUDA toolkit)", fn);
    return CH_OK;
}

ch_status ch_cuda_nvtx_push(const char *name) {
    if (!name)
        return ch_fail(CH_ERR_ARG, "ch_cuda_nvtx_push: NULL name");
    CH_TRY(need_nvtx("NVTX range push"));
    ch_cuda_table.nvtx_push(name);
    return CH_OK;
}

ch_status ch_cuda_nvtx_pop(void) {
    CH_TRY(need_nvtx("NVTX range pop"));
    ch_cuda_table.nvtx_pop();
    return CH_OK;
}

int ch_cuda_arch(int device) {
    if (need_device(device, "arch") != CH_OK) {
        ch_clear_error();
        return 0;
    }
    return ch_cuda_table.device_arch(device);
}

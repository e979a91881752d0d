/*
 * cuda_hooks.h -- the table through which libchainlua forwards GPU work to
 * libchainlua_cuda.  The backend's exported chainlua_cuda_init() fills it.
 * Bump CH_CUDA_ABI whenever the layout changes.
 */
#ifndef CHAINLUA_CUDA_HOOKS_H
#define CHAINLUA_CUDA_HOOKS_H

#include "chainlua.h"

#define CH_CUDA_ABI 1

typedef struct ch_cuda_hooks {
    int abi;                       /* set by the core before init */
    int device_count;              /* set by the backend */
    char info[256];                /* versions: CUDA runtime, cuDNN, devices */
    void *(*alloc)(int device, size_t nbytes);
    void (*free)(int device, void *p, size_t nbytes);
    void (*cache_free_all)(int device);
    int64_t (*cache_bytes)(int device);
    /* same-shape copy with cast; either side may be the CPU */
    ch_status (*copy)(ch_tensor *dst, const ch_tensor *src);
    ch_status (*fill)(ch_tensor *t, double value);
    ch_status (*synchronize)(int device);
} ch_cuda_hooks;

typedef int (*ch_cuda_init_fn)(ch_cuda_hooks *hooks);

#endif

/*
 * cuda_hooks.h -- what libchainlua and libchainlua_cuda exchange when the
 * backend loads: the backend's services (memory, copies between host and
 * device, synchronisation, user kernels) and its kernel table (one pointer:
 * core/kernels.h).  The backend's exported chainlua_cuda_init() fills it.
 * Bump CH_CUDA_ABI when this struct's layout changes; adding a kernel to the
 * list changes only the list, which both sides compare at load time.
 */
#ifndef CHAINLUA_CUDA_HOOKS_H
#define CHAINLUA_CUDA_HOOKS_H

#include "chainlua.h"
#include "kernels.h"

#define CH_CUDA_ABI 10

/* The backend's streams, events and pinned staging buffers
 * (runtime/cuda/stream.c, pinned.c); the core checks the device and the
 * arguments before calling them. */
typedef struct ch_cuda_stream_services {
    ch_status (*create)(int device, int non_blocking, ch_cuda_stream **s);
    void (*destroy)(ch_cuda_stream *s);
    int (*device)(const ch_cuda_stream *s);
    void *(*native)(const ch_cuda_stream *s);
    ch_status (*use)(int device, ch_cuda_stream *s);
    ch_cuda_stream *(*current)(int device);
    ch_status (*synchronize)(int device, ch_cuda_stream *s);
    ch_status (*query)(int device, ch_cuda_stream *s, int *done);
    ch_status (*wait_event)(int device, ch_cuda_stream *s, const ch_cuda_event *e);
    ch_status (*event_create)(int device, int blocking, int disable_timing, int interprocess, ch_cuda_event **e);
    void (*event_destroy)(ch_cuda_event *e);
    int (*event_device)(const ch_cuda_event *e);
    ch_status (*event_record)(ch_cuda_event *e, ch_cuda_stream *s);
    ch_status (*event_synchronize)(const ch_cuda_event *e);
    ch_status (*event_query)(const ch_cuda_event *e, int *done);
    ch_status (*event_elapsed)(const ch_cuda_event *start, const ch_cuda_event *end, float *ms);
    int64_t (*pinned_bytes)(int device);
    int64_t (*pinned_free_blocks)(int device);
    void (*pinned_free_all)(int device);
} ch_cuda_stream_services;

typedef struct ch_cuda_hooks {
    int abi;                       /* set by the core before init */
    int device_count;              /* set by the backend */
    char info[512];                /* versions: CUDA runtime, cuDNN, devices */
    int cudnn_version;             /* cudnnGetVersion(), 0 when cuDNN is unusable */
    /* Set by the core before init: records the message ch_last_error()
     * returns.  The backend reports every failure through it, since it does
     * not link libchainlua (a second copy would have its own error state). */
    ch_status (*fail)(ch_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
    void *(*alloc)(int device, size_t nbytes);
    void (*free)(int device, void *p, size_t nbytes);
    void (*cache_free_all)(int device);
    int64_t (*cache_bytes)(int device);
    /* same-shape copy with cast; either side may be the CPU */
    ch_status (*copy)(ch_tensor *dst, const ch_tensor *src);
    ch_status (*synchronize)(int device);
    /* User kernels (runtime/cuda/kernel.c).  compile, image_free and
     * nvrtc_arch are set even when there is no GPU: NVRTC needs none. */
    ch_status (*compile)(const char *src, const char *name, const char *arch, char **image, size_t *size);
    void (*image_free)(void *p);
    int (*nvrtc_arch)(void);
    ch_status (*kernel_load)(int device, const void *image, const char *name, void **kernel);
    ch_status (*launch)(int device, void *kernel, uint32_t blocks, uint32_t threads, uint32_t shmem, void **args);
    int (*device_arch)(int device);
    /* Raw kernels (cuda.raw) and NVTX ranges (CUDAProfileHook):
     * launch_grid (kernel.c) is set with a GPU; nvtx_push/nvtx_pop (nvtx.c)
     * always, since NVTX needs no GPU (it does nothing unless a profiler
     * injects itself). */
    ch_status (*launch_grid)(int device, void *kernel, const uint32_t grid[3], const uint32_t block[3],
                             uint32_t shmem, void **args);
    void (*nvtx_push)(const char *name);
    void (*nvtx_pop)(void);
    /* The backend's kernel table (core/kernels.h), set by the backend; its
     * kernel_list must equal the core's CH_KERNEL_LIST_STR. */
    const ch_kernel_table *kernels;
    const char *kernel_list;
    /* NCCL (runtime/cuda/nccl.c), loaded by the backend on first use; set
     * by the backend, each fails with the reason when NCCL is absent.
     * collective's kind: 0 all-reduce, 1 reduce, 2 broadcast. */
    ch_status (*nccl_version)(int *version);
    ch_status (*nccl_unique_id)(uint8_t *id);
    ch_status (*nccl_comm_init_rank)(void **comm, int nranks, const uint8_t *id, int rank, int device);
    ch_status (*nccl_comm_init_all)(void **comms, int ndev, const int *devices);
    ch_status (*nccl_comm_destroy)(void *comm);
    ch_status (*nccl_group)(int start);
    ch_status (*nccl_collective)(int kind, void *comm, const ch_tensor *send, ch_tensor *recv, int op, int root);
    /* streams, events, pinned buffers (set by the backend with a GPU) */
    const ch_cuda_stream_services *streams;
} ch_cuda_hooks;

typedef int (*ch_cuda_init_fn)(ch_cuda_hooks *hooks);

/* In libchainlua (core/cuda_loader.c): the table, and the backend's copy
 * service once a GPU is usable (NULL before). */
extern ch_cuda_hooks ch_cuda_table;
extern ch_status (*ch_device_copy_hook)(ch_tensor *dst, const ch_tensor *src);

#endif

/*
 * nvtx.c -- NVTX ranges for chainer.function_hooks.CUDAProfileHook.
 *
 * NVTX 3 is header-only: its calls do nothing until a profiler (Nsight
 * Systems) injects its library through NVTX_INJECTION64_PATH, so pushing and
 * popping is safe, and cheap, with no profiler and no GPU.  A toolkit
 * installed without the NVTX headers still builds the backend: the hooks
 * are then NULL and CUDAProfileHook says why it cannot run.
 */
#include "backend.h"

#if __has_include(<nvtx3/nvToolsExt.h>)
#include <nvtx3/nvToolsExt.h>

static void range_push(const char *name) { nvtxRangePushA(name); }
static void range_pop(void) { nvtxRangePop(); }

void (*const cu_nvtx_push)(const char *name) = range_push;
void (*const cu_nvtx_pop)(void) = range_pop;
#else
void (*const cu_nvtx_push)(const char *name) = NULL;
void (*const cu_nvtx_pop)(void) = NULL;
#endif

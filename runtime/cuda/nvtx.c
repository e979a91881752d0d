/*
 * nvtx.c -- NVTX ranges for chainer.function_hooks.CUDAProfileHook.
 *
 * NVTX 3 is header-only: its calls do nothing until a profiler (Nsight
 * Systems, nvprof) injects its library through NVTX_INJECTION64_PATH, so
 * pushing and popping is safe, and cheap, with no profiler and no GPU.
 */
#include "backend.h"

#include <nvtx3/nvToolsExt.h>

void cu_nvtx_push(const char *name) { nvtxRangePushA(name); }

void cu_nvtx_pop(void) { nvtxRangePop(); }

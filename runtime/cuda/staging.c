/*
 * staging.c -- device scratch buffers and small synchronous transfers for
 * kernels whose host side needs a number from the device (a count, the
 * first bad index) or hands it a few numbers (an initial value), on the
 * current stream through the pinned buffers of pinned.c.  Under
 * CU_EMULATE (tests/cuda) "device memory" is host memory, so these become
 * malloc, free and memcpy there, and the kernels that use them run emulated.
 */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

void *cu_stage_alloc(int device, size_t nbytes, const char *fn) {
#ifdef CU_EMULATE
    void *p = malloc(nbytes ? nbytes : 1);
    if (!p)
        cu_fail(CH_ERR_MEMORY, "%s: cannot allocate %zu bytes of scratch", fn, nbytes);
    return p;
#else
    return cu_scratch(device, nbytes, fn);
#endif
}

void cu_stage_free(int device, void *p, size_t nbytes) {
    if (!p)
        return;
#ifdef CU_EMULATE
    (void)device, (void)nbytes;
    free(p);
#else
    cu_scratch_release(device, p, nbytes);
#endif
}

/* On the current stream, through the pinned buffers (pinned.c). */
ch_status cu_to_host(void *host, const void *dev, size_t nbytes, const char *fn) {
    return cu_download(host, dev, nbytes, fn);
}

ch_status cu_to_device(void *dev, const void *host, size_t nbytes, const char *fn) {
    return cu_upload(dev, host, nbytes, fn);
}

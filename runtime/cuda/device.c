/* device.c -- device selection, synchronisation and the dtype table. */
#include "backend.h"

#include <cuda_runtime_api.h>

int cu_device_count = 0;

ch_status cu_use(int device, const char *fn) {
    if (device < 0 || device >= cu_device_count)
        return cu_fail(CH_ERR_DEVICE, "%s: no device cuda:%d (%d GPU%s available)", fn, device, cu_device_count,
                       cu_device_count == 1 ? "" : "s");
    cu_current_device = device; /* whose current stream launches use (stream.c) */
#ifdef CU_EMULATE /* tests/cuda: the emulated device is host memory */
    return CH_OK;
#else
    /* cheap (a thread-local write in the runtime); every entry point calls
     * it because the current device is per host thread */
    return cu_check(cudaSetDevice(device), fn, "cudaSetDevice");
#endif
}

ch_status cu_synchronize(int device) {
    ch_status st = cu_use(device, "synchronize");
    if (st != CH_OK)
        return st;
#ifdef CU_EMULATE
    return CH_OK;
#else
    return cu_check(cudaDeviceSynchronize(), "synchronize", "cudaDeviceSynchronize");
#endif
}

static const size_t sizes[] = {1, 1, 1, 2, 4, 8, 2, 4, 8};
static const char *const names[] = {CH_DTYPE_LIST(CH_OP_NAME)};
_Static_assert(sizeof sizes / sizeof *sizes == CH_NDTYPES, "dtype sizes: one per entry of CH_DTYPE_LIST");
_Static_assert(sizeof names / sizeof *names == CH_NDTYPES, "dtype names: one per entry of CH_DTYPE_LIST");

size_t cu_dtype_size(int dt) { return dt >= 0 && dt < CH_NDTYPES ? sizes[dt] : 0; }
const char *cu_dtype_name(int dt) { return dt >= 0 && dt < CH_NDTYPES ? names[dt] : "invalid"; }

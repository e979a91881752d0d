/*
 * plan_nccl.h -- NCCL, the collectives between GPUs, which the backend
 * loads on first use (plan_nccl.c) like cuSOLVER and cuFFT (plan_libs.c).
 *
 * NCCL is not part of the CUDA toolkit and most programs never need it, so
 * nothing links it and no nccl.h is needed to build: the few types,
 * enums and functions used are declared here, with the values of NCCL 2's
 * public ABI (stable since 2.0; ncclAvg since 2.10).
 *
 * Everything here is plain C without CUDA headers: the dtype and op
 * mapping, the checks of a collective's buffers and the loading are
 * unit-tested by tests/c/test_cuda_plan_nccl.c on machines without a GPU.
 */
#ifndef CHAINLUA_CUDA_PLAN_NCCL_H
#define CHAINLUA_CUDA_PLAN_NCCL_H

#include "chainlua.h"
#include "plan.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- NCCL's ABI (nccl.h, NCCL 2) ---------------------------------------- */
typedef struct ncclComm *ncclComm_t;
#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
    char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;
typedef int ncclResult_t; /* ncclSuccess = 0 */
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
enum { ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3, ncclInt64 = 4, ncclUint64 = 5, ncclFloat16 = 6,
       ncclFloat32 = 7, ncclFloat64 = 8 };
enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4 };
/* the stream argument is a cudaStream_t; NULL is the legacy default stream */
typedef ncclResult_t (*nccl_get_version_fn)(int *version);
typedef ncclResult_t (*nccl_get_unique_id_fn)(ncclUniqueId *id);
typedef ncclResult_t (*nccl_comm_init_rank_fn)(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
typedef ncclResult_t (*nccl_comm_init_all_fn)(ncclComm_t *comms, int ndev, const int *devlist);
typedef ncclResult_t (*nccl_comm_destroy_fn)(ncclComm_t comm);
typedef const char *(*nccl_get_error_string_fn)(ncclResult_t result);
typedef ncclResult_t (*nccl_all_reduce_fn)(const void *send, void *recv, size_t count, ncclDataType_t dt,
                                           ncclRedOp_t op, ncclComm_t comm, void *stream);
typedef ncclResult_t (*nccl_reduce_fn)(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                                       int root, ncclComm_t comm, void *stream);
typedef ncclResult_t (*nccl_broadcast_fn)(const void *send, void *recv, size_t count, ncclDataType_t dt, int root,
                                          ncclComm_t comm, void *stream);
typedef ncclResult_t (*nccl_group_fn)(void);
typedef ncclResult_t (*nccl_comm_cu_device_fn)(ncclComm_t comm, int *device);

/* The symbols taken from the library, in the order of cu_nccl_symbols. */
enum {
    CU_NCCL_GET_VERSION,
    CU_NCCL_GET_UNIQUE_ID,
    CU_NCCL_COMM_INIT_RANK,
    CU_NCCL_COMM_INIT_ALL,
    CU_NCCL_COMM_DESTROY,
    CU_NCCL_GET_ERROR_STRING,
    CU_NCCL_ALL_REDUCE,
    CU_NCCL_REDUCE,
    CU_NCCL_BROADCAST,
    CU_NCCL_GROUP_START,
    CU_NCCL_GROUP_END,
    CU_NCCL_COMM_CU_DEVICE,
    CU_NCCL_NSYMBOLS
};
/* NCCL's version code for major.minor.patch (2.9 and later; older ones
 * used major*1000 + minor*100 + patch). */
#define CU_NCCL_VERSION(major, minor, patch) ((major) * 10000 + (minor) * 100 + (patch))
/* "2.21.5" from NCCL's version code (either encoding). */
void cu_nccl_version_str(int code, char *buf, size_t n);

/* ---- loading ------------------------------------------------------------ */
/* A cu_lazy_lib for NCCL: $CHAINLUA_NCCL_LIB when set, then libnccl.so.2 and
 * libnccl.so, with the symbols above. */
void cu_nccl_lib_init(cu_lazy_lib *lib, const char *override_path);
/* Loads lib once (cu_lib_load); 0 with err = "<fn>: NCCL could not be
 * loaded (looked for <names>: <why>); install ..." when it is absent. */
int cu_nccl_load(cu_lazy_lib *lib, const char *fn, char *err, size_t errlen);

/* ---- a collective's operands --------------------------------------------- */
/* The collectives of ch_nccl_* (chainlua.h's ch_nccl_kind). */
enum { CU_NCCL_KIND_ALL_REDUCE, CU_NCCL_KIND_REDUCE, CU_NCCL_KIND_BROADCAST };
/* What NCCL is handed for one collective. */
typedef struct cu_nccl_call {
    ncclDataType_t dt;
    ncclRedOp_t op;
    size_t count; /* elements of dt (a broadcast of 2-byte integers moves bytes) */
    int device;   /* the buffers' device */
} cu_nccl_call;
/*
 * Checks the operands of collective `kind` named fn and fills *call:
 * send and recv (either may be NULL where the collective does not read or
 * write it: recv of a reduce off the root, send of a broadcast off the
 * root; not both) are live, C-contiguous, on one CUDA device, of one dtype
 * and element count; op (ch_nccl_op) is a reduction NCCL does on that
 * dtype (sums need a number type NCCL has: int8, uint8, int32, int64,
 * float16, float32, float64; AVG float dtypes and NCCL >= 2.10); a
 * broadcast moves any dtype.  Returns 0, or -1 with err = the message.
 */
int cu_nccl_plan(int kind, const char *fn, const ch_tensor *send, const ch_tensor *recv, int op, int nccl_version,
                 cu_nccl_call *call, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif

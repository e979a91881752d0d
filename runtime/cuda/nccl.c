/*
 * nccl.c -- the NCCL services of the backend's hooks (cuda_hooks.h): the
 * version, unique ids, communicators (one per rank over processes, or one
 * per device of this process), and all-reduce, reduce and broadcast on
 * device tensors, queued on the buffers' device's default stream.
 *
 * NCCL is loaded with dlopen on the first call (plan_nccl.c, the same
 * pattern as cuSOLVER and cuFFT in plan_libs.c): the backend builds and
 * loads without it, and only these calls fail, saying what was looked for.
 *
 * Compiled only: this code has not yet run on a GPU.  Its host side (the
 * loading, the dtype/op mapping and the operand checks in plan_nccl.c) is
 * unit-tested without one; the calls are checked by the GPU specs
 * (spec/cuda/multi_gpu_spec.lua).
 */
#include "backend.h"
#include "cuda_hooks.h"
#include "plan_nccl.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static cu_lazy_lib nccl;
static pthread_once_t nccl_names_once = PTHREAD_ONCE_INIT;
static void nccl_names(void) { cu_nccl_lib_init(&nccl, getenv("CHAINLUA_NCCL_LIB")); }

/* NCCL's function `which`, typed. */
#define NCCL_FN(type, which) ((type)nccl.fns[which])

static ch_status need_nccl(const char *fn) {
    pthread_once(&nccl_names_once, nccl_names);
    char err[1024];
    if (!cu_nccl_load(&nccl, fn, err, sizeof err))
        return cu_fail(CH_ERR_UNSUPPORTED, "%s", err);
    return CH_OK;
}

static ch_status nccl_check(ncclResult_t r, const char *fn, const char *what) {
    if (r == 0)
        return CH_OK;
    const char *why = NCCL_FN(nccl_get_error_string_fn, CU_NCCL_GET_ERROR_STRING)(r);
    return cu_fail(CH_ERR_DEVICE, "%s: %s failed: %s (NCCL error %d)", fn, what, why ? why : "unknown error", r);
}

/* The stream NCCL queues on: the device's current stream (stream.c), on
 * which the backend queues every kernel and copy, so a collective is ordered
 * after the work that wrote its buffers and before the work that reads them.
 * The caller has made the buffers' device current (cu_use). */
static void *stream_of(void) { return cu_stream(); }

static ch_status nccl_version(int *version) {
    CU_TRY(need_nccl("nccl version"));
    return nccl_check(NCCL_FN(nccl_get_version_fn, CU_NCCL_GET_VERSION)(version), "nccl version", "ncclGetVersion");
}

static ch_status nccl_unique_id(uint8_t *id) {
    CU_TRY(need_nccl("nccl unique id"));
    ncclUniqueId u;
    CU_TRY(nccl_check(NCCL_FN(nccl_get_unique_id_fn, CU_NCCL_GET_UNIQUE_ID)(&u), "nccl unique id",
                      "ncclGetUniqueId"));
    memcpy(id, u.internal, NCCL_UNIQUE_ID_BYTES);
    return CH_OK;
}

static ch_status nccl_comm_init_rank(void **comm, int nranks, const uint8_t *id, int rank, int device) {
    const char *fn = "nccl communicator";
    CU_TRY(need_nccl(fn));
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return cu_fail(CH_ERR_ARG, "%s: rank %d of %d ranks is out of range", fn, rank, nranks);
    CU_TRY(cu_use(device, fn)); /* ncclCommInitRank binds the current device */
    ncclUniqueId u;
    memcpy(u.internal, id, NCCL_UNIQUE_ID_BYTES);
    ncclComm_t c = NULL;
    CU_TRY(nccl_check(NCCL_FN(nccl_comm_init_rank_fn, CU_NCCL_COMM_INIT_RANK)(&c, nranks, u, rank), fn,
                      "ncclCommInitRank"));
    *comm = c;
    return CH_OK;
}

static ch_status nccl_comm_init_all(void **comms, int ndev, const int *devices) {
    const char *fn = "nccl communicators";
    CU_TRY(need_nccl(fn));
    if (ndev < 1 || ndev > CU_MAX_DEVICES)
        return cu_fail(CH_ERR_ARG, "%s: %d devices (expected 1 to %d)", fn, ndev, CU_MAX_DEVICES);
    for (int k = 0; k < ndev; k++) {
        CU_TRY(cu_use(devices[k], fn));
        for (int j = 0; j < k; j++)
            if (devices[j] == devices[k])
                return cu_fail(CH_ERR_ARG, "%s: cuda:%d is listed twice (one communicator per device)", fn,
                               devices[k]);
    }
    ncclComm_t c[CU_MAX_DEVICES];
    CU_TRY(nccl_check(NCCL_FN(nccl_comm_init_all_fn, CU_NCCL_COMM_INIT_ALL)(c, ndev, devices), fn,
                      "ncclCommInitAll"));
    for (int k = 0; k < ndev; k++)
        comms[k] = c[k];
    return CH_OK;
}

static ch_status nccl_comm_destroy(void *comm) {
    CU_TRY(need_nccl("nccl destroy"));
    if (!comm)
        return CH_OK;
    return nccl_check(NCCL_FN(nccl_comm_destroy_fn, CU_NCCL_COMM_DESTROY)((ncclComm_t)comm), "nccl destroy",
                      "ncclCommDestroy");
}

static ch_status nccl_group(int start) {
    const char *fn = start ? "nccl group start" : "nccl group end";
    CU_TRY(need_nccl(fn));
    nccl_group_fn f = NCCL_FN(nccl_group_fn, start ? CU_NCCL_GROUP_START : CU_NCCL_GROUP_END);
    return nccl_check(f(), fn, start ? "ncclGroupStart" : "ncclGroupEnd");
}

static ch_status nccl_collective(int kind, void *comm, const ch_tensor *send, ch_tensor *recv, int op, int root) {
    static const char *const names[] = {"nccl all_reduce", "nccl reduce", "nccl broadcast"};
    if (kind < 0 || kind > CU_NCCL_KIND_BROADCAST)
        return cu_fail(CH_ERR_ARG, "nccl: unknown collective %d", kind);
    const char *fn = names[kind];
    CU_TRY(need_nccl(fn));
    if (!comm)
        return cu_fail(CH_ERR_ARG, "%s: the communicator is NULL (destroyed?)", fn);
    int version = 0;
    CU_TRY(nccl_check(NCCL_FN(nccl_get_version_fn, CU_NCCL_GET_VERSION)(&version), fn, "ncclGetVersion"));
    cu_nccl_call call;
    char err[512];
    if (cu_nccl_plan(kind, fn, send, recv, op, version, &call, err, sizeof err) != 0)
        return cu_fail(CH_ERR_ARG, "%s", err);
    int comm_device = -1;
    CU_TRY(nccl_check(NCCL_FN(nccl_comm_cu_device_fn, CU_NCCL_COMM_CU_DEVICE)((ncclComm_t)comm, &comm_device), fn,
                      "ncclCommCuDevice"));
    if (comm_device != call.device)
        return cu_fail(CH_ERR_DEVICE, "%s: the buffers are on cuda:%d but the communicator is on cuda:%d", fn,
                       call.device, comm_device);
    CU_TRY(cu_use(call.device, fn));
    const void *s = send ? cu_base(send) : NULL;
    void *r = recv ? cu_base(recv) : NULL;
    ncclComm_t c = (ncclComm_t)comm;
    void *stream = stream_of();
    switch (kind) {
    case CU_NCCL_KIND_ALL_REDUCE:
        return nccl_check(NCCL_FN(nccl_all_reduce_fn, CU_NCCL_ALL_REDUCE)(s, r, call.count, call.dt, call.op, c, stream),
                          fn, "ncclAllReduce");
    case CU_NCCL_KIND_REDUCE:
        return nccl_check(
            NCCL_FN(nccl_reduce_fn, CU_NCCL_REDUCE)(s, r, call.count, call.dt, call.op, root, c, stream), fn,
            "ncclReduce");
    default:
        /* NCCL reads send on the root only; elsewhere recv is the target */
        return nccl_check(NCCL_FN(nccl_broadcast_fn, CU_NCCL_BROADCAST)(s ? s : r, r ? r : (void *)s, call.count,
                                                                        call.dt, root, c, stream),
                          fn, "ncclBroadcast");
    }
}

void cu_nccl_hooks(struct ch_cuda_hooks *hooks) {
    hooks->nccl_version = nccl_version;
    hooks->nccl_unique_id = nccl_unique_id;
    hooks->nccl_comm_init_rank = nccl_comm_init_rank;
    hooks->nccl_comm_init_all = nccl_comm_init_all;
    hooks->nccl_comm_destroy = nccl_comm_destroy;
    hooks->nccl_group = nccl_group;
    hooks->nccl_collective = nccl_collective;
}

/*
 * nccl_api.c -- the ch_nccl_* entry points (chainlua.h): they check what
 * does not need the backend, then forward to the CUDA backend's NCCL
 * services (runtime/cuda/nccl.c), which load libnccl.so.2 on first use and
 * check the buffers (runtime/cuda/plan_nccl.c).  Without the backend or a
 * GPU each call fails saying so.
 */
#include "internal.h"
#include "cuda_hooks.h"

static ch_status need_backend(const char *fn) {
    if (!ch_cuda_available() || !ch_cuda_table.nccl_collective)
        return ch_fail(CH_ERR_DEVICE, "%s: NCCL runs on GPUs, and the CUDA backend is not available (%s)", fn,
                       ch_cuda_info());
    return CH_OK;
}

ch_status ch_nccl_version(int *version) {
    if (!version)
        return ch_fail(CH_ERR_ARG, "nccl version: NULL argument");
    CH_TRY(need_backend("nccl version"));
    return ch_cuda_table.nccl_version(version);
}

ch_status ch_nccl_unique_id(uint8_t *id) {
    if (!id)
        return ch_fail(CH_ERR_ARG, "nccl unique id: NULL argument");
    CH_TRY(need_backend("nccl unique id"));
    return ch_cuda_table.nccl_unique_id(id);
}

ch_status ch_nccl_comm_init_rank(void **comm, int nranks, const uint8_t *id, int rank, int device) {
    const char *fn = "nccl communicator";
    if (!comm || !id)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return ch_fail(CH_ERR_ARG, "%s: rank %d of %d ranks is out of range", fn, rank, nranks);
    CH_TRY(need_backend(fn));
    return ch_cuda_table.nccl_comm_init_rank(comm, nranks, id, rank, device);
}

ch_status ch_nccl_comm_init_all(void **comms, int ndev, const int *devices) {
    const char *fn = "nccl communicators";
    if (!comms || !devices)
        return ch_fail(CH_ERR_ARG, "%s: NULL argument", fn);
    if (ndev < 1)
        return ch_fail(CH_ERR_ARG, "%s: %d devices (expected at least 1)", fn, ndev);
    CH_TRY(need_backend(fn));
    return ch_cuda_table.nccl_comm_init_all(comms, ndev, devices);
}

ch_status ch_nccl_comm_destroy(void *comm) {
    if (!comm)
        return CH_OK;
    CH_TRY(need_backend("nccl destroy"));
    return ch_cuda_table.nccl_comm_destroy(comm);
}

ch_status ch_nccl_group_start(void) {
    CH_TRY(need_backend("nccl group start"));
    return ch_cuda_table.nccl_group(1);
}

ch_status ch_nccl_group_end(void) {
    CH_TRY(need_backend("nccl group end"));
    return ch_cuda_table.nccl_group(0);
}

/* The tensors given are live (a NULL one is the backend's to judge). */
static ch_status collective(int kind, const char *fn, void *comm, const ch_tensor *send, ch_tensor *recv, int op,
                            int root) {
    if (send)
        CH_CHECK_ARG(send, fn, "send");
    if (recv)
        CH_CHECK_ARG(recv, fn, "recv");
    if (!comm)
        return ch_fail(CH_ERR_ARG, "%s: the communicator is NULL (destroyed?)", fn);
    CH_TRY(need_backend(fn));
    return ch_cuda_table.nccl_collective(kind, comm, send, recv, op, root);
}

ch_status ch_nccl_all_reduce(void *comm, const ch_tensor *send, ch_tensor *recv, int op) {
    return collective(0, "nccl all_reduce", comm, send, recv, op, 0);
}

ch_status ch_nccl_reduce(void *comm, const ch_tensor *send, ch_tensor *recv, int op, int root) {
    return collective(1, "nccl reduce", comm, send, recv, op, root);
}

ch_status ch_nccl_broadcast(void *comm, const ch_tensor *send, ch_tensor *recv, int root) {
    return collective(2, "nccl broadcast", comm, send, recv, CH_NCCL_SUM, root);
}

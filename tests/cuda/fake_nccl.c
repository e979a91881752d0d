/*
 * fake_nccl.c -- a stand-in for libnccl.so.2 with NCCL's symbols, for the
 * emulated test of runtime/cuda/nccl.c (tests/cuda/test_nccl.cu), which
 * loads it through $CHAINLUA_NCCL_LIB.  Its "devices" are host memory and
 * every communicator has one rank, so a collective is a copy; each call is
 * recorded (fake_nccl_last) so the test can check what the backend handed
 * NCCL: buffers, counts, types, ops, roots and streams.
 */
#include "plan_nccl.h"
#include "fake_nccl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ncclComm {
    int device;
};


static fake_nccl_call last;
static int groups_open, group_calls;

const fake_nccl_call *fake_nccl_last(void) { return &last; }
int fake_nccl_group_calls(void) { return group_calls; }

static size_t type_size(int dt) {
    static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8};
    return dt >= 0 && dt <= ncclFloat64 ? sizes[dt] : 0;
}

static void record(const char *what, const void *send, void *recv, size_t count, int dt, int op, int root,
                   void *stream) {
    snprintf(last.what, sizeof last.what, "%s", what);
    last.send = send, last.recv = recv, last.count = count, last.dt = dt, last.op = op, last.root = root;
    last.stream = stream, last.groups_open = groups_open;
}

ncclResult_t ncclGetVersion(int *version) {
    *version = 22105;
    return 0;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
    memset(id->internal, 7, sizeof id->internal);
    return 0;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank) {
    if (id.internal[0] != 7 || nranks != 1 || rank != 0)
        return 4; /* ncclInvalidArgument */
    *comm = calloc(1, sizeof **comm);
    return 0;
}

ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist) {
    for (int k = 0; k < ndev; k++) {
        comms[k] = calloc(1, sizeof **comms);
        comms[k]->device = devlist[k];
    }
    return 0;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
    free(comm);
    return 0;
}

ncclResult_t ncclCommCuDevice(ncclComm_t comm, int *device) {
    *device = comm->device;
    return 0;
}

const char *ncclGetErrorString(ncclResult_t r) { return r == 4 ? "invalid argument (fake)" : "unknown (fake)"; }

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                           ncclComm_t comm, void *stream) {
    record("all_reduce", send, recv, count, dt, op, -1, stream);
    if (send != recv)
        memcpy(recv, send, count * type_size(dt));
    return 0;
}

ncclResult_t ncclReduce(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op, int root,
                        ncclComm_t comm, void *stream) {
    record("reduce", send, recv, count, dt, op, root, stream);
    if (root != 0)
        return 4;
    if (recv && send != recv)
        memcpy(recv, send, count * type_size(dt));
    return 0;
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t dt, int root, ncclComm_t comm,
                           void *stream) {
    record("broadcast", send, recv, count, dt, -1, root, stream);
    if (send != recv)
        memcpy(recv, send, count * type_size(dt));
    return 0;
}

ncclResult_t ncclGroupStart(void) {
    groups_open++;
    group_calls++;
    return 0;
}

ncclResult_t ncclGroupEnd(void) {
    if (groups_open == 0)
        return 5; /* ncclInvalidUsage */
    groups_open--;
    return 0;
}

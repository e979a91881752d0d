/* test_nccl.cu -- the backend's NCCL services (nccl.c) emulated on the host
 * against a stand-in NCCL (tests/cuda/fake_nccl.c, loaded through
 * $CHAINLUA_NCCL_LIB): what reaches NCCL (buffers, counts, types, ops,
 * roots, the default stream), NCCL's errors turned into messages, and the
 * checks before any call.  The real library runs only in the GPU specs.
 * emulates: nccl.c plan_nccl.c plan_libs.c */
#include "emulator.h"
#include "cuda_hooks.h"
#include "plan_nccl.h"
#include "fake_nccl.h"

#include <dlfcn.h>
#include <stdlib.h>

static const fake_nccl_call *(*last_call)(void);
static int (*group_calls)(void);

static ch_tensor *cpu_tensor(ch_dtype dt, int64_t n, double v) {
    ch_tensor *t;
    CHECK_OK(ch_full(dt, 1, &n, v, CH_CPU, &t));
    return t;
}

static void test_services(const ch_cuda_hooks *h) {
    int v = 0;
    CHECK(h->nccl_version(&v) == CH_OK && v == 22105);
    uint8_t id[NCCL_UNIQUE_ID_BYTES];
    CHECK(h->nccl_unique_id(id) == CH_OK && id[0] == 7 && id[127] == 7);
    void *comm = NULL;
    CHECK(h->nccl_comm_init_rank(&comm, 1, id, 0, 0) == CH_OK && comm != NULL);
    CHECK(h->nccl_comm_destroy(comm) == CH_OK);
    /* NCCL's own failure comes back with its message */
    id[0] = 0;
    EMU_CHECK_ERR(h->nccl_comm_init_rank(&comm, 1, id, 0, 0), CH_ERR_DEVICE,
                  "nccl communicator: ncclCommInitRank failed: invalid argument (fake) (NCCL error 4)");
    /* a device the machine lacks is refused before NCCL is asked */
    EMU_CHECK_ERR(h->nccl_comm_init_rank(&comm, 1, id, 0, 3), CH_ERR_DEVICE, "nccl communicator: no device cuda:3");
    int devs[2] = {0, 0};
    void *comms[2];
    EMU_CHECK_ERR(h->nccl_comm_init_all(comms, 2, devs), CH_ERR_ARG, "cuda:0 is listed twice");
    CHECK(h->nccl_comm_init_all(comms, 1, devs) == CH_OK);
    CHECK(h->nccl_comm_destroy(comms[0]) == CH_OK);
    CHECK(h->nccl_comm_destroy(NULL) == CH_OK);
    int before = group_calls();
    CHECK(h->nccl_group(1) == CH_OK && h->nccl_group(0) == CH_OK);
    CHECK(group_calls() == before + 1);
    EMU_CHECK_ERR(h->nccl_group(0), CH_ERR_DEVICE, "nccl group end: ncclGroupEnd failed");
}

static void test_collectives(const ch_cuda_hooks *h) {
    int dev0 = 0;
    void *comm;
    CHECK(h->nccl_comm_init_all(&comm, 1, &dev0) == CH_OK);
    ch_tensor *a = cpu_tensor(CH_FLOAT32, 6, 2.5), *b = cpu_tensor(CH_FLOAT32, 6, 0);
    ch_tensor da = emu_on_device(a), db = emu_on_device(b);
    /* all-reduce: the buffers' addresses, NCCL's float32, the op, the default stream */
    CHECK(h->nccl_collective(CU_NCCL_KIND_ALL_REDUCE, comm, &da, &db, CH_NCCL_MAX, 0) == CH_OK);
    const fake_nccl_call *c = last_call();
    CHECK(strcmp(c->what, "all_reduce") == 0 && c->send == a->data && c->recv == b->data);
    CHECK(c->count == 6 && c->dt == ncclFloat32 && c->op == ncclMax && c->stream == NULL);
    double got = 0;
    CHECK(ch_get_flat(b, 5, &got) == CH_OK && got == 2.5);
    /* a view's first element, not its storage's */
    ch_tensor view = da;
    view.offset = 2, view.dim[0] = 4, view.numel = 4;
    ch_tensor *r = cpu_tensor(CH_FLOAT32, 4, 0);
    ch_tensor dr = emu_on_device(r);
    CHECK(h->nccl_collective(CU_NCCL_KIND_REDUCE, comm, &view, &dr, CH_NCCL_SUM, 0) == CH_OK);
    c = last_call();
    CHECK(strcmp(c->what, "reduce") == 0 && c->send == (char *)a->data + 8 && c->count == 4 && c->root == 0);
    /* reduce off the root: no recv buffer */
    CHECK(h->nccl_collective(CU_NCCL_KIND_REDUCE, comm, &da, NULL, CH_NCCL_AVG, 0) == CH_OK);
    CHECK(last_call()->recv == NULL && last_call()->op == ncclAvg);
    /* broadcast: int16 moves as bytes; off the root, recv doubles as send */
    ch_tensor *s16 = cpu_tensor(CH_INT16, 5, 3);
    ch_tensor d16 = emu_on_device(s16);
    CHECK(h->nccl_collective(CU_NCCL_KIND_BROADCAST, comm, NULL, &d16, CH_NCCL_SUM, 0) == CH_OK);
    c = last_call();
    CHECK(strcmp(c->what, "broadcast") == 0 && c->send == s16->data && c->recv == s16->data);
    CHECK(c->dt == ncclUint8 && c->count == 10);
    /* NCCL's error, and the checks before it */
    EMU_CHECK_ERR(h->nccl_collective(CU_NCCL_KIND_REDUCE, comm, &da, &db, CH_NCCL_SUM, 1), CH_ERR_DEVICE,
                  "nccl reduce: ncclReduce failed: invalid argument (fake)");
    EMU_CHECK_ERR(h->nccl_collective(CU_NCCL_KIND_ALL_REDUCE, comm, &d16, &d16, CH_NCCL_SUM, 0), CH_ERR_ARG,
                  "nccl all_reduce: NCCL cannot sum int16 data");
    EMU_CHECK_ERR(h->nccl_collective(CU_NCCL_KIND_ALL_REDUCE, comm, a, b, CH_NCCL_SUM, 0), CH_ERR_ARG,
                  "nccl all_reduce: argument 'send' is on the CPU");
    EMU_CHECK_ERR(h->nccl_collective(CU_NCCL_KIND_ALL_REDUCE, NULL, &da, &db, CH_NCCL_SUM, 0), CH_ERR_ARG,
                  "the communicator is NULL");
    /* buffers on another device than the communicator's */
    void *comm1;
    int dev1 = 1;
    cu_device_count = 2; /* the stand-in NCCL takes any device list */
    CHECK(h->nccl_comm_init_all(&comm1, 1, &dev1) == CH_OK);
    EMU_CHECK_ERR(h->nccl_collective(CU_NCCL_KIND_ALL_REDUCE, comm1, &da, &db, CH_NCCL_SUM, 0), CH_ERR_DEVICE,
                  "nccl all_reduce: the buffers are on cuda:0 but the communicator is on cuda:1");
    cu_device_count = 1;
    CHECK(h->nccl_comm_destroy(comm1) == CH_OK);
    CHECK(h->nccl_comm_destroy(comm) == CH_OK);
    ch_tensor *all[] = {a, b, r, s16};
    for (int k = 0; k < 4; k++)
        ch_tensor_release(all[k]);
}

int main(void) {
    ch_cuda_hooks h;
    memset(&h, 0, sizeof h);
    cu_nccl_hooks(&h);
    /* the stand-in, through the variable users set; read once, at the first call */
    setenv("CHAINLUA_NCCL_LIB", FAKE_NCCL_PATH, 1);
    void *fake = dlopen(FAKE_NCCL_PATH, RTLD_NOW);
    CHECK(fake != NULL);
    if (!fake)
        return check_done("test_nccl");
    last_call = (const fake_nccl_call *(*)(void))dlsym(fake, "fake_nccl_last");
    group_calls = (int (*)(void))dlsym(fake, "fake_nccl_group_calls");
    CHECK(last_call != NULL && group_calls != NULL);
    if (!last_call || !group_calls)
        return check_done("test_nccl");
    test_services(&h);
    test_collectives(&h);
    return check_done("test_nccl");
}

/*
 * plan_nccl.c -- the host side of the NCCL collectives (see plan_nccl.h):
 * loading the library, and turning chainlua tensors, dtypes and ops into
 * what NCCL is handed, with the messages users see when they do not fit.
 *
 * Plain C without CUDA headers: tests/c/test_cuda_plan_nccl.c checks it on
 * machines without a GPU or NCCL.  The calls themselves (nccl.c) run only
 * on a GPU and are checked by spec/cuda/multi_gpu_spec.lua there.
 */
#include "plan_nccl.h"

#include <stdio.h>
#include <string.h>

static const char *const nccl_symbols[CU_NCCL_NSYMBOLS] = {
    [CU_NCCL_GET_VERSION] = "ncclGetVersion",       [CU_NCCL_GET_UNIQUE_ID] = "ncclGetUniqueId",
    [CU_NCCL_COMM_INIT_RANK] = "ncclCommInitRank",  [CU_NCCL_COMM_INIT_ALL] = "ncclCommInitAll",
    [CU_NCCL_COMM_DESTROY] = "ncclCommDestroy",     [CU_NCCL_GET_ERROR_STRING] = "ncclGetErrorString",
    [CU_NCCL_ALL_REDUCE] = "ncclAllReduce",         [CU_NCCL_REDUCE] = "ncclReduce",
    [CU_NCCL_BROADCAST] = "ncclBroadcast",          [CU_NCCL_GROUP_START] = "ncclGroupStart",
    [CU_NCCL_GROUP_END] = "ncclGroupEnd",           [CU_NCCL_COMM_CU_DEVICE] = "ncclCommCuDevice",
};
_Static_assert(CU_NCCL_NSYMBOLS < CU_LIB_MAX_SYMBOLS, "cu_lazy_lib's symbol list is NULL-terminated");
_Static_assert((int)CH_NCCL_SUM == ncclSum && (int)CH_NCCL_PROD == ncclProd && (int)CH_NCCL_MAX == ncclMax &&
                   (int)CH_NCCL_MIN == ncclMin && (int)CH_NCCL_AVG == ncclAvg,
               "ch_nccl_op lists NCCL's reductions in NCCL's order");

void cu_nccl_lib_init(cu_lazy_lib *lib, const char *override_path) {
    memset(lib, 0, sizeof *lib);
    lib->label = "NCCL";
    int k = 0;
    if (override_path && *override_path)
        lib->names[k++] = override_path;
    lib->names[k++] = "libnccl.so.2";
    lib->names[k++] = "libnccl.so";
    for (int s = 0; s < CU_NCCL_NSYMBOLS; s++)
        lib->symbols[s] = nccl_symbols[s];
}

int cu_nccl_load(cu_lazy_lib *lib, const char *fn, char *err, size_t errlen) {
    char unused[64];
    if (cu_lib_load(lib, fn, unused, sizeof unused))
        return 1;
    char names[512] = "";
    for (int k = 0; k < CU_LIB_MAX_NAMES && lib->names[k]; k++) {
        size_t len = strlen(names);
        snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "", lib->names[k]);
    }
    snprintf(err, errlen,
             "%s: NCCL could not be loaded (looked for %s: %s); install NCCL (Debian/Ubuntu: libnccl2 from "
             "NVIDIA's CUDA repository, or the nvidia-nccl-cu12 Python wheel) or set CHAINLUA_NCCL_LIB to "
             "libnccl.so.2's path",
             fn, names, lib->why);
    return 0;
}

void cu_nccl_version_str(int code, char *buf, size_t n) {
    int major, minor, patch;
    if (code >= 10000) { /* 2.9 and later */
        major = code / 10000, minor = code / 100 % 100, patch = code % 100;
    } else {
        major = code / 1000, minor = code / 100 % 10, patch = code % 100;
    }
    snprintf(buf, n, "%d.%d.%d", major, minor, patch);
}

/* The chainlua dtypes NCCL has a type for (-1: none). */
static int nccl_type(int dt) {
    switch (dt) {
    case CH_INT8: return ncclInt8;
    case CH_UINT8: return ncclUint8;
    case CH_INT32: return ncclInt32;
    case CH_INT64: return ncclInt64;
    case CH_FLOAT16: return ncclFloat16;
    case CH_FLOAT32: return ncclFloat32;
    case CH_FLOAT64: return ncclFloat64;
    default: return -1;
    }
}

static const char *dtype_name(int dt) {
    static const char *const names[] = {CH_DTYPE_LIST(CH_OP_NAME)};
    return dt >= 0 && dt < CH_NDTYPES ? names[dt] : "an invalid dtype";
}

static const size_t dtype_sizes[] = {1, 1, 1, 2, 4, 8, 2, 4, 8};
_Static_assert(sizeof dtype_sizes / sizeof *dtype_sizes == CH_NDTYPES, "one size per entry of CH_DTYPE_LIST");

/* C-contiguous (size-1 axes may have any stride). */
static int dense(const ch_tensor *t) {
    int64_t expect = 1;
    for (int d = t->nd - 1; d >= 0; d--) {
        if (t->dim[d] != 1 && t->stride[d] != expect)
            return 0;
        expect *= t->dim[d];
    }
    return 1;
}

static const char *const op_names[] = {"sum", "prod", "max", "min", "avg"};

/* One operand's problem, or NULL. */
static const char *operand_problem(const ch_tensor *t, char *buf, size_t n) {
    if (t->dt < 0 || t->dt >= CH_NDTYPES)
        return "has an invalid dtype";
    if (t->numel > 0 && !t->data)
        return "has been freed";
    if (t->dev < 0)
        return "is on the CPU (NCCL moves GPU memory: move it with :to_device('cuda:N'))";
    if (!dense(t)) {
        snprintf(buf, n, "is not C-contiguous (make it so with :contiguous())");
        return buf;
    }
    return NULL;
}

int cu_nccl_plan(int kind, const char *fn, const ch_tensor *send, const ch_tensor *recv, int op, int nccl_version,
                 cu_nccl_call *call, char *err, size_t errlen) {
    char buf[128];
    if (!send && !recv) {
        snprintf(err, errlen, "%s: no buffer given (send and recv are both NULL)", fn);
        return -1;
    }
    if (!send && kind != CU_NCCL_KIND_BROADCAST) {
        snprintf(err, errlen, "%s: the send buffer is required", fn);
        return -1;
    }
    if (!recv && kind == CU_NCCL_KIND_ALL_REDUCE) {
        snprintf(err, errlen, "%s: the recv buffer is required", fn);
        return -1;
    }
    const ch_tensor *ops[2] = {send, recv};
    const char *names[2] = {"send", "recv"};
    for (int k = 0; k < 2; k++) {
        const char *why = ops[k] ? operand_problem(ops[k], buf, sizeof buf) : NULL;
        if (why) {
            snprintf(err, errlen, "%s: argument '%s' %s", fn, names[k], why);
            return -1;
        }
    }
    if (send && recv) {
        if (send->dev != recv->dev) {
            snprintf(err, errlen, "%s: argument 'send' is on cuda:%d but 'recv' is on cuda:%d (one NCCL "
                     "communicator serves one device; both must be on it)", fn, send->dev, recv->dev);
            return -1;
        }
        if (send->dt != recv->dt || send->numel != recv->numel) {
            snprintf(err, errlen, "%s: 'send' (%s, %lld elements) and 'recv' (%s, %lld elements) must have one "
                     "dtype and element count", fn, dtype_name(send->dt), (long long)send->numel,
                     dtype_name(recv->dt), (long long)recv->numel);
            return -1;
        }
    }
    const ch_tensor *t = send ? send : recv;
    call->device = t->dev;
    call->count = (size_t)t->numel;
    call->op = ncclSum;
    int type = nccl_type(t->dt);
    if (kind == CU_NCCL_KIND_BROADCAST) {
        /* moving bits needs no arithmetic: a type NCCL lacks travels as bytes */
        if (type < 0) {
            type = ncclUint8;
            call->count *= dtype_sizes[t->dt];
        }
        call->dt = type;
        return 0;
    }
    if (op < CH_NCCL_SUM || op > CH_NCCL_AVG) {
        snprintf(err, errlen, "%s: op must be sum, prod, max, min or avg (got %d)", fn, op);
        return -1;
    }
    if (type < 0) {
        snprintf(err, errlen, "%s: NCCL cannot %s %s data (expected int8, uint8, int32, int64, float16, float32 or "
                 "float64)", fn, op_names[op], dtype_name(t->dt));
        return -1;
    }
    if (op == CH_NCCL_AVG) {
        if (t->dt != CH_FLOAT16 && t->dt != CH_FLOAT32 && t->dt != CH_FLOAT64) {
            snprintf(err, errlen, "%s: avg takes float16, float32 or float64 data (got %s; sum and divide "
                     "instead)", fn, dtype_name(t->dt));
            return -1;
        }
        if (nccl_version < CU_NCCL_VERSION(2, 10, 0)) {
            char v[32];
            cu_nccl_version_str(nccl_version, v, sizeof v);
            snprintf(err, errlen, "%s: avg needs NCCL 2.10 or newer (this is NCCL %s; sum and divide instead)", fn, v);
            return -1;
        }
    }
    call->dt = type;
    call->op = op; /* CH_NCCL_SUM.. are NCCL's values in NCCL's order */
    return 0;
}

/* test_cuda_plan_nccl.c -- the host side of the backend's NCCL collectives
 * (runtime/cuda/plan_nccl.c): loading the library (absent, present without
 * NCCL's symbols), the version string, and the mapping of tensors, dtypes
 * and ops to what NCCL is handed, with the errors for operands that do not
 * fit.  Plain C: no GPU, CUDA or NCCL needed.  The device tensors are
 * ch_tensor structs with a device id and fake data pointers, which nothing
 * here dereferences. */
#include "check.h"
#include "plan_nccl.h"

static char fake_data[64];

/* A C-contiguous 1-D "device tensor" of n elements of dt on device dev. */
static ch_tensor fake(int dt, int64_t n, int dev) {
    ch_tensor t;
    memset(&t, 0, sizeof t);
    t.dt = dt, t.dev = dev, t.nd = 1, t.refcount = 1, t.numel = n;
    t.dim[0] = n, t.stride[0] = 1, t.data = fake_data;
    return t;
}

static void test_absent_library(void) {
    cu_lazy_lib lib;
    cu_nccl_lib_init(&lib, "/nonexistent/libnccl-override.so");
    /* the override first, then NCCL 2's names */
    CHECK(strcmp(lib.names[0], "/nonexistent/libnccl-override.so") == 0);
    CHECK(strcmp(lib.names[1], "libnccl.so.2") == 0 && strcmp(lib.names[2], "libnccl.so") == 0);
    CHECK(strcmp(lib.symbols[0], "ncclGetVersion") == 0 && lib.symbols[CU_NCCL_NSYMBOLS] == NULL);
    /* none of the names loads here: only the override's and libnccl.so's
     * absence can be relied on, so make every name one that cannot exist */
    lib.names[1] = "libchainlua-no-such-nccl.so.2";
    lib.names[2] = "libchainlua-no-such-nccl.so";
    char err[1024];
    CHECK(!cu_nccl_load(&lib, "nccl all_reduce", err, sizeof err));
    CHECK(strstr(err, "nccl all_reduce: NCCL could not be loaded (looked for /nonexistent/libnccl-override.so, "
                      "libchainlua-no-such-nccl.so.2, libchainlua-no-such-nccl.so: ") != NULL);
    CHECK(strstr(err, "CHAINLUA_NCCL_LIB") != NULL && strstr(err, "libnccl2") != NULL);
    /* remembered: the next call fails the same way without trying again */
    CHECK(lib.tried == 1);
    CHECK(!cu_nccl_load(&lib, "nccl version", err, sizeof err));
    CHECK(strstr(err, "nccl version: NCCL could not be loaded") != NULL);
    /* without an override the list starts at libnccl.so.2 */
    cu_nccl_lib_init(&lib, NULL);
    CHECK(strcmp(lib.names[0], "libnccl.so.2") == 0 && lib.names[2] == NULL);
    cu_nccl_lib_init(&lib, "");
    CHECK(strcmp(lib.names[0], "libnccl.so.2") == 0);
}

static void test_library_without_nccl(void) {
    /* a library that loads but is not NCCL is refused, naming the symbol */
    cu_lazy_lib lib;
    cu_nccl_lib_init(&lib, "libm.so.6");
    char err[1024];
    CHECK(!cu_nccl_load(&lib, "nccl version", err, sizeof err));
    CHECK(strstr(err, "libm.so.6 has no symbol ncclGetVersion") != NULL);
}

static void test_version_string(void) {
    char v[32];
    cu_nccl_version_str(22105, v, sizeof v);
    CHECK(strcmp(v, "2.21.5") == 0);
    cu_nccl_version_str(CU_NCCL_VERSION(2, 10, 3), v, sizeof v);
    CHECK(strcmp(v, "2.10.3") == 0);
    cu_nccl_version_str(2804, v, sizeof v); /* the old encoding: 2.8.4 */
    CHECK(strcmp(v, "2.8.4") == 0);
}

static void test_dtype_and_op_mapping(void) {
    static const struct {
        int dt, nccl;
    } map[] = {{CH_INT8, ncclInt8},       {CH_UINT8, ncclUint8},     {CH_INT32, ncclInt32},
               {CH_INT64, ncclInt64},     {CH_FLOAT16, ncclFloat16}, {CH_FLOAT32, ncclFloat32},
               {CH_FLOAT64, ncclFloat64}};
    char err[512];
    cu_nccl_call c;
    for (size_t k = 0; k < sizeof map / sizeof *map; k++) {
        ch_tensor s = fake(map[k].dt, 5, 1), r = fake(map[k].dt, 5, 1);
        CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "f", &s, &r, CH_NCCL_MAX, 22105, &c, err, sizeof err) == 0);
        CHECK(c.dt == map[k].nccl && c.op == ncclMax && c.count == 5 && c.device == 1);
    }
    ch_tensor s = fake(CH_FLOAT32, 7, 0);
    for (int op = CH_NCCL_SUM; op <= CH_NCCL_AVG; op++) {
        CHECK(cu_nccl_plan(CU_NCCL_KIND_REDUCE, "f", &s, &s, op, 22105, &c, err, sizeof err) == 0);
        CHECK(c.op == op);
    }
    /* sums of types NCCL lacks are refused; broadcasts move their bytes */
    ch_tensor b = fake(CH_BOOL, 3, 0), i16 = fake(CH_INT16, 3, 0);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "nccl all_reduce", &i16, &i16, CH_NCCL_SUM, 22105, &c, err,
                       sizeof err) == -1);
    CHECK(strstr(err, "nccl all_reduce: NCCL cannot sum int16 data (expected int8, uint8") != NULL);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_REDUCE, "r", &b, &b, CH_NCCL_MIN, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "r: NCCL cannot min bool data") != NULL);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_BROADCAST, "b", &i16, &i16, 0, 22105, &c, err, sizeof err) == 0);
    CHECK(c.dt == ncclUint8 && c.count == 6);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_BROADCAST, "b", &b, &b, 0, 22105, &c, err, sizeof err) == 0);
    CHECK(c.dt == ncclUint8 && c.count == 3);
    ch_tensor f64 = fake(CH_FLOAT64, 4, 2);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_BROADCAST, "b", &f64, &f64, 99, 22105, &c, err, sizeof err) == 0);
    CHECK(c.dt == ncclFloat64 && c.count == 4 && c.device == 2);
    /* avg: float dtypes, NCCL 2.10 and newer */
    ch_tensor i32 = fake(CH_INT32, 4, 0);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "a", &i32, &i32, CH_NCCL_AVG, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "a: avg takes float16, float32 or float64 data (got int32") != NULL);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "a", &s, &s, CH_NCCL_AVG, 2804, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "a: avg needs NCCL 2.10 or newer (this is NCCL 2.8.4") != NULL);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "a", &s, &s, 5, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "a: op must be sum, prod, max, min or avg (got 5)") != NULL);
}

static void test_operand_checks(void) {
    char err[512];
    cu_nccl_call c;
    ch_tensor g0 = fake(CH_FLOAT32, 6, 0), g1 = fake(CH_FLOAT32, 6, 1), cpu = fake(CH_FLOAT32, 6, -1);
    ch_tensor other = fake(CH_FLOAT64, 6, 0), shorter = fake(CH_FLOAT32, 5, 0);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "ar", &cpu, &g0, 0, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "ar: argument 'send' is on the CPU (NCCL moves GPU memory") != NULL);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "ar", &g0, &g1, 0, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "ar: argument 'send' is on cuda:0 but 'recv' is on cuda:1") != NULL);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "ar", &g0, &other, 0, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "'send' (float32, 6 elements) and 'recv' (float64, 6 elements) must have one dtype") != NULL);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "ar", &g0, &shorter, 0, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "(float32, 5 elements)") != NULL);
    /* a strided view is refused; a size-1 axis may have any stride */
    ch_tensor strided = fake(CH_FLOAT32, 3, 0);
    strided.stride[0] = 2;
    CHECK(cu_nccl_plan(CU_NCCL_KIND_REDUCE, "r", &strided, NULL, 0, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "r: argument 'send' is not C-contiguous") != NULL);
    ch_tensor row = fake(CH_FLOAT32, 3, 0);
    row.nd = 2, row.dim[0] = 1, row.dim[1] = 3, row.stride[0] = 99, row.stride[1] = 1;
    CHECK(cu_nccl_plan(CU_NCCL_KIND_REDUCE, "r", &row, NULL, 0, 22105, &c, err, sizeof err) == 0);
    CHECK(c.count == 3);
    /* which buffers each collective may leave out */
    CHECK(cu_nccl_plan(CU_NCCL_KIND_REDUCE, "r", NULL, &g0, 0, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "r: the send buffer is required") != NULL);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "ar", &g0, NULL, 0, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "ar: the recv buffer is required") != NULL);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_BROADCAST, "b", NULL, &g1, 0, 22105, &c, err, sizeof err) == 0);
    CHECK(c.device == 1 && c.count == 6);
    CHECK(cu_nccl_plan(CU_NCCL_KIND_BROADCAST, "b", NULL, NULL, 0, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "b: no buffer given") != NULL);
    ch_tensor freed = fake(CH_FLOAT32, 6, 0);
    freed.data = NULL;
    CHECK(cu_nccl_plan(CU_NCCL_KIND_BROADCAST, "b", &freed, &freed, 0, 22105, &c, err, sizeof err) == -1);
    CHECK(strstr(err, "b: argument 'send' has been freed") != NULL);
    /* empty buffers are fine (NCCL moves nothing) */
    ch_tensor e = fake(CH_FLOAT32, 0, 0);
    e.data = NULL;
    CHECK(cu_nccl_plan(CU_NCCL_KIND_ALL_REDUCE, "ar", &e, &e, 0, 22105, &c, err, sizeof err) == 0);
    CHECK(c.count == 0);
}

int main(void) {
    test_absent_library();
    test_library_without_nccl();
    test_version_string();
    test_dtype_and_op_mapping();
    test_operand_checks();
    return check_done("test_cuda_plan_nccl");
}

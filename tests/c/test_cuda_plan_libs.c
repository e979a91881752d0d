/* test_cuda_plan_libs.c -- the CUDA backend's libraries loaded on first use
 * (runtime/cuda/plan_libs.c: cuSOLVER, cuFFT) and the reading of their
 * per-matrix info words, in plain C without a GPU or CUDA. */
#include "check.h"
#include "plan.h"

static void test_missing_library(void) {
    cu_lazy_lib lib = {.label = "cuSOLVER", .names = {"libchainlua-no-such-solver.so.12", "libno-such-either.so"},
                       .symbols = {"cusolverDnCreate"}};
    char err[512];
    CHECK(!cu_lib_load(&lib, "inv", err, sizeof err));
    /* the op, the library and its file, and what to do */
    CHECK(strstr(err, "inv on the GPU needs cuSOLVER (libchainlua-no-such-solver.so.12)") != NULL);
    CHECK(strstr(err, "could not be loaded") != NULL);
    CHECK(strstr(err, ":to_cpu()") != NULL);
    /* the failure is remembered, and names the next op that asks */
    CHECK(lib.tried == 1);
    CHECK(!cu_lib_load(&lib, "det", err, sizeof err));
    CHECK(strstr(err, "det on the GPU needs cuSOLVER") != NULL);
}

static void test_present_library(void) {
    /* the math library stands in for a CUDA one: found under its second name */
    cu_lazy_lib lib = {.label = "libm", .names = {"libchainlua-no-such-m.so", "libm.so.6"}, .symbols = {"cos", "sin"}};
    char err[512];
    CHECK(cu_lib_load(&lib, "fft", err, sizeof err));
    CHECK(lib.fns[0] != NULL && lib.fns[1] != NULL && lib.fns[2] == NULL);
    double (*cosine)(double) = (double (*)(double))lib.fns[0];
    CHECK(cosine(0.0) == 1.0);
    /* a library without one of the symbols is refused, saying which */
    cu_lazy_lib old = {.label = "libm", .names = {"libm.so.6"}, .symbols = {"cos", "cusolverDnCreate"}};
    CHECK(!cu_lib_load(&old, "inv", err, sizeof err));
    CHECK(strstr(err, "libm.so.6 has no symbol cusolverDnCreate") != NULL);
}

static void test_first_failure(void) {
    int ok[4] = {0, 0, 0, 0}, two[5] = {0, 0, 3, 0, 1}, neg[2] = {0, -4};
    int v = 99;
    CHECK_EQ_I(cu_first_failure(ok, 4, &v), -1);
    CHECK_EQ_I(v, 99);
    CHECK_EQ_I(cu_first_failure(ok, 0, &v), -1);
    CHECK_EQ_I(cu_first_failure(two, 5, &v), 2);
    CHECK_EQ_I(v, 3);
    CHECK_EQ_I(cu_first_failure(neg, 2, &v), 1);
    CHECK_EQ_I(v, -4);
}

int main(void) {
    test_missing_library();
    test_present_library();
    test_first_failure();
    return check_done("test_cuda_plan_libs");
}

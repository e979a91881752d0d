/* gpu_probe.cu -- the GPU's own limits, next to which scripts/gpu-check
 * reports chainlua's GPU benchmarks (issue 15):
 *   - cuBLAS sgemm, n = 8192, in FP32 and with TF32 tensor cores (GFLOP/s);
 *   - device memory bandwidth: cudaMemcpy device to device and a float4
 *     copy kernel, 1 GiB each way (GB/s, bytes read + written).
 * Built by scripts/gpu-pack with the backend's nvcc (cudart linked
 * statically); cuBLAS is opened with dlopen, so the bandwidth is measured
 * even on a machine without libcublas.  Prints `RESULT {json}` lines (one per
 * measurement, read by scripts/gpu-check-summary.lua) and exits 0 when every
 * measurement ran.  Each figure is the best of 5 timed runs after 2
 * warm-ups, timed with CUDA events. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call, what)                                                                     \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            printf("RESULT {\"probe\":\"%s\",\"error\":\"%s\"}\n", what, cudaGetErrorString(e_)); \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)

__global__ void copy_kernel(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[i];
}

/* the best seconds of 5 runs of fn after 2 warm-ups */
template <typename F> static float best_time(F fn) {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    float best = 1e30f;
    for (int r = 0; r < 7; r++) {
        cudaEventRecord(a);
        fn();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        if (r >= 2 && ms < best) best = ms;
    }
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return best / 1e3f;
}

static int bandwidth(void) {
    const size_t bytes = (size_t)1 << 30;
    float *src, *dst;
    CHECK(cudaMalloc(&src, bytes), "bandwidth");
    CHECK(cudaMalloc(&dst, bytes), "bandwidth");
    CHECK(cudaMemset(src, 1, bytes), "bandwidth");
    float t_memcpy = best_time([&] { cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice); });
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    size_t n4 = bytes / sizeof(float4);
    float t_kernel = best_time([&] { copy_kernel<<<sms * 8, 512>>>((const float4 *)src, (float4 *)dst, n4); });
    CHECK(cudaGetLastError(), "bandwidth");
    CHECK(cudaDeviceSynchronize(), "bandwidth");
    printf("RESULT {\"probe\":\"bandwidth\",\"bytes\":%zu,\"d2d_copy_gbs\":%.1f,\"copy_kernel_gbs\":%.1f}\n", bytes,
           2.0 * bytes / t_memcpy / 1e9, 2.0 * bytes / t_kernel / 1e9);
    cudaFree(src);
    cudaFree(dst);
    return 0;
}

/* the few cuBLAS entry points used, opened at run time */
typedef int (*create_fn)(void **);
typedef int (*destroy_fn)(void *);
typedef int (*mathmode_fn)(void *, int);
typedef int (*sgemm_fn)(void *, int, int, int, int, int, const float *, const float *, int, const float *, int,
                        const float *, float *, int);
enum { CUBLAS_OP_N_ = 0, CUBLAS_DEFAULT_MATH_ = 0, CUBLAS_TF32_TENSOR_OP_MATH_ = 3 };

static int sgemm(void) {
    const char *names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    void *lib = NULL;
    for (int i = 0; i < 3 && !lib; i++) lib = dlopen(names[i], RTLD_NOW);
    if (!lib) {
        printf("RESULT {\"probe\":\"sgemm\",\"error\":\"libcublas not found (%s)\"}\n", dlerror());
        return 1;
    }
    create_fn create = (create_fn)dlsym(lib, "cublasCreate_v2");
    destroy_fn destroy = (destroy_fn)dlsym(lib, "cublasDestroy_v2");
    mathmode_fn mathmode = (mathmode_fn)dlsym(lib, "cublasSetMathMode");
    sgemm_fn gemm = (sgemm_fn)dlsym(lib, "cublasSgemm_v2");
    if (!create || !destroy || !mathmode || !gemm) {
        printf("RESULT {\"probe\":\"sgemm\",\"error\":\"a cuBLAS symbol is missing\"}\n");
        return 1;
    }
    const int n = 8192;
    size_t bytes = (size_t)n * n * sizeof(float);
    float *a, *b, *c;
    CHECK(cudaMalloc(&a, bytes), "sgemm");
    CHECK(cudaMalloc(&b, bytes), "sgemm");
    CHECK(cudaMalloc(&c, bytes), "sgemm");
    /* the same small value in every element (bytes 0x3c: 0.0115 as a
     * float); the product's time does not depend on the values */
    CHECK(cudaMemset(a, 0x3c, bytes), "sgemm");
    CHECK(cudaMemset(b, 0x3c, bytes), "sgemm");
    void *h = NULL;
    if (create(&h) != 0) {
        printf("RESULT {\"probe\":\"sgemm\",\"error\":\"cublasCreate failed\"}\n");
        return 1;
    }
    const float one = 1, zero = 0;
    int status = 0;
    double flop = 2.0 * n * n * (double)n;
    mathmode(h, CUBLAS_DEFAULT_MATH_);
    float t32 = best_time([&] { status |= gemm(h, CUBLAS_OP_N_, CUBLAS_OP_N_, n, n, n, &one, a, n, b, n, &zero, c, n); });
    mathmode(h, CUBLAS_TF32_TENSOR_OP_MATH_);
    float ttf = best_time([&] { status |= gemm(h, CUBLAS_OP_N_, CUBLAS_OP_N_, n, n, n, &one, a, n, b, n, &zero, c, n); });
    CHECK(cudaDeviceSynchronize(), "sgemm");
    if (status != 0) {
        printf("RESULT {\"probe\":\"sgemm\",\"error\":\"cublasSgemm returned status %d\"}\n", status);
        return 1;
    }
    printf("RESULT {\"probe\":\"sgemm\",\"n\":%d,\"sgemm_gflops\":%.0f,\"sgemm_tf32_gflops\":%.0f}\n", n, flop / t32 / 1e9,
           flop / ttf / 1e9);
    destroy(h);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return 0;
}

int main(void) {
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0), "device");
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    printf("RESULT {\"probe\":\"device\",\"name\":\"%s\",\"sm\":\"%d%d\",\"sms\":%d,\"memory_gib\":%.1f,"
           "\"driver\":%d,\"runtime\":%d}\n",
           p.name, p.major, p.minor, p.multiProcessorCount, p.totalGlobalMem / 1073741824.0, driver, runtime);
    int bad = bandwidth();
    bad |= sgemm();
    return bad;
}

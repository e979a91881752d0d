/* test_random.cu -- the GPU's samplers (random.c, random.cu) emulated on the
 * host against the CPU's: for one (seed, counter offset), every sampler and
 * dtype must give the CPU's bits.
 * emulates: random.c random.cu allocator.c */
#include "emulator.h"

enum { N = 3001 };
static const uint64_t SEED = 0x0123456789abcdefull, OFFSET = 4242;

static const char *kind_name[] = {"uniform", "normal", "bernoulli", "randint"};

/* The CPU's draw from (SEED, OFFSET) through the public API, and the
 * emulated GPU's from the same counters. */
static void compare_fill(ch_random_args r, ch_dtype dt, int64_t n) {
    ch_tensor *cpu, *gpu;
    CHECK_OK(ch_empty(dt, 1, &n, CH_CPU, &cpu));
    CHECK_OK(ch_full(dt, 1, &n, 0.0, CH_CPU, &gpu));
    ch_rng_set_state(CH_CPU, SEED, OFFSET);
    switch (r.kind) {
    case CH_RANDOM_UNIFORM: CHECK_OK(ch_random_uniform(cpu, r.a, r.b)); break;
    case CH_RANDOM_NORMAL: CHECK_OK(ch_random_normal(cpu, r.a, r.b)); break;
    case CH_RANDOM_BERNOULLI: CHECK_OK(ch_random_bernoulli(cpu, r.a)); break;
    default: CHECK_OK(ch_random_randint(cpu, r.lo, r.lo + (int64_t)r.range));
    }
    r.seed = SEED;
    r.first = OFFSET;
    ch_tensor d = emu_on_device(gpu);
    CHECK_OK(cu_random_fill(&r, &d));
    int64_t bad = emu_bit_mismatches(cpu, gpu);
    if (bad) {
        fprintf(stderr, "%s %s (a=%g b=%g lo=%lld range=%llu): %lld of %lld elements differ from the CPU\n",
                kind_name[r.kind], cu_dtype_name(dt), r.a, r.b, (long long)r.lo, (unsigned long long)r.range,
                (long long)bad, (long long)n);
        check_failures++;
    }
    ch_tensor_release(cpu);
    ch_tensor_release(gpu);
}

static void test_fill(void) {
    ch_dtype floats[3] = {CH_FLOAT16, CH_FLOAT32, CH_FLOAT64};
    for (int d = 0; d < 3; d++) {
        ch_random_args u = {CH_RANDOM_UNIFORM, -2.0, 3.0, 0, 0, 0, 0};
        compare_fill(u, floats[d], N);
        /* a span whose rounding reaches high: the step below it */
        ch_random_args tight = {CH_RANDOM_UNIFORM, 1.0, 1.0000001, 0, 0, 0, 0};
        compare_fill(tight, floats[d], N);
        ch_random_args g = {CH_RANDOM_NORMAL, 0.5, 2.0, 0, 0, 0, 0};
        compare_fill(g, floats[d], N);
    }
    for (int dt = 0; dt < CH_NDTYPES; dt++) {
        ch_random_args b = {CH_RANDOM_BERNOULLI, 0.3, 0, 0, 0, 0, 0};
        compare_fill(b, (ch_dtype)dt, N);
        ch_random_args ri = {CH_RANDOM_RANDINT, 0, 0, dt == CH_UINT8 || dt == CH_BOOL ? 0 : -1, 2, 0, 0};
        compare_fill(ri, (ch_dtype)dt, N);
    }
    /* ranges that reject, and one above 2^32 (the 64-bit path) */
    ch_random_args r3 = {CH_RANDOM_RANDINT, 0, 0, -5, 3, 0, 0};
    compare_fill(r3, CH_INT32, N);
    ch_random_args big = {CH_RANDOM_RANDINT, 0, 0, -1000, 3000000000ull, 0, 0};
    compare_fill(big, CH_INT64, N);
    ch_random_args wide = {CH_RANDOM_RANDINT, 0, 0, -(1LL << 40), (3ull << 40) + 7, 0, 0};
    compare_fill(wide, CH_INT64, N);
    compare_fill(wide, CH_FLOAT64, N);
    ch_random_args f32 = {CH_RANDOM_RANDINT, 0, 0, -16777216, 33554433, 0, 0};
    compare_fill(f32, CH_FLOAT32, N);
    ch_random_args u = {CH_RANDOM_UNIFORM, 0, 1, 0, 0, 0, 0};
    compare_fill(u, CH_FLOAT32, 0);
}

static void compare_int64(const ch_tensor *cpu, const ch_tensor *gpu, const char *what) {
    int64_t bad = emu_bit_mismatches(cpu, gpu);
    if (bad || cpu->numel != gpu->numel) {
        fprintf(stderr, "%s: %lld of %lld entries differ from the CPU\n", what, (long long)bad, (long long)cpu->numel);
        check_failures++;
    }
}

static void test_permutation(void) {
    int64_t sizes[3] = {1, 7, 1000};
    for (int s = 0; s < 3; s++) {
        int64_t n = sizes[s];
        ch_tensor *cpu, *gpu;
        ch_rng_set_state(CH_CPU, SEED, OFFSET);
        CHECK_OK(ch_random_permutation(n, CH_CPU, &cpu));
        CHECK_OK(ch_empty(CH_INT64, 1, &n, CH_CPU, &gpu));
        ch_tensor d = emu_on_device(gpu);
        CHECK_OK(cu_permutation(SEED, OFFSET, &d));
        compare_int64(cpu, gpu, "permutation");
        ch_tensor_release(cpu);
        ch_tensor_release(gpu);
    }
}

/* choice of k from n; weighted: p[i] = w[i] / 64 with the integer weights
 * summing to 64, so the CPU's normalisation leaves them exact. */
static void compare_choice(int64_t n, int64_t k, int replace, int weighted) {
    ch_tensor *p = NULL, *pd = NULL, *cpu, *gpu;
    if (weighted) {
        CHECK_OK(ch_full(CH_FLOAT64, 1, &n, 0.0, CH_CPU, &p));
        int64_t left = 64;
        for (int64_t i = 0; i < n && left > 0; i += 2) { /* every other weight zero */
            int64_t w = i + 2 >= n ? left : (i % 3) + 1;
            w = w < left ? w : left;
            ch_set_flat(p, i, (double)w / 64.0);
            left -= w;
        }
        if (left > 0)
            ch_set_flat(p, 0, at(p, 0) + (double)left / 64.0);
        CHECK_OK(ch_copy(p, &pd));
    }
    int64_t nonzero = n;
    if (weighted) {
        nonzero = 0;
        for (int64_t i = 0; i < n; i++)
            nonzero += at(p, i) > 0;
    }
    ch_rng_set_state(CH_CPU, SEED, OFFSET);
    CHECK_OK(ch_random_choice(n, k, replace, p, CH_CPU, &cpu));
    CHECK_OK(ch_full(CH_INT64, 1, &k, -1.0, CH_CPU, &gpu));
    ch_tensor d = emu_on_device(gpu), dp = pd ? emu_on_device(pd) : d;
    CHECK_OK(cu_choice(n, replace, pd ? &dp : NULL, nonzero, SEED, OFFSET, &d));
    char what[96];
    snprintf(what, sizeof what, "choice n=%lld k=%lld replace=%d weighted=%d", (long long)n, (long long)k, replace,
             weighted);
    compare_int64(cpu, gpu, what);
    ch_tensor *all[] = {p, pd, cpu, gpu};
    for (int j = 0; j < 4; j++)
        ch_tensor_release(all[j]);
}

static void test_choice(void) {
    compare_choice(1000, 500, 1, 0);
    compare_choice(10, 10, 0, 0);
    compare_choice(1000, 200, 0, 0);
    compare_choice(40, 300, 1, 1);
    compare_choice(40, 12, 0, 1);
    compare_choice(40, 0, 0, 1);
}

/* The backend's own contract: a non-int64 permutation or a uniform draw into
 * integers is refused. */
static void test_contract(void) {
    int64_t n = 5;
    ch_tensor *t;
    CHECK_OK(ch_full(CH_INT32, 1, &n, 0.0, CH_CPU, &t));
    ch_tensor d = emu_on_device(t);
    EMU_CHECK_ERR(cu_permutation(1, 0, &d), CH_ERR_INTERNAL, "permutation: the output must be a contiguous int64");
    ch_random_args u = {CH_RANDOM_UNIFORM, 0, 1, 0, 0, 1, 0};
    EMU_CHECK_ERR(cu_random_fill(&u, &d), CH_ERR_INTERNAL, "random: uniform and normal draws fill float tensors");
    CHECK(at(t, 0) == 0.0);
    ch_tensor_release(t);
}

int main(void) {
    test_fill();
    test_permutation();
    test_choice();
    test_contract();
    return check_done("test_random (emulated)");
}

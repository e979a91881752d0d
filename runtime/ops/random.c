/* random.c -- front doors of the samplers on Philox4x32-10 (kernels:
 * runtime/cpu/random.c; see core/rng.h for the counter layout).
 *
 * Each draw reserves its counters from the stream of the output's device
 * (per-device seeds), then runs the sampler of that device.  Element i of a
 * draw (C order of the logical tensor) reads the four words of counter
 * first+i, so the numbers do not depend on the device that computes them:
 * a device without a sampler kernel draws into a contiguous CPU temporary
 * with the CPU's kernel and gets it copied, as does a non-contiguous out.
 */
#include "prologue.h"
#include "../core/rng.h"

#include <math.h>

/* The sampler `name` of device *dev, or the CPU's (then *dev = CH_CPU):
 * the counters define the numbers, so a CPU draw moved to the device is the
 * same draw. */
#define SAMPLER_OF(name)                                                     \
    static ch_##name##_kernel *sampler_##name(int *dev) {                    \
        ch_##name##_kernel *k = ch_kernels(*dev)->name;                      \
        if (k)                                                               \
            return k;                                                        \
        *dev = CH_CPU;                                                       \
        return ch_cpu_kernels.name;                                          \
    }
SAMPLER_OF(random_fill)
SAMPLER_OF(permutation)
SAMPLER_OF(choice)

/* Reserves out->numel counters of out's device and fills out. */
static ch_status draw(ch_tensor *out, ch_random_args *pr, const char *fn) {
    int64_t n = out->numel;
    if (ch_rng_reserve(out->dev, (uint64_t)n, &pr->seed, &pr->first) != 0)
        return ch_fail(CH_ERR_DEVICE, "%s: no random state for device %d", fn, out->dev);
    if (n == 0)
        return CH_OK;
    int kdev = out->dev;
    ch_random_fill_kernel *kernel = sampler_random_fill(&kdev);
    if (kdev == out->dev && ch_contig(out))
        return kernel(pr, out);
    ch_tensor *tmp = NULL;
    CH_TRY(ch_tensor_new((ch_dtype)out->dt, out->nd, out->dim, kdev, &tmp));
    ch_status st = kernel(pr, tmp);
    if (st == CH_OK)
        st = ch_copy_into(out, tmp);
    ch_tensor_release(tmp);
    return st;
}

static ch_status need_float(const ch_tensor *out, const char *fn) {
    if (!ch_dtype_is_float((ch_dtype)out->dt))
        return ch_fail(CH_ERR_DTYPE, "%s: argument 'out' has dtype %s (expected float16, float32 or float64)", fn,
                       ch_dtype_name((ch_dtype)out->dt));
    return CH_OK;
}

ch_status ch_random_uniform(ch_tensor *out, double low, double high) {
    CH_CHECK_ARG(out, "uniform", "out");
    CH_TRY(need_float(out, "uniform"));
    if (!isfinite(low) || !isfinite(high) || high < low)
        return ch_fail(CH_ERR_ARG, "uniform: need finite low <= high (got low=%g, high=%g)", low, high);
    ch_random_args pr = {CH_RANDOM_UNIFORM, low, high, 0, 0, 0, 0};
    return draw(out, &pr, "uniform");
}

ch_status ch_random_normal(ch_tensor *out, double mean, double std) {
    CH_CHECK_ARG(out, "normal", "out");
    CH_TRY(need_float(out, "normal"));
    if (!isfinite(mean) || !isfinite(std) || std < 0)
        return ch_fail(CH_ERR_ARG, "normal: need a finite mean and std >= 0 (got mean=%g, std=%g)", mean, std);
    ch_random_args pr = {CH_RANDOM_NORMAL, mean, std, 0, 0, 0, 0};
    return draw(out, &pr, "normal");
}

ch_status ch_random_bernoulli(ch_tensor *out, double p) {
    CH_CHECK_ARG(out, "bernoulli", "out");
    if (!(p >= 0.0 && p <= 1.0))
        return ch_fail(CH_ERR_ARG, "bernoulli: p must be in [0, 1] (got %g)", p);
    ch_random_args pr = {CH_RANDOM_BERNOULLI, p, 0, 0, 0, 0, 0};
    return draw(out, &pr, "bernoulli");
}

/* Largest/smallest value of an integer dtype (floats: 2^53, exact integers). */
static void int_limits(ch_dtype dt, int64_t *mn, int64_t *mx) {
    switch (dt) {
    case CH_BOOL: *mn = 0; *mx = 1; break;
    case CH_INT8: *mn = INT8_MIN; *mx = INT8_MAX; break;
    case CH_UINT8: *mn = 0; *mx = UINT8_MAX; break;
    case CH_INT16: *mn = INT16_MIN; *mx = INT16_MAX; break;
    case CH_INT32: *mn = INT32_MIN; *mx = INT32_MAX; break;
    case CH_INT64: *mn = INT64_MIN; *mx = INT64_MAX; break;
    case CH_FLOAT16: *mn = -2048; *mx = 2048; break;
    case CH_FLOAT32: *mn = -16777216; *mx = 16777216; break;
    default: *mn = -9007199254740992LL; *mx = 9007199254740992LL; break;
    }
}

ch_status ch_random_randint(ch_tensor *out, int64_t low, int64_t high) {
    CH_CHECK_ARG(out, "randint", "out");
    if (high <= low)
        return ch_fail(CH_ERR_ARG, "randint: need low < high (got low=%lld, high=%lld)", (long long)low,
                       (long long)high);
    int64_t mn, mx;
    ch_dtype dt = (ch_dtype)out->dt;
    int_limits(dt, &mn, &mx);
    if (low < mn || high - 1 > mx)
        return ch_fail(CH_ERR_ARG, "randint: [%lld, %lld) does not fit dtype %s (values %lld..%lld)", (long long)low,
                       (long long)high, ch_dtype_name(dt), (long long)mn, (long long)mx);
    ch_random_args pr = {CH_RANDOM_RANDINT, 0, 0, low, (uint64_t)high - (uint64_t)low, 0, 0};
    return draw(out, &pr, "randint");
}

/* Moves a fresh result t to `device` (when it is not there already). */
static ch_status place(ch_tensor *t, int device, ch_tensor **result) {
    if (t->dev == device) {
        *result = t;
        return CH_OK;
    }
    ch_status st = ch_to_device(t, device, result);
    ch_tensor_release(t);
    return st;
}

/* Fisher-Yates from the last position down: step i swaps position i with a
 * uniform j in [0, i] drawn from counter offset+i. */
ch_status ch_random_permutation(int64_t n, int device, ch_tensor **result) {
    if (!result)
        return ch_fail(CH_ERR_ARG, "permutation: argument 'result' is NULL");
    if (n < 0)
        return ch_fail(CH_ERR_ARG, "permutation: n must be >= 0 (got %lld)", (long long)n);
    uint64_t seed, first;
    if (ch_rng_reserve(device, (uint64_t)n, &seed, &first) != 0)
        return ch_fail(CH_ERR_DEVICE, "permutation: no random state for device %d", device);
    int kdev = device;
    ch_permutation_kernel *kernel = sampler_permutation(&kdev);
    ch_tensor *t = NULL;
    CH_TRY(ch_tensor_new(CH_INT64, 1, &n, kdev, &t));
    ch_status st = kernel(seed, first, t);
    if (st != CH_OK) {
        ch_tensor_release(t);
        return st;
    }
    return place(t, device, result);
}

/* Validated probabilities as a float64 CPU tensor (normalised to sum 1);
 * *nonzero counts the positive ones. */
static ch_status load_probs(const ch_tensor *probs, int64_t n, ch_tensor **out, int64_t *nonzero) {
    CH_CHECK_ARG(probs, "choice", "p");
    if (probs->nd != 1 || probs->dim[0] != n)
        return ch_fail(CH_ERR_SHAPE, "choice: p must be 1-d with %lld entries (got %d-d with %lld elements)",
                       (long long)n, probs->nd, (long long)probs->numel);
    ch_tensor *pt = NULL;
    ch_status st = ch_tensor_new(CH_FLOAT64, 1, &n, CH_CPU, &pt);
    if (st != CH_OK)
        return ch_fail(CH_ERR_MEMORY, "choice: out of memory for %lld probabilities", (long long)n);
    double *p = (double *)ch_base(pt);
    ch_tensor *cpu = NULL;
    st = probs->dev == CH_CPU ? ch_contiguous_as(probs, CH_FLOAT64, &cpu) : CH_OK;
    if (st == CH_OK && probs->dev != CH_CPU) {
        ch_tensor *moved = NULL;
        st = ch_to_device(probs, CH_CPU, &moved);
        if (st == CH_OK) {
            st = ch_contiguous_as(moved, CH_FLOAT64, &cpu);
            ch_tensor_release(moved);
        }
    }
    if (st != CH_OK) {
        ch_tensor_release(pt);
        return st;
    }
    const double *src = (const double *)ch_base(cpu);
    double sum = 0;
    int64_t nz = 0;
    for (int64_t i = 0; i < n; i++) {
        double v = src[i];
        if (!(v >= 0) || !isfinite(v)) {
            ch_tensor_release(cpu);
            ch_tensor_release(pt);
            return ch_fail(CH_ERR_ARG, "choice: p[%lld] = %g (probabilities must be finite and >= 0)", (long long)i, v);
        }
        p[i] = v;
        sum += v;
        nz += v > 0;
    }
    ch_tensor_release(cpu);
    /* float32 probabilities rarely sum to 1 exactly; allow their rounding */
    if (fabs(sum - 1.0) > 1e-5) {
        ch_tensor_release(pt);
        return ch_fail(CH_ERR_ARG, "choice: probabilities p sum to %.9g (expected 1)", sum);
    }
    for (int64_t i = 0; i < n; i++)
        p[i] /= sum;
    *out = pt;
    *nonzero = nz;
    return CH_OK;
}

ch_status ch_random_choice(int64_t n, int64_t k, int replace, const ch_tensor *probs, int device, ch_tensor **result) {
    if (!result)
        return ch_fail(CH_ERR_ARG, "choice: argument 'result' is NULL");
    if (n < 0 || k < 0)
        return ch_fail(CH_ERR_ARG, "choice: n and size must be >= 0 (got n=%lld, size=%lld)", (long long)n,
                       (long long)k);
    if (n == 0 && k > 0)
        return ch_fail(CH_ERR_ARG, "choice: cannot take %lld samples from an empty population (n=0)", (long long)k);
    if (!replace && k > n)
        return ch_fail(CH_ERR_ARG,
                       "choice: cannot take %lld samples from %lld without replacement (use replace = true)",
                       (long long)k, (long long)n);
    ch_tensor *p = NULL;
    int64_t nonzero = n;
    if (probs) {
        CH_TRY(load_probs(probs, n, &p, &nonzero));
        if (!replace && k > nonzero) {
            ch_tensor_release(p);
            return ch_fail(CH_ERR_ARG,
                           "choice: only %lld entries of p are non-zero, fewer than size=%lld without replacement",
                           (long long)nonzero, (long long)k);
        }
    }
    /* counters: one per sample, or one per population item for weighted
     * sampling without replacement (every item gets a key) */
    uint64_t used = (probs && !replace) ? (uint64_t)n : (uint64_t)k;
    uint64_t seed, first;
    if (ch_rng_reserve(device, used, &seed, &first) != 0) {
        ch_tensor_release(p);
        return ch_fail(CH_ERR_DEVICE, "choice: no random state for device %d", device);
    }
    int kdev = device;
    ch_choice_kernel *kernel = sampler_choice(&kdev);
    ch_tensor *t = NULL;
    ch_status st = CH_OK;
    if (p && kdev != CH_CPU) {
        ch_tensor *moved = NULL;
        st = ch_to_device(p, kdev, &moved);
        ch_tensor_release(p);
        p = moved;
    }
    if (st == CH_OK)
        st = ch_tensor_new(CH_INT64, 1, &k, kdev, &t);
    if (st == CH_OK)
        st = kernel(n, replace, p, nonzero, seed, first, t);
    ch_tensor_release(p);
    if (st != CH_OK) {
        ch_tensor_release(t);
        return st;
    }
    return place(t, device, result);
}

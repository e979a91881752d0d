/* rng.c -- per-device generator state: (seed, offset) for Philox4x32-10.
 *
 * The state is tiny and lives here; the samplers are in cpu/random.c.  A
 * draw of n elements takes the counters offset .. offset+n-1 and moves the
 * offset past them, so consecutive draws never reuse a counter. */
#include "internal.h"
#include "rng.h"

/* Index 0 is the CPU (device -1), then CUDA devices 0..CH_RNG_DEVICES-2. */
#define CH_RNG_DEVICES 65

typedef struct rng_state {
    uint64_t seed;
    uint64_t offset;
} rng_state;

/* Default seed 0: runs are reproducible unless the user seeds otherwise
 * (the Lua side seeds from $CHAINER_SEED when it is set). */
static rng_state states[CH_RNG_DEVICES];

static rng_state *state_of(int device) {
    int i = device + 1;
    if (i < 0 || i >= CH_RNG_DEVICES)
        return NULL;
    return &states[i];
}

void ch_rng_seed(int device, uint64_t seed) {
    rng_state *s = state_of(device);
    if (!s)
        return;
    s->seed = seed;
    s->offset = 0;
}

uint64_t ch_rng_get_seed(int device) {
    rng_state *s = state_of(device);
    return s ? s->seed : 0;
}

uint64_t ch_rng_get_offset(int device) {
    rng_state *s = state_of(device);
    return s ? __atomic_load_n(&s->offset, __ATOMIC_RELAXED) : 0;
}

void ch_rng_set_state(int device, uint64_t seed, uint64_t offset) {
    rng_state *s = state_of(device);
    if (!s)
        return;
    s->seed = seed;
    s->offset = offset;
}

int ch_rng_reserve(int device, uint64_t n, uint64_t *seed, uint64_t *first) {
    rng_state *s = state_of(device);
    if (!s)
        return -1;
    *seed = s->seed;
    /* atomic, so that host threads drawing at once never share counters */
    *first = __atomic_fetch_add(&s->offset, n, __ATOMIC_RELAXED);
    return 0;
}

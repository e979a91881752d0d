/* scratch.c -- per-thread scratch buffers of the CPU kernels (scratch.h). */
#include "scratch.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct scratch_slots {
    void *buf[CH_SCRATCH_SLOTS];
    size_t cap[CH_SCRATCH_SLOTS];
} scratch_slots;

static _Thread_local scratch_slots *local_slots;
static pthread_key_t slots_key;
static pthread_once_t slots_key_once = PTHREAD_ONCE_INIT;

static void slots_free(void *p) {
    scratch_slots *s = (scratch_slots *)p;
    for (int i = 0; i < CH_SCRATCH_SLOTS; i++)
        free(s->buf[i]);
    free(s);
}

static void slots_key_create(void) { pthread_key_create(&slots_key, slots_free); }

void *ch_cpu_scratch(int slot, size_t nbytes) {
    scratch_slots *s = local_slots;
    if (!s) {
        pthread_once(&slots_key_once, slots_key_create);
        s = (scratch_slots *)calloc(1, sizeof *s);
        if (!s)
            return NULL;
        pthread_setspecific(slots_key, s);
        local_slots = s;
    }
    if (nbytes > s->cap[slot]) {
        free(s->buf[slot]);
        size_t cap = (nbytes + 63) & ~(size_t)63;
        s->buf[slot] = aligned_alloc(64, cap);
        s->cap[slot] = s->buf[slot] ? cap : 0;
    }
    return s->buf[slot];
}

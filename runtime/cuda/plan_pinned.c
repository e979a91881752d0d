/* plan_pinned.c -- buffer sizes, chunks and the choice of a cached buffer
 * for the pinned staging of host <-> device copies (plan_pinned.h). */
#include "plan_pinned.h"

void cu_pin_plan_init(cu_pin_plan *p, size_t n, size_t min_buf, size_t max_buf) {
    p->n = n;
    size_t b = min_buf;
    while (b < n && b < max_buf)
        b *= 2;
    p->buffer = b;
    p->chunks = n == 0 ? 0 : (int64_t)((n + b - 1) / b);
    p->nbuf = p->chunks > 1 ? 2 : 1;
}

size_t cu_pin_chunk(const cu_pin_plan *p, int64_t k, size_t *off) {
    *off = (size_t)k * p->buffer;
    size_t left = p->n - *off;
    return left < p->buffer ? left : p->buffer;
}

int cu_pin_pick(const size_t *size, const int *busy, int n, size_t need, cu_pin_action *action) {
    int fit = -1, empty = -1, smallest = -1;
    for (int i = 0; i < n; i++) {
        if (busy[i])
            continue;
        if (size[i] == 0) {
            if (empty < 0)
                empty = i;
            continue;
        }
        if (size[i] >= need && (fit < 0 || size[i] < size[fit]))
            fit = i;
        if (smallest < 0 || size[i] < size[smallest])
            smallest = i;
    }
    if (fit >= 0) {
        *action = CU_PIN_REUSE;
        return fit;
    }
    if (empty >= 0) {
        *action = CU_PIN_ALLOCATE;
        return empty;
    }
    if (smallest >= 0)
        *action = CU_PIN_REPLACE;
    return smallest;
}

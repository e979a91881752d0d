/* busy_guard.h -- run on one thread while another process takes our cores.
 *
 * A parallel region ends when its slowest thread ends.  When another
 * process keeps one of our cores busy, the teammate on that core gets half
 * of it, and every region of a training step waits for that teammate (the
 * "busy neighbour" of docs/threads.md: 2-30x slower than one thread).
 * Spinning less only helps partly; the cure is not to need that core.
 *
 * The signal: how long the process's threads were runnable but not running
 * (the scheduler's run-queue delay, /proc/self/task/<tid>/schedstat), as a
 * share of the time they were running or waiting.  On a quiet machine it
 * stays near 1 %; next to a busy neighbour it is 30-60 %, and it does not
 * depend on how much of the step is parallel.  Two contended intervals in
 * a row switch the process to one thread; after a hold (2 s, doubling up
 * to 16 s while the neighbour stays) one interval runs at full width again
 * to see whether the neighbour left.
 *
 * This file is the decision alone, a pure function of the samples, so that
 * tests/c/test_busy_guard.c can drive it with made-up machines; threads.c
 * takes the samples and applies the decision. */
#ifndef CHAINLUA_BUSY_GUARD_H
#define CHAINLUA_BUSY_GUARD_H

#define CH_BUSY_INTERVAL 0.05     /* seconds between two samples */
#define CH_BUSY_WAIT_SHARE 0.15   /* contended: waited / (ran + waited) above this */
#define CH_BUSY_MIN_RUN 0.1       /* an interval whose threads ran less than this share of it proves nothing */
#define CH_BUSY_STRIKES 2         /* contended intervals in a row before giving up the threads */
#define CH_BUSY_HOLD_MIN 2.0      /* seconds on one thread before the first probe */
#define CH_BUSY_HOLD_MAX 16.0     /* the hold doubles after each failed probe, up to this */

typedef struct ch_busy_guard {
    int reduced;   /* on one thread */
    int probing;   /* reduced, but this interval runs at full width as a test */
    int strikes;   /* contended intervals in a row at full width */
    double hold;   /* length of the next stretch on one thread (0: CH_BUSY_HOLD_MIN) */
    double until;  /* when the current stretch on one thread ends */
} ch_busy_guard;

/* One interval of `wall` seconds that ended at `now`, during which the
 * process's threads ran `ran` seconds and waited `waited` seconds on a run
 * queue (summed over threads).  Returns 1 when the next interval runs at
 * full width, 0 when it runs on one thread. */
static inline int ch_busy_guard_step(ch_busy_guard *g, double now, double wall, double ran, double waited) {
    int judged = wall > 0 && ran >= CH_BUSY_MIN_RUN * wall;
    int contended = judged && waited > CH_BUSY_WAIT_SHARE * (ran + waited);
    if (g->hold <= 0) g->hold = CH_BUSY_HOLD_MIN;
    if (!g->reduced) {
        if (!judged) return 1;
        g->strikes = contended ? g->strikes + 1 : 0;
        if (g->strikes < CH_BUSY_STRIKES) return 1;
        g->strikes = 0;
        g->reduced = 1;
        g->until = now + g->hold;
        return 0;
    }
    if (g->probing) {
        if (!judged) return 1;  /* too little work to tell: keep testing */
        g->probing = 0;
        if (contended) {
            g->hold = g->hold * 2 > CH_BUSY_HOLD_MAX ? CH_BUSY_HOLD_MAX : g->hold * 2;
            g->until = now + g->hold;
            return 0;
        }
        g->reduced = 0;
        g->hold = CH_BUSY_HOLD_MIN;
        return 1;
    }
    if (now < g->until) return 0;
    g->probing = 1;
    return 1;
}

#endif

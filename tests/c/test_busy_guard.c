/* The busy-neighbour guard's decisions (runtime/core/busy_guard.h), driven
 * with made-up machines: a quiet one, one with a neighbour that comes and
 * goes, and stretches with too little work to tell. */
#include "busy_guard.h"
#include "check.h"

/* Feeds `n` intervals of CH_BUSY_INTERVAL in which the threads ran `ran`
 * and waited `waited` (shares of the interval); returns the last decision. */
static int feed(ch_busy_guard *g, double *now, int n, double ran, double waited) {
    int full = 1;
    for (int i = 0; i < n; i++) {
        *now += CH_BUSY_INTERVAL;
        full = ch_busy_guard_step(g, *now, CH_BUSY_INTERVAL, ran * CH_BUSY_INTERVAL, waited * CH_BUSY_INTERVAL);
    }
    return full;
}

int main(void) {
    ch_busy_guard g = {0};
    double now = 0;

    /* a quiet machine: two busy threads, 1 % waiting, stays at full width */
    CHECK(feed(&g, &now, 1000, 1.9, 0.02) == 1);
    CHECK(!g.reduced);

    /* one contended interval is not enough; two in a row are */
    CHECK(feed(&g, &now, 1, 1.3, 0.7) == 1);
    CHECK(feed(&g, &now, 1, 1.9, 0.02) == 1);   /* the strike is forgotten */
    CHECK(feed(&g, &now, 1, 1.3, 0.7) == 1);
    CHECK(feed(&g, &now, 1, 1.3, 0.7) == 0);
    CHECK(g.reduced);
    double reduced_at = now;

    /* on one thread until the hold ends, whatever the samples say */
    while (now + CH_BUSY_INTERVAL < reduced_at + CH_BUSY_HOLD_MIN)
        CHECK(feed(&g, &now, 1, 1.0, 0.0) == 0);
    /* then one interval at full width: the neighbour is still there */
    CHECK(feed(&g, &now, 1, 1.0, 0.0) == 1);
    CHECK(g.probing);
    CHECK(feed(&g, &now, 1, 1.2, 0.8) == 0);
    CHECK(g.hold == 2 * CH_BUSY_HOLD_MIN);   /* the next hold is twice as long */

    /* holds double up to CH_BUSY_HOLD_MAX while the probes keep failing */
    for (int i = 0; i < 10; i++) {
        double until = g.until;
        while (now + CH_BUSY_INTERVAL < until) CHECK(feed(&g, &now, 1, 1.0, 0.0) == 0);
        CHECK(feed(&g, &now, 1, 1.0, 0.0) == 1);
        CHECK(feed(&g, &now, 1, 1.2, 0.8) == 0);
    }
    CHECK(g.hold == CH_BUSY_HOLD_MAX);

    /* a probe with too little work to tell keeps probing */
    while (now + CH_BUSY_INTERVAL < g.until) feed(&g, &now, 1, 1.0, 0.0);
    CHECK(feed(&g, &now, 1, 1.0, 0.0) == 1);
    CHECK(feed(&g, &now, 3, 0.01, 0.0) == 1);
    CHECK(g.probing);
    /* the neighbour left: full width again, and the hold starts over */
    CHECK(feed(&g, &now, 1, 1.9, 0.01) == 1);
    CHECK(!g.reduced && !g.probing);
    CHECK(g.hold == CH_BUSY_HOLD_MIN);

    /* idle stretches (a Lua-only loop, a data load) never count as strikes */
    CHECK(feed(&g, &now, 1, 1.3, 0.7) == 1);
    CHECK(feed(&g, &now, 50, 0.02, 0.05) == 1);
    CHECK(feed(&g, &now, 1, 1.3, 0.7) == 0);

    if (check_failures == 0) printf("busy guard decisions: ok\n");
    return check_failures != 0;
}

/* test_team.c - the CPU engine's pick of its team size by the calls'
 * times (src/sim/team_pick.h), fed made-up times: it tries both sizes,
 * keeps the faster, probes the other now and then and less often while
 * the other keeps losing, switches when the other wins, starts afresh for
 * a new world and keeps large worlds on all the threads. (That any
 * thread count gives the same bits, so that switching is free, is
 * physics-determinism's, which runs the engine switching every call.)
 */
#include "team_pick.h"
#include "test.h"

#include <stdio.h>

/* Runs `calls` calls of 30 sub-steps of an n-ball world, a sub-step
 * taking t1 s on one thread and tall s on all; returns how many ran on
 * one thread. */
static int run(bp_team_pick *p, uint32_t n, int calls, double t1, double tall)
{
    int on_one = 0;
    for (int k = 0; k < calls; k++) {
        int ran = p->next;
        on_one += ran == 1;
        bp_team_pick_after(p, ran, n, 30u, 30.0 * (ran == 1 ? t1 : tall));
    }
    return on_one;
}

static int picks_the_faster(void)
{
    bp_team_pick p;
    ENSURE(bp_team_pick_init(&p, 2, 1, 1, "", NULL, NULL, 0) == 0);
    ENSURE(p.next == 2);
    /* one thread 20% faster: it is tried second and kept */
    int one = run(&p, 1000, 200, 80e-6, 100e-6);
    printf("one thread faster: %d of 200 calls on one thread\n", one);
    ENSURE(p.use == 1);
    ENSURE(one >= 190);
    /* then two threads become faster (the host changed): the next probe,
     * at most TEAM_PROBE_MOST calls on, finds it, and two stay */
    run(&p, 1000, (int)TEAM_PROBE_MOST + 1, 80e-6, 60e-6);
    ENSURE(p.use == 2);
    one = run(&p, 1000, 200, 80e-6, 60e-6);
    printf("then two faster: %d of 200 calls on one thread\n", one);
    ENSURE(one <= 20);
    /* two threads much faster: the probes back off to one in 512 */
    one = run(&p, 1000, 4000, 150e-6, 60e-6);
    printf("two much faster: %d of 4000 calls on one thread\n", one);
    ENSURE(p.probe_every == TEAM_PROBE_MOST);
    ENSURE(one <= 20);
    /* within TEAM_SWITCH of each other: the size in use stays */
    ENSURE(bp_team_pick_init(&p, 2, 1, 1, "", NULL, NULL, 0) == 0);
    one = run(&p, 1000, 300, 99e-6, 100e-6);
    ENSURE(p.use == 2);
    ENSURE(one <= 30);
    return 0;
}

static int new_world_and_large_world(void)
{
    bp_team_pick p;
    ENSURE(bp_team_pick_init(&p, 4, 1, 1, "", NULL, NULL, 0) == 0);
    run(&p, 1500, 50, 50e-6, 100e-6);
    ENSURE(p.use == 1);
    /* a new world: both timed afresh, here all threads win */
    int one = run(&p, 2000, 100, 200e-6, 100e-6);
    ENSURE(p.use == 4);
    ENSURE(one <= 10);
    /* a large world always runs on all threads, even were one faster */
    one = run(&p, TEAM_ADAPT_MAX_BALLS, 100, 50e-6, 100e-6);
    ENSURE(one == 0);
    ENSURE(p.next == 4);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        {"picks_the_faster", picks_the_faster},
        {"new_world_and_large_world", new_world_and_large_world},
    };
    return bp_test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}

/* team_pick.h - private: how many threads the CPU engine's next call runs
 * on, all it was made with or one, picked by the calls' times (engine_cpu.c,
 * BALLPIT_CPU_TEAM=adapt).
 *
 * On the 2-core hosts of this project two threads pay every sub-step for
 * their barriers and for the balls' cache lines that cross between the
 * cores, which in the smallest worlds costs more than the second core
 * gives: the rain 1k 0.70-0.71 ms a frame on one thread against 0.85-0.86
 * on two, while from the rain 2k on two threads win clearly
 * (docs/benchmarks.md, fiftieth session). Any thread count gives the same
 * bits, so the engine may switch between calls: it runs on the size in
 * use and now and then on the other (a probe); a probe that ran a
 * sub-step in at most TEAM_SWITCH of the size in use's time takes over.
 * Probes come every TEAM_PROBE_FIRST calls, the interval doubled up to
 * TEAM_PROBE_MOST after each probe that lost by more than
 * TEAM_PROBE_SLOWER, so a clear choice costs little. Worlds of
 * TEAM_ADAPT_MAX_BALLS balls or more always run on all the threads.
 */
#ifndef BP_TEAM_PICK_H
#define BP_TEAM_PICK_H

#include <stdint.h>

#define TEAM_PROBE_FIRST 16u
#define TEAM_PROBE_MOST 512u
#define TEAM_PROBE_SLOWER 1.15
#define TEAM_SWITCH 0.97
/* from the rain 2k on, two threads win by 1.35x, and the probes cost 1-3%
 * of the frame time where they always lose (the bench's rain and pile
 * 10k) */
#define TEAM_ADAPT_MAX_BALLS 4096u

typedef struct bp_team_pick {
    int all;              /* the threads the engine was made with (> 1) */
    int use;              /* the size in use: all or 1 */
    int next;             /* the size of the next call */
    double per_sub[2];    /* seconds a sub-step: [0] on one thread, [1] on all; 0: not timed */
    uint32_t timed_n;     /* the world size they were taken at */
    uint32_t since_probe; /* calls on the size in use since the last probe */
    uint32_t probe_every;
} bp_team_pick;

/* A pick that starts on all of `all` threads. */
void bp_team_pick_init(bp_team_pick *p, int all);

/* After a call on `ran` threads of nsub sub-steps of a world of n balls
 * that took `wall` seconds: sets p->next. */
void bp_team_pick_after(bp_team_pick *p, int ran, uint32_t n, uint32_t nsub, double wall);

#endif

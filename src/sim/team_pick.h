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

#include <stddef.h>
#include <stdint.h>

#define TEAM_PROBE_FIRST 16u
#define TEAM_PROBE_MOST 512u
#define TEAM_PROBE_SLOWER 1.15
#define TEAM_SWITCH 0.97
/* from the rain 2k on, two threads win by 1.35x, and the probes cost 1-3%
 * of the frame time where they always lose (the bench's rain and pile
 * 10k) */
#define TEAM_ADAPT_MAX_BALLS 4096u

/* How the sizes are chosen: always all, by the calls' times, or all and
 * one in turn (for tests). */
enum { BP_TEAM_FIXED, BP_TEAM_ADAPT, BP_TEAM_ALTERNATE };

typedef struct bp_team_pick {
    int mode;             /* BP_TEAM_* */
    int all;              /* the threads (or groups) the engine was made with */
    int use;              /* the size in use: all or 1 */
    int next;             /* the size of the next call */
    double per_sub[2];    /* seconds a sub-step: [0] on one thread, [1] on all; 0: not timed */
    uint32_t timed_n;     /* the world size they were taken at */
    uint32_t since_probe; /* calls on the size in use since the last probe */
    uint32_t probe_every;
} bp_team_pick;

/* A pick that starts on all of `all` threads. Its mode: the environment
 * variable `var` (adapt, fixed or alternate; not read where var is NULL),
 * else adapt where adapt_default, else fixed; fixed, whatever is asked,
 * where picking cannot be (`can` 0: one thread, or a device whose groups
 * must all run). Returns 0, or -1 with the message "<who>VAR=VALUE is not
 * adapt, fixed or alternate" in err for any other value. */
int bp_team_pick_init(bp_team_pick *p, int all, int can, int adapt_default, const char *who,
                      const char *var, char *err, size_t errlen);

/* The threads of the next call. */
static inline int bp_team_pick_size(const bp_team_pick *p)
{
    return p->mode == BP_TEAM_FIXED ? p->all : p->next;
}

/* After a call on `ran` threads of nsub sub-steps of a world of n balls
 * that took `wall` seconds: the size of the next call (adapt: by the
 * times; alternate: the other size; fixed: all). */
void bp_team_pick_after(bp_team_pick *p, int ran, uint32_t n, uint32_t nsub, double wall);

#endif

/* pace.c - how often the sandbox draws while its engine is behind
 * (pace.h). */
#include "pace.h"

void bp_pace_init(bp_pace *p)
{
    p->every = 1;
    p->since = -1.0;
    p->tick = 0;
}

/* Whether the condition for the other pace has held long enough. */
static int held(bp_pace *p, double now, int cond)
{
    if (!cond) {
        p->since = -1.0;
        return 0;
    }
    if (p->since < 0.0)
        p->since = now;
    return now - p->since >= BP_PACE_HOLD_S;
}

int bp_pace_tick(bp_pace *p, double now, const bp_pace_in *in)
{
    p->tick++;
    /* the other pace's condition: halve while the step overruns a
     * period, back to every tick once it has room to spare */
    int other = p->every == 1 ? in->step_ms > in->period_ms
                              : in->step_ms < BP_PACE_FULL_SHARE * in->period_ms;
    if (!in->shared || !in->stepping) {
        p->every = 1;
        p->since = -1.0;
    } else if (held(p, now, other)) {
        p->every = p->every == 1 ? 2 : 1;
        p->since = -1.0;
    }
    if (p->every == 1 || in->must_draw || in->input_age < BP_PACE_INPUT_S)
        return 1;
    return (p->tick & 1u) == 0;
}

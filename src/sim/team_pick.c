/* team_pick.c - the CPU engine's team size by the calls' times
 * (team_pick.h). */
#include "team_pick.h"
#include "bp_util.h"

int bp_team_pick_init(bp_team_pick *p, int all, int can, int adapt_default, const char *who,
                      const char *var, char *err, size_t errlen)
{
    static const char *const words[3] = {"adapt", "fixed", "alternate"};
    static const int modes[3] = {BP_TEAM_ADAPT, BP_TEAM_FIXED, BP_TEAM_ALTERNATE};
    int k = adapt_default ? 0 : 1;
    if (var && bp_env_word(who, var, words, 3, &k, err, errlen))
        return -1;
    p->mode = modes[k];
    if (!can)
        p->mode = BP_TEAM_FIXED;
    p->all = all;
    p->use = p->next = all;
    p->per_sub[0] = p->per_sub[1] = 0.0;
    p->timed_n = UINT32_MAX;
    p->since_probe = 0;
    p->probe_every = TEAM_PROBE_FIRST;
    return 0;
}

void bp_team_pick_after(bp_team_pick *p, int ran, uint32_t n, uint32_t nsub, double wall)
{
    const int other = ran == 1 ? p->all : 1;
    if (p->mode == BP_TEAM_ALTERNATE) {
        p->next = other;
        return;
    }
    if (p->mode == BP_TEAM_FIXED || nsub == 0)
        return;
    if (n >= TEAM_ADAPT_MAX_BALLS) {
        p->use = p->next = p->all;
        p->timed_n = UINT32_MAX; /* timed afresh when the world shrinks */
        return;
    }
    if (n != p->timed_n) { /* a new world: both sizes timed afresh */
        p->per_sub[0] = p->per_sub[1] = 0.0;
        p->timed_n = n;
        p->since_probe = 0;
        p->probe_every = TEAM_PROBE_FIRST;
    }
    const int k = ran == 1 ? 0 : 1;
    const double t = wall / nsub;
    if (ran != p->use || p->per_sub[k] == 0.0) {
        /* a probe of the size not in use, or the first call of a size */
        p->per_sub[k] = t;
        p->since_probe = 0;
        double cur = p->per_sub[1 - k];
        if (cur == 0.0) {
            p->next = other; /* time the other size next */
            return;
        }
        if (t <= TEAM_SWITCH * cur) {
            p->use = ran; /* faster: it takes over */
            p->probe_every = TEAM_PROBE_FIRST;
        } else if (t > TEAM_PROBE_SLOWER * cur && p->probe_every < TEAM_PROBE_MOST) {
            p->probe_every *= 2u;
        }
        p->next = p->use;
        return;
    }
    p->per_sub[k] = 0.75 * p->per_sub[k] + 0.25 * t;
    p->next = ++p->since_probe >= p->probe_every ? other : p->use;
}

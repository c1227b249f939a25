/* test_settle.c - bp_world_settle: room for a new swarm's balls before they
 * move, so a dense swarm falls as the clump it was drawn as instead of
 * bursting apart on its overlaps (src/sim/settle.c). */
#include "physics_common.h"
#include "bp_physics.h"

#include <math.h>

/* The sandbox's default swarm: 200 balls of radius 4 in the disc
 * bp_swarm_spread gives them, 4 (1.6 sqrt(200) + 1) = 94.5 px. */
#define SWARM_N 200u
#define SWARM_R 4.0f
#define SWARM_SPREAD 94.5f

/* The smallest gap between ball i and any other ball (centre distance
 * less the radii), over balls i of first..count-1. */
static double min_gap_from(const bp_world *w, uint32_t first)
{
    double g = INFINITY;
    for (uint32_t i = first; i < w->count; i++)
        for (uint32_t j = 0; j < w->count; j++) {
            if (j == i)
                continue;
            double d = hypot((double)w->x[j] - w->x[i], (double)w->y[j] - w->y[i]);
            g = fmin(g, d - w->r[i] - w->r[j]);
        }
    return g;
}

static bp_world *swarm_world(void)
{
    bp_params p = bp_params_default(); /* 1280 x 720, g = 900 */
    bp_world *w = bp_world_create(&p);
    if (w && bp_world_add_swarm(w, 640, 300, SWARM_N, SWARM_R, SWARM_SPREAD, 0, 0, 1, NULL, 0) !=
                 SWARM_N) {
        bp_world_destroy(w);
        return NULL;
    }
    return w;
}

/* RMS and largest speed after one frame (30 sub-steps) of the engine under
 * test; -1 when the engine is unusable here. */
static int one_frame(bp_world *w, bp_stats *st)
{
    bp_engine *e = test_engine(w, 0);
    if (!e)
        return -1;
    int rc = test_step(e, w, 30);
    bp_engine_destroy(e);
    bp_world_measure(w, st);
    return rc ? -2 : 0;
}

/* The default swarm as drawn overlaps (pairs up to nearly on top of each
 * other) and, stepped as it is, bursts: 495 px/s RMS after one frame
 * (measured, CPU engine). Settled, every ball keeps the skin's gap from
 * every other, the velocities are untouched, the swarm stays the same
 * size, and after a frame every ball moves at what gravity gave it, 900 /
 * 33 = 27.3 px/s, nothing more. */
static int settled_swarm_falls_as_a_clump(void)
{
    bp_world *raw = swarm_world(), *w = swarm_world();
    ENSURE(raw && w);
    ENSURE(min_gap_from(raw, 0) < -SWARM_R); /* overlaps by more than a radius */
    bp_stats burst;
    int rc = one_frame(raw, &burst);
    if (rc == -1) {
        bp_world_destroy(raw);
        bp_world_destroy(w);
        return BP_TEST_SKIP;
    }
    ENSURE(rc == 0);
    printf("as drawn: RMS %.1f px/s, largest %.1f after a frame\n", burst.rms_speed,
           burst.max_speed);
    ENSURE(burst.rms_speed > 200.0);

    double spread0 = 0.0, spread1 = 0.0;
    for (uint32_t i = 0; i < w->count; i++)
        spread0 += hypot(w->x[i] - 640.0, w->y[i] - 300.0);
    char err[256];
    ENSURE(bp_world_settle(w, 0, 0, err, sizeof err) == 0);
    double gap = min_gap_from(w, 0);
    printf("settled: smallest gap %.4f px (%.4f radii)\n", gap, gap / SWARM_R);
    ENSURE(gap >= 0.05 * SWARM_R); /* outside the resting spring's skin */
    for (uint32_t i = 0; i < w->count; i++) {
        ENSURE(w->vx[i] == 0.0f && w->vy[i] == 0.0f);
        ENSURE(w->x[i] >= SWARM_R && w->x[i] <= w->params.width - SWARM_R);
        ENSURE(w->y[i] >= SWARM_R && w->y[i] <= w->params.height - SWARM_R);
        spread1 += hypot(w->x[i] - 640.0, w->y[i] - 300.0);
    }
    printf("mean distance from the centre: %.2f -> %.2f px\n", spread0 / SWARM_N,
           spread1 / SWARM_N);
    ENSURE(spread1 < 1.05 * spread0);

    bp_stats st;
    ENSURE(one_frame(w, &st) == 0);
    printf("settled: RMS %.2f px/s, largest %.2f after a frame\n", st.rms_speed, st.max_speed);
    double fall = w->params.gravity_y / w->params.fps;
    ENSURE(fabs(st.max_speed - fall) < 0.01 * fall && fabs(st.rms_speed - fall) < 0.01 * fall);
    bp_world_destroy(raw);
    bp_world_destroy(w);
    return 0;
}

/* A swarm drawn dipping into a resting heap (its lowest balls 20 px into
 * it): the heap's balls do not move, and the new ones find room above it
 * (none left overlapping). The same world settled twice gives the same
 * bits. */
static int settle_leaves_older_balls_alone(void)
{
    bp_params p = bp_params_default();
    p.width = 400;
    bp_world *w = bp_world_create(&p), *again = NULL;
    ENSURE(w);
    const double r = 3.0, d = 2.0 * r + 0.1, pitch = d * sqrt(3.0) / 2.0;
    for (int row = 0; row < 20; row++)
        for (double x = r + (row % 2 ? d / 2.0 : 0.0); x <= p.width - r; x += d)
            ENSURE(bp_world_add_ball(w, (float)x, (float)(p.height - r - row * pitch), 0, 0,
                                     (float)r, 0, NULL, 0) >= 0);
    uint32_t old = w->count;
    float top = w->y[old - 1];
    float spread = 3.0f * (1.6f * sqrtf(150.0f) + 1.0f);
    ENSURE(bp_world_add_swarm(w, 200, top + 20.0f - spread, 150, 3.0f, spread, 0, 0, 2, NULL,
                              0) == 150);
    ENSURE(min_gap_from(w, old) < -3.0);
    again = bp_world_clone(w);
    ENSURE(again);
    bp_world *before = bp_world_clone(w);
    ENSURE(before);
    char err[256];
    ENSURE(bp_world_settle(w, old, 0, err, sizeof err) == 0);
    ENSURE(bp_world_settle(again, old, 0, err, sizeof err) == 0);
    ENSURE(memcmp(w->x, before->x, old * sizeof *w->x) == 0);
    ENSURE(memcmp(w->y, before->y, old * sizeof *w->y) == 0);
    ENSURE(memcmp(w->x, again->x, w->count * sizeof *w->x) == 0);
    ENSURE(memcmp(w->y, again->y, w->count * sizeof *w->y) == 0);
    double gap = min_gap_from(w, old);
    printf("swarm into a heap: smallest gap of a new ball %.4f px\n", gap);
    ENSURE(gap >= 0.05 * 3.0);
    bp_world_destroy(w);
    bp_world_destroy(again);
    bp_world_destroy(before);
    return 0;
}

/* A swarm of small balls drawn over the rim of a big one (radius 50, as
 * the sandbox's Shift+wheel allows; the disc 15 px into it): the cells
 * stay as small as the new balls need, the big ball is found from every
 * cell it reaches, and every new ball finds room (with cells as wide as
 * the big ball, 500 balls shared a few cells and the looks ran out). */
static int settle_beside_a_big_ball(void)
{
    bp_params p = bp_params_default();
    bp_world *w = bp_world_create(&p);
    ENSURE(w);
    ENSURE(bp_world_add_ball(w, 640, 500, 0, 0, 50.0f, 0, NULL, 0) == 0);
    float spread = 2.0f * (1.6f * sqrtf(500.0f) + 1.0f);
    double off = (50.0 + spread - 15.0) / sqrt(2.0);
    ENSURE(bp_world_add_swarm(w, (float)(640.0 + off), (float)(500.0 - off), 500, 2.0f, spread,
                              0, 0, 4, NULL, 0) == 500);
    ENSURE(min_gap_from(w, 1) < -8.0); /* some drawn well inside the big ball */
    char err[256];
    ENSURE(bp_world_settle(w, 1, 0, err, sizeof err) == 0);
    ENSURE(w->x[0] == 640.0f && w->y[0] == 500.0f);
    double gap = min_gap_from(w, 1);
    printf("beside a big ball: smallest gap of a new ball %.4f px\n", gap);
    ENSURE(gap >= 0.05 * 2.0);
    bp_world_destroy(w);
    return 0;
}

/* Balls of radius 1 drawn inside a ball of radius 150, with a ring of
 * small older balls just outside its rim when `ring` (settled dropping
 * then, as the sandbox does; without the ring, keeping): every new ball
 * ends up clear of every other. Returns 0, or -1 when a check fails. */
static int out_of_a_big_ball(int ring)
{
    bp_params p = bp_params_default();
    bp_world *w = bp_world_create(&p);
    ENSURE(w);
    ENSURE(bp_world_add_ball(w, 640, 400, 0, 0, 150.0f, 0, NULL, 0) == 0);
    uint32_t nring = 0;
    for (double a = 0.0; ring && a < 6.283185307179586 - 0.014; a += 0.0144, nring++)
        ENSURE(bp_world_add_ball(w, (float)(640.0 + 152.5 * cos(a)),
                                 (float)(400.0 + 152.5 * sin(a)), 0, 0, 1.0f, 0, NULL,
                                 0) == nring + 1);
    uint32_t first = w->count;
    ENSURE(bp_world_add_swarm(w, 640, 400, 30, 1.0f, 1.0f * (1.6f * sqrtf(30.0f) + 1.0f), 0, 0,
                              5, NULL, 0) == 30);
    char err[256];
    ENSURE(bp_world_settle(w, first, ring, err, sizeof err) == 0);
    ENSURE(w->count == first + 30);
    double gap = min_gap_from(w, first);
    printf("out of a big ball, %u small balls around it: smallest gap of a new ball %.4f px\n",
           nring, gap);
    ENSURE(gap >= 0.05 * 1.0);
    bp_world_destroy(w);
    return 0;
}

/* Alone: each new ball first goes out to the big ball's edge, along the
 * line from its centre, then finds room there; 75 radii deep, no ring
 * search alone would reach out (it stops at 32 radii). */
static int settle_out_of_a_big_ball(void)
{
    return out_of_a_big_ball(0);
}

/* Ringed by small older balls: the balls moved out of the big one (151 px
 * out, past the 66 px the search around the swarm reaches) must see them
 * and keep clear (before, the grid listed no older ball that far out, and
 * they landed on the ring: the smallest gap was -1.43 px). */
static int settle_out_of_a_big_ball_past_a_ring(void)
{
    return out_of_a_big_ball(1);
}

/* The default swarm drawn across a slanted line: the balls the line cuts
 * move off it (the engine would push them out of it into their
 * neighbours, and those would burst: 261 px/s at most after a frame,
 * measured), and the swarm leaves its first frame at what gravity gave
 * it. */
static int settle_keeps_off_lines(void)
{
    bp_world *w = swarm_world();
    ENSURE(w);
    ENSURE(bp_world_add_line(w, 400, 300, 900, 320, NULL, 0) == 0);
    char err[256];
    ENSURE(bp_world_settle(w, 0, 0, err, sizeof err) == 0);
    double worst = INFINITY;
    for (uint32_t i = 0; i < w->count; i++) {
        float qx, qy;
        double d = sqrt(bp_segment_closest(w->x[i], w->y[i], 400, 300, 900, 320, &qx, &qy));
        worst = fmin(worst, d / w->r[i] - 1.0);
    }
    printf("across a line: nearest ball %.4f radii clear of it\n", worst);
    ENSURE(worst >= 0.05);
    ENSURE(min_gap_from(w, 0) >= 0.05 * SWARM_R);
    bp_stats st;
    int rc = one_frame(w, &st);
    if (rc == -1) {
        bp_world_destroy(w);
        return BP_TEST_SKIP;
    }
    ENSURE(rc == 0);
    printf("across a line: RMS %.2f px/s, largest %.2f after a frame\n", st.rms_speed,
           st.max_speed);
    double fall = w->params.gravity_y / w->params.fps;
    ENSURE(st.max_speed < 1.01 * fall);
    bp_world_destroy(w);
    return 0;
}

/* Pouring in one place (the sandbox's right-hold: a swarm every 0.25 s
 * where the last one was, 26 px lower by then): five swarms of 200 balls
 * of radius 4 above a floor line, 8 frames apart. Each finds room for
 * every ball around the ones before it (with 300 looks a ball and rings
 * out to 32 radii, the second swarm left 129 of its balls overlapping,
 * and each later one 150-183). */
static int poured_swarms_find_room(void)
{
    bp_params p = bp_params_default();
    bp_world *w = bp_world_create(&p);
    ENSURE(w);
    ENSURE(bp_world_add_line(w, 100, 650, 1180, 650, NULL, 0) == 0);
    bp_engine *e = NULL;
    char err[256];
    for (int k = 0; k < 5; k++) {
        uint32_t first = w->count;
        ENSURE(bp_world_add_swarm(w, 98.5f, 600, SWARM_N, SWARM_R, SWARM_SPREAD, 0, 0,
                                  (uint64_t)k + 1, NULL, 0) == SWARM_N);
        ENSURE(bp_world_settle(w, first, 0, err, sizeof err) == 0);
        double gap = min_gap_from(w, first);
        printf("poured swarm %d: smallest gap of a new ball %.4f px\n", k + 1, gap);
        ENSURE(gap >= 0.05 * SWARM_R);
        if (!e) {
            e = test_engine(w, 0);
            if (!e) {
                bp_world_destroy(w);
                return BP_TEST_SKIP;
            }
        } else {
            ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
        }
        ENSURE(test_step(e, w, 8 * 30) == 0);
    }
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

/* An empty box of 200 x 200 px, gravity as by default. */
static bp_world *box_200(void)
{
    bp_params p = bp_params_default();
    p.width = 200;
    p.height = 200;
    return bp_world_create(&p);
}

/* More balls than the box holds: bp_world_settle stops (a budget of balls
 * looked at), leaves every ball in the box and finite, and the ones it
 * found no room for where they were, and says how many those are. */
static int settle_gives_up_on_a_full_box(void)
{
    bp_world *w = box_200();
    ENSURE(w);
    /* 1,000 balls of radius 4: 50,000 px^2 of discs in a 40,000 px^2 box */
    ENSURE(bp_world_add_swarm(w, 100, 100, 1000, 4.0f, 100, 0, 0, 3, NULL, 0) == 1000);
    char err[256];
    int64_t crowded = bp_world_settle(w, 0, 0, err, sizeof err);
    printf("no room for %lld of 1000\n", (long long)crowded);
    ENSURE(crowded > 0 && crowded < 1000);
    bp_stats st;
    bp_world_measure(w, &st);
    ENSURE(st.escaped == 0 && st.nonfinite == 0 && w->count == 1000);
    ENSURE(st.max_overlap > 0.5); /* no room: overlaps left for the engine */
    bp_world_destroy(w);
    return 0;
}

/* Dropping (as the sandbox spawns): in the same full box, after an older
 * ball in a corner, 1,000 balls each tagged by its velocity (ball k moves
 * at k / 2,000 px/s). The balls without room are taken out and the rest
 * keep their order (the tags still rise); as many are left as were said to
 * have room; no two are closer than the gap; the older ball is as it was;
 * stepped, nothing bursts (after a frame no ball is faster than gravity's
 * 27.3 px/s and its tag). */
static int settle_drops_what_has_no_room(void)
{
    bp_world *w = box_200();
    ENSURE(w);
    ENSURE(bp_world_add_ball(w, 10, 10, 3, -2, 6, 0, NULL, 0) == 0);
    uint64_t seed = 12345;
    for (uint32_t k = 0; k < 1000; k++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        float x = 4.0f + 192.0f * (float)(seed >> 40) / 16777216.0f;
        float y = 4.0f + 192.0f * (float)((seed >> 16) & 0xffffff) / 16777216.0f;
        ENSURE(bp_world_add_ball(w, x, y, k / 2000.0f, 0, 4, 0, NULL, 0) == k + 1);
    }
    char err[256];
    int64_t crowded = bp_world_settle(w, 1, 1, err, sizeof err);
    printf("no room for %lld of 1000: taken out\n", (long long)crowded);
    ENSURE(crowded > 0 && crowded < 1000);
    ENSURE(w->count == 1001 - crowded);
    ENSURE(w->x[0] == 10.0f && w->y[0] == 10.0f && w->vx[0] == 3.0f && w->vy[0] == -2.0f &&
           w->r[0] == 6.0f);
    for (uint32_t i = 2; i < w->count; i++)
        ENSURE(w->vx[i] > w->vx[i - 1]);
    ENSURE(min_gap_from(w, 0) >= 0.05 * 4.0); /* the resting skin, 0.05 r */
    bp_stats st;
    bp_world_measure(w, &st);
    ENSURE(st.escaped == 0 && st.nonfinite == 0 && st.max_overlap == 0.0);
    bp_stats fell;
    int rc = one_frame(w, &fell);
    if (rc == -1) {
        bp_world_destroy(w);
        return BP_TEST_SKIP;
    }
    ENSURE(rc == 0);
    printf("after a frame: RMS %.2f px/s, largest %.2f\n", fell.rms_speed, fell.max_speed);
    ENSURE(fell.max_speed <= 900.0 / 33.0 + 0.6);
    bp_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(settled_swarm_falls_as_a_clump),
        BP_TEST(settle_leaves_older_balls_alone),
        BP_TEST(settle_beside_a_big_ball),
        BP_TEST(settle_out_of_a_big_ball),
        BP_TEST(settle_out_of_a_big_ball_past_a_ring),
        BP_TEST(settle_keeps_off_lines),
        BP_TEST(poured_swarms_find_room),
        BP_TEST(settle_gives_up_on_a_full_box),
        BP_TEST(settle_drops_what_has_no_room),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

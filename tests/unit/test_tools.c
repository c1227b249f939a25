/* test_tools.c - the mouse tools (src/app/tools.c) driven with made-up
 * events; the commands they emit are collected and checked. */
#include <stdlib.h>

#include "app/tools.h"
#include "test.h"

typedef struct sink {
    bp_cmd c[64];
    int n;
    int refuse;
} sink;

static int collect(void *ctx, bp_cmd *c)
{
    sink *s = ctx;
    if (s->refuse || s->n == 64)
        return -1;
    s->c[s->n++] = *c;
    memset(c, 0, sizeof *c);
    return 0;
}

static void drain(sink *s)
{
    for (int i = 0; i < s->n; i++)
        bp_cmd_free(&s->c[i]);
    s->n = 0;
}

static int straight_line_drag(void)
{
    sink s = { 0 };
    bp_tools t;
    bp_tools_init(&t, collect, &s);
    bp_tools_press(&t, BP_BTN_LEFT, 0, 100, 100, 0.0);
    ENSURE(t.drag == BP_DRAG_LINE);
    bp_tools_motion(&t, 200, 150, 0.05);
    ENSURE(s.n == 0); /* nothing until release: the preview is local */
    ENSURE_NEAR(t.x, 200, 0);
    bp_tools_release(&t, BP_BTN_LEFT, 300, 200, 0.1);
    ENSURE(s.n == 1 && s.c[0].kind == BP_CMD_ADD_LINES && s.c[0].npts == 2);
    ENSURE_NEAR(s.c[0].pts[0], 100, 0);
    ENSURE_NEAR(s.c[0].pts[3], 200, 0);
    ENSURE(t.drag == BP_DRAG_NONE);
    drain(&s);
    /* A click without a drag draws nothing. */
    bp_tools_press(&t, BP_BTN_LEFT, 0, 50, 50, 1.0);
    bp_tools_release(&t, BP_BTN_LEFT, 50.5f, 50, 1.1);
    ENSURE(s.n == 0);
    /* Points outside the world box are clamped to it. */
    bp_tools_press(&t, BP_BTN_LEFT, 0, -40, 10, 2.0);
    bp_tools_release(&t, BP_BTN_LEFT, 5000, 10, 2.1);
    ENSURE(s.n == 1);
    ENSURE_NEAR(s.c[0].pts[0], 0, 0);
    ENSURE_NEAR(s.c[0].pts[2], t.world_w, 0);
    drain(&s);
    bp_tools_free(&t);
    return 0;
}

static int freehand_is_simplified(void)
{
    sink s = { 0 };
    bp_tools t;
    bp_tools_init(&t, collect, &s);
    /* A V stroke, one sample per px: ~400 raw points. */
    bp_tools_press(&t, BP_BTN_LEFT, 1, 100, 100, 0.0);
    ENSURE(t.drag == BP_DRAG_FREEHAND);
    for (int i = 1; i <= 200; i++)
        bp_tools_motion(&t, 100.0f + (float)i, 100.0f + (float)i, i * 0.001);
    for (int i = 1; i <= 200; i++)
        bp_tools_motion(&t, 300.0f + (float)i, 300.0f - (float)i,
                        0.2 + i * 0.001);
    ENSURE(t.npts > 300);
    bp_tools_release(&t, BP_BTN_LEFT, 500, 100, 0.5);
    ENSURE(s.n == 1 && s.c[0].kind == BP_CMD_ADD_LINES);
    ENSURE(s.c[0].npts == 3); /* start, the tip of the V, end */
    ENSURE_NEAR(s.c[0].pts[2], 300, 0);
    ENSURE_NEAR(s.c[0].pts[3], 300, 0);
    drain(&s);
    bp_tools_free(&t);
    return 0;
}

static int eraser_drags_share_a_stroke_id(void)
{
    sink s = { 0 };
    bp_tools t;
    bp_tools_init(&t, collect, &s);
    t.px = 2.0f; /* zoomed out: 8 screen px = 16 world px */
    bp_tools_press(&t, BP_BTN_MIDDLE, 0, 10, 10, 0.0);
    bp_tools_motion(&t, 20, 10, 0.01);
    bp_tools_release(&t, BP_BTN_MIDDLE, 30, 10, 0.02);
    ENSURE(s.n == 3); /* press, motion, and the release point */
    uint32_t id = s.c[0].u;
    for (int i = 0; i < 3; i++) {
        ENSURE(s.c[i].kind == BP_CMD_ERASE && s.c[i].u == id);
        ENSURE_NEAR(s.c[i].f[4], 16, 1e-6);
    }
    /* Consecutive motion segments join up. */
    ENSURE_NEAR(s.c[1].f[0], 10, 0);
    ENSURE_NEAR(s.c[1].f[2], 20, 0);
    ENSURE_NEAR(s.c[2].f[0], 20, 0);
    drain(&s);
    /* Eraser mode: the left button erases, with a new stroke id. */
    t.eraser_mode = 1;
    bp_tools_press(&t, BP_BTN_LEFT, 0, 5, 5, 1.0);
    ENSURE(t.drag == BP_DRAG_ERASE && s.n == 1 && s.c[0].u != id);
    bp_tools_release(&t, BP_BTN_LEFT, 5, 5, 1.1);
    drain(&s);
    bp_tools_free(&t);
    return 0;
}

static int right_click_spawns_at_rest(void)
{
    sink s = { 0 };
    bp_tools t;
    bp_tools_init(&t, collect, &s);
    bp_tools_press(&t, BP_BTN_RIGHT, 0, 640, 100, 0.0);
    bp_tools_tick(&t, 0.03);
    ENSURE(s.n == 0);
    bp_tools_release(&t, BP_BTN_RIGHT, 640, 100, 0.06);
    ENSURE(s.n == 1 && s.c[0].kind == BP_CMD_SPAWN);
    ENSURE(s.c[0].u == t.swarm_size);
    ENSURE_NEAR(s.c[0].f[0], 640, 0);
    ENSURE_NEAR(s.c[0].f[2], 0, 0);
    ENSURE_NEAR(s.c[0].f[3], 0, 0);
    ENSURE_NEAR(s.c[0].f[4], t.radius, 0);
    ENSURE(s.c[0].f[5] > t.radius);
    drain(&s);
    bp_tools_free(&t);
    return 0;
}

/* A swarm spawned at the box's corner is moved in until its disc fits;
 * one too wide for the box is narrowed to it and centred. */
static int spawn_disc_stays_in_the_box(void)
{
    sink s = { 0 };
    bp_tools t;
    bp_tools_init(&t, collect, &s);
    bp_tools_press(&t, BP_BTN_RIGHT, 0, 5, 715, 0.0);
    bp_tools_release(&t, BP_BTN_RIGHT, 5, 715, 0.01);
    ENSURE(s.n == 1 && s.c[0].kind == BP_CMD_SPAWN);
    float sp = bp_swarm_spread(t.swarm_size, t.radius);
    ENSURE_NEAR(s.c[0].f[5], sp, 0);
    ENSURE_NEAR(s.c[0].f[0], sp + t.radius, 1e-3);
    ENSURE_NEAR(s.c[0].f[1], 720 - sp - t.radius, 1e-3);
    drain(&s);
    t.swarm_size = 100000; /* a disc of 2,027 px by bp_swarm_spread */
    bp_tools_press(&t, BP_BTN_RIGHT, 0, 100, 100, 1.0);
    bp_tools_release(&t, BP_BTN_RIGHT, 100, 100, 1.01);
    ENSURE(s.n == 1);
    ENSURE_NEAR(s.c[0].f[5], 360 - t.radius, 1e-3);
    ENSURE_NEAR(s.c[0].f[0], 360, 1e-3);
    ENSURE_NEAR(s.c[0].f[1], 360, 1e-3);
    drain(&s);
    bp_tools_free(&t);
    return 0;
}

static int right_drag_throws_with_drag_velocity(void)
{
    sink s = { 0 };
    bp_tools t;
    bp_tools_init(&t, collect, &s);
    /* 600 px/s to the right and 300 px/s up, sampled every 10 ms. */
    bp_tools_press(&t, BP_BTN_RIGHT, 0, 100, 400, 0.0);
    for (int i = 1; i <= 15; i++) {
        double now = i * 0.01;
        bp_tools_motion(&t, 100.0f + 6.0f * (float)i, 400.0f - 3.0f * (float)i, now);
        bp_tools_tick(&t, now);
    }
    bp_tools_release(&t, BP_BTN_RIGHT, 190, 355, 0.15);
    ENSURE(s.n == 1);
    ENSURE_NEAR(s.c[0].f[2], 600, 1);
    ENSURE_NEAR(s.c[0].f[3], -300, 1);
    ENSURE_NEAR(s.c[0].f[0], 190, 0);
    drain(&s);
    /* A stop before release means no throw. */
    bp_tools_press(&t, BP_BTN_RIGHT, 0, 100, 400, 1.0);
    bp_tools_motion(&t, 150, 400, 1.05);
    bp_tools_release(&t, BP_BTN_RIGHT, 150, 400, 1.2);
    ENSURE(s.n == 1);
    ENSURE_NEAR(s.c[0].f[2], 0, 0);
    drain(&s);
    bp_tools_free(&t);
    return 0;
}

static int holding_keeps_pouring(void)
{
    sink s = { 0 };
    bp_tools t;
    bp_tools_init(&t, collect, &s);
    t.swarm_size = 100;
    bp_tools_press(&t, BP_BTN_RIGHT, 0, 300, 300, 0.0);
    uint64_t balls = 0;
    for (int f = 1; f <= 33; f++) /* one second at 33 fps */
        bp_tools_tick(&t, f / 33.0);
    bp_tools_release(&t, BP_BTN_RIGHT, 300, 300, 1.0);
    for (int i = 0; i < s.n; i++) {
        ENSURE(s.c[i].kind == BP_CMD_SPAWN);
        balls += s.c[i].u;
    }
    /* One swarm at 0.25 s, then one swarm per 0.25 s: ~4 swarms. */
    ENSURE(s.n >= 10);
    ENSURE(balls >= 350 && balls <= 420);
    drain(&s);
    bp_tools_free(&t);
    return 0;
}

static int wheel_steps_size_and_radius(void)
{
    bp_tools t;
    bp_tools_init(&t, NULL, NULL);
    ENSURE(t.swarm_size == 200);
    bp_tools_wheel(&t, 1, 0);
    ENSURE(t.swarm_size == 500);
    bp_tools_wheel(&t, -2, 0);
    ENSURE(t.swarm_size == 100);
    for (int i = 0; i < 50; i++)
        bp_tools_wheel(&t, 1, 0);
    ENSURE(t.swarm_size == 100000); /* top of the table */
    bp_tools_wheel(&t, 1, 1);
    ENSURE_NEAR(t.radius, 5, 0);
    for (int i = 0; i < 50; i++)
        bp_tools_wheel(&t, -1, 1);
    ENSURE_NEAR(t.radius, 1, 0);
    bp_tools_free(&t);
    return 0;
}

static int refused_commands_are_freed(void)
{
    sink s = { .refuse = 1 };
    bp_tools t;
    bp_tools_init(&t, collect, &s);
    bp_tools_press(&t, BP_BTN_LEFT, 1, 0, 0, 0.0);
    for (int i = 1; i < 50; i++)
        bp_tools_motion(&t, (float)i * 3, (float)(i % 7) * 5, i * 0.01);
    bp_tools_release(&t, BP_BTN_LEFT, 200, 0, 1.0);
    ENSURE(t.refused == 1 && t.emitted == 0); /* and ASan sees no leak */
    bp_tools_free(&t);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(straight_line_drag),
        BP_TEST(freehand_is_simplified),
        BP_TEST(eraser_drags_share_a_stroke_id),
        BP_TEST(right_click_spawns_at_rest),
        BP_TEST(spawn_disc_stays_in_the_box),
        BP_TEST(right_drag_throws_with_drag_velocity),
        BP_TEST(holding_keeps_pouring),
        BP_TEST(wheel_steps_size_and_radius),
        BP_TEST(refused_commands_are_freed),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

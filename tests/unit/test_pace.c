/* test_pace.c - how often the sandbox draws while its engine is behind
 * (src/app/pace.c): ticks of 1/33 s fed with the engine's step times. */
#include "app/pace.h"
#include "test.h"

#define PERIOD_MS (1000.0 / 33.0)

/* Runs `ticks` ticks from *t with input *in; returns how many were
 * drawn. */
static int run_in(bp_pace *p, double *t, int ticks, const bp_pace_in *in)
{
    int drawn = 0;
    for (int i = 0; i < ticks; i++) {
        drawn += bp_pace_tick(p, *t, in);
        *t += PERIOD_MS / 1000.0;
    }
    return drawn;
}

/* run_in with the given step time and no frame that must be drawn. */
static int run(bp_pace *p, double *t, int ticks, double step_ms, int shared, int stepping,
               double input_age)
{
    bp_pace_in in = { .shared = shared, .stepping = stepping, .step_ms = step_ms,
                      .period_ms = PERIOD_MS, .input_age = input_age, .must_draw = 0 };
    return run_in(p, t, ticks, &in);
}

/* A step longer than a frame for a second halves the frames drawn; a step
 * that fits keeps every frame. */
static int slow_step_halves_the_drawing(void)
{
    bp_pace p;
    bp_pace_init(&p);
    double t = 100.0;
    ENSURE(run(&p, &t, 66, 0.8 * PERIOD_MS, 1, 1, 10.0) == 66);
    ENSURE(p.every == 1);
    /* a slow second: every tick drawn until it has held for 1 s */
    ENSURE(run(&p, &t, 30, 1.2 * PERIOD_MS, 1, 1, 10.0) == 30);
    run(&p, &t, 10, 1.2 * PERIOD_MS, 1, 1, 10.0);
    ENSURE(p.every == 2);
    ENSURE(run(&p, &t, 66, 1.2 * PERIOD_MS, 1, 1, 10.0) == 33);
    return 0;
}

/* Once halved, the step a half-drawn window gives (faster, but not with
 * room for the full rate) keeps it halved; a step under 0.55 of a period
 * for a second brings every frame back. A short dip does not. */
static int full_rate_comes_back_with_room_to_spare(void)
{
    bp_pace p;
    bp_pace_init(&p);
    double t = 5.0;
    run(&p, &t, 40, 2.0 * PERIOD_MS, 1, 1, 10.0);
    ENSURE(p.every == 2);
    ENSURE(run(&p, &t, 100, 0.75 * PERIOD_MS, 1, 1, 10.0) == 50);
    ENSURE(p.every == 2);
    run(&p, &t, 20, 0.4 * PERIOD_MS, 1, 1, 10.0); /* 0.6 s */
    run(&p, &t, 2, 0.75 * PERIOD_MS, 1, 1, 10.0);
    ENSURE(p.every == 2);
    run(&p, &t, 34, 0.4 * PERIOD_MS, 1, 1, 10.0);
    ENSURE(p.every == 1);
    ENSURE(run(&p, &t, 20, 0.4 * PERIOD_MS, 1, 1, 10.0) == 20);
    return 0;
}

/* Input keeps every frame drawn while halved; so does a frame that must
 * be drawn (a screenshot). */
static int input_and_due_frames_are_drawn(void)
{
    bp_pace p;
    bp_pace_init(&p);
    double t = 0.0;
    run(&p, &t, 40, 2.0 * PERIOD_MS, 1, 1, 10.0);
    ENSURE(p.every == 2);
    ENSURE(run(&p, &t, 20, 2.0 * PERIOD_MS, 1, 1, 0.1) == 20);
    ENSURE(run(&p, &t, 20, 2.0 * PERIOD_MS, 1, 1, BP_PACE_INPUT_S) == 10);
    ENSURE(p.every == 2);
    bp_pace_in due = { .shared = 1, .stepping = 1, .step_ms = 2.0 * PERIOD_MS,
                       .period_ms = PERIOD_MS, .input_age = 10.0, .must_draw = 1 };
    ENSURE(run_in(&p, &t, 10, &due) == 10);
    return 0;
}

/* Where the drawing does not take the engine's cores (a GPU renders, or
 * the engine runs on a GPU), or the engine does not step every tick
 * (paused, slow motion), every frame is drawn whatever the step took. */
static int every_frame_unless_shared_and_stepping(void)
{
    bp_pace p;
    bp_pace_init(&p);
    double t = 0.0;
    ENSURE(run(&p, &t, 100, 3.0 * PERIOD_MS, 0, 1, 10.0) == 100);
    ENSURE(run(&p, &t, 100, 3.0 * PERIOD_MS, 1, 0, 10.0) == 100);
    run(&p, &t, 40, 3.0 * PERIOD_MS, 1, 1, 10.0);
    ENSURE(p.every == 2);
    /* paused: back to every frame at once */
    ENSURE(run(&p, &t, 10, 3.0 * PERIOD_MS, 1, 0, 10.0) == 10);
    ENSURE(p.every == 1);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(slow_step_halves_the_drawing),
        BP_TEST(full_rate_comes_back_with_room_to_spare),
        BP_TEST(input_and_due_frames_are_drawn),
        BP_TEST(every_frame_unless_shared_and_stepping),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

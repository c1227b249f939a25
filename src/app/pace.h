/* pace.h - how often the sandbox draws while its engine is behind.
 *
 * Where the window rasterises on the CPU (llvmpipe, SDL's software
 * renderer) and the engine steps on the same cores (the CPU engine, PoCL),
 * every frame drawn takes the cores from the engine's threads, and those
 * wait for each other at every pass: under Xvfb on 2 cores a 35,000-ball
 * pile stepped in 36-37 ms a frame beside 33 frames a second of drawing,
 * in 21-24 ms beside 16.5, against 19.9 headless (docs/benchmarks.md,
 * fifty-ninth session). So while the engine's step takes longer than a
 * frame the window draws every second tick only, unless the user is
 * doing something (a mouse button, the wheel, a key, the mouse moving in
 * the last half second), and the simulation gets the cores back; it draws
 * every tick again once the step has room to spare. The logic thread is
 * ticked every period either way. No SDL here: tests/unit/test_pace.c. */
#ifndef BP_PACE_H
#define BP_PACE_H

#include <stdint.h>

/* Seconds a condition must hold before the pace changes. */
#define BP_PACE_HOLD_S 1.0
/* Back to every tick when the step takes less than this share of a
 * period: drawing every tick makes it up to 1.8x longer. */
#define BP_PACE_FULL_SHARE 0.55
/* Input this recent keeps every tick drawn. */
#define BP_PACE_INPUT_S 0.5

typedef struct bp_pace {
    int every;        /* draw every tick (1) or every second one (2) */
    double since;     /* when the condition to change began; < 0: not holding */
    uint64_t tick;
} bp_pace;

typedef struct bp_pace_in {
    int shared;       /* the drawing and the engine share the CPU's cores */
    int stepping;     /* the engine steps every tick (not paused, not in slow
                       * motion, no OpenCL engine being made meanwhile) */
    double step_ms;   /* the engine's last step, wall ms */
    double period_ms; /* one tick */
    double input_age; /* seconds since the last input */
    int must_draw;    /* a screenshot is due, or no frame is drawn yet (help,
                       * resizes and the rest arrive as input: input_age) */
} bp_pace_in;

void bp_pace_init(bp_pace *p);

/* One tick at time now (seconds): updates the pace and returns 1 where
 * this tick is drawn, 0 where it is skipped. */
int bp_pace_tick(bp_pace *p, double now, const bp_pace_in *in);

#endif

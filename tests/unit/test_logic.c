/* test_logic.c - the sandbox's logic thread (src/app/logic.c) with the real
 * CPU engine and no display: edits are applied between frames, snapshots
 * arrive through the triple buffer, pause/step/slow motion/gravity/reset,
 * save and load, undo of line edits. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "app/logic.h"
#include "test.h"

/* Ticks once and returns the snapshot published for it. */
static const bp_snap *frame(bp_logic *L)
{
    uint64_t want = atomic_load(&L->snaps.published) + 1;
    bp_logic_tick(L);
    if (bp_logic_wait_published(L, want, 90000) != 0)
        return NULL;
    return bp_snapbuf_acquire(&L->snaps, NULL);
}

static int push(bp_logic *L, bp_cmd c)
{
    return bp_logic_push(L, &c);
}

/* Pushes a swarm of n balls: f = centre x, y, velocity x, y, radius,
 * spread. */
static int spawn(bp_logic *L, uint32_t n, const float f[6])
{
    bp_cmd c = { .kind = BP_CMD_SPAWN, .u = n };
    memcpy(c.f, f, 6 * sizeof *f);
    return bp_logic_push(L, &c);
}

static bp_cmd polyline(const float *p, uint32_t n)
{
    bp_cmd c = { .kind = BP_CMD_ADD_LINES, .npts = n };
    c.pts = malloc(2 * n * sizeof *c.pts);
    if (c.pts)
        memcpy(c.pts, p, 2 * n * sizeof *c.pts);
    return c;
}

static bp_logic *start_with(bp_backend backend, int threads)
{
    bp_world *w = bp_world_create(NULL);
    if (!w || bp_world_add_line(w, 100, 650, 1180, 650, NULL, 0) != 0)
        return NULL;
    static bp_logic L;
    char err[256];
    bp_engine_opts o = { .threads = threads };
    if (bp_logic_start(&L, w, "tests/a-scene.scene", backend, &o, 0, err,
                       sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        return NULL;
    }
    if (bp_logic_wait_published(&L, 1, 20000) != 0)
        return NULL;
    return &L;
}

static bp_logic *start_on(bp_backend backend)
{
    return start_with(backend, 1);
}

static bp_logic *start(void)
{
    return start_on(BP_BACKEND_CPU);
}

static int edits_land_between_frames(void)
{
    bp_logic *L = start();
    ENSURE(L);
    const bp_snap *s = bp_snapbuf_acquire(&L->snaps, NULL);
    ENSURE(s && s->count == 0 && s->nlines == 1);
    ENSURE(strcmp(s->scene, "a-scene") == 0);
    ENSURE(strcmp(s->engine, "cpu") == 0);

    ENSURE(spawn(L, 100, (float[6]){ 640, 300, 0, 0, 3, 60 }) == 0);
    s = frame(L);
    ENSURE(s && s->count == 100 && s->frame == 1);
    /* The swarm was given room (bp_world_settle) before it moved: after a
     * frame every ball falls at what gravity gave it, 900 / 33 px/s. Its
     * overlaps as drawn would have burst it apart (about 500 px/s). */
    for (uint32_t i = 0; i < s->count; i++) {
        ENSURE(s->r[i] == 3.0f && s->x[i] >= 0 && s->x[i] <= 1280);
        ENSURE_NEAR(s->speed[i], 900.0 / 33.0, 0.01);
    }

    /* A 3-point polyline: two segments, one undo step. */
    float p[6] = { 200, 400, 400, 450, 600, 400 };
    ENSURE(push(L, polyline(p, 3)) == 0);
    s = frame(L);
    ENSURE(s->nlines == 3 && s->undo_depth == 1);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_UNDO }) == 0);
    s = frame(L);
    ENSURE(s->nlines == 1 && s->redo_depth == 1);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_REDO }) == 0);
    s = frame(L);
    ENSURE(s->nlines == 3);

    /* Erase across the first new segment only (x = 300). */
    bp_cmd er = { .kind = BP_CMD_ERASE, .u = 1 };
    float e[5] = { 300, 380, 300, 440, 4 };
    memcpy(er.f, e, sizeof e);
    ENSURE(push(L, er) == 0);
    s = frame(L);
    ENSURE(s->nlines == 2);
    ENSURE(s->lines[4] == 400.0f && s->lines[5] == 450.0f); /* the 2nd one */

    /* Clear lines and undo it. */
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_CLEAR_LINES }) == 0);
    s = frame(L);
    ENSURE(s->nlines == 0);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_UNDO }) == 0);
    s = frame(L);
    ENSURE(s->nlines == 2);
    bp_logic_stop(L);
    return 0;
}

/* A swarm with no room for all its balls (500 of radius 20 in a 1280 x 720
 * box that holds about 400 laid at random): the sandbox adds the ones that
 * found room, says how many, and none of them bursts (each falls at what
 * gravity gave it in the frame, 900 / 33 px/s, or less where it landed). */
static int spawn_without_room_adds_what_fits(void)
{
    bp_logic *L = start();
    ENSURE(L);
    ENSURE(spawn(L, 500, (float[6]){ 640, 300, 0, 0, 20, 300 }) == 0);
    const bp_snap *s = frame(L);
    ENSURE(s);
    printf("%u balls added: %s\n", s->count, s->msg);
    ENSURE(s->count > 100 && s->count < 500);
    char want[64];
    snprintf(want, sizeof want, "room for %u of the swarm's 500 balls", s->count);
    ENSURE(strstr(s->msg, want) != NULL);
    for (uint32_t i = 0; i < s->count; i++)
        ENSURE(s->speed[i] <= 900.0 / 33.0 + 0.01);
    bp_logic_stop(L);
    return 0;
}

static int pause_step_slowmo_gravity_reset(void)
{
    bp_logic *L = start();
    ENSURE(L);
    ENSURE(spawn(L, 10, (float[6]){ 640, 100, 0, 0, 4, 40 }) == 0);
    const bp_snap *s = frame(L);
    ENSURE(s->count == 10);
    double t1 = s->sim_time;
    ENSURE_NEAR(t1, 1.0 / 33.0, 1e-9);

    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_PAUSE_TOGGLE }) == 0);
    s = frame(L);
    uint64_t f0 = s->frame;
    ENSURE(s->paused);
    for (int i = 0; i < 3; i++)
        s = frame(L);
    ENSURE(s->frame == f0); /* paused: frames drawn, none simulated */
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_STEP_ONE }) == 0);
    s = frame(L);
    ENSURE(s->frame == f0 + 1);
    s = frame(L);
    ENSURE(s->frame == f0 + 1);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_PAUSE_TOGGLE }) == 0);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_SLOWMO_TOGGLE }) == 0);
    s = frame(L);
    double ts = s->sim_time;
    s = frame(L);
    ENSURE(s->slowmo);
    /* A quarter of a frame (30 sub-steps -> 7) per rendered frame. */
    ENSURE_NEAR(s->sim_time - ts, 7.0 / (33.0 * 30.0), 1e-9);

    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_GRAVITY_TOGGLE }) == 0);
    s = frame(L);
    ENSURE(!s->gravity);
    ENSURE(L->w->params.gravity_y == 0.0f); /* read after publish: safe */

    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_RESET }) == 0);
    s = frame(L);
    ENSURE(s->count == 0 && s->nlines == 1 && s->gravity);
    ENSURE(strstr(s->msg, "reset") != NULL);
    bp_logic_stop(L);
    return 0;
}

/* A scene without gravity (the gas) starts with gravity off, and V pulls
 * its balls down with the default 900 px/s^2, where it had switched a
 * zero vector on and off; V again stops the pull, R and saving keep the
 * scene's own zero. */
static int gravity_toggle_in_a_scene_without_gravity(void)
{
    bp_params p = bp_params_default();
    p.gravity_x = p.gravity_y = 0.0f;
    bp_world *w = bp_world_create(&p);
    ENSURE(w);
    static bp_logic L;
    char err[256];
    bp_engine_opts o = { .threads = 1 };
    ENSURE(bp_logic_start(&L, w, "tests/zero-g.scene", BP_BACKEND_CPU, &o, 0, err,
                          sizeof err) == 0);
    ENSURE(bp_logic_wait_published(&L, 1, 20000) == 0);
    ENSURE(spawn(&L, 20, (float[6]){ 640, 300, 0, 0, 3, 40 }) == 0);
    const bp_snap *s = frame(&L);
    ENSURE(s->count == 20 && !s->gravity);
    s = frame(&L);
    for (uint32_t i = 0; i < s->count; i++)
        ENSURE(s->speed[i] < 1.0f); /* at rest: nothing pulls */

    ENSURE(push(&L, (bp_cmd){ .kind = BP_CMD_GRAVITY_TOGGLE }) == 0);
    s = frame(&L);
    ENSURE(s->gravity);
    s = frame(&L);
    /* two frames of the default pull: each ball falls at 2 x 900 / 33
     * px/s, less what the swarm's contacts take */
    double vy = 0.0;
    for (uint32_t i = 0; i < s->count; i++)
        vy += s->speed[i];
    ENSURE(vy / s->count > 0.5 * 2.0 * 900.0 / 33.0);

    ENSURE(push(&L, (bp_cmd){ .kind = BP_CMD_GRAVITY_TOGGLE }) == 0);
    s = frame(&L);
    ENSURE(!s->gravity);
    ENSURE(L.w->params.gravity_y == 0.0f); /* read after publish: safe */

    char dir[] = "/tmp/bp_zero_g_XXXXXX";
    ENSURE(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/z.scene", dir);
    ENSURE(push(&L, (bp_cmd){ .kind = BP_CMD_GRAVITY_TOGGLE }) == 0);
    bp_cmd sv = { .kind = BP_CMD_SAVE, .str = strdup(path) };
    ENSURE(sv.str && push(&L, sv) == 0);
    s = frame(&L);
    ENSURE(s->gravity && strstr(s->msg, "saved 20 balls") != NULL);
    bp_world *back = bp_scene_load(path, err, sizeof err);
    ENSURE(back && back->params.gravity_x == 0.0f && back->params.gravity_y == 0.0f);
    bp_world_destroy(back);
    remove(path);
    rmdir(dir);

    ENSURE(push(&L, (bp_cmd){ .kind = BP_CMD_RESET }) == 0);
    s = frame(&L);
    ENSURE(s->count == 0 && !s->gravity);
    bp_logic_stop(&L);
    return 0;
}

/* The snapshots' picture number (what the renderer keys its ball texture
 * on) changes with every simulated frame and every edit, and stays while
 * the world is paused and nothing is pushed, so the renderer need not
 * draw the same balls again. */
static int picture_changes_only_with_the_balls(void)
{
    bp_logic *L = start();
    ENSURE(L);
    ENSURE(spawn(L, 10, (float[6]){ 640, 100, 0, 0, 4, 40 }) == 0);
    const bp_snap *s = frame(L);
    uint64_t p = s->picture;
    ENSURE(p > 1);
    s = frame(L);
    ENSURE(s->picture > p); /* running: a new picture every frame */
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_PAUSE_TOGGLE }) == 0);
    s = frame(L);
    p = s->picture;
    float x0 = s->x[0];
    for (int i = 0; i < 3; i++) {
        s = frame(L);
        ENSURE(s->paused && s->picture == p && s->x[0] == x0);
    }
    ENSURE(spawn(L, 5, (float[6]){ 300, 100, 0, 0, 4, 40 }) == 0);
    s = frame(L);
    ENSURE(s->count == 15 && s->picture > p); /* an edit while paused */
    p = s->picture;
    s = frame(L);
    ENSURE(s->picture == p);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_STEP_ONE }) == 0);
    s = frame(L);
    ENSURE(s->picture > p); /* one frame stepped */
    p = s->picture;
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_PAUSE_TOGGLE }) == 0);
    s = frame(L);
    ENSURE(!s->paused && s->picture > p);
    bp_logic_stop(L);
    return 0;
}

static double now(void)
{
    return (double)SDL_GetPerformanceCounter() / (double)SDL_GetPerformanceFrequency();
}

/* The real-time factor is measured over half-second windows. Pausing,
 * resuming or switching slow motion starts a new one, so the HUD does not
 * show a blend of both rates (slow motion read x0.00 for half a second
 * after a pause). The resume is pushed just after a window began, so a
 * window that was not restarted would still be the old one. */
static int real_time_factor_restarts_on_pause(void)
{
    bp_logic *L = start();
    ENSURE(L);
    ENSURE(spawn(L, 10, (float[6]){ 640, 100, 0, 0, 4, 40 }) == 0);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_PAUSE_TOGGLE }) == 0);
    const bp_snap *s = frame(L);
    ENSURE(s->paused);
    double t0 = L->rtf_t0, until = now() + 3.0;
    while (L->rtf_t0 == t0 && now() < until) { /* until a window begins */
        usleep(30000);
        s = frame(L);
    }
    ENSURE(L->rtf_t0 != t0);
    ENSURE(s->rtf == 0.0); /* a whole window paused */
    double resumed = now();
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_PAUSE_TOGGLE }) == 0);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_SLOWMO_TOGGLE }) == 0);
    s = frame(L);
    ENSURE(!s->paused && s->slowmo);
    ENSURE(L->rtf_t0 >= resumed);
    /* A rendered frame every 30 ms, a quarter of a frame (7.07 ms of
     * simulated time) each: about x0.24 once the first window closes. */
    while (now() < resumed + 0.6) {
        usleep(30000);
        s = frame(L);
    }
    fprintf(stderr, "slow motion after a pause: real time x%.3f\n", s->rtf);
    ENSURE(s->rtf > 0.05 && s->rtf < 0.4);
    bp_logic_stop(L);
    return 0;
}

/* ] and [ (BP_CMD_SUBSTEPS): twice or half the sub-steps per frame. A
 * frame stays 1/33 s of simulated time and the frame count runs on; the
 * frame after ] is what an engine of its own makes of the same world at
 * 60 sub-steps, bit for bit; the count stops at 1 and 1000; R goes back
 * to the scene's 30. */
static int substeps_double_and_halve(void)
{
    char err[256];
    bp_logic *L = start();
    ENSURE(L);
    ENSURE(spawn(L, 200, (float[6]){ 640, 560, 0, 300, 3, 60 }) == 0);
    const bp_snap *s = frame(L);
    ENSURE(s && s->count == 200 && s->substeps == 30);
    uint64_t f0 = s->frame;
    double t0 = s->sim_time;

    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_SUBSTEPS, .u = 1 }) == 0);
    /* The world as the next frame finds it, stepped apart at 60. */
    bp_world *twin = bp_world_clone(L->w); /* read after publish: safe */
    ENSURE(twin);
    twin->params.substeps = 60;
    bp_engine_opts o = { .threads = 1 };
    bp_engine *e = bp_engine_create(BP_BACKEND_CPU, &o, err, sizeof err);
    ENSURE(e && bp_engine_attach(e, twin, err, sizeof err) == 0);
    ENSURE(bp_engine_step(e, twin, 60, err, sizeof err) == 0);
    s = frame(L);
    ENSURE(s->substeps == 60 && L->w->params.substeps == 60);
    ENSURE(strstr(s->msg, "sub-steps per frame: 60 (was 30)") != NULL);
    ENSURE(s->frame == f0 + 1);
    ENSURE_NEAR(s->sim_time - t0, 1.0 / 33.0, 1e-9);
    ENSURE(s->count == twin->count);
    for (uint32_t i = 0; i < s->count; i++)
        ENSURE(s->x[i] == twin->x[i] && s->y[i] == twin->y[i]);
    bp_engine_destroy(e);
    bp_world_destroy(twin);

    for (int k = 0; k < 3; k++) /* 60 -> 30 -> 15 -> 7 */
        ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_SUBSTEPS, .u = 0 }) == 0);
    s = frame(L);
    ENSURE(s->substeps == 7 && s->frame == f0 + 2);
    for (int k = 0; k < 4; k++) /* 7 -> 3 -> 1 -> 1 -> 1 */
        ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_SUBSTEPS, .u = 0 }) == 0);
    s = frame(L);
    ENSURE(s->substeps == 1 && strstr(s->msg, "the fewest") != NULL);
    for (int k = 0; k < 11; k++) /* 1, 2, 4, ... 512, 1000, 1000 */
        ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_SUBSTEPS, .u = 1 }) == 0);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_PAUSE_TOGGLE }) == 0);
    s = frame(L);
    ENSURE(s->substeps == 1000 && strstr(s->msg, "the most") != NULL);
    ENSURE(s->frame == f0 + 3);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_RESET }) == 0);
    s = frame(L);
    ENSURE(s->substeps == 30);
    bp_logic_stop(L);
    return 0;
}

static int save_and_load(void)
{
    char dir[] = "/tmp/bp_logic_XXXXXX";
    ENSURE(mkdtemp(dir) != NULL);
    char path[256], bad[256];
    snprintf(path, sizeof path, "%s/sub/saved.scene", dir);
    snprintf(bad, sizeof bad, "%s/missing.scene", dir);
    bp_logic *L = start();
    ENSURE(L);
    ENSURE(spawn(L, 25, (float[6]){ 400, 200, 0, 0, 2, 30 }) == 0);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_GRAVITY_TOGGLE }) == 0);
    bp_cmd sv = { .kind = BP_CMD_SAVE, .str = strdup(path) };
    ENSURE(sv.str && push(L, sv) == 0);
    const bp_snap *s = frame(L);
    ENSURE(strstr(s->msg, "saved 25 balls") != NULL);
    ENSURE(access(path, R_OK) == 0);
    /* Saved with the scene's gravity, although V had turned it off. */
    char err[256];
    bp_world *w = bp_scene_load(path, err, sizeof err);
    ENSURE(w && w->count == 25 && w->nlines == 1);
    ENSURE(w->params.gravity_y == 900.0f);
    bp_world_destroy(w);

    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_CLEAR_BALLS }) == 0);
    s = frame(L);
    ENSURE(s->count == 0);
    bp_cmd ld = { .kind = BP_CMD_LOAD, .str = strdup(path) };
    ENSURE(ld.str && push(L, ld) == 0);
    s = frame(L);
    ENSURE(s->count == 25 && strcmp(s->scene, "saved") == 0 && s->gravity);
    bp_cmd lb = { .kind = BP_CMD_LOAD, .str = strdup(bad) };
    ENSURE(lb.str && push(L, lb) == 0);
    s = frame(L);
    ENSURE(strstr(s->msg, "load failed") != NULL && s->count == 25);
    /* R now resets to the loaded scene, not the original one. */
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_CLEAR_BALLS }) == 0);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_RESET }) == 0);
    s = frame(L);
    ENSURE(s->count == 25);
    bp_logic_stop(L);
    remove(path);
    snprintf(path, sizeof path, "%s/sub", dir);
    rmdir(path);
    rmdir(dir);
    return 0;
}

/* Ticks until the engine is no longer `from` or the switch has failed
 * (OpenCL is made on a thread of its own); at most a minute. */
static const bp_snap *until_switched(bp_logic *L, const char *from)
{
    for (int i = 0; i < 6000; i++) {
        const bp_snap *s = frame(L);
        if (!s || strcmp(s->engine, from) != 0 || s->engine_error[0])
            return s;
        usleep(10000);
    }
    return NULL;
}

/* G towards OpenCL makes the engine on another thread (the program takes
 * seconds to build on PoCL): the world keeps stepping on the CPU engine
 * meanwhile, the HUD says so, a second G waits its turn, and the world
 * then moves over whole. The maker is held back 0.6 s so the frames in
 * between are certain. */
static int world_steps_while_opencl_starts(void)
{
    bp_logic *L = start();
    ENSURE(L);
    ENSURE(spawn(L, 200, (float[6]){ 640, 300, 0, 0, 3, 80 }) == 0);
    const bp_snap *s = frame(L);
    ENSURE(s && s->count == 200);
    L->make_delay_ms = 600; /* read by the maker, started after the push below */
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_ENGINE_TOGGLE }) == 0);
    s = frame(L);
    ENSURE(strcmp(s->engine, "cpu") == 0 && strstr(s->msg, "starting OpenCL") != NULL);
    ENSURE(s->starting); /* the HUD's engine line says so while it lasts */
    uint64_t f0 = s->frame;
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_ENGINE_TOGGLE }) == 0);
    s = frame(L);
    ENSURE(strcmp(s->engine, "cpu") == 0 && strstr(s->msg, "still starting OpenCL") != NULL);
    for (int i = 0; i < 5; i++) {
        usleep(20000);
        s = frame(L);
        ENSURE(strcmp(s->engine, "cpu") == 0); /* 0.1 s of the 0.6 */
    }
    ENSURE(s->frame >= f0 + 6); /* stepping all along */
    s = until_switched(L, "cpu");
    ENSURE(s != NULL && s->count == 200 && !s->starting);
    if (strcmp(s->engine, "opencl") == 0) {
        ENSURE(!s->engine_error[0] && strstr(s->msg, "engine: opencl") != NULL);
        uint64_t f1 = s->frame;
        s = frame(L);
        ENSURE(s->frame == f1 + 1 && s->count == 200); /* and on OpenCL after */
    } else {
        ENSURE(strstr(s->msg, "OpenCL unavailable, staying on cpu") != NULL);
        printf("(OpenCL unavailable: %s)\n", s->engine_error);
    }
    bp_logic_stop(L);
    return 0;
}

/* --backend opencl starts on the CPU engine and moves to OpenCL once it
 * is made, as G does: the first frames step. */
static int opencl_asked_for_starts_on_cpu(void)
{
    bp_logic *L = start_on(BP_BACKEND_OPENCL);
    ENSURE(L);
    const bp_snap *s = bp_snapbuf_acquire(&L->snaps, NULL);
    ENSURE(s && strcmp(s->engine, "cpu") == 0 && strstr(s->msg, "starting OpenCL") != NULL);
    ENSURE(spawn(L, 50, (float[6]){ 640, 300, 0, 0, 3, 60 }) == 0);
    s = until_switched(L, "cpu");
    ENSURE(s != NULL && s->count == 50 && s->frame >= 1);
    if (strcmp(s->engine, "opencl") != 0) {
        ENSURE(strstr(s->msg, "OpenCL unavailable") != NULL && s->engine_error[0]);
        printf("(OpenCL unavailable: %s)\n", s->engine_error);
    }
    bp_logic_stop(L);
    return 0;
}

/* While OpenCL is made, a CPU engine of two threads runs on one (the
 * compiler has the other core), and gets its threads back when OpenCL
 * cannot start or when G brings the CPU engine back. */
static int cpu_engine_lends_a_core_while_opencl_starts(void)
{
    bp_logic *L = start_with(BP_BACKEND_CPU, 2);
    ENSURE(L);
    const bp_snap *s = frame(L);
    ENSURE(s && strncmp(s->device, "2 threads", 9) == 0);
    L->make_delay_ms = 400;
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_ENGINE_TOGGLE }) == 0);
    s = frame(L);
    ENSURE(strcmp(s->engine, "cpu") == 0 && strncmp(s->device, "1 thread,", 9) == 0);
    s = until_switched(L, "cpu");
    ENSURE(s != NULL);
    if (strcmp(s->engine, "opencl") == 0) {
        ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_ENGINE_TOGGLE }) == 0);
        s = frame(L);
        ENSURE(strcmp(s->engine, "cpu") == 0);
    }
    ENSURE(strncmp(s->device, "2 threads", 9) == 0);
    bp_logic_stop(L);
    return 0;
}

/* A device that builds but cannot step fails in the maker's warm-up
 * (BALLPIT_OCL_FAIL=step:2, read when the engine is made): the world stays
 * on the CPU engine, which gets its thread back, and the HUD says why. */
static int opencl_failing_its_warm_up_stays_on_cpu(void)
{
    bp_logic *L = start_with(BP_BACKEND_CPU, 2);
    ENSURE(L);
    ENSURE(spawn(L, 100, (float[6]){ 640, 300, 0, 0, 3, 60 }) == 0);
    const bp_snap *s = frame(L);
    ENSURE(s && s->count == 100);
    ENSURE(setenv("BALLPIT_OCL_FAIL", "step:2", 1) == 0); /* no thread reads it now */
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_ENGINE_TOGGLE }) == 0);
    s = until_switched(L, "cpu");
    unsetenv("BALLPIT_OCL_FAIL"); /* the maker has been joined */
    ENSURE(s != NULL && strcmp(s->engine, "cpu") == 0 && s->engine_error[0] && !s->starting);
    ENSURE(strstr(s->msg, "OpenCL unavailable, staying on cpu") != NULL);
    ENSURE(strncmp(s->device, "2 threads", 9) == 0 && s->count == 100);
    printf("(OpenCL start failed as injected: %s)\n", s->engine_error);
    uint64_t f0 = s->frame;
    s = frame(L);
    ENSURE(s->frame == f0 + 1); /* and steps on */
    bp_logic_stop(L);
    return 0;
}

/* Quitting while OpenCL is being made waits for the maker and frees what
 * it made (ASan and valgrind see a leak or a use after free). */
static int quit_while_opencl_starts(void)
{
    bp_logic *L = start();
    ENSURE(L);
    L->make_delay_ms = 300;
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_ENGINE_TOGGLE }) == 0);
    const bp_snap *s = frame(L);
    ENSURE(s && L->maker != NULL);
    bp_logic_stop(L);
    ENSURE(L->maker == NULL && L->fresh == NULL);
    return 0;
}

/* G while paused: the world moves to the other engine without a ball
 * lost or moved (bit for bit), and back; or, without OpenCL, the reason is
 * in the snapshot and the CPU engine keeps running. */
static int engine_switch_keeps_every_ball(void)
{
    bp_logic *L = start();
    ENSURE(L);
    ENSURE(spawn(L, 500, (float[6]){ 640, 300, 30, -20, 3, 120 }) == 0);
    const bp_snap *s = frame(L);
    s = frame(L);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_PAUSE_TOGGLE }) == 0);
    s = frame(L);
    ENSURE(s->paused && s->count == 500);
    float *x = malloc(500 * sizeof *x), *y = malloc(500 * sizeof *y);
    ENSURE(x && y);
    memcpy(x, s->x, 500 * sizeof *x);
    memcpy(y, s->y, 500 * sizeof *y);
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_ENGINE_TOGGLE }) == 0);
    s = until_switched(L, "cpu");
    ENSURE(s != NULL);
    if (strcmp(s->engine, "opencl") != 0) {
        /* No usable OpenCL here: the reason is shown, the CPU stays. */
        ENSURE(strcmp(s->engine, "cpu") == 0 && s->engine_error[0]);
        ENSURE(strstr(s->msg, "unavailable") != NULL);
        printf("(OpenCL unavailable: %s)\n", s->engine_error);
    } else {
        ENSURE(s->count == 500);
        for (int i = 0; i < 500; i++)
            ENSURE(s->x[i] == x[i] && s->y[i] == y[i]);
        ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_ENGINE_TOGGLE }) == 0);
        s = frame(L);
        ENSURE(strcmp(s->engine, "cpu") == 0 && s->count == 500);
        for (int i = 0; i < 500; i++)
            ENSURE(s->x[i] == x[i] && s->y[i] == y[i]);
    }
    /* Still steps after the round trip. */
    ENSURE(push(L, (bp_cmd){ .kind = BP_CMD_STEP_ONE }) == 0);
    uint64_t f0 = s->frame;
    s = frame(L);
    ENSURE(s->frame == f0 + 1);
    free(x);
    free(y);
    bp_logic_stop(L);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(edits_land_between_frames),
        BP_TEST(spawn_without_room_adds_what_fits),
        BP_TEST(pause_step_slowmo_gravity_reset),
        BP_TEST(gravity_toggle_in_a_scene_without_gravity),
        BP_TEST(picture_changes_only_with_the_balls),
        BP_TEST(real_time_factor_restarts_on_pause),
        BP_TEST(substeps_double_and_halve),
        BP_TEST(save_and_load),
        BP_TEST(engine_switch_keeps_every_ball),
        BP_TEST(world_steps_while_opencl_starts),
        BP_TEST(quit_while_opencl_starts),
        BP_TEST(opencl_asked_for_starts_on_cpu),
        BP_TEST(cpu_engine_lends_a_core_while_opencl_starts),
        BP_TEST(opencl_failing_its_warm_up_stays_on_cpu),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

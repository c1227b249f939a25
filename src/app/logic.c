/* logic.c - the logic thread (see logic.h). */
#include "logic.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "files.h"
#include "geom.h"

/* Seconds from SDL's monotonic high-resolution clock. */
static double now_s(void)
{
    return (double)SDL_GetPerformanceCounter() /
           (double)SDL_GetPerformanceFrequency();
}

/* Copies src into dst (size n), cutting it short when it does not fit. */
static void copy_str(char *dst, size_t n, const char *src)
{
    size_t l = strlen(src);
    if (l >= n)
        l = n - 1;
    memcpy(dst, src, l);
    dst[l] = '\0';
}

static void say(bp_logic *L, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Sets the HUD message (shown a few seconds, also in the state file). */
static void say(bp_logic *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->msg, sizeof L->msg, fmt, ap);
    va_end(ap);
    L->msg_seq++;
}

/* The scene name for the title: file name without folder and extension. */
static void scene_name(char *out, size_t outlen, const char *path)
{
    if (!path || !path[0]) {
        snprintf(out, outlen, "default");
        return;
    }
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    const char *dot = strrchr(b, '.');
    int n = dot && dot != b ? (int)(dot - b) : (int)strlen(b);
    snprintf(out, outlen, "%.*s", n, b);
}

/* Publishes the current world and status into the triple buffer. */
static void publish(bp_logic *L)
{
    bp_snap *s = bp_snapbuf_back(&L->snaps);
    if (bp_snap_fill(s, L->w) != 0) {
        /* Out of memory for the copy: keep showing the previous frame. */
        say(L, "out of memory for the picture of %u balls", L->w->count);
        return;
    }
    s->picture = L->picture;
    s->sim_time = L->sim_time;
    s->step_ms = L->step_ms;
    s->rtf = L->rtf;
    s->paused = L->paused;
    s->gravity = L->gravity;
    s->slowmo = L->slowmo;
    s->substeps = L->w->params.substeps;
    s->backend = (int)bp_engine_kind(L->e);
    s->engine_cores = bp_engine_host_cores(L->e);
    s->starting = L->maker != NULL;
    snprintf(s->engine, sizeof s->engine, "%s", bp_engine_name(L->e));
    snprintf(s->device, sizeof s->device, "%s", bp_engine_device(L->e));
    snprintf(s->scene, sizeof s->scene, "%s", L->scene);
    snprintf(s->msg, sizeof s->msg, "%s", L->msg);
    snprintf(s->engine_error, sizeof s->engine_error, "%s", L->engine_error);
    s->msg_seq = L->msg_seq;
    s->undo_depth = bp_undo_depth(&L->undo);
    s->redo_depth = bp_undo_redo_depth(&L->undo);
    SDL_LockMutex(L->lock);
    bp_snapbuf_publish(&L->snaps);
    SDL_CondBroadcast(L->done);
    SDL_UnlockMutex(L->lock);
}

/* V: the scene's own gravity on or off. A scene without gravity (the gas)
 * starts with it off, and V switches on the default pull (900 px/s^2
 * down), so the key always does something; saving keeps the scene's own
 * (L->gx, L->gy) either way. */
static void set_gravity(bp_logic *L, int on)
{
    float gx = L->gx, gy = L->gy;
    if (gx == 0.0f && gy == 0.0f) {
        bp_params d = bp_params_default();
        gx = d.gravity_x;
        gy = d.gravity_y;
    }
    L->gravity = on;
    L->w->params.gravity_x = on ? gx : 0.0f;
    L->w->params.gravity_y = on ? gy : 0.0f;
}

/* The scene's gravity, taken when a scene is loaded, reset or started. */
static void take_scene_gravity(bp_logic *L, const bp_params *p)
{
    L->gx = p->gravity_x;
    L->gy = p->gravity_y;
    L->gravity = L->gx != 0.0f || L->gy != 0.0f;
}

static void add_lines(bp_logic *L, const bp_cmd *c)
{
    if (c->npts < 2 || !c->pts)
        return;
    uint32_t nseg = c->npts - 1, done = 0;
    float *seg = malloc((size_t)nseg * 4 * sizeof *seg);
    char err[200] = "";
    for (uint32_t i = 0; i < nseg; i++) {
        const float *p = c->pts + 2 * (size_t)i;
        if (bp_world_add_line(L->w, p[0], p[1], p[2], p[3], err, sizeof err) < 0) {
            say(L, "line not added: %s", err);
            break;
        }
        if (seg) {
            memcpy(seg + 4 * (size_t)done, p, 2 * sizeof *seg);
            memcpy(seg + 4 * (size_t)done + 2, p + 2, 2 * sizeof *seg);
        }
        done++;
    }
    if (!seg || bp_undo_record(&L->undo, BP_UNDO_ADDED, seg, done, 0))
        say(L, "out of memory: undo history cleared");
    free(seg);
}

static void erase(bp_logic *L, const bp_cmd *c)
{
    bp_world *w = L->w;
    if (w->nlines == 0)
        return;
    uint32_t *hits = malloc((size_t)w->nlines * sizeof *hits);
    float *seg = malloc((size_t)w->nlines * 4 * sizeof *seg);
    if (!hits || !seg) {
        free(hits);
        free(seg);
        say(L, "out of memory while erasing");
        return;
    }
    uint32_t n = bp_eraser_hits(w->lx1, w->ly1, w->lx2, w->ly2, w->nlines,
                                c->f[0], c->f[1], c->f[2], c->f[3], c->f[4],
                                hits, w->nlines);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = hits[k];
        seg[4 * k + 0] = w->lx1[i];
        seg[4 * k + 1] = w->ly1[i];
        seg[4 * k + 2] = w->lx2[i];
        seg[4 * k + 3] = w->ly2[i];
    }
    /* Highest index first: removal shifts the later lines down. */
    for (uint32_t k = n; k-- > 0;)
        bp_world_remove_line(w, hits[k]);
    if (n && bp_undo_record(&L->undo, BP_UNDO_REMOVED, seg, n, c->u))
        say(L, "out of memory: undo history cleared");
    free(hits);
    free(seg);
}

static void clear_lines(bp_logic *L)
{
    bp_world *w = L->w;
    uint32_t n = w->nlines;
    if (!n)
        return;
    float *seg = malloc((size_t)n * 4 * sizeof *seg);
    if (seg) {
        for (uint32_t i = 0; i < n; i++) {
            seg[4 * i + 0] = w->lx1[i];
            seg[4 * i + 1] = w->ly1[i];
            seg[4 * i + 2] = w->lx2[i];
            seg[4 * i + 3] = w->ly2[i];
        }
    }
    if (!seg || bp_undo_record(&L->undo, BP_UNDO_REMOVED, seg, n, 0))
        say(L, "out of memory: undo history cleared");
    free(seg);
    bp_world_clear_lines(w);
    say(L, "cleared %u lines (Ctrl+Z brings them back)", n);
}

/* Replaces the running world by src (a loaded scene or the initial one). */
static int replace_world(bp_logic *L, const bp_world *src)
{
    if (bp_world_copy(L->w, src) != 0) {
        say(L, "out of memory: the world is unchanged");
        return -1;
    }
    take_scene_gravity(L, &L->w->params);
    bp_undo_free(&L->undo);
    return 0;
}

static void load(bp_logic *L, const char *path)
{
    char err[512];
    bp_world *nw = bp_scene_load(path, err, sizeof err);
    if (!nw) {
        say(L, "load failed: %s", err);
        return;
    }
    if (bp_world_copy(L->initial, nw) != 0 || replace_world(L, nw) != 0) {
        say(L, "out of memory loading %s", path);
        bp_world_destroy(nw);
        return;
    }
    bp_world_destroy(nw);
    L->sim_time = 0.0;
    scene_name(L->scene, sizeof L->scene, path);
    say(L, "loaded %s", path);
}

static void save(bp_logic *L, const char *path)
{
    char dir[4096], err[512];
    bp_dirname(path, dir, sizeof dir);
    if (bp_mkdir_p(dir, err, sizeof err) != 0) {
        say(L, "save failed: %s", err);
        return;
    }
    /* Save the scene's own gravity whatever V has made of it. */
    float sgx = L->w->params.gravity_x, sgy = L->w->params.gravity_y;
    L->w->params.gravity_x = L->gx;
    L->w->params.gravity_y = L->gy;
    int rc = bp_scene_save(L->w, path, err, sizeof err);
    L->w->params.gravity_x = sgx;
    L->w->params.gravity_y = sgy;
    if (rc != 0)
        say(L, "save failed: %s", err);
    else
        say(L, "saved %u balls, %u lines to %s", L->w->count, L->w->nlines,
            path);
}

/* Says which engine runs now, after a switch. */
static void say_engine(bp_logic *L)
{
    L->engine_error[0] = '\0';
    say(L, "engine: %s (%s)", bp_engine_name(L->e), bp_engine_device(L->e));
}

static void say_unavailable(bp_logic *L, bp_backend to, const char *err)
{
    copy_str(L->engine_error, sizeof L->engine_error, err);
    say(L, "%s unavailable, staying on %s: %s", to == BP_BACKEND_OPENCL ? "OpenCL" : "CPU",
        bp_engine_name(L->e), err);
}

/* Moves the world to a new engine of kind `to` here and now, and says
 * which engine runs, or why it stays. */
static void switch_now(bp_logic *L, bp_backend to)
{
    char err[512] = "";
    if (bp_engine_switch(&L->e, to, &L->opts, L->w, err, sizeof err) != 0)
        say_unavailable(L, to, err);
    else
        say_engine(L);
}

/* PoCL compiles each kernel the first time it is launched, seconds in all
 * with a cold cache: a few frames of a small world of the engine's own
 * launch them here, on the maker's thread, not in the logic thread's first
 * frames on the new engine; WARM_BALLS of them, so that its first step
 * re-sorts them by place (the gather kernel) too. A device that cannot
 * step fails here, before the world is handed over. Returns 0, or -1 and
 * why. */
#define WARM_BALLS 4096u /* re-sorted at its first step (bp_engine_opts.sort_by_place) */
static int warm_up(bp_engine *e, char *err, size_t errlen)
{
    bp_world *w = bp_world_create(NULL);
    int rc = w ? 0 : -1;
    if (!w)
        snprintf(err, errlen, "out of memory for the engine's warm-up world");
    else
        rc = bp_world_add_swarm(w, 400.0f, 300.0f, WARM_BALLS, 2.0f, 200.0f, 0.0f, 50.0f, 1,
                                err, errlen) < 0 ||
             bp_world_add_line(w, 200.0f, 500.0f, 600.0f, 560.0f, err, errlen) < 0 ||
             bp_engine_attach(e, w, err, errlen);
    /* the first step after an attach runs the separate kernels, later ones
     * the one-launch step of CPU devices */
    for (int i = 0; i < 3 && rc == 0; i++)
        rc = bp_engine_step(e, w, w->params.substeps, err, errlen);
    if (w)
        bp_world_destroy(w);
    return rc ? -1 : 0;
}

/* The maker thread: the engine, warmed up on a world of its own (the
 * logic thread attaches the real one when it takes the engine over). */
static int make_engine(void *arg)
{
    bp_logic *L = arg;
    if (L->make_delay_ms > 0)
        SDL_Delay((Uint32)L->make_delay_ms);
    L->fresh = bp_engine_create(BP_BACKEND_OPENCL, &L->opts, L->fresh_err, sizeof L->fresh_err);
    if (L->fresh && warm_up(L->fresh, L->fresh_err, sizeof L->fresh_err) != 0) {
        bp_engine_destroy(L->fresh);
        L->fresh = NULL;
    }
    SDL_AtomicSet(&L->made, 1);
    return 0;
}

/* While the maker compiles (a core's work for seconds) a CPU engine on
 * every core runs on one thread fewer: its threads wait for each other at
 * every pass, and one sharing its core with the compiler held them all
 * up (the 10k rain on 2 cores, PoCL's cache cold: 13 frames a second on
 * two threads beside the compiler and the build 11 s, against 33 frames a
 * second on one thread and 9 s). The same bits on any number of threads;
 * on failure the engine stays as it was. */
static void lend_a_core(bp_logic *L)
{
    int t = bp_engine_threads(L->e);
    char err[256];
    bp_engine_opts o = L->opts;
    o.threads = t - 1;
    if (bp_engine_kind(L->e) == BP_BACKEND_CPU && t > 1 &&
        bp_engine_switch(&L->e, BP_BACKEND_CPU, &o, L->w, err, sizeof err) == 0)
        L->lent = 1;
}

/* The maker failed: the CPU engine on its threads again. */
static void take_the_core_back(bp_logic *L)
{
    char err[256];
    if (L->lent && bp_engine_kind(L->e) == BP_BACKEND_CPU)
        (void)bp_engine_switch(&L->e, BP_BACKEND_CPU, &L->opts, L->w, err, sizeof err);
    L->lent = 0;
}

/* Starts making an OpenCL engine on the maker's thread while L->e runs
 * on. Returns 0, or -1 when no thread could be started. */
static int start_maker(bp_logic *L)
{
    L->fresh = NULL;
    L->fresh_err[0] = '\0';
    SDL_AtomicSet(&L->made, 0);
    L->maker = SDL_CreateThread(make_engine, "ballpit-make", L);
    if (!L->maker)
        return -1;
    lend_a_core(L);
    say(L, "starting OpenCL (its program and kernels are built: seconds the first time): the "
           "%s engine runs meanwhile", bp_engine_name(L->e));
    return 0;
}

/* Waits for the maker; returns what it made (NULL: it failed). */
static bp_engine *join_maker(bp_logic *L)
{
    SDL_WaitThread(L->maker, NULL);
    L->maker = NULL;
    bp_engine *n = L->fresh;
    L->fresh = NULL;
    return n;
}

/* Between two frames: the engine the maker has made takes the world over. */
static void adopt_made(bp_logic *L)
{
    if (!L->maker || !SDL_AtomicGet(&L->made))
        return;
    char err[512] = "";
    bp_engine *n = join_maker(L);
    if (!n || bp_engine_adopt(&L->e, n, L->w, err, sizeof err) != 0) {
        take_the_core_back(L);
        say_unavailable(L, BP_BACKEND_OPENCL, n ? err : L->fresh_err);
        return;
    }
    L->lent = 0;
    say_engine(L);
}

/* Moves the world to an OpenCL engine: made on a thread of its own, so
 * the picture keeps moving while its program builds; here, at once, in
 * lockstep runs (their frames must not depend on when the build ends) or
 * where no thread can be started. */
static void to_opencl(bp_logic *L)
{
    if (L->lockstep || start_maker(L) != 0)
        switch_now(L, BP_BACKEND_OPENCL);
}

static void toggle_engine(bp_logic *L)
{
    if (L->maker)
        say(L, "still starting OpenCL: the %s engine runs meanwhile", bp_engine_name(L->e));
    else if (bp_engine_kind(L->e) == BP_BACKEND_CPU)
        to_opencl(L);
    else
        switch_now(L, BP_BACKEND_CPU);
}

/* A new measuring window for the real-time factor: the half second in
 * which the run pauses, resumes or changes speed would mix both rates
 * (slow motion read x0.00 for half a second after a pause). */
static void rtf_restart(bp_logic *L)
{
    L->rtf_t0 = now_s();
    L->rtf_sim0 = L->sim_time;
}

/* ] and [: twice or half the sub-steps per frame, within the scene
 * format's 1..BP_MAX_SUBSTEPS. A frame stays 1/fps of simulated time, cut
 * finer: each sub-step is one more contact pass, so a pile hit hard gives
 * less (docs/physics.md, "Energy and determinism"), at that many times
 * the cost. Ctrl+S saves the count; R goes back to the scene's. Returns 1
 * when it changed (the engine re-attaches: its step length changed). */
static int set_substeps(bp_logic *L, int more)
{
    uint32_t s = L->w->params.substeps, n = more ? s * 2u : s / 2u;
    n = n < 1u ? 1u : n > BP_MAX_SUBSTEPS ? BP_MAX_SUBSTEPS : n;
    if (n == s) {
        say(L, "sub-steps per frame: %u, the %s there can be", s, more ? "most" : "fewest");
        return 0;
    }
    /* The frame count stays as it was (engines derive it from the
     * sub-steps done), a part-frame of slow motion at its share. */
    bp_world *w = L->w;
    uint64_t rest = w->substeps_done - w->frames * s;
    w->substeps_done = w->frames * n + rest * n / s;
    w->params.substeps = n;
    rtf_restart(L);
    say(L, "sub-steps per frame: %u (was %u): %s", n, s,
        more ? "stiffer contacts, more work a frame" : "less work a frame, softer contacts");
    return 1;
}

/* Applies one command; returns 1 when the world changed (needs attach). */
static int apply(bp_logic *L, bp_cmd *c)
{
    char err[256] = "";
    switch (c->kind) {
    case BP_CMD_ADD_LINES:
        add_lines(L, c);
        return 1;
    case BP_CMD_ERASE:
        erase(L, c);
        return 1;
    case BP_CMD_UNDO:
    case BP_CMD_REDO: {
        int r = c->kind == BP_CMD_UNDO ? bp_undo_undo(&L->undo, L->w)
                                       : bp_undo_redo(&L->undo, L->w);
        if (r == 0)
            say(L, "nothing to %s", c->kind == BP_CMD_UNDO ? "undo" : "redo");
        else if (r < 0)
            say(L, "%s: line limit reached", bp_cmd_name(c->kind));
        return r != 0;
    }
    case BP_CMD_SPAWN: {
        uint32_t room = BP_MAX_BALLS - L->w->count;
        uint32_t n = c->u < room ? c->u : room;
        if (n == 0) {
            say(L, "ball limit reached (%u balls): no swarm added",
                BP_MAX_BALLS);
            return 0;
        }
        int64_t got = bp_world_add_swarm(L->w, c->f[0], c->f[1], n, c->f[4],
                                         c->f[5], c->f[2], c->f[3],
                                         L->seed++, err, sizeof err);
        if (got < 0)
            say(L, "swarm not added: %s", err);
        else if ((uint32_t)got < c->u)
            say(L, "swarm clipped to %lld balls: %s", (long long)got,
                err[0] ? err : "ball limit reached");
        /* Room for each new ball, so the swarm does not burst apart; the
         * balls with none are not added (they would burst it, energy from
         * nothing). */
        if (got > 0) {
            int64_t crowded = bp_world_settle(L->w, L->w->count - (uint32_t)got, 1, err,
                                              sizeof err);
            if (crowded < 0)
                say(L, "swarm left as drawn: %s", err);
            else if (crowded == got)
                say(L, "no room for the swarm there: no balls added");
            else if (crowded > 0)
                say(L, "room for %lld of the swarm's %lld balls: the rest not added",
                    (long long)(got - crowded), (long long)got);
        }
        return got > 0;
    }
    case BP_CMD_CLEAR_BALLS:
        bp_world_clear_balls(L->w);
        return 1;
    case BP_CMD_CLEAR_LINES:
        clear_lines(L);
        return 1;
    case BP_CMD_RESET:
        if (replace_world(L, L->initial) == 0) {
            L->sim_time = 0.0;
            say(L, "reset to the loaded scene");
        }
        return 1;
    case BP_CMD_LOAD:
        load(L, c->str);
        return 1;
    case BP_CMD_SAVE:
        save(L, c->str);
        return 0;
    case BP_CMD_ENGINE_TOGGLE:
        toggle_engine(L);
        return 0; /* bp_engine_switch attaches the world itself */
    case BP_CMD_PAUSE_TOGGLE:
        L->paused = !L->paused;
        rtf_restart(L);
        return 0;
    case BP_CMD_STEP_ONE:
        if (L->paused)
            L->step_once = 1;
        return 0;
    case BP_CMD_GRAVITY_TOGGLE:
        set_gravity(L, !L->gravity);
        return 1;
    case BP_CMD_SLOWMO_TOGGLE:
        L->slowmo = !L->slowmo;
        rtf_restart(L);
        return 0;
    case BP_CMD_SUBSTEPS:
        return set_substeps(L, c->u != 0);
    case BP_CMD_NONE:
        break;
    }
    return 0;
}

/* The engine failed mid-run: fall back to the CPU with the last good
 * state (bp_engine_step leaves it in the world). */
static void fall_back(bp_logic *L, const char *why)
{
    char err[256];
    bp_engine *cpu = bp_engine_create(BP_BACKEND_CPU, &L->opts, err, sizeof err);
    if (!cpu || bp_engine_attach(cpu, L->w, err, sizeof err) != 0) {
        if (cpu)
            bp_engine_destroy(cpu);
        say(L, "engine failed (%s) and the CPU engine too: %s; paused", why,
            err);
        L->paused = 1;
        return;
    }
    const char *old = bp_engine_name(L->e);
    say(L, "%s engine failed (%s): switched to the CPU", old, why);
    copy_str(L->engine_error, sizeof L->engine_error, why);
    bp_engine_destroy(L->e);
    L->e = cpu;
}

/* Sub-steps of the next piece of a frame with `left` still to do, at
 * ms_per milliseconds each: all of them, or about 100 ms' worth when they
 * would take more than 150 ms; at least one. */
static int piece(double ms_per, int left)
{
    int per = ms_per * left > 150.0 ? (int)(100.0 / ms_per) : left;
    return per < 1 ? 1 : per > left ? left : per;
}

static void step(bp_logic *L)
{
    int n = L->w->params.substeps;
    if (L->paused && !L->step_once)
        return;
    if (L->slowmo && !L->step_once)
        n = n >= 4 ? n / 4 : 1;
    L->step_once = 0;
    /* A slow frame is stepped in pieces of about 100 ms (sized from the
     * time per sub-step measured so far), so that quitting never waits
     * for a whole slow frame. The first piece is one sub-step when the
     * cost is not known yet. Not in lockstep mode, where the frame must be
     * exactly what a headless run computes. */
    int per = n;
    if (!L->lockstep)
        per = L->substep_ms <= 0.0 ? 1 : piece(L->substep_ms, n);
    int done = 0, rc = 0;
    char err[256] = "";
    double t0 = now_s();
    while (done < n && rc == 0) {
        int k = n - done < per ? n - done : per;
        double tc = now_s();
        rc = bp_engine_step(L->e, L->w, (uint32_t)k, err, sizeof err);
        if (rc != 0)
            break;
        done += k;
        L->substep_ms = (now_s() - tc) * 1000.0 / k;
        if (!L->lockstep && done < n)
            per = piece(L->substep_ms, n - done);
        if (SDL_AtomicGet(&L->stopping))
            break;
    }
    if (rc == 0)
        rc = bp_engine_read(L->e, L->w, err, sizeof err);
    L->step_ms = (now_s() - t0) * 1000.0 * (done > 0 ? (double)n / done : 1.0);
    if (rc != 0) {
        fall_back(L, err);
        return;
    }
    L->sim_time += (double)done / ((double)L->w->params.fps *
                                   (double)L->w->params.substeps);
}

/* Real-time factor over the last half second of wall time. */
static void update_rtf(bp_logic *L)
{
    double now = now_s();
    if (now - L->rtf_t0 >= 0.5) {
        L->rtf = (L->sim_time - L->rtf_sim0) / (now - L->rtf_t0);
        if (L->rtf < 0.0)
            L->rtf = 0.0; /* reset or load set the clock back */
        L->rtf_t0 = now;
        L->rtf_sim0 = L->sim_time;
    }
}

/* Nice 10 on Linux (per thread): the renderer at nice 0 wins when it
 * wants the CPU, yet the simulation is not starved by every other program
 * as SDL's "low" (nice 19) would let it be. Elsewhere SDL's low priority. */
static void lower_priority(void)
{
#if defined(__linux__)
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) == 0)
        return;
#endif
    SDL_SetThreadPriority(SDL_THREAD_PRIORITY_LOW);
}

static int run(void *arg)
{
    bp_logic *L = arg;
    char err[512] = "";
    /* The picture comes first: the simulation (and the worker threads the
     * engine starts from this thread, which inherit the priority) takes
     * the CPU time the renderer leaves. On two cores this keeps 33 fps
     * while a heavy scene runs slower than real time, as the HUD says.
     * Lowering one's own priority cannot fail for lack of rights; if the
     * platform refuses anyway, nothing else changes. */
    if (!L->lockstep)
        lower_priority();
    L->e = NULL;
    /* --backend opencl: the CPU engine starts and OpenCL is made on the
     * maker's thread, as G does, so the picture moves from the first
     * frame; in lockstep runs OpenCL is made here, before the first. */
    const int ocl_first = L->want == BP_BACKEND_OPENCL && L->lockstep;
    if (ocl_first) {
        L->e = bp_engine_create(BP_BACKEND_OPENCL, &L->opts, err, sizeof err);
        if (!L->e || bp_engine_attach(L->e, L->w, err, sizeof err) != 0) {
            if (L->e)
                bp_engine_destroy(L->e);
            L->e = NULL;
            copy_str(L->engine_error, sizeof L->engine_error, err);
            say(L, "OpenCL unavailable, running on the CPU: %s", err);
        }
    }
    if (!L->e) {
        L->e = bp_engine_create(BP_BACKEND_CPU, &L->opts, err, sizeof err);
        if (!L->e || bp_engine_attach(L->e, L->w, err, sizeof err) != 0) {
            /* Nothing can run; show the world frozen with the reason. */
            fprintf(stderr, "ballpit: cannot start the CPU engine: %s\n", err);
            if (L->e)
                bp_engine_destroy(L->e);
            L->e = NULL;
        }
    }
    if (!L->e) {
        SDL_LockMutex(L->lock);
        L->quit = 2;
        SDL_CondBroadcast(L->done);
        SDL_UnlockMutex(L->lock);
        return 1;
    }
    if (L->want == BP_BACKEND_OPENCL && !ocl_first)
        to_opencl(L);
    L->rtf_t0 = now_s();
    L->picture = 1;
    publish(L);

    bp_cmd *batch = NULL;
    uint32_t batch_cap = 0;
    for (;;) {
        SDL_LockMutex(L->lock);
        while (!L->ticks && !L->quit)
            SDL_CondWaitTimeout(L->wake, L->lock, 100);
        if (L->quit) {
            SDL_UnlockMutex(L->lock);
            break;
        }
        L->ticks = 0;
        /* Take the whole queue at once so the lock is held only briefly. */
        uint32_t n = bp_cmdq_len(&L->q);
        if (n > batch_cap) {
            bp_cmd *b = realloc(batch, (size_t)n * sizeof *b);
            if (b) {
                batch = b;
                batch_cap = n;
            }
        }
        if (n > batch_cap)
            n = batch_cap;
        for (uint32_t i = 0; i < n; i++)
            bp_cmdq_pop(&L->q, &batch[i]);
        SDL_UnlockMutex(L->lock);

        /* The balls can change only by an edit or a step: a paused world
         * with no edits publishes the same picture, which the renderer
         * then need not draw again. */
        if (n > 0 || !L->paused)
            L->picture++;
        int dirty = 0;
        for (uint32_t i = 0; i < n; i++) {
            dirty |= apply(L, &batch[i]);
            bp_cmd_free(&batch[i]);
        }
        if (dirty && bp_engine_attach(L->e, L->w, err, sizeof err) != 0)
            fall_back(L, err);
        adopt_made(L);
        step(L);
        update_rtf(L);
        publish(L);
    }
    free(batch);
    if (L->maker) { /* quit while OpenCL was starting: wait for its build */
        bp_engine *n = join_maker(L);
        if (n)
            bp_engine_destroy(n);
    }
    return 0;
}

int bp_logic_start(bp_logic *L, bp_world *w, const char *scene,
                   bp_backend backend, const bp_engine_opts *opts, int lockstep,
                   char *err, size_t errlen)
{
    memset(L, 0, sizeof *L);
    bp_snapbuf_init(&L->snaps);
    bp_undo_init(&L->undo);
    L->w = w;
    L->initial = bp_world_clone(w);
    L->lock = SDL_CreateMutex();
    L->wake = SDL_CreateCond();
    L->done = SDL_CreateCond();
    if (!L->initial || !L->lock || !L->wake || !L->done ||
        bp_cmdq_init(&L->q, 0) != 0) {
        snprintf(err, errlen, "logic thread: %s",
                 L->initial ? SDL_GetError() : "out of memory");
        bp_logic_stop(L);
        return -1;
    }
    L->want = backend;
    L->lockstep = lockstep;
    if (opts)
        L->opts = *opts;
    take_scene_gravity(L, &w->params);
    L->seed = 0x5eed;
    scene_name(L->scene, sizeof L->scene, scene);
    L->thread = SDL_CreateThread(run, "ballpit-logic", L);
    if (!L->thread) {
        snprintf(err, errlen, "logic thread: SDL_CreateThread: %s",
                 SDL_GetError());
        bp_logic_stop(L);
        return -1;
    }
    return 0;
}

int bp_logic_push(bp_logic *L, bp_cmd *c)
{
    SDL_LockMutex(L->lock);
    int rc = bp_cmdq_push(&L->q, c);
    SDL_UnlockMutex(L->lock);
    if (rc != 0)
        bp_cmd_free(c);
    return rc;
}

void bp_logic_tick(bp_logic *L)
{
    SDL_LockMutex(L->lock);
    L->ticks = 1;
    SDL_CondSignal(L->wake);
    SDL_UnlockMutex(L->lock);
}

int bp_logic_wait_published(bp_logic *L, uint64_t count, int timeout_ms)
{
    Uint64 end = SDL_GetTicks64() + (Uint64)timeout_ms;
    SDL_LockMutex(L->lock);
    while (atomic_load(&L->snaps.published) < count && !L->quit) {
        Uint64 now = SDL_GetTicks64();
        if (now >= end)
            break;
        SDL_CondWaitTimeout(L->done, L->lock, (Uint32)(end - now));
    }
    int ok = atomic_load(&L->snaps.published) >= count;
    SDL_UnlockMutex(L->lock);
    return ok ? 0 : -1;
}

void bp_logic_stop(bp_logic *L)
{
    if (L->thread) {
        SDL_AtomicSet(&L->stopping, 1);
        SDL_LockMutex(L->lock);
        L->quit = 1;
        SDL_CondSignal(L->wake);
        SDL_UnlockMutex(L->lock);
        SDL_WaitThread(L->thread, NULL);
        L->thread = NULL;
    }
    if (L->e)
        bp_engine_destroy(L->e);
    L->e = NULL;
    if (L->w)
        bp_world_destroy(L->w);
    if (L->initial)
        bp_world_destroy(L->initial);
    L->w = L->initial = NULL;
    bp_undo_free(&L->undo);
    if (L->q.ring)
        bp_cmdq_free(&L->q);
    bp_snapbuf_free(&L->snaps);
    if (L->done)
        SDL_DestroyCond(L->done);
    if (L->wake)
        SDL_DestroyCond(L->wake);
    if (L->lock)
        SDL_DestroyMutex(L->lock);
    L->done = L->wake = NULL;
    L->lock = NULL;
}

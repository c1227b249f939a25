/* app.c - the sandbox window: bp_app_run (declared in src/cli.h).
 *
 * Main thread: SDL events, rendering at a steady 33 fps, HUD. The logic
 * thread (logic.c) owns the world and the engine; this file only pushes
 * edit commands to it and draws the snapshots it publishes. With
 * --screenshot-after N the two run in lockstep (each rendered frame shows
 * the next simulated frame) so the screenshot is reproducible.
 */
#include <SDL.h>
#include <SDL_ttf.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "files.h"
#include "help.h"
#include "fontfind.h"
#include "hud.h"
#include "logic.h"
#include "pace.h"
#include "png.h"
#include "render.h"
#include "state.h"
#include "tools.h"
#include "view.h"
#include "scene_io.h"

#define BP_APP_FPS 33.0
#define BP_MSG_SECONDS 6.0
/* HUD slots: status panel, message, help overlay. */
#define SLOT_PANEL 0
#define SLOT_MSG 12
#define SLOT_HELP 14
/* Every row of the help overlay gets its slots (before, the last four rows,
 * the screenshot, save/load, help and quit keys, fell off the overlay). */
_Static_assert(SLOT_HELP + 1 + 2 * BP_HELP_ROWS <= BP_HUD_SLOTS,
               "the help overlay needs more HUD slots");

static const SDL_Color msg_ok = { 150, 230, 160, 255 };
static const SDL_Color msg_warn = { 255, 140, 120, 255 };
static const SDL_Color preview_col = { 250, 205, 90, 255 };
static const SDL_Color eraser_col = { 255, 120, 110, 220 };
static const SDL_Color spawn_col = { 120, 200, 255, 200 };

typedef struct app {
    const bp_cli *cli;
    SDL_Window *win;
    SDL_Renderer *ren;
    char renderer_name[32];
    bp_render R;
    bp_hud hud;
    bp_logic L;
    int logic_up;
    bp_tools tools;
    bp_view view;
    int help, quit, shot_request, status;
    char shot_dir[4096], save_path[4096];
    char last_shot[4200], shot_err[600];
    char msg[512];
    SDL_Color msg_col;
    double msg_until;
    uint64_t seen_msg_seq;
    char title_scene[128];
    uint64_t rendered;
    double fps, fps_t0, frame_ms, hud_t;
    double draw_sum, frame_sum;   /* over the current 0.5 s window */
    double draw_avg, frame_avg;   /* means of the last window */
    int fps_frames;
    char hud_lines[8][200];
    char *state_last;
    float mouse_x, mouse_y;  /* world px */
    bp_pace pace;            /* every tick drawn, or every second (pace.h) */
    double input_t;          /* the last input event */
} app;

static double now_s(void)
{
    return (double)SDL_GetPerformanceCounter() /
           (double)SDL_GetPerformanceFrequency();
}

static void show(app *a, SDL_Color c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A message on the HUD's bottom line for a few seconds (and on stderr when
 * there is no font to show it with). */
static void show(app *a, SDL_Color c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->msg, sizeof a->msg, fmt, ap);
    va_end(ap);
    a->msg_col = c;
    a->msg_until = now_s() + BP_MSG_SECONDS;
    if (!bp_hud_ready(&a->hud))
        fprintf(stderr, "ballpit: %s\n", a->msg);
}

static int emit(void *ctx, bp_cmd *c)
{
    app *a = ctx;
    if (bp_logic_push(&a->L, c) != 0) {
        show(a, msg_warn, "too many edits queued; one was dropped");
        return -1;
    }
    return 0;
}

static void send_simple(app *a, bp_cmd_kind k)
{
    bp_cmd c = { .kind = k };
    emit(a, &c);
}

static void send_path(app *a, bp_cmd_kind k, const char *path)
{
    bp_cmd c = { .kind = k };
    size_t n = strlen(path) + 1;
    c.str = malloc(n);
    if (!c.str) {
        show(a, msg_warn, "out of memory");
        return;
    }
    memcpy(c.str, path, n);
    emit(a, &c);
}

/* Reads the renderer's current picture and writes it as a PNG: to `path`
 * when given, else to a new dated name in the screenshot folder. Never
 * fatal: the HUD shows the path or the reason. Returns 0 or -1. */
static int screenshot(app *a, const char *path)
{
    char err[600] = "", name[4200];
    int w = 0, h = 0;
    if (SDL_GetRendererOutputSize(a->ren, &w, &h) != 0 || w <= 0 || h <= 0) {
        snprintf(err, sizeof err, "cannot read the window size: %s",
                 SDL_GetError());
        goto fail;
    }
    uint8_t *px = malloc((size_t)w * (size_t)h * 4);
    if (!px) {
        snprintf(err, sizeof err, "out of memory for a %dx%d picture", w, h);
        goto fail;
    }
    if (SDL_RenderReadPixels(a->ren, NULL, SDL_PIXELFORMAT_RGBA32, px,
                             w * 4) != 0) {
        snprintf(err, sizeof err, "SDL_RenderReadPixels: %s", SDL_GetError());
        free(px);
        goto fail;
    }
    int reserved = 0;
    if (path) {
        char dir[4096];
        snprintf(name, sizeof name, "%s", path);
        bp_dirname(path, dir, sizeof dir);
        if (bp_mkdir_p(dir, err, sizeof err) != 0) {
            free(px);
            goto fail;
        }
    } else {
        if (bp_shot_reserve(a->shot_dir, time(NULL), name, sizeof name, err,
                            sizeof err) != 0) {
            free(px);
            goto fail;
        }
        reserved = 1;
    }
    int rc = bp_png_write(name, px, w, h, w * 4, err, sizeof err);
    free(px);
    if (rc != 0) {
        if (reserved)
            remove(name); /* the empty placeholder */
        goto fail;
    }
    snprintf(a->last_shot, sizeof a->last_shot, "%s", name);
    a->shot_err[0] = '\0';
    show(a, msg_ok, "screenshot saved: %s", name);
    return 0;
fail:
    snprintf(a->shot_err, sizeof a->shot_err, "%s", err);
    show(a, msg_warn, "screenshot failed: %s", err);
    return -1;
}

/* A file the run will write, checked before the window opens (its folder
 * made first when make_folder): a path that cannot be written is said at
 * once, not after --screenshot-after's N frames. */
static int check_output(const char *flag, const char *path, int make_folder)
{
    char err[1200], dir[4096];
    if (make_folder) {
        bp_dirname(path, dir, sizeof dir);
        if (bp_mkdir_p(dir, err, sizeof err) != 0) {
            fprintf(stderr, "ballpit: %s %s: %s\n", flag, path, err);
            return -1;
        }
    }
    if (bp_file_check_writable(path, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "ballpit: %s %s\n", flag, err);
    return -1;
}

/* Window px -> world px, through the output/window ratio (high DPI). */
static void to_world(app *a, int wx, int wy, float *x, float *y)
{
    int ww = 1, wh = 1;
    SDL_GetWindowSize(a->win, &ww, &wh);
    float sx = (float)wx * (float)a->view.win_w / (float)(ww > 0 ? ww : 1);
    float sy = (float)wy * (float)a->view.win_h / (float)(wh > 0 ? wh : 1);
    bp_view_to_world(&a->view, sx, sy, x, y);
}

static int tool_button(Uint8 b)
{
    return b == SDL_BUTTON_LEFT ? BP_BTN_LEFT
         : b == SDL_BUTTON_MIDDLE ? BP_BTN_MIDDLE
         : b == SDL_BUTTON_RIGHT ? BP_BTN_RIGHT : 0;
}

static void on_key(app *a, const SDL_KeyboardEvent *k)
{
    int ctrl = (k->keysym.mod & KMOD_CTRL) != 0;
    int shift = (k->keysym.mod & KMOD_SHIFT) != 0;
    SDL_Keycode s = k->keysym.sym;
    /* Key repeat only makes sense for single-frame stepping. */
    if (k->repeat && s != SDLK_n && s != SDLK_PERIOD)
        return;
    if (ctrl) {
        if (s == SDLK_z && !shift)
            send_simple(a, BP_CMD_UNDO);
        else if (s == SDLK_y || (s == SDLK_z && shift))
            send_simple(a, BP_CMD_REDO);
        else if (s == SDLK_s)
            send_path(a, BP_CMD_SAVE, a->save_path);
        else if (s == SDLK_o)
            send_path(a, BP_CMD_LOAD, a->save_path);
        return;
    }
    switch (s) {
    case SDLK_ESCAPE: a->quit = 1; break;
    case SDLK_F1:
    case SDLK_h: a->help = !a->help; break;
    case SDLK_e:
        a->tools.eraser_mode = !a->tools.eraser_mode;
        show(a, msg_ok, "eraser mode %s", a->tools.eraser_mode ? "on" : "off");
        break;
    case SDLK_g:
        show(a, msg_ok, "switching engine...");
        send_simple(a, BP_CMD_ENGINE_TOGGLE);
        break;
    case SDLK_SPACE: send_simple(a, BP_CMD_PAUSE_TOGGLE); break;
    case SDLK_n:
    case SDLK_PERIOD: send_simple(a, BP_CMD_STEP_ONE); break;
    case SDLK_c: send_simple(a, BP_CMD_CLEAR_BALLS); break;
    case SDLK_l: send_simple(a, BP_CMD_CLEAR_LINES); break;
    case SDLK_r: send_simple(a, BP_CMD_RESET); break;
    case SDLK_v: send_simple(a, BP_CMD_GRAVITY_TOGGLE); break;
    case SDLK_s: send_simple(a, BP_CMD_SLOWMO_TOGGLE); break;
    case SDLK_RIGHTBRACKET:
    case SDLK_LEFTBRACKET: {
        bp_cmd c = { .kind = BP_CMD_SUBSTEPS, .u = s == SDLK_RIGHTBRACKET };
        emit(a, &c);
        break;
    }
    case SDLK_F12:
    case SDLK_p: a->shot_request = 1; break;
    default: break;
    }
}

static void on_event(app *a, const SDL_Event *e, double now)
{
    float x, y;
    if (e->type == SDL_KEYDOWN || e->type == SDL_MOUSEBUTTONDOWN || e->type == SDL_MOUSEBUTTONUP ||
        e->type == SDL_MOUSEMOTION || e->type == SDL_MOUSEWHEEL || e->type == SDL_WINDOWEVENT)
        a->input_t = now;
    switch (e->type) {
    case SDL_QUIT:
        a->quit = 1;
        break;
    case SDL_KEYDOWN:
        on_key(a, &e->key);
        break;
    case SDL_MOUSEBUTTONDOWN:
        if (e->button.which == SDL_TOUCH_MOUSEID)
            break;
        to_world(a, e->button.x, e->button.y, &x, &y);
        bp_tools_press(&a->tools, tool_button(e->button.button),
                       (SDL_GetModState() & KMOD_CTRL) != 0, x, y, now);
        break;
    case SDL_MOUSEBUTTONUP:
        to_world(a, e->button.x, e->button.y, &x, &y);
        bp_tools_release(&a->tools, tool_button(e->button.button), x, y, now);
        break;
    case SDL_MOUSEMOTION:
        to_world(a, e->motion.x, e->motion.y, &x, &y);
        a->mouse_x = x;
        a->mouse_y = y;
        bp_tools_motion(&a->tools, x, y, now);
        break;
    case SDL_MOUSEWHEEL: {
        int dy = e->wheel.y;
        if (e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED)
            dy = -dy;
        if (dy)
            bp_tools_wheel(&a->tools, dy > 0 ? 1 : -1,
                           (SDL_GetModState() & KMOD_SHIFT) != 0);
        break;
    }
    case SDL_WINDOWEVENT:
        if (e->window.event == SDL_WINDOWEVENT_FOCUS_LOST)
            bp_tools_cancel(&a->tools);
        break;
    case SDL_RENDER_TARGETS_RESET:
    case SDL_RENDER_DEVICE_RESET:
        a->R.px.picture = 0; /* the ball texture's pixels may be gone: splat again */
        break;
    default:
        break;
    }
}

/* Thousands separators for the ball count: 123,456. */
static void commas(char *out, size_t n, uint64_t v)
{
    char tmp[32];
    int len = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    size_t k = 0;
    for (int i = 0; i < len && k + 1 < n; i++) {
        out[k++] = tmp[i];
        if ((len - i - 1) % 3 == 0 && i != len - 1 && k + 1 < n)
            out[k++] = ',';
    }
    out[k] = '\0';
}

static void update_hud_text(app *a, const bp_snap *s)
{
    char balls[32];
    commas(balls, sizeof balls, s ? s->count : 0);
    snprintf(a->hud_lines[0], sizeof a->hud_lines[0],
             "fps %.1f   draw %.2f ms   frame %.1f ms   (%s, %s%s%s)", a->fps,
             a->draw_avg, a->frame_avg, a->R.mode, a->renderer_name,
             a->R.raster[0] ? "/" : "", a->R.raster);
    if (!s) {
        snprintf(a->hud_lines[1], sizeof a->hud_lines[1], "starting the engine...");
        for (int i = 2; i < 8; i++)
            a->hud_lines[i][0] = '\0';
        return;
    }
    char rt[32] = ": paused";
    if (!s->paused)
        snprintf(rt, sizeof rt, " x%.2f", s->rtf);
    snprintf(a->hud_lines[1], sizeof a->hud_lines[1], "sim %.1f ms/frame (%u sub-steps)   real time%s",
             s->step_ms, s->substeps, rt);
    snprintf(a->hud_lines[2], sizeof a->hud_lines[2], "balls %s   lines %u",
             balls, s->nlines);
    snprintf(a->hud_lines[3], sizeof a->hud_lines[3], "engine %s - %.120s%s",
             s->engine, s->device, s->starting ? "   (starting OpenCL...)" : "");
    snprintf(a->hud_lines[4], sizeof a->hud_lines[4],
             "swarm %u   radius %g px%s", a->tools.swarm_size,
             (double)a->tools.radius, a->tools.eraser_mode ? "   ERASER" : "");
    char st[128] = "";
    if (s->paused)
        strcat(st, "PAUSED  ");
    if (s->slowmo)
        strcat(st, "slow motion  ");
    if (!s->gravity)
        strcat(st, "gravity off  ");
    if (a->pace.every > 1)
        strcat(st, "every 2nd frame drawn: the engine is behind  ");
    snprintf(a->hud_lines[5], sizeof a->hud_lines[5], "%sF1: help", st);
    if (s->engine_error[0] && s->backend == BP_BACKEND_CPU)
        snprintf(a->hud_lines[6], sizeof a->hud_lines[6],
                 "OpenCL unavailable: %.110s", s->engine_error);
    else
        a->hud_lines[6][0] = '\0';
}

static int is_warning(const char *m)
{
    static const char *const words[] = { "fail", "unavailable", "limit",
                                         "not added", "out of memory",
                                         "cannot", "nothing to" };
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strstr(m, words[i]))
            return 1;
    return 0;
}

static void draw_previews(app *a)
{
    bp_tools *t = &a->tools;
    if (t->drag == BP_DRAG_LINE) {
        float p[4] = { t->x0, t->y0, t->x, t->y };
        bp_render_polyline(&a->R, &a->view, p, 2, 2.0f, preview_col);
    } else if (t->drag == BP_DRAG_FREEHAND && t->npts >= 2) {
        bp_render_polyline(&a->R, &a->view, t->pts, t->npts, 2.0f,
                           preview_col);
    } else if (t->drag == BP_DRAG_SPAWN) {
        float cx, cy, sp;
        bp_tools_swarm_disc(t, t->swarm_size, t->x, t->y, &cx, &cy, &sp);
        bp_render_ring(&a->R, &a->view, cx, cy, sp, spawn_col);
    }
    if (t->drag == BP_DRAG_ERASE || (t->eraser_mode && t->drag == BP_DRAG_NONE))
        bp_render_ring(&a->R, &a->view, a->mouse_x, a->mouse_y,
                       bp_tools_eraser_radius(t), eraser_col);
}

static void write_state(app *a, const bp_snap *s)
{
    if (!a->cli->state_file)
        return;
    bp_app_state st = {
        .frame = s ? s->frame : 0,
        .rendered = a->rendered,
        .balls = s ? s->count : 0,
        .lines = s ? s->nlines : 0,
        .engine = s ? s->engine : "",
        .device = s ? s->device : "",
        .engine_error = s ? s->engine_error : "",
        .starting = s ? s->starting : 0,
        .message = a->msg,
        .scene = s ? s->scene : "",
        .paused = s ? s->paused : 0,
        .gravity = s ? s->gravity : 1,
        .slowmo = s ? s->slowmo : 0,
        .substeps = s ? s->substeps : 0,
        .eraser = a->tools.eraser_mode,
        .help = a->help,
        .font = bp_hud_ready(&a->hud),
        .swarm_size = a->tools.swarm_size,
        .radius = a->tools.radius,
        .win_w = a->view.win_w,
        .win_h = a->view.win_h,
        .last_screenshot = a->last_shot,
        .screenshot_error = a->shot_err,
        .undo = s ? s->undo_depth : 0,
        .redo = s ? s->redo_depth : 0,
        .fps = a->fps,
        .draw_ms = a->draw_avg,
        .frame_ms = a->frame_avg,
        .step_ms = s ? s->step_ms : 0.0,
        .rtf = s ? s->rtf : 0.0,
        .draw_every = a->pace.every,
    };
    char buf[16384];
    int n = bp_state_format(&st, buf, sizeof buf);
    if (n < 0)
        return;
    if (a->state_last && strcmp(a->state_last, buf) == 0)
        return;
    char err[300];
    if (bp_write_atomic(a->cli->state_file, buf, (size_t)n, err, sizeof err)) {
        /* Report once per distinct failure, not 33 times a second. */
        if (!a->state_last || a->state_last[0] != '!') {
            fprintf(stderr, "ballpit: state file: %s\n", err);
            free(a->state_last);
            a->state_last = strdup("!");
        }
        return;
    }
    free(a->state_last);
    a->state_last = strdup(buf);
}

/* One rendered frame of snapshot s (NULL: none published yet). */
static void frame(app *a, double now, const bp_snap *s)
{
    double t0 = now_s();
    int ow = 0, oh = 0;
    if (SDL_GetRendererOutputSize(a->ren, &ow, &oh) != 0) {
        ow = a->view.win_w;
        oh = a->view.win_h;
    }
    float ww = s ? s->world_w : a->tools.world_w;
    float wh = s ? s->world_h : a->tools.world_h;
    bp_view_fit(&a->view, ow, oh, ww, wh);
    a->tools.px = 1.0f / a->view.scale;
    a->tools.world_w = ww;
    a->tools.world_h = wh;

    if (s && strcmp(s->scene, a->title_scene) != 0) {
        char title[200];
        snprintf(a->title_scene, sizeof a->title_scene, "%s", s->scene);
        snprintf(title, sizeof title, "ballpit - %s", s->scene);
        SDL_SetWindowTitle(a->win, title);
    }
    if (s && s->msg_seq != a->seen_msg_seq) {
        a->seen_msg_seq = s->msg_seq;
        if (s->msg[0])
            show(a, is_warning(s->msg) ? msg_warn : msg_ok, "%s", s->msg);
    }

    bp_render_background(&a->R, &a->view);
    if (s) {
        char err[300];
        if (bp_render_snapshot(&a->R, &a->view, s, err, sizeof err) != 0 &&
            a->msg_until < now)
            show(a, msg_warn, "%s", err);
    }
    draw_previews(a);

    if (now - a->hud_t >= 0.25 || a->hud_lines[0][0] == '\0') {
        update_hud_text(a, s);
        a->hud_t = now;
    }
    const char *lines[8];
    int n = 0;
    for (int i = 0; i < 8; i++)
        if (a->hud_lines[i][0])
            lines[n++] = a->hud_lines[i];
    bp_hud_panel(&a->hud, SLOT_PANEL, lines, n, 10, 10, ow, oh);
    if (now < a->msg_until)
        bp_hud_message(&a->hud, SLOT_MSG, a->msg, ow, oh, a->msg_col);
    if (a->help)
        bp_hud_help(&a->hud, SLOT_HELP, ow, oh);

    if (a->shot_request) {
        a->shot_request = 0;
        screenshot(a, NULL);
    }
    a->rendered++;
    long after = a->cli->screenshot_after;
    if (after > 0 && a->rendered >= (uint64_t)after) {
        a->status = screenshot(a, a->cli->screenshot_path) == 0 ? 0 : 1;
        if (a->status) /* the HUD's message would vanish with the window */
            fprintf(stderr, "ballpit: --screenshot-after: screenshot failed: %s\n",
                    a->shot_err);
        a->quit = 1;
    }
    SDL_RenderPresent(a->ren);
    a->frame_ms = (now_s() - t0) * 1000.0;
    a->fps_frames++;
    a->draw_sum += a->R.draw_ms;
    a->frame_sum += a->frame_ms;
    if (now - a->fps_t0 >= 0.5) {
        a->fps = a->fps_frames / (now - a->fps_t0);
        a->draw_avg = a->draw_sum / a->fps_frames;
        a->frame_avg = a->frame_sum / a->fps_frames;
        a->draw_sum = a->frame_sum = 0.0;
        a->fps_frames = 0;
        a->fps_t0 = now;
    }
    write_state(a, s);
}

/* Whether this tick is drawn (pace.h): every tick, or every second one
 * while the engine's step takes longer than a frame and the drawing
 * rasterises on the cores it steps on. */
static int draw_this_tick(app *a, double now, const bp_snap *s)
{
    bp_pace_in in = {
        .shared = s && a->R.raster[0] && s->engine_cores > 0,
        .stepping = s && !s->paused && !s->slowmo && !s->starting,
        .step_ms = s ? s->step_ms : 0.0,
        .period_ms = 1000.0 / BP_APP_FPS,
        .input_age = now - a->input_t,
        .must_draw = a->shot_request || a->rendered == 0,
    };
    return bp_pace_tick(&a->pace, now, &in);
}

static int logic_failed(app *a)
{
    SDL_LockMutex(a->L.lock);
    int q = a->L.quit;
    SDL_UnlockMutex(a->L.lock);
    return q == 2;
}

static void open_font(app *a)
{
    char path[1024], err[600];
    const char *f = a->cli->font;
    /* 15 px on an ordinary screen; on a high-DPI one (more output pixels
     * than window units) as many more pixels, so the text keeps its size. */
    int ow = 0, oh = 0, ww = 0, wh = 0, px = 15;
    SDL_GetWindowSize(a->win, &ww, &wh);
    if (SDL_GetRendererOutputSize(a->ren, &ow, &oh) == 0 && ww > 0 && ow > ww)
        px = (int)(15.0 * ow / ww + 0.5);
    if (f && bp_hud_init(&a->hud, a->ren, f, px, err, sizeof err) == 0)
        return;
    char ferr[600];
    if (bp_font_find(f, path, sizeof path) == 0 &&
        bp_hud_init(&a->hud, a->ren, path, px, ferr, sizeof ferr) == 0) {
        /* One line: what was wrong with the font asked for, and the one
         * the HUD uses instead. */
        if (f)
            fprintf(stderr, "ballpit: --font %s; using %s instead\n", err, path);
        return;
    }
    if (f)
        fprintf(stderr, "ballpit: --font %s; no usable font found instead (install "
                "fonts-dejavu-core); running without the HUD\n", err);
    else
        fprintf(stderr, "ballpit: no usable font found (install fonts-dejavu-core "
                "or pass --font FILE.ttf); running without the HUD\n");
}

static void cleanup(app *a)
{
    /* Gone from the screen at once, even if the engine needs a moment to
     * finish the piece of a frame it is computing. */
    if (a->win)
        SDL_HideWindow(a->win);
    if (a->logic_up)
        bp_logic_stop(&a->L);
    bp_tools_free(&a->tools);
    bp_hud_free(&a->hud);
    bp_render_free(&a->R);
    if (a->ren)
        SDL_DestroyRenderer(a->ren);
    if (a->win)
        SDL_DestroyWindow(a->win);
    free(a->state_last);
    if (TTF_WasInit())
        TTF_Quit();
    SDL_Quit();
}

int bp_app_run(const bp_cli *cli)
{
    static app A;
    app *a = &A;
    memset(a, 0, sizeof *a);
    a->cli = cli;
    char err[1024];

    bp_world *w = bp_cli_load_scene(cli->scene, err, sizeof err);
    if (!w) {
        fprintf(stderr, "ballpit: %s\n", err);
        return 2;
    }
    if ((cli->screenshot_after > 0 && cli->screenshot_path &&
         check_output("--screenshot-path", cli->screenshot_path, 1) != 0) ||
        (cli->state_file && check_output("--state-file", cli->state_file, 0) != 0)) {
        bp_world_destroy(w);
        return 1;
    }
    if (cli->screenshot_dir)
        snprintf(a->shot_dir, sizeof a->shot_dir, "%s", cli->screenshot_dir);
    else
        bp_default_shot_dir(a->shot_dir, sizeof a->shot_dir);
    if (cli->save_to)
        snprintf(a->save_path, sizeof a->save_path, "%s", cli->save_to);
    else
        bp_default_save_path(a->save_path, sizeof a->save_path);

    /* The default X11 behaviour of SDL turns off the compositor; a sandbox
     * window should not. Hints are advisory, failures are harmless. */
    SDL_SetHint(SDL_HINT_VIDEO_X11_NET_WM_BYPASS_COMPOSITOR, "0");
    if (SDL_Init(SDL_INIT_VIDEO | SDL_INIT_EVENTS) != 0) {
        fprintf(stderr, "ballpit: cannot open a window: SDL_Init: %s (no "
                "display? try 'ballpit --headless SCENE --frames N')\n",
                SDL_GetError());
        bp_world_destroy(w);
        SDL_Quit();
        return 1;
    }
    if (TTF_Init() != 0)
        fprintf(stderr, "ballpit: TTF_Init: %s; running without the HUD\n",
                TTF_GetError());

    int ww = cli->width > 0 ? cli->width : 1280;
    int wh = cli->height > 0 ? cli->height : 720;
    a->win = SDL_CreateWindow("ballpit", SDL_WINDOWPOS_CENTERED,
                              SDL_WINDOWPOS_CENTERED, ww, wh,
                              SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (!a->win) {
        fprintf(stderr, "ballpit: SDL_CreateWindow: %s\n", SDL_GetError());
        bp_world_destroy(w);
        cleanup(a);
        return 1;
    }
    a->ren = SDL_CreateRenderer(a->win, -1, SDL_RENDERER_ACCELERATED);
    if (!a->ren) {
        /* No GPU renderer (e.g. a bare X server): draw in software. */
        a->ren = SDL_CreateRenderer(a->win, -1, SDL_RENDERER_SOFTWARE);
    }
    if (!a->ren) {
        fprintf(stderr, "ballpit: SDL_CreateRenderer: %s\n", SDL_GetError());
        bp_world_destroy(w);
        cleanup(a);
        return 1;
    }
    SDL_RendererInfo info;
    if (SDL_GetRendererInfo(a->ren, &info) == 0)
        snprintf(a->renderer_name, sizeof a->renderer_name, "%s", info.name);
    if (bp_render_init(&a->R, a->ren, err, sizeof err) != 0) {
        fprintf(stderr, "ballpit: %s\n", err);
        bp_world_destroy(w);
        cleanup(a);
        return 1;
    }
    if (TTF_WasInit())
        open_font(a);

    bp_tools_init(&a->tools, emit, a);
    a->tools.world_w = w->params.width;
    a->tools.world_h = w->params.height;
    if (w->count) /* swarms match the scene's balls by default */
        a->tools.radius = w->r[0] < 1.0f ? 1.0f : w->r[0] > 50.0f ? 50.0f : w->r[0];
    bp_backend backend = cli->backend_set ? cli->backend : BP_BACKEND_CPU;
    const int lockstep = cli->screenshot_after > 0;
    if (bp_logic_start(&a->L, w, cli->scene, backend, &cli->engine, lockstep, err,
                       sizeof err) != 0) {
        fprintf(stderr, "ballpit: %s\n", err);
        cleanup(a);
        return 1;
    }
    a->logic_up = 1;

    const double period = 1.0 / BP_APP_FPS;
    double next = now_s();
    bp_pace_init(&a->pace);
    a->input_t = next;
    a->fps_t0 = next;
    a->hud_t = -1.0;
    while (!a->quit) {
        double now = now_s();
        SDL_Event e;
        while (SDL_PollEvent(&e))
            on_event(a, &e, now);
        if (a->quit)
            break;
        bp_tools_tick(&a->tools, now);
        /* Lockstep: the frame waits for the step it ticked. Otherwise the
         * tick comes after this frame's drawing (below). */
        if (lockstep)
            bp_logic_tick(&a->L);
        if (lockstep &&
            bp_logic_wait_published(&a->L, a->rendered + 2, 60000) != 0) {
            fprintf(stderr, "ballpit: the simulation stopped answering\n");
            a->status = 1;
            break;
        }
        if (logic_failed(a)) {
            fprintf(stderr, "ballpit: no engine could start\n");
            a->status = 1;
            break;
        }
        const bp_snap *s = bp_snapbuf_acquire(&a->L.snaps, NULL);
        if (lockstep || draw_this_tick(a, now, s))
            frame(a, now, s);
        /* The next step starts once this frame is drawn and presented, so
         * that a step shorter than the rest of the period runs while the
         * renderer sleeps. Ticked before the drawing, the step had shared
         * the cores with the splat and the driver's threads in every frame,
         * and the engine's threads, which wait for each other at every
         * pass, all waited for the one the renderer had taken: a 5,100-ball
         * pile's step took 16-17 ms a frame in the window on the 2-core
         * host against 3.6 ms headless, 3.8-4.0 ms ticked here. Edits still
         * reach the next step, and a step's picture is still drawn in the
         * next frame (docs/benchmarks.md, fifty-ninth session). */
        if (!lockstep)
            bp_logic_tick(&a->L);
        /* Steady 33 fps: sleep to the next deadline; after a stall, start
         * counting again from now instead of racing to catch up. */
        next += period;
        double left = next - now_s();
        if (left > 0.0)
            SDL_Delay((Uint32)(left * 1000.0));
        else if (left < -period)
            next = now_s();
    }
    int status = a->status;
    cleanup(a);
    return status;
}

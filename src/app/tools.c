/* tools.c - the mouse tool state machine (see tools.h). */
#include "tools.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "geom.h"

static const uint32_t swarm_sizes[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500,
                                        1000, 2000, 5000, 10000, 20000,
                                        50000, 100000 };
static const float radii[] = { 1, 1.5f, 2, 2.5f, 3, 4, 5, 6, 8, 10, 12, 16,
                               20, 25, 32, 40, 50 };
#define NSIZES (int)(sizeof swarm_sizes / sizeof swarm_sizes[0])
#define NRADII (int)(sizeof radii / sizeof radii[0])

void bp_tools_init(bp_tools *t, bp_emit_fn emit, void *ctx)
{
    memset(t, 0, sizeof *t);
    t->swarm_size = 200;
    t->radius = 4.0f;
    t->px = 1.0f;
    t->world_w = 1280.0f;
    t->world_h = 720.0f;
    t->emit = emit;
    t->ctx = ctx;
}

void bp_tools_free(bp_tools *t)
{
    free(t->pts);
    t->pts = NULL;
    t->npts = t->cap = 0;
}

static void send(bp_tools *t, bp_cmd *c)
{
    if (t->emit && t->emit(t->ctx, c) == 0) {
        t->emitted++;
        return;
    }
    t->refused++;
    bp_cmd_free(c);
}

static void clamp(const bp_tools *t, float *x, float *y)
{
    if (!(*x > 0.0f))
        *x = 0.0f;
    else if (*x > t->world_w)
        *x = t->world_w;
    if (!(*y > 0.0f))
        *y = 0.0f;
    else if (*y > t->world_h)
        *y = t->world_h;
}

float bp_tools_eraser_radius(const bp_tools *t)
{
    return 8.0f * t->px;
}

float bp_swarm_spread(uint32_t n, float r)
{
    /* Disc area about 2.5x the balls' area: loose enough that
     * bp_world_settle finds room for every ball near where it was drawn
     * (the engine would push overlaps apart with the resting springs, and
     * the swarm would burst). */
    return r * (1.6f * sqrtf((float)n) + 1.0f);
}

/* Coordinate c of a disc's centre (spread, balls of radius r) moved so the
 * disc lies inside [0, size]; the middle when it cannot. */
static float swarm_fit(float c, float spread, float r, float size)
{
    float lo = spread + r, hi = size - spread - r;
    if (lo > hi)
        return 0.5f * size;
    return c < lo ? lo : c > hi ? hi : c;
}

void bp_tools_swarm_disc(const bp_tools *t, uint32_t n, float x, float y, float *cx, float *cy,
                         float *spread)
{
    /* Inside the box: the balls of a disc that crosses a wall would all be
     * put on the wall, in a row, where bp_world_settle finds no room for
     * them (and they would not be added). A disc wider than the box is
     * narrowed to it (denser: the balls it finds no room for are left
     * out). */
    float s = bp_swarm_spread(n, t->radius);
    float most = 0.5f * (t->world_w < t->world_h ? t->world_w : t->world_h) - t->radius;
    s = s < most ? s : most > 0.0f ? most : 0.0f;
    *cx = swarm_fit(x, s, t->radius, t->world_w);
    *cy = swarm_fit(y, s, t->radius, t->world_h);
    *spread = s;
}

static void hist_add(bp_tools *t, float x, float y, double now)
{
    const uint32_t cap = sizeof t->hist / sizeof t->hist[0];
    if (t->hist_len == cap) {
        memmove(&t->hist[0], &t->hist[1], (cap - 1) * sizeof t->hist[0]);
        t->hist_len--;
    }
    t->hist[t->hist_len].t = now;
    t->hist[t->hist_len].x = x;
    t->hist[t->hist_len].y = y;
    t->hist_len++;
}

void bp_tools_velocity(const bp_tools *t, double now, float *vx, float *vy)
{
    *vx = *vy = 0.0f;
    if (t->hist_len < 2)
        return;
    /* Oldest sample inside the window vs the newest one. */
    uint32_t last = t->hist_len - 1, first = last;
    while (first > 0 && now - t->hist[first - 1].t <= BP_THROW_WINDOW)
        first--;
    double dt = t->hist[last].t - t->hist[first].t;
    if (first == last || dt < 0.005)
        return;
    float ux = (float)((t->hist[last].x - t->hist[first].x) / dt);
    float uy = (float)((t->hist[last].y - t->hist[first].y) / dt);
    float s = sqrtf(ux * ux + uy * uy);
    if (s > BP_THROW_MAX) {
        ux *= BP_THROW_MAX / s;
        uy *= BP_THROW_MAX / s;
    }
    *vx = ux;
    *vy = uy;
}

static void spawn(bp_tools *t, uint32_t n, float x, float y, float vx,
                  float vy)
{
    bp_cmd c = { .kind = BP_CMD_SPAWN, .u = n };
    bp_tools_swarm_disc(t, n, x, y, &c.f[0], &c.f[1], &c.f[5]);
    c.f[2] = vx;
    c.f[3] = vy;
    c.f[4] = t->radius;
    send(t, &c);
}

static void erase(bp_tools *t, float x1, float y1, float x2, float y2)
{
    bp_cmd c = { .kind = BP_CMD_ERASE, .u = t->stroke_id };
    c.f[0] = x1;
    c.f[1] = y1;
    c.f[2] = x2;
    c.f[3] = y2;
    c.f[4] = bp_tools_eraser_radius(t);
    send(t, &c);
}

static void add_point(bp_tools *t, float x, float y)
{
    if (t->npts == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 256;
        float *p = realloc(t->pts, (size_t)cap * 2 * sizeof *p);
        if (!p)
            return; /* out of memory: the stroke just gets coarser */
        t->pts = p;
        t->cap = cap;
    }
    t->pts[2 * t->npts] = x;
    t->pts[2 * t->npts + 1] = y;
    t->npts++;
}

void bp_tools_press(bp_tools *t, int button, int ctrl, float x, float y,
                    double now)
{
    if (t->drag != BP_DRAG_NONE)
        return; /* one drag at a time; other buttons are ignored */
    clamp(t, &x, &y);
    t->button = button;
    t->x0 = t->x = x;
    t->y0 = t->y = y;
    t->press_t = t->last_t = now;
    t->hist_len = 0;
    hist_add(t, x, y, now);
    if (button == BP_BTN_MIDDLE || (button == BP_BTN_LEFT && t->eraser_mode)) {
        t->drag = BP_DRAG_ERASE;
        t->stroke_id++;
        if (t->stroke_id == 0)
            t->stroke_id = 1;
        erase(t, x, y, x, y);
    } else if (button == BP_BTN_LEFT) {
        t->drag = ctrl ? BP_DRAG_FREEHAND : BP_DRAG_LINE;
        t->npts = 0;
        if (ctrl)
            add_point(t, x, y);
    } else if (button == BP_BTN_RIGHT) {
        t->drag = BP_DRAG_SPAWN;
        t->pouring = 0;
        t->pour_acc = 0.0;
    }
}

void bp_tools_motion(bp_tools *t, float x, float y, double now)
{
    clamp(t, &x, &y);
    float px = t->x, py = t->y;
    t->x = x;
    t->y = y;
    hist_add(t, x, y, now);
    switch (t->drag) {
    case BP_DRAG_FREEHAND: {
        /* Skip sub-pixel jitter; the simplifier does the real work. */
        float lx = t->pts[2 * (t->npts - 1)], ly = t->pts[2 * (t->npts - 1) + 1];
        float dx = x - lx, dy = y - ly;
        if (dx * dx + dy * dy >= 0.25f * t->px * t->px)
            add_point(t, x, y);
        break;
    }
    case BP_DRAG_ERASE:
        erase(t, px, py, x, y);
        break;
    default:
        break;
    }
}

void bp_tools_release(bp_tools *t, int button, float x, float y, double now)
{
    if (t->drag == BP_DRAG_NONE || button != t->button)
        return;
    bp_tools_motion(t, x, y, now);
    x = t->x;
    y = t->y;
    switch (t->drag) {
    case BP_DRAG_LINE: {
        float dx = x - t->x0, dy = y - t->y0;
        /* A click without a drag (under 2 screen px) draws nothing. */
        if (dx * dx + dy * dy >= 4.0f * t->px * t->px) {
            bp_cmd c = { .kind = BP_CMD_ADD_LINES, .npts = 2 };
            c.pts = malloc(4 * sizeof *c.pts);
            if (c.pts) {
                c.pts[0] = t->x0;
                c.pts[1] = t->y0;
                c.pts[2] = x;
                c.pts[3] = y;
                send(t, &c);
            } else {
                t->refused++;
            }
        }
        break;
    }
    case BP_DRAG_FREEHAND: {
        float *out = malloc((size_t)(t->npts ? t->npts : 1) * 2 * sizeof *out);
        uint32_t m = out ? bp_stroke_simplify(t->pts, t->npts, 1.0f * t->px,
                                              6.0f * t->px, out)
                         : 0;
        if (m >= 2) {
            bp_cmd c = { .kind = BP_CMD_ADD_LINES, .npts = m, .pts = out };
            send(t, &c);
        } else {
            free(out);
        }
        t->npts = 0;
        break;
    }
    case BP_DRAG_SPAWN:
        if (!t->pouring) {
            float vx, vy;
            bp_tools_velocity(t, now, &vx, &vy);
            spawn(t, t->swarm_size, x, y, vx, vy);
        }
        break;
    default:
        break;
    }
    t->drag = BP_DRAG_NONE;
    t->pouring = 0;
}

void bp_tools_tick(bp_tools *t, double now)
{
    double dt = now - t->last_t;
    t->last_t = now;
    if (t->drag != BP_DRAG_SPAWN)
        return;
    if (!t->pouring) {
        if (now - t->press_t < BP_POUR_DELAY)
            return;
        /* Start pouring: the first swarm lands now, in full. */
        t->pouring = 1;
        float vx, vy;
        bp_tools_velocity(t, now, &vx, &vy);
        spawn(t, t->swarm_size, t->x, t->y, vx, vy);
        return;
    }
    /* Keep pouring at one swarm per BP_POUR_DELAY seconds. */
    if (dt > 0.1)
        dt = 0.1; /* a stalled frame must not dump a mountain of balls */
    t->pour_acc += (double)t->swarm_size / BP_POUR_DELAY * dt;
    if (t->pour_acc >= 1.0) {
        uint32_t n = (uint32_t)t->pour_acc;
        t->pour_acc -= n;
        float vx, vy;
        bp_tools_velocity(t, now, &vx, &vy);
        spawn(t, n, t->x, t->y, vx, vy);
    }
}

void bp_tools_wheel(bp_tools *t, int steps, int shift)
{
    if (shift) {
        int i = 0;
        while (i < NRADII - 1 && radii[i] < t->radius)
            i++;
        i += steps;
        i = i < 0 ? 0 : i >= NRADII ? NRADII - 1 : i;
        t->radius = radii[i];
    } else {
        int i = 0;
        while (i < NSIZES - 1 && swarm_sizes[i] < t->swarm_size)
            i++;
        i += steps;
        i = i < 0 ? 0 : i >= NSIZES ? NSIZES - 1 : i;
        t->swarm_size = swarm_sizes[i];
    }
}

void bp_tools_cancel(bp_tools *t)
{
    t->drag = BP_DRAG_NONE;
    t->pouring = 0;
    t->npts = 0;
}

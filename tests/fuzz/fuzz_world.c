/* fuzz_world.c - libFuzzer target: a world built from fuzzed bytes, stepped
 * with the CPU engine.
 *
 * The bytes are read as a little program: parameters first, then
 * operations (add a ball anywhere, a ball on top of the last one, a ball
 * exactly on a segment's end point, a segment, a zero-length segment, a
 * small swarm, given room by bp_world_settle or not, sort the balls by
 * place, step a few sub-steps). Every value is finite and within the
 * limits of ballpit.h, with the edges of each range (tiny and huge radii,
 * the smallest and largest world, the speed cap) picked often. Values the
 * world refuses (centre outside the box, radius that does not fit) must be
 * refused with a message. After every step no position or velocity may be
 * NaN or infinite, and every ball centre must lie inside the world box.
 */
#include "ballpit.h"
#include "order.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Few enough that one input runs in a few milliseconds: a fast ball in a
 * fine grid makes every ball search up to (2*64+1)^2 cells per sub-step. */
#define FW_MAX_BALLS 128u
#define FW_MAX_LINES 32u
#define FW_MAX_OPS 96
#define FW_SUBSTEPS 8u /* sub-steps per input, all step operations together */

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t rd_u8(reader *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

static uint32_t rd_u32(reader *r)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)rd_u8(r) << (8 * i);
    return v;
}

/* A float in [lo, hi]: often an edge (lo, hi, 0 clamped in, the middle,
 * a hair inside an edge), otherwise raw bits folded into the range. */
static float rd_float(reader *r, float lo, float hi)
{
    uint8_t sel = rd_u8(r);
    switch (sel % 8) {
    case 0: return lo;
    case 1: return hi;
    case 2: return fminf(fmaxf(0.0f, lo), hi);
    case 3: return nextafterf(lo, hi);
    case 4: return nextafterf(hi, lo);
    default: break;
    }
    uint32_t bits = rd_u32(r);
    float v;
    memcpy(&v, &bits, sizeof v);
    if (isfinite(v) && v >= lo && v <= hi)
        return v;
    /* Fold: the low bits give a point of the range, log-uniform for a
     * positive range (so small worlds and radii are as common as big
     * ones: a 65536 px world costs a 1 Mi-cell segment grid per attach). */
    double u = (double)(bits & 0xffffffu) / 16777215.0;
    if (lo > 0.0f)
        v = (float)(lo * pow((double)hi / lo, u));
    else
        v = (float)(lo + ((double)hi - lo) * u);
    return fminf(fmaxf(v, lo), hi);
}

static void fail(const char *why, const bp_world *w, uint32_t i)
{
    fprintf(stderr, "fuzz_world: %s (ball %u of %u, world %gx%g)\n", why, i,
            w ? w->count : 0, w ? (double)w->params.width : 0.0,
            w ? (double)w->params.height : 0.0);
    if (w && i < w->count)
        fprintf(stderr, "  x=%g y=%g vx=%g vy=%g r=%g m=%g\n", (double)w->x[i],
                (double)w->y[i], (double)w->vx[i], (double)w->vy[i],
                (double)w->r[i], (double)w->m[i]);
    abort();
}

/* The promises after a step: finite state, every centre inside the box. */
static void check_state(const bp_world *w)
{
    const bp_params *p = &w->params;
    for (uint32_t i = 0; i < w->count; i++) {
        if (!isfinite(w->x[i]) || !isfinite(w->y[i]) || !isfinite(w->vx[i]) ||
            !isfinite(w->vy[i]))
            fail("NaN or infinity in the state", w, i);
        if (!(w->x[i] >= 0.0f && w->x[i] <= p->width && w->y[i] >= 0.0f &&
              w->y[i] <= p->height))
            fail("ball centre outside the world box", w, i);
    }
}

/* A refused add must say why; an accepted one must hold what was asked
 * (centre moved at most into the box). */
static void check_refusal(int64_t id, const char *err, const bp_world *w)
{
    if (id < 0 && err[0] == '\0')
        fail("add refused without a message", w, 0);
}

static void add_ball(bp_world *w, reader *r, float x, float y)
{
    const bp_params *p = &w->params;
    float rmax = fminf(BP_MAX_RADIUS, 0.5f * fminf(p->width, p->height));
    /* Mostly radii that fit; sometimes the whole legal range. */
    float rad = rd_u8(r) & 1 ? rd_float(r, BP_MIN_RADIUS, rmax)
                             : rd_float(r, BP_MIN_RADIUS, BP_MAX_RADIUS);
    float vx = rd_float(r, -BP_MAX_ABS_VALUE, BP_MAX_ABS_VALUE);
    float vy = rd_float(r, -BP_MAX_ABS_VALUE, BP_MAX_ABS_VALUE);
    float m = rd_u8(r) & 1 ? 0.0f : rd_float(r, -BP_MAX_ABS_VALUE, BP_MAX_ABS_VALUE);
    char err[256] = "";
    int64_t id = bp_world_add_ball(w, x, y, vx, vy, rad, m, err, sizeof err);
    check_refusal(id, err, w);
    int fits = 2.0f * rad <= p->width && 2.0f * rad <= p->height;
    int inside = x >= 0.0f && y >= 0.0f && x <= p->width && y <= p->height;
    if (id < 0 && fits && inside && w->count < BP_MAX_BALLS)
        fail("a legal ball was refused", w, 0);
    if (id >= 0 && (!fits || !inside))
        fail("an illegal ball was accepted", w, (uint32_t)id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader rd = { data, size }, *r = &rd;
    bp_params p = bp_params_default();
    p.width = rd_float(r, BP_MIN_WORLD, BP_MAX_WORLD);
    p.height = rd_float(r, BP_MIN_WORLD, BP_MAX_WORLD);
    p.gravity_x = rd_float(r, -BP_MAX_ABS_VALUE, BP_MAX_ABS_VALUE);
    p.gravity_y = rd_float(r, -BP_MAX_ABS_VALUE, BP_MAX_ABS_VALUE);
    p.restitution = rd_float(r, 0.0f, 1.0f);
    p.fps = rd_float(r, 1.0f, BP_MAX_FPS);
    p.substeps = 1 + (int)(rd_u32(r) % BP_MAX_SUBSTEPS);
    p.speed_cap = rd_float(r, 0.0f, BP_MAX_SPEED_CAP);
    char err[256] = "";
    /* fps or speed cap 0 are not legal values: the world takes them as
     * "default", which bp_params_check then accepts. */
    bp_world *w = bp_world_create(&p);
    if (!w)
        return 0;
    if (bp_params_check(&w->params, err, sizeof err) != 0) {
        bp_world_destroy(w);
        return 0; /* out of range: the parser refuses such a scene */
    }
    bp_engine_opts opts = { .threads = 1 };
    bp_engine *e = bp_engine_create(BP_BACKEND_CPU, &opts, err, sizeof err);
    if (!e)
        fail("cpu engine refused to start", w, 0);
    const float big = BP_MAX_ABS_VALUE;
    int dirty = 1;
    uint32_t budget = FW_SUBSTEPS - 1; /* one is kept for the final step */
    for (int op = 0; op < FW_MAX_OPS && rd.n > 0; op++) {
        const bp_params *q = &w->params;
        uint8_t kind = rd_u8(r) % 9;
        err[0] = '\0';
        if (kind <= 3 && w->count >= FW_MAX_BALLS)
            kind = 7;
        if ((kind == 4 || kind == 5) && w->nlines >= FW_MAX_LINES)
            kind = 7;
        switch (kind) {
        case 0: { /* anywhere, including a little outside the box */
            float x = rd_float(r, -0.1f * q->width, 1.1f * q->width);
            float y = rd_float(r, -0.1f * q->height, 1.1f * q->height);
            add_ball(w, r, x, y);
            break;
        }
        case 1: /* on top of (or touching) the last ball */
            if (w->count == 0)
                break;
            add_ball(w, r, w->x[w->count - 1] + rd_float(r, -1.0f, 1.0f),
                     w->y[w->count - 1]);
            break;
        case 2: { /* exactly on a segment's end point */
            if (w->nlines == 0)
                break;
            uint32_t s = rd_u8(r) % w->nlines;
            int second = rd_u8(r) & 1;
            add_ball(w, r, second ? w->lx2[s] : w->lx1[s], second ? w->ly2[s] : w->ly1[s]);
            break;
        }
        case 3: { /* small swarm, any spread */
            float cx = rd_float(r, 0.0f, q->width), cy = rd_float(r, 0.0f, q->height);
            uint32_t n = 1 + rd_u8(r) % 32;
            float rmax = fminf(BP_MAX_RADIUS, 0.5f * fminf(q->width, q->height));
            float rad = rd_float(r, BP_MIN_RADIUS, rmax);
            float spread = rd_float(r, 0.0f, BP_MAX_WORLD);
            float vx = rd_float(r, -big, big), vy = rd_float(r, -big, big);
            /* the seed's low bit: the balls drawn outside the box mirrored
             * back in (a scene's `settle` swarms), else put on the wall */
            uint32_t seed = rd_u32(r);
            int64_t got = (seed & 1 ? bp_world_add_swarm_folded : bp_world_add_swarm)(
                w, cx, cy, n, rad, spread, vx, vy, seed, err, sizeof err);
            check_refusal(got, err, w);
            if (got != (int64_t)n)
                fail("a small legal swarm was not added whole", w, 0);
            /* room for each ball first; with bit 2 the balls without room
             * taken out, as the sandbox spawns */
            uint8_t how = rd_u8(r);
            if (how & 1) {
                uint32_t before = w->count - n;
                int64_t crowded = bp_world_settle(w, before, (how & 2) != 0, err, sizeof err);
                if (crowded < 0 || crowded > (int64_t)n)
                    fail("bp_world_settle failed", w, 0);
                uint32_t left = (how & 2) ? n - (uint32_t)crowded : n;
                if (w->count != before + left)
                    fail("bp_world_settle dropped the wrong number of balls", w, 0);
                check_state(w);
            }
            break;
        }
        case 4: { /* segment: inside, or anywhere legal */
            float x1, y1, x2, y2;
            if (rd_u8(r) & 1) {
                x1 = rd_float(r, 0.0f, q->width); y1 = rd_float(r, 0.0f, q->height);
                x2 = rd_float(r, 0.0f, q->width); y2 = rd_float(r, 0.0f, q->height);
            } else {
                x1 = rd_float(r, -big, big); y1 = rd_float(r, -big, big);
                x2 = rd_float(r, -big, big); y2 = rd_float(r, -big, big);
            }
            int64_t id = bp_world_add_line(w, x1, y1, x2, y2, err, sizeof err);
            check_refusal(id, err, w);
            if (id < 0)
                fail("a legal segment was refused", w, 0);
            break;
        }
        case 5: { /* zero-length segment: a point obstacle */
            float x = rd_float(r, 0.0f, q->width), y = rd_float(r, 0.0f, q->height);
            if (bp_world_add_line(w, x, y, x, y, err, sizeof err) < 0)
                fail("a zero-length segment was refused", w, 0);
            break;
        }
        case 6: /* remove a segment */
            if (w->nlines)
                bp_world_remove_line(w, rd_u8(r) % w->nlines);
            break;
        case 8: { /* the balls re-sorted by place, as the program's engines do */
            if (bp_world_sort_by_place(w, NULL, 0) != 0)
                fail("sort by place failed", w, 0);
            if (w->count && !w->id)
                fail("sorted without ids", w, 0);
            uint8_t *seen = calloc(w->count ? w->count : 1, 1);
            if (!seen)
                break;
            for (uint32_t i = 0; i < w->count; i++) {
                if (w->id[i] >= w->count || seen[w->id[i]])
                    fail("the ids after a sort are not a permutation", w, i);
                seen[w->id[i]] = 1;
            }
            free(seen);
            check_state(w);
            break;
        }
        default: { /* step */
            uint32_t n = 1 + rd_u8(r) % 3;
            n = n < budget ? n : budget;
            if (n == 0)
                break;
            budget -= n;
            if (dirty && bp_engine_attach(e, w, err, sizeof err) != 0)
                fail("attach failed", w, 0);
            if (bp_engine_step(e, w, n, err, sizeof err) != 0 ||
                bp_engine_read(e, w, err, sizeof err) != 0)
                fail("cpu step failed", w, 0);
            check_state(w);
            break;
        }
        }
        dirty = dirty || kind != 7;
        if (kind == 7)
            dirty = 0;
    }
    /* Always end with a sub-step of whatever was built. */
    if (bp_engine_attach(e, w, err, sizeof err) != 0)
        fail("attach failed", w, 0);
    if (bp_engine_step(e, w, 1, err, sizeof err) != 0 ||
        bp_engine_read(e, w, err, sizeof err) != 0)
        fail("cpu step failed", w, 0);
    check_state(w);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

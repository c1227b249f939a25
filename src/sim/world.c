/* world.c - the world: structure-of-arrays balls and static segments.
 *
 * Every value that enters the world passes a check here, so NaN, infinity,
 * out-of-range radii and balls outside the box never get in.
 */
#include "engine_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bp_params bp_params_default(void)
{
    bp_params p = {
        .width = 1280.0f, .height = 720.0f,
        .gravity_x = 0.0f, .gravity_y = 900.0f,
        .restitution = 0.9f,
        .fps = 33.0f, .substeps = 30,
        .speed_cap = BP_DEFAULT_SPEED_CAP,
    };
    return p;
}

void bp_params_fill_defaults(bp_params *p)
{
    bp_params d = bp_params_default();
    if (!(p->width > 0)) p->width = d.width;
    if (!(p->height > 0)) p->height = d.height;
    if (!(p->fps > 0)) p->fps = d.fps;
    if (p->substeps <= 0) p->substeps = d.substeps;
    if (!(p->speed_cap > 0)) p->speed_cap = d.speed_cap;
}

int bp_params_check(const bp_params *p, char *err, size_t errlen)
{
    if (!isfinite(p->width) || !isfinite(p->height) || p->width < BP_MIN_WORLD ||
        p->height < BP_MIN_WORLD || p->width > BP_MAX_WORLD || p->height > BP_MAX_WORLD)
        return bp_fail(err, errlen, "world size %gx%g is outside %g..%g px", (double)p->width,
                       (double)p->height, (double)BP_MIN_WORLD, (double)BP_MAX_WORLD);
    if (!isfinite(p->gravity_x) || !isfinite(p->gravity_y) ||
        fabsf(p->gravity_x) > BP_MAX_ABS_VALUE || fabsf(p->gravity_y) > BP_MAX_ABS_VALUE)
        return bp_fail(err, errlen, "gravity must be finite and at most %g px/s^2",
                       (double)BP_MAX_ABS_VALUE);
    if (!(p->restitution >= 0.0f && p->restitution <= 1.0f))
        return bp_fail(err, errlen, "restitution %g is outside 0..1", (double)p->restitution);
    /* At least 1 fps: a tinier positive fps makes the sub-step infinite
     * (1/(fps*substeps) overflows) and the grid reach NaN (fuzz_world). */
    if (!(p->fps >= 1.0f && p->fps <= BP_MAX_FPS))
        return bp_fail(err, errlen, "fps %g is outside [1, %g]", (double)p->fps, (double)BP_MAX_FPS);
    if (p->substeps < 1 || p->substeps > BP_MAX_SUBSTEPS)
        return bp_fail(err, errlen, "substeps %d is outside 1..%d", p->substeps, BP_MAX_SUBSTEPS);
    if (!(p->speed_cap > 0.0f && p->speed_cap <= BP_MAX_SPEED_CAP))
        return bp_fail(err, errlen, "speed cap %g is outside (0, %g] px/s", (double)p->speed_cap,
                       (double)BP_MAX_SPEED_CAP);
    return 0;
}

bp_world *bp_world_create(const bp_params *p)
{
    bp_world *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->params = p ? *p : bp_params_default();
    bp_params_fill_defaults(&w->params);
    return w;
}

static void free_balls(bp_world *w)
{
    free(w->x); free(w->y); free(w->vx); free(w->vy); free(w->r); free(w->m);
    free(w->contacts);
    free(w->id);
    w->x = w->y = w->vx = w->vy = w->r = w->m = NULL;
    w->contacts = NULL;
    w->id = NULL;
}

static void free_lines(bp_world *w)
{
    free(w->lx1); free(w->ly1); free(w->lx2); free(w->ly2);
    w->lx1 = w->ly1 = w->lx2 = w->ly2 = NULL;
}

void bp_world_destroy(bp_world *w)
{
    if (!w)
        return;
    free_balls(w);
    free_lines(w);
    free(w);
}

/* Grows one per-ball or per-line array of elem-byte elements from old to
 * cap, its contents kept, on a cache line (bp_grow_aligned); on failure
 * the old block stays. */
static int grow(void **a, size_t elem, uint32_t old, uint32_t cap)
{
    void *n = bp_grow_aligned(*a, (size_t)old * elem, (size_t)cap * elem);
    if (!n)
        return -1;
    *a = n;
    return 0;
}

/* The capacity is 256 doubled, or BP_MAX_BALLS: always a multiple of 4,
 * so the contact counts (bytes) fill whole 32-bit words, which the CPU
 * engine's wide lanes gather (bp_vsplit_n in kernels/bp_physics.h). */
_Static_assert(BP_MAX_BALLS % 4u == 0u, "ball capacity a multiple of 4");

static int reserve_balls(bp_world *w, uint32_t need)
{
    if (need <= w->capacity)
        return 0;
    uint32_t cap = w->capacity ? w->capacity : 256;
    while (cap < need)
        cap = cap > BP_MAX_BALLS / 2 ? BP_MAX_BALLS : cap * 2;
    uint32_t old = w->capacity;
    const size_t f = sizeof(float);
    if (grow((void **)&w->x, f, old, cap) || grow((void **)&w->y, f, old, cap) ||
        grow((void **)&w->vx, f, old, cap) || grow((void **)&w->vy, f, old, cap) ||
        grow((void **)&w->r, f, old, cap) || grow((void **)&w->m, f, old, cap) ||
        grow((void **)&w->contacts, 1, old, cap) ||
        (w->id && grow((void **)&w->id, sizeof *w->id, old, cap)))
        return -1;
    w->capacity = cap;
    return 0;
}

static int reserve_lines(bp_world *w, uint32_t need)
{
    if (need <= w->lines_capacity)
        return 0;
    uint32_t cap = w->lines_capacity ? w->lines_capacity * 2 : 64;
    while (cap < need)
        cap *= 2;
    if (cap > BP_MAX_LINES)
        cap = BP_MAX_LINES;
    uint32_t old = w->lines_capacity;
    const size_t f = sizeof(float);
    if (grow((void **)&w->lx1, f, old, cap) || grow((void **)&w->ly1, f, old, cap) ||
        grow((void **)&w->lx2, f, old, cap) || grow((void **)&w->ly2, f, old, cap))
        return -1;
    w->lines_capacity = cap;
    return 0;
}

int bp_world_copy(bp_world *dst, const bp_world *src)
{
    if (reserve_balls(dst, src->count) || reserve_lines(dst, src->nlines))
        return -1;
    size_t nb = (size_t)src->count * sizeof(float), nl = (size_t)src->nlines * sizeof(float);
    if (nb) {
        memcpy(dst->x, src->x, nb); memcpy(dst->y, src->y, nb);
        memcpy(dst->vx, src->vx, nb); memcpy(dst->vy, src->vy, nb);
        memcpy(dst->r, src->r, nb); memcpy(dst->m, src->m, nb);
        memcpy(dst->contacts, src->contacts, src->count);
    }
    if (src->id) {
        if (!dst->id && grow((void **)&dst->id, sizeof *dst->id, 0, dst->capacity))
            return -1;
        if (nb)
            memcpy(dst->id, src->id, nb);
    } else {
        free(dst->id);
        dst->id = NULL;
    }
    if (nl) {
        memcpy(dst->lx1, src->lx1, nl); memcpy(dst->ly1, src->ly1, nl);
        memcpy(dst->lx2, src->lx2, nl); memcpy(dst->ly2, src->ly2, nl);
    }
    dst->params = src->params;
    dst->count = src->count;
    dst->nlines = src->nlines;
    dst->lines_version = src->lines_version;
    dst->balls_version = src->balls_version;
    dst->frames = src->frames;
    dst->substeps_done = src->substeps_done;
    return 0;
}

bp_world *bp_world_clone(const bp_world *w)
{
    bp_world *c = bp_world_create(&w->params);
    if (c && bp_world_copy(c, w)) {
        bp_world_destroy(c);
        return NULL;
    }
    return c;
}

static int finite_small(float v)
{
    return isfinite(v) && fabsf(v) <= BP_MAX_ABS_VALUE;
}

int64_t bp_world_add_ball(bp_world *w, float x, float y, float vx, float vy, float r, float m,
                          char *err, size_t errlen)
{
    if (!finite_small(x) || !finite_small(y) || !finite_small(vx) || !finite_small(vy) ||
        !finite_small(r) || !finite_small(m))
        return bp_fail(err, errlen, "ball values must be finite numbers of magnitude at most %g",
                       (double)BP_MAX_ABS_VALUE);
    if (!(r >= BP_MIN_RADIUS && r <= BP_MAX_RADIUS))
        return bp_fail(err, errlen, "radius %g is outside %g..%g px", (double)r,
                       (double)BP_MIN_RADIUS, (double)BP_MAX_RADIUS);
    if (2.0f * r > w->params.width || 2.0f * r > w->params.height)
        return bp_fail(err, errlen, "radius %g does not fit in the %gx%g world", (double)r,
                       (double)w->params.width, (double)w->params.height);
    if (x < 0.0f || y < 0.0f || x > w->params.width || y > w->params.height)
        return bp_fail(err, errlen, "ball at (%g, %g) is outside the %gx%g world", (double)x,
                       (double)y, (double)w->params.width, (double)w->params.height);
    if (w->count >= BP_MAX_BALLS)
        return bp_fail(err, errlen, "too many balls: the limit is %u", BP_MAX_BALLS);
    if (reserve_balls(w, w->count + 1))
        return bp_fail(err, errlen, "out of memory for %u balls", w->count + 1);
    /* A centre closer than r to a wall starts touching it: move it inside. */
    x = fminf(fmaxf(x, r), w->params.width - r);
    y = fminf(fmaxf(y, r), w->params.height - r);
    float spd = sqrtf(vx * vx + vy * vy);
    if (spd > w->params.speed_cap) {
        vx *= w->params.speed_cap / spd;
        vy *= w->params.speed_cap / spd;
    }
    uint32_t i = w->count++;
    w->x[i] = x; w->y[i] = y; w->vx[i] = vx; w->vy[i] = vy; w->r[i] = r;
    w->m[i] = m > 0.0f ? m : (float)M_PI * r * r;
    w->contacts[i] = 0;
    if (w->id)
        w->id[i] = i; /* balls are only ever appended: the count is the next id */
    w->balls_version++;
    return i;
}

/* splitmix64: a tiny, well-mixed generator so swarms are the same everywhere. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rand01(uint64_t *s)
{
    return (double)(next_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* Where a swarm's ball drawn at v lands on one axis of a box whose centres
 * lie in [lo, hi]: the nearest point inside, or, when folding, its mirror
 * image in the bound it crossed (then the nearest point inside, for a disc
 * wider than the box). */
static float swarm_inside(float v, float lo, float hi, int fold)
{
    if (fold)
        v = v < lo ? lo + (lo - v) : v > hi ? hi - (v - hi) : v;
    return fminf(fmaxf(v, lo), hi);
}

static int64_t add_swarm(bp_world *w, float cx, float cy, uint32_t count, float r, float spread,
                         float vx, float vy, uint64_t seed, int fold, char *err, size_t errlen)
{
    if (!finite_small(cx) || !finite_small(cy) || !finite_small(spread) || !finite_small(vx) ||
        !finite_small(vy) || spread < 0.0f)
        return bp_fail(err, errlen, "swarm values must be finite and the spread >= 0");
    if (!(r >= BP_MIN_RADIUS && r <= BP_MAX_RADIUS))
        return bp_fail(err, errlen, "radius %g is outside %g..%g px", (double)r,
                       (double)BP_MIN_RADIUS, (double)BP_MAX_RADIUS);
    if (2.0f * r > w->params.width || 2.0f * r > w->params.height)
        return bp_fail(err, errlen, "radius %g does not fit in the world", (double)r);
    if (err && errlen)
        err[0] = '\0';
    uint32_t room = BP_MAX_BALLS - w->count;
    uint32_t n = count;
    if (n > room) {
        n = room;
        bp_fail(err, errlen, "swarm clipped from %u to %u balls: the limit is %u balls", count,
                n, BP_MAX_BALLS);
    }
    if (reserve_balls(w, w->count + n))
        return bp_fail(err, errlen, "out of memory for %u more balls", n);
    uint64_t s = seed ^ 0x62616c6cull;
    for (uint32_t k = 0; k < n; k++) {
        /* Uniform in the disc: radius sqrt(u) * spread. */
        double a = rand01(&s) * 6.283185307179586, d = sqrt(rand01(&s)) * spread;
        float x = (float)(cx + d * cos(a)), y = (float)(cy + d * sin(a));
        x = swarm_inside(x, r, w->params.width - r, fold);
        y = swarm_inside(y, r, w->params.height - r, fold);
        if (bp_world_add_ball(w, x, y, vx, vy, r, 0.0f, err, errlen) < 0)
            return -1;
    }
    return n;
}

int64_t bp_world_add_swarm(bp_world *w, float cx, float cy, uint32_t count, float r, float spread,
                           float vx, float vy, uint64_t seed, char *err, size_t errlen)
{
    return add_swarm(w, cx, cy, count, r, spread, vx, vy, seed, 0, err, errlen);
}

int64_t bp_world_add_swarm_folded(bp_world *w, float cx, float cy, uint32_t count, float r,
                                  float spread, float vx, float vy, uint64_t seed, char *err,
                                  size_t errlen)
{
    return add_swarm(w, cx, cy, count, r, spread, vx, vy, seed, 1, err, errlen);
}

int64_t bp_world_add_line(bp_world *w, float x1, float y1, float x2, float y2, char *err,
                          size_t errlen)
{
    if (!finite_small(x1) || !finite_small(y1) || !finite_small(x2) || !finite_small(y2))
        return bp_fail(err, errlen, "line end points must be finite numbers of magnitude at most %g",
                       (double)BP_MAX_ABS_VALUE);
    if (w->nlines >= BP_MAX_LINES)
        return bp_fail(err, errlen, "too many lines: the limit is %u", BP_MAX_LINES);
    if (reserve_lines(w, w->nlines + 1))
        return bp_fail(err, errlen, "out of memory for %u lines", w->nlines + 1);
    uint32_t i = w->nlines++;
    w->lx1[i] = x1; w->ly1[i] = y1; w->lx2[i] = x2; w->ly2[i] = y2;
    w->lines_version++;
    return i;
}

void bp_world_remove_line(bp_world *w, uint32_t i)
{
    if (i >= w->nlines)
        return;
    size_t tail = (size_t)(w->nlines - i - 1) * sizeof(float);
    memmove(w->lx1 + i, w->lx1 + i + 1, tail);
    memmove(w->ly1 + i, w->ly1 + i + 1, tail);
    memmove(w->lx2 + i, w->lx2 + i + 1, tail);
    memmove(w->ly2 + i, w->ly2 + i + 1, tail);
    w->nlines--;
    w->lines_version++;
}

void bp_world_clear_balls(bp_world *w)
{
    w->count = 0;
    free(w->id); /* the next balls are in creation order again */
    w->id = NULL;
    w->balls_version++;
}

void bp_world_clear_lines(bp_world *w)
{
    w->nlines = 0;
    w->lines_version++;
}

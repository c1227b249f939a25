/* test_static.c - the static pass in SIMD lanes (bp_vmove_static, and
 * bp_block_move, which collects the balls its first lanes cannot finish
 * and hands them to it BP_LANES at a time) gives every ball the bits of
 * the one-ball bp_move_static (kernels/bp_physics.h), which the OpenCL
 * kernels on GPUs run.
 *
 * Random worlds of lines (long, short, zero-length, level and upright,
 * polylines whose segments share end points, lines along and across the
 * walls) with balls placed on them, overlapping them, just clear of them,
 * in the corners and against the walls, moving slowly (resting contacts,
 * friction), fast (up to the speed cap, several bounces in a sub-step)
 * and sideways; with gravity (resting contacts absorb) and without
 * (every bounce elastic). Each ball's position and velocity after the
 * lanes' move must equal bp_move_static's to the bit, the lanes left off
 * must be untouched, and the cases must really occur: bounces off lines'
 * bodies and end points, walls, pushouts, friction.
 *
 * Then passes 4 and 5 together on pass 3's raw sums: bp_block_resolve
 * (only the balls with an impact partner) and bp_block_move (which
 * resolves the others in its lanes) against bp_resolve and
 * bp_move_static for every ball.
 *
 * Also the grid build's offsets as the same width's CPU engine sums them
 * (grid_offsets_exact: a scan across the lanes in the AVX-512 build).
 *
 * Built for 4 lanes (any x86-64) and, where the compiler can, 8 (AVX2) and
 * 16 (AVX-512) as the CPU engine's wide builds; those skip where the
 * processor lacks the instructions.
 */
#include "bp_physics.h"
#include "step.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 86420u;
static float frand(float lo, float hi)
{
    return bp_test_frand(&rng_state, lo, hi);
}

#define BALLS 4096

/* A world of w x h px with about nl lines of every kind, and BALLS balls
 * (placed later: bp_step_setup needs their count and largest radius). */
static bp_world *static_world(float w, float h, int nl, float gravity)
{
    bp_params p = bp_params_default();
    p.width = w;
    p.height = h;
    p.gravity_y = gravity;
    bp_world *wd = bp_world_create(&p);
    if (!wd)
        return NULL;
    for (int k = 0; k < nl; k++) {
        float ax = frand(0.0f, w), ay = frand(0.0f, h), bx, by;
        switch (k % 6) {
        case 0: /* long */
            bx = frand(0.0f, w);
            by = frand(0.0f, h);
            break;
        case 1: /* short */
            bx = ax + frand(-6.0f, 6.0f);
            by = ay + frand(-6.0f, 6.0f);
            break;
        case 2: /* a point */
            bx = ax;
            by = ay;
            break;
        case 3: /* level or upright */
            bx = k % 12 == 3 ? ax + frand(-200.0f, 200.0f) : ax;
            by = k % 12 == 3 ? ay : ay + frand(-200.0f, 200.0f);
            break;
        case 4: { /* a polyline of four segments sharing end points */
            float x = ax, y = ay;
            for (int s = 0; s < 3; s++) {
                float nx = fminf(fmaxf(x + frand(-40.0f, 40.0f), 0.0f), w);
                float ny = fminf(fmaxf(y + frand(-40.0f, 40.0f), 0.0f), h);
                if (bp_world_add_line(wd, x, y, nx, ny, NULL, 0) < 0)
                    goto fail;
                x = nx;
                y = ny;
            }
            ax = x;
            ay = y;
            bx = x + frand(-40.0f, 40.0f);
            by = y + frand(-40.0f, 40.0f);
            break;
        }
        default: /* along a wall, a little inside */
            if (k % 12 == 5) {
                ay = by = frand(0.0f, 1.0f) < 0.5f ? frand(0.0f, 3.0f) : h - frand(0.0f, 3.0f);
                bx = frand(0.0f, w);
            } else {
                ax = bx = frand(0.0f, 1.0f) < 0.5f ? frand(0.0f, 3.0f) : w - frand(0.0f, 3.0f);
                by = frand(0.0f, h);
            }
            break;
        }
        bx = fminf(fmaxf(bx, 0.0f), w);
        by = fminf(fmaxf(by, 0.0f), h);
        if (bp_world_add_line(wd, ax, ay, bx, by, NULL, 0) < 0)
            goto fail;
    }
    for (int b = 0; b < BALLS; b++)
        if (bp_world_add_ball(wd, w / 2, h / 2, 0.0f, 0.0f, b % 7 == 0 ? 9.0f : 2.0f, 0.0f, NULL,
                              0) < 0)
            goto fail;
    return wd;
fail:
    bp_world_destroy(wd);
    return NULL;
}

/* Ball b's case: where it is and how it moves (the pass's inputs: x, y;
 * vx, vy before the contacts; in its record of sums, rec, the velocity
 * after them, then the displacement still to make). */
static void place(bp_world *w, const bp_step_params *P, uint32_t b, float *rec)
{
    float W = P->width, H = P->height, r = w->r[b];
    float x, y;
    int kind = (int)(b % 8u);
    if (kind < 4 && w->nlines > 0) { /* on or near a random point of a line */
        uint32_t s = (uint32_t)frand(0.0f, (float)w->nlines - 0.001f);
        float u = kind == 3 ? (frand(0.0f, 1.0f) < 0.5f ? 0.0f : 1.0f) : frand(0.0f, 1.0f);
        float cx = w->lx1[s] + (w->lx2[s] - w->lx1[s]) * u;
        float cy = w->ly1[s] + (w->ly2[s] - w->ly1[s]) * u;
        float off = kind == 0 ? frand(0.0f, r) : kind == 1 ? r * frand(0.98f, 1.06f)
                                                             : frand(0.0f, 30.0f);
        float a = frand(0.0f, 6.2831853f);
        x = cx + off * cosf(a);
        y = cy + off * sinf(a);
    } else if (kind == 4) { /* in a corner */
        x = frand(0.0f, 1.0f) < 0.5f ? frand(0.0f, 2.0f * r) : W - frand(0.0f, 2.0f * r);
        y = frand(0.0f, 1.0f) < 0.5f ? frand(0.0f, 2.0f * r) : H - frand(0.0f, 2.0f * r);
    } else if (kind == 5) { /* resting on the floor */
        x = frand(0.0f, W);
        y = H - r * frand(0.9f, 1.01f);
    } else { /* anywhere */
        x = frand(0.0f, W);
        y = frand(0.0f, H);
    }
    w->x[b] = fminf(fmaxf(x, -5.0f), W + 5.0f);
    w->y[b] = fminf(fmaxf(y, -5.0f), H + 5.0f);
    /* speeds: resting, slow, fast, at the cap */
    int sk = (int)((b / 8u) % 4u);
    float sp = sk == 0 ? frand(0.0f, 20.0f) : sk == 1 ? frand(0.0f, 300.0f)
               : sk == 2 ? frand(300.0f, 4000.0f) : frand(4000.0f, 20000.0f);
    float a = frand(0.0f, 6.2831853f);
    w->vx[b] = sp * cosf(a);
    w->vy[b] = sp * sinf(a);
    /* the contacts' change: mostly small, sometimes a reversal */
    float k = frand(0.0f, 1.0f) < 0.2f ? -frand(0.0f, 1.0f) : frand(0.9f, 1.1f);
    rec[0] = w->vx[b] * k + frand(-50.0f, 50.0f);
    rec[1] = w->vy[b] * k + frand(-50.0f, 50.0f) + (sk == 0 ? 30.0f : 0.0f);
    int push = frand(0.0f, 1.0f) < 0.3f;
    rec[2] = push ? frand(-0.3f, 0.3f) * r : 0.0f;
    rec[3] = push ? frand(-0.3f, 0.3f) * r : 0.0f;
}

/* The pass's arrays: the balls' own, and their records of sums (4 each). */
typedef struct arrays {
    float *x, *y, *vx, *vy, *sum;
} arrays;

static void arrays_copy(arrays *d, const arrays *s, uint32_t n)
{
    memcpy(d->x, s->x, n * sizeof(float));
    memcpy(d->y, s->y, n * sizeof(float));
    memcpy(d->vx, s->vx, n * sizeof(float));
    memcpy(d->vy, s->vy, n * sizeof(float));
    memcpy(d->sum, s->sum, 4 * (size_t)n * sizeof(float));
}

static int arrays_alloc(arrays *a, uint32_t n)
{
    float **f[5] = {&a->x, &a->y, &a->vx, &a->vy, &a->sum};
    for (int k = 0; k < 5; k++)
        if (!(*f[k] = calloc(k == 4 ? 4 * (size_t)n : n, sizeof(float))))
            return -1;
    return 0;
}

static void arrays_free(arrays *a)
{
    free(a->x); free(a->y); free(a->vx); free(a->vy); free(a->sum);
}

static bp_block_arrays block_arrays(const bp_world *w, const bp_seggrid *sg, const arrays *a,
                                    bp_u8 *split, bp_u8 *ncontact, bp_i32 *best)
{
    bp_block_arrays A = {0};
    A.best = best;
    A.x = a->x;
    A.y = a->y;
    A.vx = a->vx;
    A.vy = a->vy;
    A.r = w->r;
    A.m = w->m;
    A.split = split;
    A.ncontact = ncontact;
    A.sum = a->sum;
    A.lx1 = w->lx1;
    A.ly1 = w->ly1;
    A.lx2 = w->lx2;
    A.ly2 = w->ly2;
    A.seg_start = sg->start;
    A.seg_list = sg->list;
    A.seg_gap = sg->gap; /* bp_block_move's runs clear it for one of their two */
    return A;
}

/* How often each case came up (over all worlds). */
static long n_moved, n_line_hit, n_point_hit, n_wall_hit, n_pushed, n_slowed;

/* Which cases ball b takes in bp_move_static (the one-ball functions). */
static void count_cases(const bp_world *w, const bp_step_params *P, const arrays *a, uint32_t b)
{
    float ri = bp_static_radius(b, w->r[b]);
    float px = fminf(fmaxf(a->x[b], ri), P->width - ri);
    float py = fminf(fmaxf(a->y[b], ri), P->height - ri);
    const float *rec = a->sum + 4 * (size_t)b;
    float Dx = rec[2] + rec[0] * P->h, Dy = rec[3] + rec[1] * P->h;
    float t = BP_NO_HIT, nx = 0.0f, ny = 0.0f;
    bp_sweep_box(P, px, py, Dx, Dy, ri, &t, &nx, &ny);
    n_wall_hit += t <= 1.0f;
    for (uint32_t s = 0; s < w->nlines; s++) {
        float qx = px, qy = py;
        bp_pushout_segment(&qx, &qy, ri, w->lx1[s], w->ly1[s], w->lx2[s], w->ly2[s]);
        n_pushed += qx != px || qy != py;
        float st = bp_sweep_segment(px, py, Dx, Dy, ri, w->lx1[s], w->ly1[s], w->lx2[s],
                                    w->ly2[s], &nx, &ny);
        if (st <= 1.0f) {
            /* a contact on the line's body has the line's normal */
            float ex = w->lx2[s] - w->lx1[s], ey = w->ly2[s] - w->ly1[s];
            int body = fabsf(nx * ex + ny * ey) < 1e-4f * sqrtf(ex * ex + ey * ey) &&
                       ex * ex + ey * ey > 1e-6f;
            n_line_hit += body;
            n_point_hit += !body;
        }
    }
}

static long n_partner, n_mutual, n_soft, n_clamped, n_capped;

/* Ranges of every size for the block passes (a block, more, a few balls,
 * a range not starting at a block's first ball), covering all BALLS. */
static const uint32_t move_cuts[] = {0, 256, 700, 703, 1201, 1202, 2000, 2600, 4095, BALLS};
#define MOVE_RANGES (sizeof move_cuts / sizeof move_cuts[0] - 1)

/* Every ball's position and velocity in got the bits of want's; the
 * first that differs is printed, under what (and its best[], if given). */
static int same_moves(const arrays *got, const arrays *want, uint32_t n, const bp_i32 *best,
                      const char *what)
{
    for (uint32_t b = 0; b < n; b++) {
        if (!bp_test_same_bits(got->x[b], want->x[b]) ||
            !bp_test_same_bits(got->y[b], want->y[b]) ||
            !bp_test_same_bits(got->vx[b], want->vx[b]) ||
            !bp_test_same_bits(got->vy[b], want->vy[b])) {
            printf("%s: ball %u (best %d): (%.9g, %.9g) v (%.9g, %.9g), want (%.9g, %.9g) v "
                   "(%.9g, %.9g)\n", what, b, best ? best[b] : 0, got->x[b], got->y[b],
                   got->vx[b], got->vy[b], want->x[b], want->y[b], want->vx[b], want->vy[b]);
            return 1;
        }
    }
    return 0;
}

/* Passes 4 and 5 on raw sums: the records of `in` taken as pass 3's sums
 * (velocity change, push; the pushes doubled, so some exceed the half
 * radius pass 4 clamps them to), one ball in ten given an impact partner
 * (some of them each other's). bp_resolve then bp_move_static for every
 * ball against bp_block_resolve then bp_block_move over ranges of every
 * size: the same bits. best[] is left as it was. */
static int resolve_and_move(bp_world *w, const bp_step_params *P, const bp_seggrid *sg,
                            const arrays *in, bp_u8 *split, bp_u8 *ncontact, bp_i32 *best)
{
    const uint32_t n = w->count;
    arrays raw, one, lanes;
    ENSURE(arrays_alloc(&raw, n) == 0 && arrays_alloc(&one, n) == 0 &&
           arrays_alloc(&lanes, n) == 0);
    arrays_copy(&raw, in, n);
    for (uint32_t b = 0; b < n; b++) {
        raw.sum[4 * b + 2] *= 2.0f;
        raw.sum[4 * b + 3] *= 2.0f;
        best[b] = -1;
    }
    for (uint32_t b = 0; b < n; b++) {
        if (frand(0.0f, 1.0f) >= 0.1f)
            continue;
        uint32_t j = (uint32_t)frand(0.0f, (float)n - 0.001f);
        if (j == b)
            continue;
        best[b] = (bp_i32)j;
        if (frand(0.0f, 1.0f) < 0.5f) {
            best[j] = (bp_i32)b;
        } else if (frand(0.0f, 1.0f) < 0.6f) {
            /* j moved beside b (touching, overlapping, some deeply, or
             * just apart): pass 4's soft term for a partner that did
             * not choose b */
            float a = frand(0.0f, 6.2831853f), d = (w->r[b] + w->r[j]) * frand(0.3f, 1.15f);
            raw.x[j] = fminf(fmaxf(raw.x[b] + d * cosf(a), w->r[j]), P->width - w->r[j]);
            raw.y[j] = fminf(fmaxf(raw.y[b] + d * sinf(a), w->r[j]), P->height - w->r[j]);
        }
    }
    for (uint32_t b = 0; b < n; b++)
        split[b] = (bp_u8)(b % 7u); /* the mass shares' contact counts, 0 taken as 1 */
    for (uint32_t b = 0; b < n; b++) {
        const float *rec = raw.sum + 4 * (size_t)b;
        n_partner += best[b] >= 0;
        n_mutual += best[b] >= 0 && best[best[b]] == (bp_i32)b;
        if (best[b] >= 0 && best[best[b]] != (bp_i32)b) {
            uint32_t j = (uint32_t)best[b];
            float dx = raw.x[j] - raw.x[b], dy = raw.y[j] - raw.y[b];
            float near_ = BP_CLOSE_DIST(P, w->r[b] + w->r[j]);
            n_soft += dx * dx + dy * dy < near_ * near_;
        }
        float lim = 0.5f * w->r[b];
        n_clamped += best[b] < 0 && rec[2] * rec[2] + rec[3] * rec[3] > lim * lim;
        float ux = raw.vx[b] + rec[0], uy = raw.vy[b] + rec[1];
        n_capped += best[b] < 0 && ux * ux + uy * uy > P->speed_cap * P->speed_cap;
    }

    /* one ball at a time */
    arrays_copy(&one, &raw, n);
    for (uint32_t b = 0; b < n; b++)
        bp_resolve(b, P, one.x, one.y, one.vx, one.vy, w->r, w->m, split, best, one.sum);
    for (uint32_t b = 0; b < n; b++)
        bp_move_static(b, P, one.x, one.y, one.vx, one.vy, one.sum, w->r, w->lx1, w->ly1,
                       w->lx2, w->ly2, sg->start, sg->list);

    /* in blocks: every pass 4 range before any pass 5 one, as the engines */
    arrays_copy(&lanes, &raw, n);
    bp_block_arrays AL = block_arrays(w, sg, &lanes, split, ncontact, best);
    for (size_t c = 0; c < MOVE_RANGES; c++)
        bp_block_resolve(P, &AL, move_cuts[c], move_cuts[c + 1]);
    for (size_t c = 0; c < MOVE_RANGES; c++)
        bp_block_move(P, &AL, move_cuts[c], move_cuts[c + 1]);
    ENSURE(!same_moves(&lanes, &one, n, best, "passes 4 and 5 in blocks"));
    for (uint32_t b = 0; b < n; b++)
        best[b] = 0;
    arrays_free(&raw);
    arrays_free(&one);
    arrays_free(&lanes);
    return 0;
}

/* One world: groups of BP_LANES random balls, random lanes on, through
 * bp_vmove_static against bp_move_static ball by ball; then whole ranges
 * through bp_block_move against bp_move_static. */
static int lanes_match_one(float W, float H, int nl, float gravity)
{
    bp_world *w = static_world(W, H, nl, gravity);
    ENSURE(w != NULL);
    bp_seggrid sg = {0};
    ENSURE(bp_seggrid_build(&sg, w) == 0);
    bp_step_params P;
    bp_step_setup(w, &sg, &P);
    const uint32_t n = w->count;
    arrays in, lanes, one;
    ENSURE(arrays_alloc(&in, n) == 0 && arrays_alloc(&lanes, n) == 0 &&
           arrays_alloc(&one, n) == 0);
    free(in.x); /* place() writes the world's own arrays */
    free(in.y);
    free(in.vx);
    free(in.vy);
    in.x = w->x;
    in.y = w->y;
    in.vx = w->vx;
    in.vy = w->vy;
    for (uint32_t b = 0; b < n; b++)
        place(w, &P, b, in.sum + 4 * (size_t)b);
    for (uint32_t b = 0; b < n; b += 3)
        count_cases(w, &P, &in, b);
    bp_u8 *split = calloc(n, 1), *ncontact = calloc(n, 1);
    /* every ball "with a partner": pass 4 has resolved its record, which
     * is what the records above are */
    bp_i32 *best = calloc(n, sizeof *best);
    ENSURE(split && ncontact && best);
    for (uint32_t b = 0; b < n; b++)
        ncontact[b] = (bp_u8)(b % 5);

    /* bp_move_static for every ball: the reference */
    arrays_copy(&one, &in, n);
    bp_block_arrays A1 = block_arrays(w, &sg, &one, split, ncontact, best);
    for (uint32_t b = 0; b < n; b++)
        bp_move_static(b, &P, A1.x, A1.y, A1.vx, A1.vy, A1.sum, A1.r, A1.lx1, A1.ly1, A1.lx2,
                       A1.ly2, A1.seg_start, A1.seg_list);
    for (uint32_t b = 0; b < n; b++) {
        n_moved += one.x[b] != in.x[b] || one.y[b] != in.y[b];
        const float *rec = in.sum + 4 * (size_t)b;
        float v0 = rec[0] * rec[0] + rec[1] * rec[1];
        float v1 = one.vx[b] * one.vx[b] + one.vy[b] * one.vy[b];
        n_slowed += v1 < 0.999f * v0;
    }

    /* groups of random balls, random lanes on */
    arrays_copy(&lanes, &in, n);
    bp_block_arrays AL = block_arrays(w, &sg, &lanes, split, ncontact, best);
    uint32_t perm[BALLS];
    for (uint32_t b = 0; b < n; b++)
        perm[b] = b;
    for (uint32_t b = n - 1u; b > 0u; b--) { /* every ball once, in random groups */
        uint32_t j = (uint32_t)frand(0.0f, (float)b + 0.999f);
        uint32_t t = perm[b];
        perm[b] = perm[j];
        perm[j] = t;
    }
    for (uint32_t g = 0; g + BP_LANES <= n; g += BP_LANES) {
        bp_u32 I[BP_LANES];
        bp_i32 on[BP_LANES];
        /* one group in eight has lanes off: those must stay untouched */
        int some = (g / BP_LANES) % 8u == 7u;
        for (int k = 0; k < BP_LANES; k++) {
            I[k] = perm[g + (uint32_t)k];
            on[k] = some && frand(0.0f, 1.0f) < 0.5f ? 0 : -1;
        }
        bp_vmove_static(&P, &AL, I, (bp_vi)BP_VLOADU((const bp_u32 *)on));
        for (int k = 0; k < BP_LANES; k++) {
            uint32_t b = I[k];
            const float *want[4] = {on[k] ? one.x : in.x, on[k] ? one.y : in.y,
                                    on[k] ? one.vx : in.vx, on[k] ? one.vy : in.vy};
            const float *got[4] = {lanes.x, lanes.y, lanes.vx, lanes.vy};
            for (int f = 0; f < 4; f++) {
                if (!bp_test_same_bits(got[f][b], want[f][b])) {
                    printf("ball %u (lane %d, %s) field %d: %.9g, want %.9g; at (%.9g, %.9g) r "
                           "%.9g v (%.9g, %.9g) -> (%.9g, %.9g) push (%.9g, %.9g)\n",
                           b, k, on[k] ? "on" : "off", f, got[f][b], want[f][b], in.x[b],
                           in.y[b], w->r[b], in.vx[b], in.vy[b], in.sum[4 * b], in.sum[4 * b + 1],
                           in.sum[4 * b + 2], in.sum[4 * b + 3]);
                    ENSURE(bp_test_same_bits(got[f][b], want[f][b]));
                }
            }
        }
    }

    /* bp_block_move over ranges of every size, with the segment grid's
     * gaps and without */
    ENSURE(n == BALLS);
    for (int gap = 0; gap < 2; gap++) {
        arrays_copy(&lanes, &in, n);
        memset(split, 0, n);
        AL.seg_gap = gap ? sg.gap : NULL;
        for (size_t c = 0; c < MOVE_RANGES; c++)
            bp_block_move(&P, &AL, move_cuts[c], move_cuts[c + 1]);
        for (uint32_t b = 0; b < n; b++)
            ENSURE(split[b] == ncontact[b]);
        ENSURE(!same_moves(&lanes, &one, n, NULL,
                           gap ? "bp_block_move (with gaps)" : "bp_block_move (without gaps)"));
    }

    if (resolve_and_move(w, &P, &sg, &in, split, ncontact, best))
        return 1;

    free(split);
    free(ncontact);
    free(best);
    in.x = in.y = in.vx = in.vy = NULL;
    arrays_free(&in);
    arrays_free(&lanes);
    arrays_free(&one);
    bp_seggrid_free(&sg);
    bp_world_destroy(w);
    return 0;
}

static int lanes_match_move_static(void)
{
    n_moved = n_line_hit = n_point_hit = n_wall_hit = n_pushed = n_slowed = 0;
    n_partner = n_mutual = n_soft = n_clamped = n_capped = 0;
    for (int world = 0; world < 24; world++) {
        float W = world % 3 == 0 ? 400.0f : world % 3 == 1 ? 1280.0f : 3000.0f;
        float H = world % 3 == 0 ? 300.0f : world % 3 == 1 ? 720.0f : 900.0f;
        int nl = world % 4 == 0 ? 0 : world % 4 == 1 ? 6 : world % 4 == 2 ? 60 : 300;
        float g = world % 2 ? 900.0f : 0.0f;
        if (lanes_match_one(W, H, nl, g))
            return 1;
    }
    printf("  %d lanes: %ld balls moved, %ld meet a line's body, %ld an end point, %ld a wall, "
           "%ld pushed out, %ld slowed\n", BP_LANES, n_moved, n_line_hit, n_point_hit,
           n_wall_hit, n_pushed, n_slowed);
    printf("  passes 4 and 5: %ld balls with an impact partner (%ld mutual, %ld close to one "
           "that chose another), %ld pushes clamped, %ld speeds capped in pass 5's lanes\n",
           n_partner, n_mutual, n_soft, n_clamped, n_capped);
    /* the cases occurred */
    ENSURE(n_line_hit > 1000);
    ENSURE(n_point_hit > 100);
    ENSURE(n_wall_hit > 1000);
    ENSURE(n_pushed > 1000);
    ENSURE(n_slowed > 1000);
    ENSURE(n_partner > 1000);
    ENSURE(n_mutual > 100);
    ENSURE(n_soft > 1000);
    ENSURE(n_clamped > 1000);
    ENSURE(n_capped > 1000);
    return 0;
}

/* The segment grid's gaps (bp_seggrid.gap, which let bp_block_move skip
 * the walk of a ball's cells) are the chessboard distance, in cells, from
 * each cell to the nearest that lists a segment, or BP_SEG_GAP_MAX where
 * none does: checked against every pair of cells, in the worlds above. */
static int segment_gaps_exact(void)
{
    long near_max = 0, cells = 0;
    for (int world = 0; world < 24; world++) {
        float W = world % 3 == 0 ? 400.0f : world % 3 == 1 ? 1280.0f : 3000.0f;
        float H = world % 3 == 0 ? 300.0f : world % 3 == 1 ? 720.0f : 900.0f;
        int nl = world % 4 == 0 ? 0 : world % 4 == 1 ? 1 + world / 8 : world % 4 == 2 ? 6 : 60;
        bp_world *w = static_world(W, H, nl, 0.0f);
        ENSURE(w != NULL);
        bp_seggrid sg = {0};
        ENSURE(bp_seggrid_build(&sg, w) == 0);
        const int gw = sg.gw, gh = sg.gh;
        for (int c = 0; c < gw * gh; c++) {
            uint32_t want = BP_SEG_GAP_MAX;
            for (int o = 0; o < gw * gh; o++) {
                if (sg.start[o + 1] == sg.start[o])
                    continue;
                int dx = abs(o % gw - c % gw), dy = abs(o / gw - c / gw);
                uint32_t d = (uint32_t)(dx > dy ? dx : dy);
                want = d < want ? d : want;
            }
            if (sg.gap[c] != want) {
                printf("world %d (%d lines): cell (%d, %d) has gap %u, want %u\n", world, nl,
                       c % gw, c / gw, sg.gap[c], want);
                ENSURE(sg.gap[c] == want);
            }
            near_max += want != BP_SEG_GAP_MAX && want > 3u;
            cells++;
        }
        bp_seggrid_free(&sg);
        bp_world_destroy(w);
    }
    printf("  %ld cells, %ld of them more than 3 cells from a segment\n", cells, near_max);
    ENSURE(near_max > 1000); /* the sweeps carried distances far */
    return 0;
}

/* Whether the offsets in counts match want; prints the first that does not. */
static int offsets_match(uint32_t (*counts)[15003 + 1], uint32_t (*want)[15003 + 1],
                         uint32_t parts, uint32_t ncells, uint32_t spans, long *checked)
{
    for (uint32_t u = 0; u < parts; u++)
        for (uint32_t c = 0; c < ncells; c++) {
            if (counts[u][c] != want[u][c]) {
                printf("  parts %u, %u cells, %u spans: part %u cell %u is %u, not %u\n",
                       parts, ncells, spans, u, c, counts[u][c], want[u][c]);
                return 0;
            }
            (*checked)++;
        }
    return 1;
}

/* The grid build's offsets (each part's end in each cell, cells in order
 * and parts in order within a cell) as this width's CPU engine sums them
 * (bp_grid_offsets_lanes in the AVX-512 build, a scan across 16 lanes),
 * against the definition summed one word at a time: parts 1 to 8, cell
 * counts around the lanes' multiples, empty, sparse and crowded cells;
 * then in 2, 3 and 7 spans of whole groups of 16 cells, each begun from
 * the totals of the spans before it (bp_grid_offsets_span_lanes, as the
 * CPU engine's threads sum them; the last spans empty where the cells
 * run out). */
static int grid_offsets_exact(void)
{
    static const uint32_t sizes[] = {1, 7, 15, 16, 17, 31, 32, 33, 255, 4096, 15003};
    static uint32_t counts[8][15003 + 1], want[8][15003 + 1], orig[8][15003 + 1];
    long checked = 0;
    for (uint32_t parts = 1; parts <= 8; parts++) {
        for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            uint32_t ncells = sizes[z], n = 0;
            uint32_t *cnt[8];
            for (uint32_t u = 0; u < parts; u++) {
                cnt[u] = counts[u];
                for (uint32_t c = 0; c < ncells; c++) {
                    float k = frand(0.0f, 1.0f);
                    counts[u][c] = k < 0.5f ? 0u : k < 0.95f ? (uint32_t)frand(1.0f, 6.0f)
                                                          : (uint32_t)frand(6.0f, 3000.0f);
                    n += counts[u][c];
                }
            }
            uint32_t run = 0;
            for (uint32_t c = 0; c < ncells; c++)
                for (uint32_t u = 0; u < parts; u++) {
                    run += counts[u][c];
                    want[u][c] = run;
                }
            memcpy(orig, counts, sizeof orig);
            bp_grid_offsets_lanes(cnt, parts, ncells, n);
            ENSURE(run == n);
            ENSURE(counts[0][ncells] == n);
            ENSURE(offsets_match(counts, want, parts, ncells, 1, &checked));
            static const uint32_t nspans[] = {2, 3, 7};
            for (size_t q = 0; q < sizeof nspans / sizeof nspans[0]; q++) {
                uint32_t ns = nspans[q], span = ((ncells + ns - 1) / ns + 15u) & ~15u;
                uint32_t before = 0;
                memcpy(counts, orig, sizeof counts);
                for (uint32_t k = 0; k < ns; k++) {
                    uint32_t c0 = k * span < ncells ? k * span : ncells;
                    uint32_t c1 = c0 + span < ncells ? c0 + span : ncells, tot = 0;
                    for (uint32_t u = 0; u < parts; u++)
                        for (uint32_t c = c0; c < c1; c++)
                            tot += counts[u][c];
                    bp_grid_offsets_span_lanes(cnt, parts, c0, c1, before);
                    before += tot;
                }
                ENSURE(before == n);
                ENSURE(offsets_match(counts, want, parts, ncells, ns, &checked));
            }
        }
    }
    printf("  %ld offsets checked (%d lanes)\n", checked, BP_LANES);
    return 0;
}

static const bp_test tests[] = {
    BP_TEST(lanes_match_move_static),
    BP_TEST(segment_gaps_exact),
    BP_TEST(grid_offsets_exact),
};

#if BP_LANES > 4
/* The wide builds need the processor's AVX2 or AVX-512: main, compiled for
 * plain x86-64, checks first. */
__attribute__((target("arch=x86-64"))) int main(int argc, char **argv)
{
#if BP_LANES == 16
    int have = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
    int have = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    if (!have) {
        printf("SKIP: this processor has no %s\n", BP_LANES == 16 ? "AVX-512" : "AVX2");
        return BP_TEST_SKIP;
    }
    return bp_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
#else
int main(int argc, char **argv)
{
    return bp_test_main(argc, argv, tests, (int)(sizeof tests / sizeof tests[0]));
}
#endif

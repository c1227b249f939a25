/* test_lines.c - bp_segments_touch, the test that lets the static pass
 * skip a ball near a line (kernels/bp_physics.h), only says "clear" when
 * the pushout and the sweeps would find nothing.
 *
 * bp_move_static skips the pushout and the first segment sweep of a ball
 * whose swept box meets no cell with a segment, or whose segments are all
 * clear by bp_segments_touch's bound. That is the same result only if a
 * "clear" (0) means: bp_pushout_segment leaves the ball where it is and
 * bp_sweep_segment finds no contact in [0,1], for every segment of the
 * world. Here that is checked on random worlds of random lines (long,
 * short, zero-length, crossing) with balls placed around them at distances
 * about r + |D|/2, where the margin decides, moving in every direction,
 * slow and fast, small and large, and balls whose move ends within
 * rounding of distance r from a line (the bound without its margin would
 * clear some of them). The test must also be of use: it has to
 * clear many of the balls the segment grid flags.
 *
 * The same balls, BP_LANES at a time, check bp_vlines_far, the lanes'
 * version of that test against every line of a world of few lines
 * (bp_block_move): a ball it finds far must be one bp_segments_touch
 * clears, so that bp_move_static would have skipped the lines too and the
 * lanes' result is its result.
 */
#include "bp_physics.h"
#include "step.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

static uint32_t rng_state = 97531u;
static float frand(float lo, float hi)
{
    return bp_test_frand(&rng_state, lo, hi);
}

/* A world of w x h px with nl random lines. */
static bp_world *lines_world(float w, float h, int nl)
{
    bp_params p = {0};
    p.width = w;
    p.height = h;
    bp_world *wd = bp_world_create(&p);
    if (!wd)
        return NULL;
    for (int k = 0; k < nl; k++) {
        float ax = frand(0.0f, w), ay = frand(0.0f, h), bx, by;
        int kind = k % 4;
        if (kind == 0) { /* long */
            bx = frand(0.0f, w);
            by = frand(0.0f, h);
        } else if (kind == 1) { /* short */
            bx = ax + frand(-8.0f, 8.0f);
            by = ay + frand(-8.0f, 8.0f);
        } else if (kind == 2) { /* a point */
            bx = ax;
            by = ay;
        } else { /* level or upright, as drawn with a ruler */
            bx = k % 8 == 3 ? ax + frand(-200.0f, 200.0f) : ax;
            by = k % 8 == 3 ? ay : ay + frand(-200.0f, 200.0f);
        }
        bx = fminf(fmaxf(bx, 0.0f), w);
        by = fminf(fmaxf(by, 0.0f), h);
        if (bp_world_add_line(wd, ax, ay, bx, by, NULL, 0) < 0) {
            bp_world_destroy(wd);
            return NULL;
        }
    }
    return wd;
}

/* Whether any segment of the world is touched by the disc's pushout or
 * sweep (what bp_move_static would look at, over all segments). */
static int really_touches(const bp_world *w, float px, float py, float Dx, float Dy, float r)
{
    for (uint32_t s = 0; s < w->nlines; s++) {
        float qx = px, qy = py, nx, ny;
        bp_pushout_segment(&qx, &qy, r, w->lx1[s], w->ly1[s], w->lx2[s], w->ly2[s]);
        if (qx != px || qy != py)
            return 1;
        if (bp_sweep_segment(px, py, Dx, Dy, r, w->lx1[s], w->ly1[s], w->lx2[s], w->ly2[s], &nx,
                             &ny) <= 1.0f)
            return 1;
    }
    return 0;
}

/* Ball b of a test: a disc of radius *r at (*px, *py), inside the box,
 * moving by (*Dx, *Dy) in the sub-step, placed *off px from a random point
 * of a random line (0: at the bound's reach, give or take rounding). */
static void random_ball(const bp_world *w, const bp_step_params *P, int b, float *px, float *py,
                        float *Dx, float *Dy, float *r, float *off)
{
    /* around a random point of a random line */
    uint32_t s = (uint32_t)frand(0.0f, (float)w->nlines - 0.001f);
    float u = frand(0.0f, 1.0f);
    float cx = w->lx1[s] + (w->lx2[s] - w->lx1[s]) * u;
    float cy = w->ly1[s] + (w->ly2[s] - w->ly1[s]) * u;
    *r = b % 3 == 0 ? frand(0.5f, 12.0f) : 2.0f;
    float speed = b % 5 == 0 ? frand(0.0f, 20000.0f) : frand(0.0f, 1500.0f);
    float ang = frand(0.0f, 6.2831853f);
    *Dx = speed * cosf(ang) * P->h;
    *Dy = speed * sinf(ang) * P->h;
    /* at r + |D|/2 + a little (where the margin decides), or anywhere
     * up to 60 px off */
    *off = b % 2 ? *r + 0.5f * sqrtf(*Dx * *Dx + *Dy * *Dy) + frand(-0.05f, 0.3f) * *r
                 : frand(0.0f, 60.0f);
    float oa = frand(0.0f, 6.2831853f);
    *px = cx + *off * cosf(oa);
    *py = cy + *off * sinf(oa);
    float ex = w->lx2[s] - w->lx1[s], ey = w->ly2[s] - w->ly1[s], L = sqrtf(ex * ex + ey * ey);
    if (b % 4 == 3 && L > 1.0f) {
        /* Straight at the line, the move's midpoint at the bound's
         * reach, give or take 10 millionths: the end of the move is
         * within rounding of distance r (exactly so for a level or
         * upright line, where |Dx| + |Dy| = |D|). */
        float nx = -ey / L, ny = ex / L, sp = speed * P->h;
        *Dx = -nx * sp;
        *Dy = -ny * sp;
        float reach = *r + 0.5f * (fabsf(*Dx) + fabsf(*Dy));
        float mx = cx + nx * reach * (1.0f + frand(-1e-5f, 1e-5f));
        float my = cy + ny * reach * (1.0f + frand(-1e-5f, 1e-5f));
        *px = mx - 0.5f * *Dx;
        *py = my - 0.5f * *Dy;
        *off = 0.0f; /* counted as within the margin's reach */
    }
    *px = fminf(fmaxf(*px, *r), P->width - *r);
    *py = fminf(fmaxf(*py, *r), P->height - *r);
}

static int clear_means_untouched(float W, float H, int nl, int balls)
{
    bp_world *w = lines_world(W, H, nl);
    ENSURE(w != NULL);
    bp_seggrid sg = {0};
    ENSURE(bp_seggrid_build(&sg, w) == 0);
    bp_step_params P;
    bp_step_setup(w, &sg, &P);
    bp_block_arrays A = {0};
    A.lx1 = w->lx1;
    A.ly1 = w->ly1;
    A.lx2 = w->lx2;
    A.ly2 = w->ly2;
    long flagged = 0, cleared = 0, touching = 0, near_margin = 0, far_ = 0, far_margin = 0;
    for (int b = 0; b + BP_LANES <= balls; b += BP_LANES) {
        float px[BP_LANES], py[BP_LANES], Dx[BP_LANES], Dy[BP_LANES], r[BP_LANES], off[BP_LANES];
        for (int k = 0; k < BP_LANES; k++)
            random_ball(w, &P, b + k, px + k, py + k, Dx + k, Dy + k, r + k, off + k);
        /* the lanes' test against every line (bp_block_move) */
        bp_i32 lfar[BP_LANES];
        bp_vi vfar = bp_vlines_far(&P, &A, BP_VLOAD(px), BP_VLOAD(py), BP_VLOAD(Dx),
                                   BP_VLOAD(Dy), BP_VLOAD(r));
        BP_VSTORE(vfar, lfar);
        for (int k = 0; k < BP_LANES; k++) {
            if (!bp_segments_near(&P, px[k], py[k], Dx[k], Dy[k], r[k], sg.start))
                continue;
            flagged++;
            int touch = bp_segments_touch(&P, px[k], py[k], Dx[k], Dy[k], r[k], w->lx1, w->ly1,
                                          w->lx2, w->ly2, sg.start, sg.list);
            int real = really_touches(w, px[k], py[k], Dx[k], Dy[k], r[k]);
            int in_margin =
                off[k] < r[k] + 0.5f * sqrtf(Dx[k] * Dx[k] + Dy[k] * Dy[k]) + 0.3f * r[k];
            touching += real;
            if (!touch) {
                cleared++;
                near_margin += in_margin;
            }
            if (lfar[k]) {
                far_++;
                far_margin += in_margin;
            }
            if ((!touch && real) || (lfar[k] && touch)) {
                printf("%s: ball (%.9g, %.9g) r %.9g D (%.9g, %.9g)\n",
                       touch ? "far in lanes but touching" : "cleared but touched", px[k], py[k],
                       r[k], Dx[k], Dy[k]);
                ENSURE(touch ? !lfar[k] : !real);
            }
        }
    }
    printf("  %gx%g, %d lines: %ld flagged by the grid, %ld cleared (%ld of them within "
           "the margin's reach), %ld far from every line in lanes (%ld), %ld really touching\n",
           W, H, nl, flagged, cleared, near_margin, far_, far_margin, touching);
    /* of use: most flagged balls that touch nothing are cleared, many by
     * the lanes' test too */
    ENSURE(flagged > balls / 2);
    ENSURE(touching > 0);
    ENSURE(cleared > (flagged - touching) / 2);
    ENSURE(near_margin > 0);
    ENSURE(far_ > (flagged - touching) / 4);
    ENSURE(far_margin > 0);
    bp_seggrid_free(&sg);
    bp_world_destroy(w);
    return 0;
}

static int clear_means_untouched_small(void)
{
    return clear_means_untouched(800.0f, 600.0f, 24, 200000);
}

/* Coordinates in the tens of thousands: float steps of 2-4 millipixels. */
static int clear_means_untouched_huge(void)
{
    return clear_means_untouched(40000.0f, 30000.0f, 400, 200000);
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        {"clear_means_untouched_small", clear_means_untouched_small},
        {"clear_means_untouched_huge", clear_means_untouched_huge},
    };
    return bp_test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}

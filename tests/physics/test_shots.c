/* test_shots.c - 10,000 random shots at up to the speed cap against
 * segments, corners (points), the borders and other balls, all in one big
 * world so both engines run them in one go: none may pass through.
 *
 * Each shot starts less than four sub-steps of travel from first contact, so
 * it must meet it within the 8 sub-steps stepped; after every sub-step no
 * ball may sit closer than (1 - 1e-2) of contact to its target, and at the
 * end every shot must show that it bounced. */
#include "physics_common.h"

#include <math.h>
#include <stdint.h>

enum { SLOT = 320, GRID = 95, MARGIN = 400, N_SEG = 2500, N_CORNER = 2500, N_BALL = 4000,
       N_BORDER = 1000, SUBSTEPS = 8 };

typedef struct shot {
    int kind;            /* 0 segment, 1 corner, 2 ball, 3 border */
    uint32_t ball;       /* the shooter */
    uint32_t target;     /* the target ball (kind 2) */
    double ax, ay, bx, by; /* segment / corner (a) / wall normal (a) */
    double dirx, diry;   /* initial direction */
    double r, reach;     /* radius, contact distance */
} shot;

static uint64_t rng = 0x5eed;
static double urand(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

static double seg_dist(const shot *s, double px, double py)
{
    double ex = s->bx - s->ax, ey = s->by - s->ay, L2 = ex * ex + ey * ey;
    double t = L2 > 0 ? ((px - s->ax) * ex + (py - s->ay) * ey) / L2 : 0;
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    double dx = px - (s->ax + ex * t), dy = py - (s->ay + ey * t);
    return sqrt(dx * dx + dy * dy);
}

static int shots_never_pass_through(void)
{
    static shot shots[N_SEG + N_CORNER + N_BALL + N_BORDER];
    bp_params p = params_free_space(MARGIN * 2 + SLOT * GRID, MARGIN * 2 + SLOT * GRID);
    bp_world *w = bp_world_create(&p);
    const double h = 1.0 / (p.fps * p.substeps), cap = p.speed_cap;
    int ns = 0;
    for (int slot = 0; slot < N_SEG + N_CORNER + N_BALL; slot++) {
        shot *s = &shots[ns++];
        double cx = MARGIN + SLOT * (slot % GRID + 0.5), cy = MARGIN + SLOT * (slot / GRID + 0.5);
        double speed = 50 + urand() * (cap - 50), r = 2 + urand() * 8;
        double lead = r + (0.5 + 3.0 * urand()) * speed * h; /* distance to travel */
        double ax, ay, dx, dy;
        s->r = r;
        if (slot < N_SEG) { /* long segment, hit in its middle part */
            double a = urand() * 6.283185307, ux = cos(a), uy = sin(a);
            s->kind = 0;
            s->ax = cx - ux * 80; s->ay = cy - uy * 80; s->bx = cx + ux * 80; s->by = cy + uy * 80;
            bp_world_add_line(w, (float)s->ax, (float)s->ay, (float)s->bx, (float)s->by, NULL, 0);
            double inc = (urand() - 0.5) * 2.1; /* within +-60 degrees of the normal */
            dx = uy * cos(inc) + ux * sin(inc); dy = -ux * cos(inc) + uy * sin(inc);
            double along = (urand() - 0.5) * 60;
            ax = cx + ux * along; ay = cy + uy * along;
            lead /= cos(inc);
            s->reach = r;
        } else if (slot < N_SEG + N_CORNER) { /* a point: zero-length segment */
            s->kind = 1;
            s->ax = s->bx = cx; s->ay = s->by = cy;
            bp_world_add_line(w, (float)cx, (float)cy, (float)cx, (float)cy, NULL, 0);
            double a = urand() * 6.283185307, off = (urand() - 0.5) * 1.9 * r;
            dx = cos(a); dy = sin(a);
            ax = cx - dy * off; ay = cy + dx * off;
            s->reach = r;
            lead = sqrt(r * r - off * off) + (0.5 + 3.0 * urand()) * speed * h;
        } else { /* a ball at rest */
            s->kind = 2;
            double r2 = 2 + urand() * 8;
            s->target = (uint32_t)bp_world_add_ball(w, (float)cx, (float)cy, 0, 0, (float)r2, 0, NULL, 0);
            double a = urand() * 6.283185307, off = (urand() - 0.5) * 1.9 * (r + r2);
            dx = cos(a); dy = sin(a);
            ax = cx - dy * off; ay = cy + dx * off;
            s->reach = r + r2;
            lead = sqrt(s->reach * s->reach - off * off) + (0.5 + 3.0 * urand()) * speed * h;
        }
        s->dirx = dx; s->diry = dy;
        s->ball = (uint32_t)bp_world_add_ball(w, (float)(ax - dx * lead), (float)(ay - dy * lead),
                                              (float)(dx * speed), (float)(dy * speed), (float)r, 0, NULL, 0);
    }
    double W = p.width;
    for (int k = 0; k < N_BORDER; k++) { /* 250 shots at each wall */
        shot *s = &shots[ns++];
        int wall = k % 4;
        double t = (k / 4 + 0.5) / (N_BORDER / 4) * (W - 2 * MARGIN) + MARGIN;
        double nx = wall == 0 ? 1 : wall == 1 ? -1 : 0, ny = wall == 2 ? 1 : wall == 3 ? -1 : 0;
        double speed = 50 + urand() * (cap - 50), r = 2 + urand() * 8;
        double inc = urand() * 0.6; /* all lean one way: neighbours never meet */
        double dx = -nx * cos(inc) - ny * sin(inc), dy = -ny * cos(inc) + nx * sin(inc);
        double lead = (r + (0.5 + 3.0 * urand()) * speed * h * cos(inc)); /* distance from the wall */
        double px = wall == 0 ? lead : wall == 1 ? W - lead : t;
        double py = wall == 2 ? lead : wall == 3 ? W - lead : t;
        s->kind = 3; s->r = r; s->ax = nx; s->ay = ny; s->dirx = dx; s->diry = dy;
        s->ball = (uint32_t)bp_world_add_ball(w, (float)px, (float)py, (float)(dx * speed),
                                              (float)(dy * speed), (float)r, 0, NULL, 0);
    }
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    int bad = 0;
    for (int step = 0; step < SUBSTEPS; step++) {
        ENSURE(test_step(e, w, 1) == 0);
        for (int k = 0; k < ns; k++) {
            const shot *s = &shots[k];
            double px = w->x[s->ball], py = w->y[s->ball], d;
            if (s->kind <= 1)
                d = seg_dist(s, px, py);
            else if (s->kind == 2)
                d = hypot(px - w->x[s->target], py - w->y[s->target]);
            else
                d = s->ax > 0 ? px : s->ax < 0 ? W - px : s->ay > 0 ? py : W - py;
            if (d < s->reach * (1 - 1e-2)) {
                if (bad++ < 5)
                    fprintf(stderr, "shot %d (kind %d) at sub-step %d: distance %.4f < %.4f\n", k,
                            s->kind, step + 1, d, s->reach);
            }
        }
    }
    for (int k = 0; k < ns; k++) { /* every shot bounced: it no longer heads in */
        const shot *s = &shots[k];
        double vx = w->vx[s->ball], vy = w->vy[s->ball];
        int ok;
        if (s->kind == 0) { /* normal component reversed */
            double ex = s->bx - s->ax, ey = s->by - s->ay, nx = -ey, ny = ex;
            ok = (vx * nx + vy * ny) * (s->dirx * nx + s->diry * ny) < 0;
        } else if (s->kind == 1) {
            ok = vx * s->dirx + vy * s->diry < 0.9999 * hypot(vx, vy);
        } else if (s->kind == 2) {
            ok = w->vx[s->target] != 0.0f || w->vy[s->target] != 0.0f;
        } else {
            ok = vx * s->ax + vy * s->ay > 0;
        }
        if (!ok && bad++ < 10) {
            fprintf(stderr, "shot %d (kind %d) did not bounce\n", k, s->kind);
            if (getenv("SHOT_DEBUG") && s->kind == 2)
                fprintf(stderr, "  shooter %u at (%g,%g) v (%g,%g) r %g; target %u at (%g,%g) r %g\n",
                        s->ball, w->x[s->ball], w->y[s->ball], w->vx[s->ball], w->vy[s->ball],
                        w->r[s->ball], s->target, w->x[s->target], w->y[s->target], w->r[s->target]);
        }
    }
    printf("%d shots, %d passed through or missed\n", ns, bad);
    ENSURE(bad == 0);
    bp_stats st;
    bp_world_measure(w, &st);
    ENSURE(st.escaped == 0 && st.nonfinite == 0);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(shots_never_pass_through),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

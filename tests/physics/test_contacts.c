/* test_contacts.c - single contacts against the formulas of the seeds:
 * head-on swap, unequal masses (seed 003), mirror reflection off a slanted
 * segment (seeds 000/001), the corner formula (seed 002), borders. */
#include "physics_common.h"
#include "bp_physics.h" /* BP_WALL_MU */

#include <math.h>

/* Equal masses head-on with e = 1 exchange their velocities. */
static int head_on_equal_masses_swap(void)
{
    bp_params p = params_free_space(1000, 400);
    bp_world *w = bp_world_create(&p);
    bp_world_add_ball(w, 300, 200, 250, 0, 10, 0, NULL, 0);
    bp_world_add_ball(w, 500, 200, -120, 0, 10, 0, NULL, 0);
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    ENSURE(test_step(e, w, 33 * 30) == 0); /* one second: they meet after ~0.49 s */
    ENSURE_NEAR(w->vx[0], -120.0, 1e-3);
    ENSURE_NEAR(w->vx[1], 250.0, 1e-3);
    ENSURE_NEAR(w->vy[0], 0.0, 1e-6);
    ENSURE(w->x[0] < w->x[1]);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

/* Seed 003: normal/tangent split with m1 != m2; the contact normal is the
 * line of centres at the moment of contact, found here in double precision
 * from the initial state (free flight until then). */
static int unequal_masses_match_seed_003(void)
{
    const double m1 = 2.0, m2 = 7.0, r1 = 8.0, r2 = 14.0;
    const double p1x = 200, p1y = 200, v1x = 300, v1y = 40;
    const double p2x = 420, p2y = 230, v2x = -90, v2y = -25;
    bp_params p = params_free_space(1200, 500);
    bp_world *w = bp_world_create(&p);
    bp_world_add_ball(w, (float)p1x, (float)p1y, (float)v1x, (float)v1y, (float)r1, (float)m1, NULL, 0);
    bp_world_add_ball(w, (float)p2x, (float)p2y, (float)v2x, (float)v2y, (float)r2, (float)m2, NULL, 0);
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    /* contact time: |d + dv t| = r1 + r2 */
    double dx = p2x - p1x, dy = p2y - p1y, wx = v2x - v1x, wy = v2y - v1y, rs = r1 + r2;
    double a = wx * wx + wy * wy, b = 2 * (dx * wx + dy * wy), c = dx * dx + dy * dy - rs * rs;
    double t = (-b - sqrt(b * b - 4 * a * c)) / (2 * a);
    double nx = dx + wx * t, ny = dy + wy * t, nl = sqrt(nx * nx + ny * ny);
    nx /= nl; ny /= nl;
    double v1n = v1x * nx + v1y * ny, v2n = v2x * nx + v2y * ny;
    double v1t = -v1x * ny + v1y * nx, v2t = -v2x * ny + v2y * nx;
    double v1n_ = (m1 * v1n + m2 * v2n - m2 * (v1n - v2n)) / (m1 + m2);
    double v2n_ = (m1 * v1n + m2 * v2n - m1 * (v2n - v1n)) / (m1 + m2);
    double e1x = v1n_ * nx - v1t * ny, e1y = v1n_ * ny + v1t * nx;
    double e2x = v2n_ * nx - v2t * ny, e2y = v2n_ * ny + v2t * nx;
    double ke0 = 0.5 * m1 * (v1x * v1x + v1y * v1y) + 0.5 * m2 * (v2x * v2x + v2y * v2y);
    ENSURE(test_step(e, w, 30 * 30) == 0); /* contact after ~0.48 s, no walls before 1 s */
    ENSURE_NEAR(w->vx[0], e1x, 1e-3 * fabs(v1x));
    ENSURE_NEAR(w->vy[0], e1y, 1e-3 * fabs(v1x));
    ENSURE_NEAR(w->vx[1], e2x, 1e-3 * fabs(v1x));
    ENSURE_NEAR(w->vy[1], e2y, 1e-3 * fabs(v1x));
    /* conservation to float rounding */
    double px = m1 * w->vx[0] + m2 * w->vx[1], py = m1 * w->vy[0] + m2 * w->vy[1];
    ENSURE_NEAR(px, m1 * v1x + m2 * v2x, 1e-4 * m1 * fabs(v1x));
    ENSURE_NEAR(py, m1 * v1y + m2 * v2y, 1e-4 * m1 * fabs(v1x));
    double ke = 0.5 * m1 * (w->vx[0] * (double)w->vx[0] + w->vy[0] * (double)w->vy[0]) +
                0.5 * m2 * (w->vx[1] * (double)w->vx[1] + w->vy[1] * (double)w->vy[1]);
    ENSURE_NEAR(ke / ke0, 1.0, 1e-6);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

/* Seeds 000/001: a ball hitting a slanted segment leaves at the mirrored
 * angle, for many slopes and incidence angles. */
static int slanted_segment_mirrors_angle(void)
{
    for (int k = 0; k < 24; k++) {
        double slope = -1.2 + 0.1 * k;               /* segment angle, rad */
        double inc = 0.3 + 0.05 * (k % 7);           /* angle to the normal */
        bp_params p = params_free_space(1000, 1000);
        bp_world *w = bp_world_create(&p);
        double cx = 500, cy = 500, L = 300;
        double ux = cos(slope), uy = sin(slope), nx = -uy, ny = ux;
        bp_world_add_line(w, (float)(cx - ux * L), (float)(cy - uy * L), (float)(cx + ux * L),
                          (float)(cy + uy * L), NULL, 0);
        /* come in from the +n side towards the centre at angle inc */
        double dx = -nx * cos(inc) + ux * sin(inc), dy = -ny * cos(inc) + uy * sin(inc);
        double speed = 400, r = 6, back = 120;
        bp_world_add_ball(w, (float)(cx - dx * back), (float)(cy - dy * back), (float)(dx * speed),
                          (float)(dy * speed), (float)r, 0, NULL, 0);
        bp_engine *e = test_engine(w, 0);
        if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
        ENSURE(test_step(e, w, 20 * 30) == 0); /* 0.6 s: hits after ~0.3 s */
        double ox = w->vx[0], oy = w->vy[0];
        double ex = dx - 2 * (dx * nx + dy * ny) * nx, ey = dy - 2 * (dx * nx + dy * ny) * ny;
        double ang = atan2(ox * ey - oy * ex, ox * ex + oy * ey);
        if (fabs(ang) > 1e-4)
            fprintf(stderr, "slope %g incidence %g: off by %g rad\n", slope, inc, ang);
        ENSURE(fabs(ang) <= 1e-4);
        ENSURE_NEAR(sqrt(ox * ox + oy * oy), speed, 1e-3 * speed);
        /* and it stayed on its side */
        ENSURE((w->x[0] - cx) * nx + (w->y[0] - cy) * ny > r * 0.999);
        bp_engine_destroy(e);
        bp_world_destroy(w);
    }
    return 0;
}

/* Seed 002: a ball hitting the end point of a segment off-centre leaves with
 * v' = v + c x, c = -2 v.x / x.x, x = centre - corner at contact. */
static int corner_follows_seed_002(void)
{
    for (int k = 0; k < 16; k++) {
        double off = -0.9 + 0.12 * k; /* fraction of r beside the corner */
        bp_params p = params_free_space(1000, 1000);
        bp_world *w = bp_world_create(&p);
        double qx = 500, qy = 500, r = 10, speed = 350;
        /* segment pointing away (to the right) from the corner at (qx,qy) */
        bp_world_add_line(w, (float)qx, (float)qy, 800, 500, NULL, 0);
        double p0x = qx - 150, p0y = qy + off * r, vx = speed, vy = 0;
        bp_world_add_ball(w, (float)p0x, (float)p0y, (float)vx, (float)vy, (float)r, 0, NULL, 0);
        bp_engine *e = test_engine(w, 0);
        if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
        ENSURE(test_step(e, w, 22 * 30) == 0);
        double xx0 = p0x - qx, xy0 = p0y - qy;
        double a = vx * vx + vy * vy, b = 2 * (xx0 * vx + xy0 * vy), c = xx0 * xx0 + xy0 * xy0 - r * r;
        double t = (-b - sqrt(b * b - 4 * a * c)) / (2 * a);
        double xx = xx0 + vx * t, xy = xy0 + vy * t;
        double cc = -2 * (vx * xx + vy * xy) / (xx * xx + xy * xy);
        double evx = vx + cc * xx, evy = vy + cc * xy;
        ENSURE_NEAR(w->vx[0], evx, 1e-3 * speed);
        ENSURE_NEAR(w->vy[0], evy, 1e-3 * speed);
        bp_engine_destroy(e);
        bp_world_destroy(w);
    }
    return 0;
}

/* The walls reflect with restitution e and nothing leaves the box. */
static int borders_reflect_with_restitution(void)
{
    bp_params p = params_free_space(400, 300);
    p.restitution = 0.5f;
    bp_world *w = bp_world_create(&p);
    bp_world_add_ball(w, 200, 150, 3000, -2000, 5, 0, NULL, 0);
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    ENSURE(test_step(e, w, 3) == 0); /* before any wall */
    ENSURE_NEAR(w->vx[0], 3000, 1e-3);
    ENSURE(test_step(e, w, 200) == 0); /* after the first wall hits */
    bp_stats s;
    bp_world_measure(w, &s);
    ENSURE(s.escaped == 0);
    ENSURE(fabs(w->vx[0]) < 3000 || fabs(w->vy[0]) < 2000);
    ENSURE(w->x[0] >= 5 && w->x[0] <= 395 && w->y[0] >= 5 && w->y[0] <= 295);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

/* Friction on the floor (docs/physics.md): under gravity a ball sliding on
 * the floor slows at mu g = 45 px/s^2 and stops; on a line steeper than mu
 * a ball at rest slides down at g (sin a - mu cos a); on a line flatter
 * than mu it stays where it is. */
static int floor_friction_is_coulomb(void)
{
    const float g = 900.0f, mu = BP_WALL_MU;
    bp_params p = bp_params_default(); /* g = 900 */
    bp_world *w = bp_world_create(&p);
    ENSURE(bp_world_add_ball(w, 200, p.height - 4.0f, 100, 0, 4, 0, NULL, 0) >= 0);
    /* slope 0.2 (steeper than mu) and 0.03 (flatter), 4 px balls resting
     * on them at rest; far from each other and from the walls */
    float s1 = 0.2f, s2 = 0.03f;
    ENSURE(bp_world_add_line(w, 400, 100, 1000, 100 + 600 * s1, NULL, 0) >= 0);
    ENSURE(bp_world_add_line(w, 400, 400, 1000, 400 + 600 * s2, NULL, 0) >= 0);
    float c1 = 1.0f / sqrtf(1.0f + s1 * s1), c2 = 1.0f / sqrtf(1.0f + s2 * s2);
    /* centres one radius above the line, at x = 500 along it */
    ENSURE(bp_world_add_ball(w, 500 + 4 * s1 * c1, 100 + 100 * s1 - 4 * c1, 0, 0, 4, 0, NULL,
                             0) >= 0);
    ENSURE(bp_world_add_ball(w, 500 + 4 * s2 * c2, 400 + 100 * s2 - 4 * c2, 0, 0, 4, 0, NULL,
                             0) >= 0);
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    ENSURE(test_step(e, w, 33 * 30) == 0); /* 1 s */
    fprintf(stderr, "after 1 s: floor vx %.2f; slope 0.2: speed %.2f; slope 0.03: speed %.3f\n",
            (double)w->vx[0], (double)hypotf(w->vx[1], w->vy[1]),
            (double)hypotf(w->vx[2], w->vy[2]));
    ENSURE_NEAR(w->vx[0], 100.0f - mu * g, 2.0f);
    float down = g * (s1 * c1 - mu * c1); /* g (sin a - mu cos a) */
    ENSURE_NEAR(hypotf(w->vx[1], w->vy[1]), down, 0.05f * down);
    ENSURE(w->vx[1] > 0.0f && w->vy[1] > 0.0f); /* down the slope */
    ENSURE(hypotf(w->vx[2], w->vy[2]) < 0.5f);
    float x2 = w->x[2];
    ENSURE(test_step(e, w, 2 * 33 * 30) == 0); /* 3 s */
    ENSURE(fabsf(w->vx[0]) < 0.5f);           /* stopped at about 2.2 s */
    ENSURE_NEAR(w->x[0], 200.0f + 100.0f * 100.0f / (2.0f * mu * g), 3.0f);
    ENSURE(fabsf(w->x[2] - x2) < 0.5f);       /* still where it was */
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

/* A column of 40 equal balls (r = 2.5) stacked on the floor against the
 * left wall, the right wall or a vertical line, at rest: it falls over
 * (docs/physics.md, "Columns along a wall topple"). On perfectly smooth
 * geometry each such column stood for ever: the wall held every ball at
 * exactly one radius, so the contacts pushed only along it (the top ball
 * stayed at y = 99 of 300 through 30 s). After 3 s no ball is more than
 * four diameters above the floor, and none left the box. */
static int column_on(int support)
{
    bp_params p = bp_params_default(); /* g = 900 */
    p.width = 200.0f;
    p.height = 300.0f;
    bp_world *w = bp_world_create(&p);
    const float r = 2.5f;
    float x = support == 0 ? r : (support == 1 ? p.width - r : 100.0f + r);
    if (support == 2)
        ENSURE(bp_world_add_line(w, 100, 0, 100, p.height, NULL, 0) >= 0);
    for (int k = 0; k < 40; k++)
        ENSURE(bp_world_add_ball(w, x, p.height - r - 2.0f * r * (float)k, 0, 0, r, 0, NULL, 0) >=
               0);
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    ENSURE(test_step(e, w, 99 * 30) == 0); /* 3 s */
    float top = p.height;
    for (uint32_t i = 0; i < w->count; i++)
        top = fminf(top, w->y[i]);
    fprintf(stderr, "column on support %d: highest centre %.2f px above the floor after 3 s\n",
            support, (double)(p.height - top));
    ENSURE(p.height - top < r + 4.0f * 2.0f * r);
    bp_stats s;
    bp_world_measure(w, &s);
    ENSURE(s.escaped == 0 && s.nonfinite == 0);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

static int column_at_the_left_wall_topples(void) { return column_on(0); }
static int column_at_the_right_wall_topples(void) { return column_on(1); }
static int column_at_a_vertical_line_topples(void) { return column_on(2); }

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(head_on_equal_masses_swap),
        BP_TEST(unequal_masses_match_seed_003),
        BP_TEST(slanted_segment_mirrors_angle),
        BP_TEST(corner_follows_seed_002),
        BP_TEST(borders_reflect_with_restitution),
        BP_TEST(floor_friction_is_coulomb),
        BP_TEST(column_at_the_left_wall_topples),
        BP_TEST(column_at_the_right_wall_topples),
        BP_TEST(column_at_a_vertical_line_topples),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

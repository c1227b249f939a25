/* test_lanes.c - the contact pass's SIMD lanes compute exactly the scalar
 * pair functions (kernels/bp_physics.h).
 *
 * bp_contacts works a ball's neighbours out BP_LANES at a time with
 * bp_vpair_toi and bp_vpair_soft; bp_resolve uses the scalar bp_pair_toi
 * and bp_pair_soft for the partner. The engines' results are only right
 * if both give the same bits for the same pair, so here every lane of
 * many random groups is compared with the scalar function on the same
 * pair, bit for bit, over the cases that take different paths: gravity on
 * and off, touching and apart, approaching and separating, deep overlaps
 * (with the wall rule of bp_deep_normal: balls at the floor and the side
 * walls), coincident centres, neighbours below and above the ball's
 * index, unequal masses and contact counts, and groups with unused lanes.
 */
#include "bp_physics.h"
#include "step.h"
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* the same cases on every run */
static uint32_t rng_state = 12345u;
/* bp_test_frand on this file's state */
static float frand(float lo, float hi)
{
    return bp_test_frand(&rng_state, lo, hi);
}

/* Pass parameters of a 400 x 300 box with gravity g (0: off). */
static void params(float g, bp_step_params *P)
{
    bp_params p = bp_params_default();
    p.width = 400.0f;
    p.height = 300.0f;
    p.gravity_y = g;
    bp_world *w = bp_world_create(&p);
    bp_world_add_ball(w, 200.0f, 150.0f, 0.0f, 0.0f, 4.0f, 0.0f, NULL, 0);
    bp_seggrid sg = {0};
    bp_seggrid_build(&sg, w);
    bp_step_setup(w, &sg, P);
    bp_seggrid_free(&sg);
    bp_world_destroy(w);
}

typedef struct ball {
    float x, y, vx, vy, r, m;
    bp_u8 n;
} ball;

/* Neighbour k of ball `a`: one case of several kinds. */
static ball neighbour(const bp_step_params *P, ball a, int kind)
{
    ball b;
    b.r = frand(1.0f, 6.0f);
    b.m = frand(0.5f, 40.0f);
    b.n = (bp_u8)frand(0.0f, 7.0f);
    float rs = a.r + b.r, ang = frand(0.0f, 6.2831853f);
    float dist;
    switch (kind) {
    case 0: dist = rs * frand(0.98f, 1.06f); break;  /* touching, in the skin */
    case 1: dist = rs * frand(0.4f, 0.95f); break;   /* deep overlap */
    case 2: dist = rs * frand(1.0f, 1.6f); break;    /* apart, maybe an impact */
    default: dist = 0.0f; break;                      /* same centre */
    }
    b.x = a.x + dist * cosf(ang);
    b.y = a.y + dist * sinf(ang);
    /* a deep overlap of two balls at the same wall (bp_deep_normal's rule) */
    if (kind == 1 && a.y == P->height - a.r && frand(0.0f, 1.0f) < 0.7f) {
        b.y = P->height - b.r;
        b.x = a.x + (frand(0.0f, 1.0f) < 0.5f ? -dist : dist);
    } else if (kind == 1 && a.x == a.r && frand(0.0f, 1.0f) < 0.7f) {
        b.x = b.r;
        b.y = a.y + (frand(0.0f, 1.0f) < 0.5f ? -dist : dist);
    }
    float s = frand(0.0f, 1.0f) < 0.3f ? 0.02f : 1.0f; /* some slow pairs */
    b.vx = s * frand(-900.0f, 900.0f);
    b.vy = s * frand(-900.0f, 900.0f);
    return b;
}

/* A group of lanes: ball a (index i, side si) with neighbour k, ball
 * J[k], in lane k. */
static bp_vpair group_of(ball a, bp_u32 i, bp_side si, const ball *nb, const bp_u32 *J)
{
    float xs[BP_LANES], ys[BP_LANES], rs[BP_LANES], ms[BP_LANES], ns[BP_LANES];
    float vxs[BP_LANES], vys[BP_LANES];
    for (bp_u32 k = 0; k < BP_LANES; k++) {
        xs[k] = nb[k].x;
        ys[k] = nb[k].y;
        rs[k] = nb[k].r;
        ms[k] = nb[k].m;
        ns[k] = bp_split_n(nb[k].n);
        vxs[k] = nb[k].vx;
        vys[k] = nb[k].vy;
    }
    bp_vpair v;
    bp_vpair_with_i(&v, i, si);
    v.j = BP_VLOADU(J);
    v.xj = BP_VLOAD(xs);
    v.yj = BP_VLOAD(ys);
    v.rj = BP_VLOAD(rs);
    v.mj = BP_VLOAD(ms);
    v.nj = BP_VLOAD(ns);
    v.dx = v.xj - a.x;
    v.dy = v.yj - a.y;
    v.d2 = v.dx * v.dx + v.dy * v.dy;
    v.rsum = a.r + v.rj;
    v.rvx = a.vx - BP_VLOAD(vxs);
    v.rvy = a.vy - BP_VLOAD(vys);
    return v;
}

static int lanes_match_scalar_with(float g)
{
    bp_step_params P;
    params(g, &P);
    int mismatches = 0, checked = 0, soft_lanes = 0, deep_lanes = 0, hits = 0;
    for (int round = 0; round < 20000; round++) {
        ball a;
        a.r = frand(1.0f, 6.0f);
        a.m = frand(0.5f, 40.0f);
        a.n = (bp_u8)frand(0.0f, 7.0f);
        a.x = frand(0.0f, 1.0f) < 0.2f ? a.r : frand(20.0f, 380.0f); /* some at the left wall */
        a.y = frand(0.0f, 1.0f) < 0.25f ? P.height - a.r : frand(20.0f, 280.0f); /* or the floor */
        a.vx = frand(-900.0f, 900.0f);
        a.vy = frand(-900.0f, 900.0f);
        bp_u32 i = 1000u;
        bp_u32 left = 1u + (bp_u32)frand(0.0f, (float)BP_LANES); /* 1..BP_LANES used */
        if (left > BP_LANES)
            left = BP_LANES;
        ball nb[BP_LANES];
        bp_u32 J[BP_LANES];
        for (bp_u32 k = 0; k < BP_LANES; k++) {
            nb[k] = k < left ? neighbour(&P, a, (int)frand(0.0f, 3.999f))
                             : nb[0]; /* unused lanes repeat the first */
            if (k < left && frand(0.0f, 1.0f) < 0.03f)
                nb[k] = neighbour(&P, a, 3);
            J[k] = k < left ? (frand(0.0f, 1.0f) < 0.5f ? i - 1u - k : i + 1u + k) : J[0];
        }
        bp_side si = bp_side_of(a.x, a.y, a.r, a.m, a.n);
        bp_vpair v = group_of(a, i, si, nb, J);
        bp_vi on = BP_LANE_IDS < BP_VUSPLAT(left);
        bp_vf dvx, dvy, px, py;
        bp_vi act = bp_vpair_soft(&P, &v, on, &dvx, &dvy, &px, &py, 0, 0);
        bp_vf t = bp_vpair_toi(v.dx, v.dy, v.rvx, v.rvy, v.rsum, P.h);
        float l[5][BP_LANES];
        bp_i32 lact[BP_LANES];
        BP_VSTORE(dvx, l[0]);
        BP_VSTORE(dvy, l[1]);
        BP_VSTORE(px, l[2]);
        BP_VSTORE(py, l[3]);
        BP_VSTORE(t, l[4]);
        BP_VSTORE(act, lact);
        for (bp_u32 k = 0; k < left; k++) {
            ball b = nb[k];
            float dx = b.x - a.x, dy = b.y - a.y, d2 = dx * dx + dy * dy;
            float rvx = a.vx - b.vx, rvy = a.vy - b.vy;
            bp_push c = {0.0f, 0.0f, 0.0f, 0.0f};
            int counts = bp_pair_soft(&P, i, J[k], dx, dy, d2, rvx, rvy, si,
                                      bp_side_of(b.x, b.y, b.r, b.m, b.n), &c);
            float ts = bp_pair_toi(dx, dy, rvx, rvy, a.r + b.r, P.h);
            int ok = bp_test_same_bits(c.dvx, l[0][k]) && bp_test_same_bits(c.dvy, l[1][k]) &&
                     bp_test_same_bits(c.px, l[2][k]) && bp_test_same_bits(c.py, l[3][k]) &&
                     counts == (lact[k] != 0) && bp_test_same_bits(ts, l[4][k]);
            if (!ok && mismatches++ < 5)
                fprintf(stderr,
                        "g %g round %d lane %u: scalar (%g %g %g %g, %d, t %g) "
                        "lanes (%g %g %g %g, %d, t %g)\n",
                        (double)g, round, k, (double)c.dvx, (double)c.dvy, (double)c.px,
                        (double)c.py, counts, (double)ts, (double)l[0][k], (double)l[1][k],
                        (double)l[2][k], (double)l[3][k], lact[k] != 0, (double)l[4][k]);
            checked++;
            soft_lanes += counts;
            deep_lanes += c.px != 0.0f || c.py != 0.0f;
            hits += ts > 0.0f;
        }
    }
    printf("gravity %g: %d pairs, %d soft, %d displaced, %d impacts ahead, %d differ\n",
           (double)g, checked, soft_lanes, deep_lanes, hits, mismatches);
    /* every path was taken */
    ENSURE(checked > 40000);
    ENSURE(soft_lanes > checked / 4);
    ENSURE(deep_lanes > checked / 10);
    ENSURE(hits > checked / 50);
    ENSURE(mismatches == 0);
    return 0;
}

static int lanes_match_scalar_gravity(void)
{
    return lanes_match_scalar_with(900.0f);
}

static int lanes_match_scalar_no_gravity(void)
{
    return lanes_match_scalar_with(0.0f);
}

/* Equal floats, +0 and -0 alike (ball j's terms are ball i's geometry
 * negated: the floats of its own evaluation up to the sign of a zero,
 * which no sum started at +0 can see). */
static int same_or_zeros(float a, float b)
{
    return bp_test_same_bits(a, b) || (a == 0.0f && b == 0.0f);
}

/* bp_vpair_soft with ball j's terms too (the once pass): both balls'
 * terms, lane by lane, are the scalar bp_pair_soft's from each ball's
 * side, in groups whose balls all have one mass (the mass shares then
 * skip three divisions: 0.5, and ball j's the same as ball i's) and in
 * groups where one lane's partner is heavier (every share divided). */
static int both_sides_one_mass(void)
{
    bp_step_params P;
    params(900.0f, &P);
    int mismatches = 0, checked = 0, soft_lanes = 0, one_mass = 0;
    for (int round = 0; round < 8000; round++) {
        ball a;
        a.r = frand(1.0f, 6.0f);
        a.m = frand(0.5f, 40.0f);
        a.n = (bp_u8)frand(0.0f, 7.0f);
        a.x = frand(20.0f, 380.0f);
        a.y = frand(0.0f, 1.0f) < 0.25f ? P.height - a.r : frand(20.0f, 280.0f);
        a.vx = frand(-900.0f, 900.0f);
        a.vy = frand(-900.0f, 900.0f);
        bp_u32 i = 1000u, left = 1u + (bp_u32)frand(0.0f, (float)BP_LANES - 0.01f);
        int odd = round % 2 ? (int)frand(0.0f, (float)left - 0.01f) : -1; /* a heavier lane */
        one_mass += odd < 0;
        ball nb[BP_LANES];
        bp_u32 J[BP_LANES];
        for (bp_u32 k = 0; k < BP_LANES; k++) {
            if (k < left || k == 0u) {
                nb[k] = neighbour(&P, a, (int)frand(0.0f, 2.999f));
                nb[k].m = (int)k == odd ? 2.0f * a.m : a.m;
                J[k] = frand(0.0f, 1.0f) < 0.5f ? i - 1u - k : i + 1u + k;
            } else { /* unused lanes repeat the first */
                nb[k] = nb[0];
                J[k] = J[0];
            }
        }
        bp_side si = bp_side_of(a.x, a.y, a.r, a.m, a.n);
        bp_vpair v = group_of(a, i, si, nb, J);
        bp_vi on = BP_LANE_IDS < BP_VUSPLAT(left);
        bp_vf dvx, dvy, px, py;
        bp_vpush oj;
        /* the groups of one mass as the once pass takes them in a world of
         * one mass (bp_once_work_off_as's negj: one_mass known), the
         * others with the lanes' own test */
        bp_vi act = bp_vpair_soft(&P, &v, on, &dvx, &dvy, &px, &py, &oj, odd < 0);
        float l[8][BP_LANES];
        bp_i32 lact[BP_LANES];
        BP_VSTORE(dvx, l[0]);
        BP_VSTORE(dvy, l[1]);
        BP_VSTORE(px, l[2]);
        BP_VSTORE(py, l[3]);
        BP_VSTORE(oj.dvx, l[4]);
        BP_VSTORE(oj.dvy, l[5]);
        BP_VSTORE(oj.px, l[6]);
        BP_VSTORE(oj.py, l[7]);
        BP_VSTORE(act, lact);
        for (bp_u32 k = 0; k < left; k++) {
            ball b = nb[k];
            float dx = b.x - a.x, dy = b.y - a.y, d2 = dx * dx + dy * dy;
            float rvx = a.vx - b.vx, rvy = a.vy - b.vy;
            bp_side sj = bp_side_of(b.x, b.y, b.r, b.m, b.n);
            bp_push ci = {0.0f, 0.0f, 0.0f, 0.0f}, cj = {0.0f, 0.0f, 0.0f, 0.0f};
            int counts = bp_pair_soft(&P, i, J[k], dx, dy, d2, rvx, rvy, si, sj, &ci);
            bp_pair_soft(&P, J[k], i, -dx, -dy, d2, -rvx, -rvy, sj, si, &cj);
            int ok = same_or_zeros(ci.dvx, l[0][k]) && same_or_zeros(ci.dvy, l[1][k]) &&
                     same_or_zeros(ci.px, l[2][k]) && same_or_zeros(ci.py, l[3][k]) &&
                     same_or_zeros(cj.dvx, l[4][k]) && same_or_zeros(cj.dvy, l[5][k]) &&
                     same_or_zeros(cj.px, l[6][k]) && same_or_zeros(cj.py, l[7][k]) &&
                     counts == (lact[k] != 0);
            if (!ok && mismatches++ < 5)
                fprintf(stderr,
                        "round %d lane %u (heavier lane %d): ball i scalar (%g %g %g %g) "
                        "lanes (%g %g %g %g); ball j scalar (%g %g %g %g) lanes (%g %g %g %g)\n",
                        round, k, odd, (double)ci.dvx, (double)ci.dvy, (double)ci.px,
                        (double)ci.py, (double)l[0][k], (double)l[1][k], (double)l[2][k],
                        (double)l[3][k], (double)cj.dvx, (double)cj.dvy, (double)cj.px,
                        (double)cj.py, (double)l[4][k], (double)l[5][k], (double)l[6][k],
                        (double)l[7][k]);
            checked++;
            soft_lanes += counts;
        }
    }
    printf("%d pairs, %d soft, %d groups of one mass, %d differ\n", checked, soft_lanes,
           one_mass, mismatches);
    ENSURE(checked > 15000);
    ENSURE(soft_lanes > checked / 2);
    ENSURE(mismatches == 0);
    return 0;
}

/* The lanes splat the radius and the mass where every ball has the same
 * (bp_step_params.r0, m0; bp_step_setup) and gather them otherwise: the
 * flags set exactly when the floats are all equal. */
static int one_radius_one_mass(void)
{
    struct {
        float r2, m2; /* the third ball's radius and mass (0: from the radius) */
        float want_r0, want_m0;
    } cases[] = {
        {2.0f, 0.0f, 2.0f, 12.566371f},  /* all alike */
        {2.5f, 0.0f, 0.0f, 0.0f},        /* one larger ball: mass from its radius too */
        {2.0f, 7.0f, 2.0f, 0.0f},        /* one heavier ball of the same size */
        {2.0000002f, 12.566371f, 0.0f, 12.566371f}, /* a float apart in radius only */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        bp_params p = bp_params_default();
        bp_world *w = bp_world_create(&p);
        ENSURE(w != NULL);
        for (int b = 0; b < 5; b++)
            ENSURE(bp_world_add_ball(w, 100.0f + 10.0f * b, 100.0f, 0.0f, 0.0f,
                                     b == 2 ? cases[c].r2 : 2.0f, b == 2 ? cases[c].m2 : 0.0f,
                                     NULL, 0) == b);
        bp_seggrid sg = {0};
        ENSURE(bp_seggrid_build(&sg, w) == 0);
        bp_step_params P;
        bp_step_setup(w, &sg, &P);
        if (P.r0 != cases[c].want_r0 || P.m0 != cases[c].want_m0)
            printf("case %zu: r0 %.9g m0 %.9g, want %.9g %.9g\n", c, P.r0, P.m0,
                   cases[c].want_r0, cases[c].want_m0);
        ENSURE(P.r0 == cases[c].want_r0);
        ENSURE(P.m0 == cases[c].want_m0);
        bp_seggrid_free(&sg);
        bp_world_destroy(w);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(lanes_match_scalar_gravity),
        BP_TEST(lanes_match_scalar_no_gravity),
        BP_TEST(both_sides_one_mass),
        BP_TEST(one_radius_one_mass),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

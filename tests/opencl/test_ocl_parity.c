/* test_ocl_parity.c - the OpenCL engine computes the CPU engine's physics.
 *
 * Short horizon: after 1 and 10 frames of gas, pile and rain worlds, every
 * ball agrees between the backends within T_POS px and T_VEL px/s (see
 * docs/opencl.md, "Parity": both run the same float operations in the same
 * order from kernels/bp_physics.h; what may differ on a device is only the
 * rounding of / and sqrt, at most 3 ulp in OpenCL C, which after hundreds
 * of sub-steps stays far below these bounds; on PoCL, which rounds them
 * correctly, the states are the same bits, and the test says how many are).
 *
 * Long horizon: after 300 frames trajectories of colliding balls may part
 * (chaos amplifies any last-bit difference), so gas and pile are compared
 * as ensembles: kinetic energy, momentum, escaped (0), max_overlap, and
 * the distribution of speeds by a two-sample Kolmogorov-Smirnov statistic
 * below its 0.1% critical value 1.95 * sqrt(2 / n).
 *
 * Skips (exit 77) when no OpenCL device is usable.
 */
#define _GNU_SOURCE 1 /* setenv */
#include "ocl_test_util.h"

/* Short-horizon tolerances (docs/opencl.md explains the choice). */
#define T_POS_1 1e-3   /* px after 1 frame */
#define T_VEL_1 1e-2   /* px/s after 1 frame */
#define T_POS_10 2e-2  /* px after 10 frames */
#define T_VEL_10 0.5   /* px/s after 10 frames */

static int have_device(void)
{
    bp_engine *e = t_ocl_engine_or_skip();
    if (!e)
        return 0;
    printf("device: %s\n", bp_engine_device(e));
    bp_engine_destroy(e);
    return 1;
}

static int short_horizon(const char *name, bp_world *w)
{
    ENSURE(w != NULL);
    static const uint32_t frames[2] = {1, 10};
    static const double tpos[2] = {T_POS_1, T_POS_10}, tvel[2] = {T_VEL_1, T_VEL_10};
    for (int k = 0; k < 2; k++) {
        bp_world *c = t_run_clone(BP_BACKEND_CPU, w, frames[k]);
        bp_world *o = t_run_clone(BP_BACKEND_OPENCL, w, frames[k]);
        ENSURE(c != NULL && o != NULL);
        ENSURE(c->count == w->count && o->count == w->count);
        t_diff d = t_compare(c, o);
        printf("  %s after %u frame(s): max |dpos| %.3g px, max |dvel| %.3g px/s, "
               "%u of %u balls identical\n",
               name, frames[k], d.pos, d.vel, d.identical, w->count);
        /* The balls really moved: the comparison is not of two idle worlds. */
        t_diff moved = t_compare(w, c);
        ENSURE(moved.pos > 0.1);
        ENSURE(d.pos <= tpos[k]);
        ENSURE(d.vel <= tvel[k]);
        ENSURE(c->substeps_done == o->substeps_done);
        bp_world_destroy(c);
        bp_world_destroy(o);
    }
    bp_world_destroy(w);
    return 0;
}

static int parity_short_gas(void)
{
    if (!have_device())
        return BP_TEST_SKIP;
    return short_horizon("gas", t_world_gas(600));
}

static int parity_short_pile(void)
{
    if (!have_device())
        return BP_TEST_SKIP;
    return short_horizon("pile", t_world_pile(600));
}

static int parity_short_rain(void)
{
    if (!have_device())
        return BP_TEST_SKIP;
    return short_horizon("rain", t_world_rain(1500));
}

/* The parallel grid build (atomic slots, scans, per-cell sort), which
 * GPUs use, gives the same answer as well; on PoCL it is only used when
 * asked for, so ask. */
static int parity_short_parallel_grid(void)
{
    if (!have_device())
        return BP_TEST_SKIP;
    ENSURE(setenv("BALLPIT_OCL_GRID", "parallel", 1) == 0);
    int rc = short_horizon("pile, parallel grid", t_world_pile(600));
    if (rc == 0)
        rc = short_horizon("gas, parallel grid", t_world_gas(600));
    unsetenv("BALLPIT_OCL_GRID");
    return rc;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Two-sample Kolmogorov-Smirnov statistic of the speeds of a and b. */
static double ks_speeds(const bp_world *a, const bp_world *b)
{
    uint32_t n = a->count, m = b->count;
    float *sa = malloc(n * sizeof *sa), *sb = malloc(m * sizeof *sb);
    if (!sa || !sb) {
        free(sa);
        free(sb);
        return 1.0;
    }
    for (uint32_t i = 0; i < n; i++)
        sa[i] = sqrtf(a->vx[i] * a->vx[i] + a->vy[i] * a->vy[i]);
    for (uint32_t i = 0; i < m; i++)
        sb[i] = sqrtf(b->vx[i] * b->vx[i] + b->vy[i] * b->vy[i]);
    qsort(sa, n, sizeof *sa, cmp_float);
    qsort(sb, m, sizeof *sb, cmp_float);
    double d = 0.0;
    uint32_t i = 0, j = 0;
    while (i < n && j < m) {
        float v = sa[i] < sb[j] ? sa[i] : sb[j];
        while (i < n && sa[i] <= v)
            i++;
        while (j < m && sb[j] <= v)
            j++;
        d = fmax(d, fabs((double)i / n - (double)j / m));
    }
    free(sa);
    free(sb);
    return d;
}

/* Sum of m|v|: the scale momentum differences are measured against. */
static double abs_momentum(const bp_world *w)
{
    double s = 0.0;
    for (uint32_t i = 0; i < w->count; i++)
        s += (double)w->m[i] * sqrt((double)w->vx[i] * w->vx[i] + (double)w->vy[i] * w->vy[i]);
    return s;
}

static int long_horizon(const char *name, bp_world *w, double ke_floor)
{
    ENSURE(w != NULL);
    const uint32_t frames = 300;
    bp_world *c = t_run_clone(BP_BACKEND_CPU, w, frames);
    bp_world *o = t_run_clone(BP_BACKEND_OPENCL, w, frames);
    ENSURE(c != NULL && o != NULL);
    bp_stats sc, so, s0;
    bp_world_measure(w, &s0);
    bp_world_measure(c, &sc);
    bp_world_measure(o, &so);
    double ks = ks_speeds(c, o), ks_crit = 1.95 * sqrt(2.0 / w->count);
    double pscale = fmax(abs_momentum(c), abs_momentum(o));
    double dp = fmax(fabs(sc.momentum_x - so.momentum_x), fabs(sc.momentum_y - so.momentum_y));
    printf("  %s after %u frames: KE cpu %.6g opencl %.6g (start %.6g); momentum diff %.3g "
           "of %.3g; max_overlap %.4f / %.4f; escaped %u / %u; KS %.4f (limit %.4f)\n",
           name, frames, sc.kinetic_energy, so.kinetic_energy, s0.kinetic_energy, dp, pscale,
           sc.max_overlap, so.max_overlap, sc.escaped, so.escaped, ks, ks_crit);
    ENSURE(sc.escaped == 0 && so.escaped == 0);
    ENSURE(sc.nonfinite == 0 && so.nonfinite == 0);
    ENSURE(fabs(sc.kinetic_energy - so.kinetic_energy) <=
           0.02 * fmax(sc.kinetic_energy, so.kinetic_energy) + ke_floor);
    ENSURE(dp <= 0.05 * pscale + 1e-9);
    ENSURE(sc.max_overlap <= 0.1 && so.max_overlap <= 0.1);
    ENSURE(fabs(sc.max_overlap - so.max_overlap) <= 0.05);
    ENSURE(ks < ks_crit);
    bp_world_destroy(c);
    bp_world_destroy(o);
    bp_world_destroy(w);
    return 0;
}

static int parity_long_gas(void)
{
    if (!have_device())
        return BP_TEST_SKIP;
    /* e = 1, no gravity: energy is conserved, so no floor is needed. */
    return long_horizon("gas", t_world_gas(400), 0.0);
}

static int parity_long_pile(void)
{
    if (!have_device())
        return BP_TEST_SKIP;
    /* At rest the energy left is the residue of the resting-contact solver:
     * allow a difference of all balls moving at 2 px/s (m = pi 3^2). */
    uint32_t n = 500;
    return long_horizon("pile", t_world_pile(n), n * 3.14159 * 9.0 * 4.0 / 2.0);
}

/* The program's engines re-sort a large world's balls by place every
 * 128 sub-steps (src/sim/order.h): across the re-sorts both engines move
 * the same balls to the same slots, and go on to the same state. Two
 * swarms of 5,000 balls thrown at each other, 1,100 sub-steps (re-sorts
 * before sub-steps 0, 128, ..., 1,024). */
static int parity_across_resort(void)
{
    if (!have_device())
        return BP_TEST_SKIP;
    bp_world *w = bp_world_create(NULL);
    ENSURE(w != NULL);
    ENSURE(bp_world_add_swarm(w, 400.0f, 300.0f, 3000, 2.0f, 250.0f, 300.0f, -100.0f, 7, NULL,
                              0) == 3000);
    ENSURE(bp_world_add_swarm(w, 900.0f, 400.0f, 2000, 3.0f, 250.0f, -200.0f, 50.0f, 8, NULL,
                              0) == 2000);
    bp_world *c = bp_world_clone(w), *o = bp_world_clone(w);
    ENSURE(c && o);
    char err[512];
    bp_engine_opts so = {.threads = 1, .sort_by_place = 1};
    bp_engine *ec = bp_engine_create(BP_BACKEND_CPU, &so, err, sizeof err);
    bp_engine *eo = bp_engine_create(BP_BACKEND_OPENCL, &so, err, sizeof err);
    ENSURE(ec && eo);
    ENSURE(bp_engine_attach(ec, c, err, sizeof err) == 0);
    ENSURE(bp_engine_attach(eo, o, err, sizeof err) == 0);
    ENSURE(bp_engine_step(ec, c, 1100, err, sizeof err) == 0);
    ENSURE(bp_engine_step(eo, o, 1100, err, sizeof err) == 0);
    ENSURE(bp_engine_read(eo, o, err, sizeof err) == 0);
    ENSURE(c->id && o->id);
    uint32_t moved = 0;
    for (uint32_t i = 0; i < c->count; i++) {
        ENSURE(c->id[i] == o->id[i]);
        moved += c->id[i] != i;
    }
    t_diff d = t_compare(c, o);
    printf("  swarms 5k after 1,100 sub-steps (two re-sorts, %u balls moved): max |dpos| %.3g px,"
           " max |dvel| %.3g px/s, %u of %u balls identical\n",
           moved, d.pos, d.vel, d.identical, c->count);
    ENSURE(moved > 0);
    ENSURE(d.pos <= T_POS_10 && d.vel <= T_VEL_10);
    bp_engine_destroy(ec);
    bp_engine_destroy(eo);
    bp_world_destroy(c);
    bp_world_destroy(o);
    bp_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(parity_short_gas),  BP_TEST(parity_short_pile),
        BP_TEST(parity_short_rain), BP_TEST(parity_short_parallel_grid),
        BP_TEST(parity_long_gas),   BP_TEST(parity_long_pile),
        BP_TEST(parity_across_resort),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

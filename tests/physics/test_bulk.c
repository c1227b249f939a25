/* test_bulk.c - many balls: energy conservation of an elastic gas, a pile
 * that comes to rest, a deep crystal that does too, the rain that stays
 * bounded, determinism across runs and thread counts, and a pile that
 * takes a hard-thrown swarm and recovers. */
#include "physics_common.h"

#include <math.h>
#include <stdint.h>

/* e = 1, no gravity, 2,000 balls among segments for 3,000 frames: the
 * kinetic energy stays within 1e-4 of its start (relative). */
static int elastic_gas_keeps_energy(void)
{
    bp_params p = params_free_space(1280, 720);
    bp_world *w = bp_world_create(&p);
    /* a few obstacles: a diamond, two slanted bars and a short stub */
    float L[][4] = {{640, 260, 740, 360}, {740, 360, 640, 460}, {640, 460, 540, 360},
                    {540, 360, 640, 260}, {150, 150, 400, 220}, {900, 600, 1150, 480},
                    {1000, 150, 1000, 152}};
    for (unsigned k = 0; k < sizeof L / sizeof L[0]; k++)
        bp_world_add_line(w, L[k][0], L[k][1], L[k][2], L[k][3], NULL, 0);
    uint64_t s = 12345;
    for (int k = 0; k < 2000; k++) {
        /* a lattice away from the obstacles, random velocities */
        float x = 20.0f + (float)(k % 100) * 12.4f, y = 20.0f + (float)(k / 100) * 34.0f;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        float a = (float)((s >> 33) % 62832) / 10000.0f;
        float v = 50.0f + (float)((s >> 13) % 250);
        ENSURE(bp_world_add_ball(w, x, y, v * cosf(a), v * sinf(a), 3.0f, 0, NULL, 0) >= 0);
    }
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    bp_stats s0, s1;
    bp_world_measure(w, &s0);
    for (int f = 0; f < 3000; f += 100) {
        ENSURE(test_step(e, w, 100 * 30) == 0);
        bp_world_measure(w, &s1);
        double rel = fabs(s1.kinetic_energy / s0.kinetic_energy - 1.0);
        if (rel > 1e-4)
            fprintf(stderr, "frame %d: energy off by %.3g (relative)\n", f + 100, rel);
        ENSURE(rel <= 1e-4);
        ENSURE(s1.escaped == 0 && s1.nonfinite == 0);
    }
    printf("gas: energy drift %.3g, max_overlap %.4f\n",
           s1.kinetic_energy / s0.kinetic_energy - 1.0, s1.max_overlap);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

/* 10,000 balls of mixed radii (2.5 to 3.5 px) dropped into a box under
 * gravity settle within 10 simulated seconds: overlap under 5% of a radius,
 * RMS speed under 2 px/s, none out. (A pile of identical balls jams into a
 * crystal whose bottom row is squeezed between the walls; docs/physics.md
 * gives its figures.) */
static int pile_comes_to_rest(void)
{
    bp_params p = bp_params_default(); /* g = 900, e = 0.9 */
    p.width = 3200;                    /* a wide box: about 19 layers at rest */
    bp_world *w = bp_world_create(&p);
    for (int k = 0; k < 10000; k++) {
        float x = 6.0f + (float)(k % 450) * 7.05f, y = 6.0f + (float)(k / 450) * 7.0f;
        float r = 2.5f + (float)((k * 7919) % 101) / 100.0f;
        ENSURE(bp_world_add_ball(w, x, y, (float)(k % 7) * 10.0f - 30.0f, 0, r, 0, NULL, 0) >= 0);
    }
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    bp_stats st;
    for (int f = 0; f < 330; f += 33) {
        ENSURE(test_step(e, w, 33 * 30) == 0);
        bp_world_measure(w, &st);
        printf("pile t=%2ds: rms %.3f px/s, max speed %.2f, max_overlap %.4f, escaped %u\n",
               (f + 33) / 33, st.rms_speed, st.max_speed, st.max_overlap, st.escaped);
        fflush(stdout);
    }
    ENSURE(st.escaped == 0 && st.nonfinite == 0);
    ENSURE(st.max_overlap < 0.05);
    ENSURE(st.rms_speed < 2.0);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

/* A deep crystal: 60 hexagonal rows of identical balls (radius 2, 0.02 px
 * apart, at rest) in a box 80 px wide, 1,140 balls. In the lattice's
 * fastest mode (alternate rows moving against each other) a ball's springs
 * and dampers add up to three times one pair's; with the damping past the
 * explicit update's stable limit for that (docs/physics.md, "Many contacts
 * at once"), the lattice chattered for ever at an RMS speed that grew with
 * the depth (29 px/s at 60 rows, 59 at 160: the bench's pile of 50,000
 * never came to rest). After 5 simulated seconds: RMS speed under 1 px/s,
 * no ball faster than 5 px/s. */
static int deep_crystal_comes_to_rest(void)
{
    bp_params p = bp_params_default(); /* g = 900, e = 0.9 */
    p.width = 80;
    bp_world *w = bp_world_create(&p);
    const double r = 2.0, d = 2.0 * r + 0.02, pitch = d * sqrt(3.0) / 2.0;
    for (int row = 0; row < 60; row++)
        for (double x = r + (row % 2 ? d / 2.0 : 0.0); x <= p.width - r; x += d)
            ENSURE(bp_world_add_ball(w, (float)x, (float)(p.height - r - row * pitch), 0, 0,
                                     (float)r, 0, NULL, 0) >= 0);
    ENSURE(w->count == 1140);
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    bp_stats st;
    for (int f = 0; f < 165; f += 33) {
        ENSURE(test_step(e, w, 33 * 30) == 0);
        bp_world_measure(w, &st);
        printf("crystal t=%ds: rms %.3f px/s, max speed %.3f, max_overlap %.4f\n",
               (f + 33) / 33, st.rms_speed, st.max_speed, st.max_overlap);
    }
    ENSURE(st.escaped == 0 && st.nonfinite == 0);
    ENSURE(st.rms_speed < 1.0);
    ENSURE(st.max_speed < 5.0);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

/* Kinetic energy plus potential energy above the floor (gravity along +y,
 * as in the rain scene). */
static double total_energy(const bp_world *w)
{
    bp_stats st;
    bp_world_measure(w, &st);
    double pe = 0.0;
    for (uint32_t i = 0; i < w->count; i++)
        pe += (double)w->m[i] * w->params.gravity_y * (w->params.height - w->r[i] - w->y[i]);
    return st.kinetic_energy + pe;
}

/* The built-in rain scene, from the folder BALLPIT_SCENES names (meson
 * passes the source tree's assets/scenes), or NULL with the reason on
 * stderr. */
static bp_world *load_rain(void)
{
    const char *dir = getenv("BALLPIT_SCENES");
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/rain.scene", dir ? dir : "assets/scenes");
    bp_world *w = bp_scene_load(path, err, sizeof err);
    if (!w)
        fprintf(stderr, "%s\n", err);
    return w;
}

/* The rain scene (10,000 balls poured over 8 ramps onto the floor, where
 * they slide into the side walls and pile up) for 20 simulated seconds,
 * measured after every frame:
 *  - no energy gain: once the swarms' starting overlaps have pushed apart
 *    (3 frames), kinetic + potential energy never rises above its value
 *    then by more than 0.1% (restitution 0.9 and inelastic resting
 *    contacts only take energy out);
 *  - no runaway ball: no speed above 2,000 px/s (a fall from the top of
 *    the box gives 1,310 px/s; an elastic exchange can raise one ball to
 *    sqrt(2) times that, 1,850);
 *  - nothing out, nothing non-finite;
 *  - overlaps bounded: under 1.5 radii at any frame, under 0.5 radii over
 *    the last 5 s, when the pile has formed.
 * Before mass splitting (docs/physics.md) balls pressed into a wall formed
 * a column that pumped energy: max speed 20,000 (the cap) and overlap 2
 * within 4 s. */
static int rain_stays_bounded(void)
{
    bp_world *w = load_rain();
    ENSURE(w != NULL);
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    const int frames = 660, settle = 3, late = 495;
    double e_ref = 0.0, gain = 0.0, vmax = 0.0, omax = 0.0, olate = 0.0;
    int gain_frame = 0, omax_frame = 0;
    for (int f = 1; f <= frames; f++) {
        ENSURE(test_step(e, w, w->params.substeps) == 0);
        bp_stats st;
        bp_world_measure(w, &st);
        ENSURE(st.escaped == 0 && st.nonfinite == 0);
        double en = total_energy(w);
        if (f == settle)
            e_ref = en;
        if (f > settle && en / e_ref - 1.0 > gain) {
            gain = en / e_ref - 1.0;
            gain_frame = f;
        }
        vmax = fmax(vmax, st.max_speed);
        if (st.max_overlap > omax) {
            omax = st.max_overlap;
            omax_frame = f;
        }
        if (f > late)
            olate = fmax(olate, st.max_overlap);
        if (f % 66 == 0) {
            printf("rain t=%2ds: energy %.4g (%.4f of frame %d's), max speed %.0f, "
                   "max_overlap %.3f\n", f / 33, en, en / e_ref, settle, st.max_speed,
                   st.max_overlap);
            fflush(stdout);
        }
    }
    printf("rain, 20 s: largest energy gain %.2e (frame %d), max speed %.0f px/s, "
           "max_overlap %.3f (frame %d; last 5 s: %.3f)\n", gain, gain_frame, vmax, omax,
           omax_frame, olate);
    ENSURE(gain <= 1e-3);
    ENSURE(vmax <= 2000.0);
    ENSURE(omax < 1.5);
    ENSURE(olate < 0.5);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

static uint64_t world_hash(const bp_world *w)
{
    uint64_t h = 1469598103934665603ull;
    const float *arr[] = {w->x, w->y, w->vx, w->vy};
    for (int a = 0; a < 4; a++) {
        const unsigned char *b = (const unsigned char *)arr[a];
        for (size_t k = 0; k < (size_t)w->count * sizeof(float); k++)
            h = (h ^ b[k]) * 1099511628211ull;
    }
    return h;
}

/* A square box of side `side` with one ball of radius `big` at height by
 * and a swarm of n balls of radius r (spread `spread`) at height sy, both
 * on the box's middle line. */
static bp_world *big_among_small(float side, float by, float big, float sy, uint32_t n, float r,
                                 float spread, uint64_t seed)
{
    bp_params p = bp_params_default();
    p.width = side;
    p.height = side;
    bp_world *w = bp_world_create(&p);
    bp_world_add_ball(w, side / 2, by, 0, 0, big, 0, NULL, 0);
    bp_world_add_swarm(w, side / 2, sy, n, r, spread, 0, 0, seed, NULL, 0);
    return w;
}

/* One ball of radius 12 among 600 of radius 1.5: the big ball sizes the
 * grid's cells, so a grid row holds about 30 balls (every lane of the
 * widest screening, and runs of several steps). */
static bp_world *mixed_world(void)
{
    return big_among_small(120, 20, 12, 78, 600, 1.5f, 54, 11);
}

/* One ball of radius 30 among 1,200 of radius 1.5 crowded round it: cells
 * of over 60 px, so a grid row's run holds hundreds of balls, more than
 * pass 3's pair list (BP_PAIRS_CAP), whose room bp_once_screen then makes
 * step by step instead of once before the run. */
static bp_world *crowded_world(void)
{
    return big_among_small(180, 40, 30, 120, 1200, 1.5f, 55, 13);
}

static bp_world *busy_world(void)
{
    bp_params p = bp_params_default();
    bp_world *w = bp_world_create(&p);
    bp_world_add_line(w, 100, 300, 700, 450, NULL, 0);
    bp_world_add_line(w, 1200, 350, 600, 600, NULL, 0);
    bp_world_add_swarm(w, 400, 150, 3000, 2.5f, 140, 120, 0, 7, NULL, 0);
    bp_world_add_swarm(w, 900, 200, 2000, 3.0f, 120, -200, 50, 9, NULL, 0);
    return w;
}

/* 1,200 balls of one radius, so of one mass, dropped onto a line and the
 * floor, where they pile: the once pass takes its copy for worlds of one
 * radius and one mass (bp_once_work_off_as's one_r and negj), which the
 * passes one ball at a time and the pairs evaluated twice do not. */
static bp_world *even_world(void)
{
    bp_params p = bp_params_default();
    bp_world *w = bp_world_create(&p);
    bp_world_add_line(w, 300, 520, 980, 640, NULL, 0);
    bp_world_add_swarm(w, 640, 500, 1200, 2.0f, 85, 0, 0, 17, NULL, 0);
    return w;
}

/* Same scene, same bits: twice with two threads, once with one; on the
 * CPU engine also with its passes one ball at a time, as the OpenCL
 * kernels on GPUs run them, and in blocks of every lane width, besides the
 * widest the processor has (BALLPIT_CPU_LANES; src/sim/cpu_blocks.h; a
 * width the processor lacks is left out), on three threads (pass 3's
 * ranges of slots, each with the ghosts of the one before, cut where the
 * threads' times put them), and with pass 3 evaluating each pair for both
 * its balls (BALLPIT_CPU_PAIRS=twice), and on seventeen threads, more
 * than the grid has count arrays for (engine_cpu.c, GRID_PARTS: all
 * integrate, at most sixteen count and place), and with the grid counted
 * anew every sub-step and merged from the last sub-step's on one thread
 * and three (BALLPIT_CPU_GRID; all three worlds are small enough that the
 * others merge it after a call's first sub-step, grid_merge.h), and
 * with the calls run in turn on all the threads and on one
 * (BALLPIT_CPU_TEAM=alternate, as the engine's pick by time may). Four
 * worlds: obstacles and swarms, mixed sizes whose grid rows hold every
 * lane of the widest screening, a crowd whose rows' runs are longer
 * than pass 3's pair list, and a pile of balls of one radius and one
 * mass (at least a quarter of them touching another at the end). */
static int deterministic_across_runs_and_threads(void)
{
    enum { WORLDS = 4 };
    bp_world *(*const make[WORLDS])(void) = {busy_world, mixed_world, crowded_world, even_world};
    const uint32_t frames[WORLDS] = {60, 20, 6, 24};
    enum { RUNS = 15 };
    const int threads[RUNS] = {2, 2, 1, 3, 2, 2, 2, 2, 2, 17, 2, 1, 3, 2, 3};
    const char *const lanes[RUNS] = {NULL, NULL, NULL, NULL, NULL, "1", "4", "8", "16", NULL,
                                     NULL, NULL, "4", NULL, NULL};
    const char *const pairs[RUNS] = {NULL, NULL, NULL, NULL, "twice", NULL, NULL, NULL, NULL,
                                     NULL, NULL, NULL, NULL, NULL, NULL};
    const char *const grid[RUNS] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                    NULL, "count", "merge", "merge", NULL, NULL};
    const char *const team[RUNS] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                    NULL, NULL, NULL, NULL, "alternate", "alternate"};
    int runs = test_backend() == BP_BACKEND_CPU ? RUNS : 3;
    for (int world = 0; world < WORLDS; world++) {
        uint64_t h[RUNS];
        for (int k = 0; k < runs; k++) {
            bp_world *w = make[world]();
            if (lanes[k])
                setenv("BALLPIT_CPU_LANES", lanes[k], 1);
            if (pairs[k])
                setenv("BALLPIT_CPU_PAIRS", pairs[k], 1);
            if (grid[k])
                setenv("BALLPIT_CPU_GRID", grid[k], 1);
            if (team[k])
                setenv("BALLPIT_CPU_TEAM", team[k], 1);
            bp_engine *e = test_engine(w, threads[k]);
            unsetenv("BALLPIT_CPU_LANES");
            unsetenv("BALLPIT_CPU_PAIRS");
            unsetenv("BALLPIT_CPU_GRID");
            unsetenv("BALLPIT_CPU_TEAM");
            if (!e && (k == 7 || k == 8)) { /* no AVX2 or AVX-512 here */
                h[k] = h[0];
                bp_world_destroy(w);
                continue;
            }
            if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
            ENSURE(test_step(e, w, frames[world] * 30) == 0);
            h[k] = world_hash(w);
            if (make[world] == even_world && k == 0) {
                uint32_t touching = 0;
                for (uint32_t i = 0; i < w->count; i++)
                    touching += w->contacts[i] > 0;
                printf("even world: %u of %u balls touching\n", touching, w->count);
                ENSURE(touching >= w->count / 4);
            }
            bp_engine_destroy(e);
            bp_world_destroy(w);
        }
        for (int k = 1; k < runs; k++)
            if (h[k] != h[0])
                fprintf(stderr, "world %d: run %d (%d threads, lanes %s, pairs %s, grid %s, "
                        "team %s) differs\n", world, k, threads[k],
                        lanes[k] ? lanes[k] : "widest", pairs[k] ? pairs[k] : "once",
                        grid[k] ? grid[k] : "auto", team[k] ? team[k] : "fixed");
        for (int k = 1; k < runs; k++)
            ENSURE(h[k] == h[0]);
    }
    return 0;
}

/* Attaching a world again (the sandbox does after every edit, a switch of
 * engines does) keeps the contact counts of mass splitting: they live in
 * the world. The rain scene, 30 frames in, then 30 frames stepped with an
 * attach before every frame give the same bits as 30 frames stepped
 * straight. (An attach recomputes the grid from the fastest ball and the
 * free fall across the box; in the rain the free fall is the larger all
 * along, so the grid, and with it the order of every sum, stays the same.
 * Before the counts moved into the world an attach reset them, and the
 * runs differed.) */
static int reattach_keeps_contact_counts(void)
{
    char err[512];
    uint64_t h[2];
    for (int k = 0; k < 2; k++) {
        bp_world *w = load_rain();
        ENSURE(w != NULL);
        bp_engine *e = test_engine(w, 0);
        if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
        ENSURE(test_step(e, w, 30 * 30) == 0);
        for (int f = 0; f < 30; f++) {
            if (k == 1)
                ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
            ENSURE(test_step(e, w, 30) == 0);
        }
        h[k] = world_hash(w);
        bp_engine_destroy(e);
        bp_world_destroy(w);
    }
    ENSURE(h[0] == h[1]);
    return 0;
}

/* A swarm thrown hard into a resting pile: 400 balls of radius 2 at 2,000
 * px/s (half the sandbox's fastest throw) onto 2,000 at rest in a 480x360
 * box. With one contact pass a sub-step the pile gives like a sponge: for
 * a few frames pairs overlap by up to 1.8 radii (docs/physics.md, "Energy
 * and determinism", measures it). What must hold: no ball leaves the box
 * or turns non-finite, from the eighth frame on no pair overlaps by half a
 * radius (measured: at most 0.34 over frames 8-40), and 40 frames later
 * the total energy is under half of what the throw brought (0.28). */
static int thrown_swarm_pile_recovers(void)
{
    char err[512];
    bp_params p = bp_params_default();
    p.width = 480;
    p.height = 360;
    bp_world *w = bp_world_create(&p);
    ENSURE(bp_world_add_swarm_folded(w, 240, 340, 2000, 2, 240, 0, 0, 1, err, sizeof err) == 2000);
    ENSURE(bp_world_settle(w, 0, 0, err, sizeof err) == 0);
    bp_engine *e = test_engine(w, 0);
    if (!e) { bp_world_destroy(w); return BP_TEST_SKIP; }
    ENSURE(test_step(e, w, 60 * 30) == 0);
    float top = p.height;
    for (uint32_t i = 0; i < w->count; i++)
        top = w->y[i] < top ? w->y[i] : top;
    uint32_t first = w->count;
    ENSURE(bp_world_add_swarm(w, 240, top - 50, 400, 2, 40, 0, 2000, 2, err, sizeof err) == 400);
    ENSURE(bp_world_settle(w, first, 0, err, sizeof err) == 0);
    ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
    double e0 = total_energy(w), peak = 0.0;
    bp_stats st;
    for (int f = 1; f <= 40; f++) {
        ENSURE(test_step(e, w, 30) == 0);
        bp_world_measure(w, &st);
        ENSURE(st.escaped == 0 && st.nonfinite == 0);
        if (f >= 8 && st.max_overlap >= 0.5)
            fprintf(stderr, "frame %d: overlap %.3f radii\n", f, st.max_overlap);
        ENSURE(f < 8 || st.max_overlap < 0.5);
        peak = st.max_overlap > peak ? st.max_overlap : peak;
    }
    double left = total_energy(w) / e0;
    printf("thrown swarm: deepest overlap %.3f radii, energy left %.3f\n", peak, left);
    ENSURE(left < 0.5);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(elastic_gas_keeps_energy),
        BP_TEST(pile_comes_to_rest),
        BP_TEST(deep_crystal_comes_to_rest),
        BP_TEST(rain_stays_bounded),
        BP_TEST(deterministic_across_runs_and_threads),
        BP_TEST(reattach_keeps_contact_counts),
        BP_TEST(thrown_swarm_pile_recovers),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

/* test_order.c - the balls re-sorted by place (src/sim/order.h): nothing
 * about any ball changes but its slot, the ids follow, the dump lists the
 * balls by id, and the answer does not depend on how the sub-steps are cut
 * into calls. Run once per backend (BALLPIT_BACKEND). */
#define _GNU_SOURCE 1 /* open_memstream */
#include "physics_common.h"
#include "order.h"
#include "bp_util.h"

#include <math.h>
#include <stdio.h>

/* Two swarms of different radii, then one ball: a ball's radius and mass
 * say which it is, so a dump that mixed up the ids would show it. */
static bp_world *two_swarms(void)
{
    bp_world *w = bp_world_create(NULL);
    if (!w)
        return NULL;
    if (bp_world_add_swarm(w, 400.0f, 300.0f, 3000, 2.0f, 250.0f, 300.0f, -100.0f, 7, NULL,
                           0) != 3000 ||
        bp_world_add_swarm(w, 900.0f, 400.0f, 2000, 3.0f, 250.0f, -200.0f, 50.0f, 8, NULL,
                           0) != 2000 ||
        bp_world_add_ball(w, 640.0f, 100.0f, 0.0f, 0.0f, 5.0f, 7.0f, NULL, 0) != 5000) {
        bp_world_destroy(w);
        return NULL;
    }
    return w;
}

static float radius_of_id(uint32_t id)
{
    return id < 3000u ? 2.0f : id < 5000u ? 3.0f : 5.0f;
}

static char *dump(const bp_world *w, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    int rc = bp_world_write_csv(w, f);
    fclose(f);
    if (rc) {
        free(buf);
        return NULL;
    }
    return buf;
}

static uint32_t place_key(const bp_world *w, uint32_t i, float cell)
{
    return (uint32_t)(w->y[i] / cell) * 100000u + (uint32_t)(w->x[i] / cell);
}

/* Whether w's ids are a permutation of 0..count-1. */
static int ids_are_permutation(const bp_world *w)
{
    uint8_t *seen = calloc(w->count ? w->count : 1u, 1);
    int ok = seen != NULL;
    for (uint32_t i = 0; ok && i < w->count; i++) {
        ok = w->id[i] < w->count && !seen[w->id[i]];
        if (ok)
            seen[w->id[i]] = 1;
    }
    free(seen);
    return ok;
}

/* The sort moves balls, never changes one: the dump is the same text, the
 * ids are a permutation, the slots run by place, and sorting a sorted
 * world changes nothing. */
static int sort_moves_balls_only(void)
{
    bp_world *w = two_swarms();
    ENSURE(w != NULL && w->id == NULL);
    bp_world *s = bp_world_clone(w);
    ENSURE(s != NULL);
    ENSURE(bp_world_sort_by_place(s, NULL, 0) == 0);
    ENSURE(s->id != NULL && s->count == w->count);
    size_t la, lb;
    char *a = dump(w, &la), *b = dump(s, &lb);
    ENSURE(a && b);
    ENSURE(la == lb && memcmp(a, b, la) == 0);
    free(a);
    free(b);
    ENSURE(ids_are_permutation(s));
    uint32_t moved = 0;
    for (uint32_t i = 0; i < s->count; i++) {
        ENSURE(s->r[i] == radius_of_id(s->id[i]));
        moved += s->id[i] != i;
    }
    ENSURE(moved > s->count / 2); /* the swarms' draws are in no order of place */
    /* By place: the sort's cells of about two balls' area each (order.c),
     * in the ball grid's order, whose rows run down the world's columns:
     * columns left to right, top down within a column. */
    double cell = sqrt((double)s->params.width * s->params.height / (0.5 * s->count));
    float inv = (float)(1.0 / cell);
    uint32_t gh = (uint32_t)(s->params.height / cell) + 1u, back = 0;
    for (uint32_t i = 1; i < s->count; i++)
        back += (uint32_t)(s->x[i] * inv) * gh + (uint32_t)(s->y[i] * inv) <
                (uint32_t)(s->x[i - 1] * inv) * gh + (uint32_t)(s->y[i - 1] * inv);
    ENSURE(back == 0);
    /* The keys of the unsorted world go down often. */
    uint32_t down = 0;
    for (uint32_t i = 1; i < w->count; i++)
        down += place_key(w, i, 20.0f) < place_key(w, i - 1, 20.0f);
    ENSURE(down > w->count / 4);
    /* sorted again: the same slots */
    bp_world *t = bp_world_clone(s);
    ENSURE(t != NULL && t->id != NULL);
    ENSURE(bp_world_sort_by_place(t, NULL, 0) == 0);
    ENSURE(memcmp(t->id, s->id, s->count * sizeof *s->id) == 0);
    ENSURE(memcmp(t->x, s->x, s->count * sizeof *s->x) == 0);
    /* a new ball gets the next id */
    ENSURE(bp_world_add_ball(t, 10.0f, 10.0f, 0.0f, 0.0f, 4.0f, 0.0f, NULL, 0) == 5001);
    ENSURE(t->id[5001] == 5001);
    bp_world_clear_balls(t);
    ENSURE(t->id == NULL);
    bp_world_destroy(t);
    bp_world_destroy(s);
    bp_world_destroy(w);
    return 0;
}

static bp_engine *sorting_engine(bp_world *w, int sort)
{
    bp_engine_opts o = {.sort_by_place = sort};
    return test_engine_opts(w, &o);
}

/* 1,100 sub-steps, so the run crosses the re-sorts before sub-steps 0,
 * 128, ..., 1,024: in one call, and in calls of 7 (most of which have a
 * re-sort inside them, the one from 126 before its fourth sub-step), the
 * same bits; the dump by id keeps each ball's radius
 * and mass; an engine that keeps creation order leaves the slots alone. */
static int sorted_runs_any_chunking(void)
{
    bp_world *a = two_swarms();
    ENSURE(a != NULL);
    bp_world *b = bp_world_clone(a), *k = bp_world_clone(a);
    ENSURE(b && k);
    bp_engine *ea = sorting_engine(a, 1);
    if (!ea) {
        bp_world_destroy(a);
        bp_world_destroy(b);
        bp_world_destroy(k);
        return BP_TEST_SKIP;
    }
    bp_engine *eb = sorting_engine(b, 1), *ek = sorting_engine(k, 0);
    ENSURE(eb && ek);
    ENSURE(test_step(ea, a, 1100) == 0);
    for (uint32_t done = 0; done < 1100; done += 7)
        ENSURE(test_step(eb, b, done + 7 <= 1100 ? 7 : 1100 - done) == 0);
    ENSURE(test_step(ek, k, 1100) == 0);
    ENSURE(a->substeps_done == 1100 && b->substeps_done == 1100);
    ENSURE(a->id && b->id && !k->id);
    size_t n = a->count * sizeof(float);
    ENSURE(memcmp(a->id, b->id, a->count * sizeof *a->id) == 0);
    ENSURE(memcmp(a->x, b->x, n) == 0 && memcmp(a->y, b->y, n) == 0);
    ENSURE(memcmp(a->vx, b->vx, n) == 0 && memcmp(a->vy, b->vy, n) == 0);
    ENSURE(memcmp(a->contacts, b->contacts, a->count) == 0);
    bp_stats st;
    bp_world_measure(a, &st);
    ENSURE(st.escaped == 0 && st.nonfinite == 0);
    /* The dump by id: row k is ball k (its radius and mass). */
    size_t len;
    char *text = dump(a, &len);
    ENSURE(text != NULL);
    char *line = strchr(text, '\n');
    ENSURE(line != NULL);
    for (uint32_t id = 0; id < a->count; id++) {
        unsigned got;
        float x, y, vx, vy, r, m;
        ENSURE(sscanf(line + 1, "%u,%g,%g,%g,%g,%g,%g", &got, &x, &y, &vx, &vy, &r, &m) == 7);
        ENSURE(got == id && r == radius_of_id(id));
        ENSURE(m == (id == 5000u ? 7.0f : (float)M_PI * r * r));
        line = strchr(line + 1, '\n');
        ENSURE(line != NULL);
    }
    free(text);
    /* Both runs moved the same balls about as far: the sorted run's
     * kinetic energy is the creation-order run's within 5% (the sums of a
     * ball's contacts come in another order, so the bits differ). */
    bp_stats sk;
    bp_world_measure(k, &sk);
    printf("kinetic energy after 1,100 sub-steps: sorted %.6g, creation order %.6g\n",
           st.kinetic_energy, sk.kinetic_energy);
    ENSURE(fabs(st.kinetic_energy - sk.kinetic_energy) <= 0.05 * sk.kinetic_energy);
    bp_engine_destroy(ea);
    bp_engine_destroy(eb);
    bp_engine_destroy(ek);
    bp_world_destroy(a);
    bp_world_destroy(b);
    bp_world_destroy(k);
    return 0;
}

/* A sorted world that gets a swarm given room, where part of it finds
 * none and is taken out (the sandbox's right-click swarm): the balls kept
 * take the next ids in order (bp_world_settle moves them down over the
 * dropped ones and leaves the ids, which are the slots there), so the ids
 * stay 0..count-1 and the dump lists every ball once. */
static int settle_after_sort_keeps_ids(void)
{
    bp_params p = bp_params_default();
    p.width = p.height = 200.0f;
    bp_world *w = bp_world_create(&p);
    ENSURE(w != NULL);
    ENSURE(bp_world_add_swarm(w, 100.0f, 150.0f, 300, 3.0f, 45.0f, 0.0f, 0.0f, 3, NULL, 0) ==
           300);
    ENSURE(bp_world_sort_by_place(w, NULL, 0) == 0 && w->id != NULL);
    uint32_t before = w->count;
    for (uint32_t k = 0; k < 1000; k++)
        ENSURE(bp_world_add_ball(w, 20.0f + (float)(k % 40) * 4.0f, 20.0f + (float)(k / 40) * 6.0f,
                                 (float)k, 0.0f, 4.0f, 0.0f, NULL, 0) == before + k);
    char err[256];
    int64_t crowded = bp_world_settle(w, before, 1, err, sizeof err);
    printf("no room for %lld of 1000 after a sort: taken out\n", (long long)crowded);
    ENSURE(crowded > 0 && crowded < 1000);
    ENSURE(w->count == before + 1000 - crowded);
    ENSURE(ids_are_permutation(w));
    /* the new balls kept their order (their vx is their draw number) */
    for (uint32_t i = before + 1u; i < w->count; i++)
        ENSURE(w->vx[i] > w->vx[i - 1] && w->id[i] == i);
    size_t len;
    char *text = dump(w, &len);
    ENSURE(text != NULL);
    free(text);
    bp_world_destroy(w);
    return 0;
}

/* n balls of radius 1 in one swarm in a 4000 x 3000 box, or NULL. */
static bp_world *large_swarm(uint32_t n)
{
    bp_params p = bp_params_default();
    p.width = 4000.0f;
    p.height = 3000.0f;
    bp_world *w = bp_world_create(&p);
    if (w && bp_world_add_swarm(w, 2000.0f, 1500.0f, n, 1.0f, 1400.0f, 30.0f, -20.0f, 11, NULL,
                                0) != (int64_t)n) {
        bp_world_destroy(w);
        w = NULL;
    }
    return w;
}

/* A world of 300,000 balls, so bp_world_apply_order moves its arrays on
 * all threads (order.c, BP_ORDER_PAR_MIN): every slot after the sort
 * holds the ball its id names, all seven arrays alike. */
static int large_sort_moves_every_array(void)
{
    bp_world *w = large_swarm(300000);
    ENSURE(w != NULL);
    for (uint32_t i = 0; i < w->count; i++) {
        w->m[i] = (float)i; /* the mass names the ball: a check on m and id together */
        w->vx[i] = (float)(i % 1009u); /* the swarm's velocity is one for all */
        w->vy[i] = -(float)(i % 1013u);
        w->r[i] = 1.0f + (float)(i % 7u) * 0.125f;
        w->contacts[i] = (uint8_t)(i * 13u);
    }
    bp_world *o = bp_world_clone(w);
    ENSURE(o != NULL);
    ENSURE(bp_world_sort_by_place(w, NULL, 0) == 0);
    ENSURE(w->id != NULL && ids_are_permutation(w));
    uint32_t moved = 0;
    for (uint32_t k = 0; k < w->count; k++) {
        uint32_t id = w->id[k];
        moved += id != k;
        ENSURE(w->m[k] == (float)id && w->r[k] == o->r[id]);
        ENSURE(w->x[k] == o->x[id] && w->y[k] == o->y[id]);
        ENSURE(w->vx[k] == o->vx[id] && w->vy[k] == o->vy[id]);
        ENSURE(w->contacts[k] == o->contacts[id]);
    }
    ENSURE(moved > w->count / 2); /* a swarm's draws are in no order by place */
    bp_world_destroy(o);
    bp_world_destroy(w);
    return 0;
}

/* The re-sort done by the engine under test (the OpenCL engine moves its
 * own copy of the balls by an order it works out on the device:
 * engine_ocl.c, ocl_reorder) against the CPU engine on one thread, which
 * reads, sorts and attaches: after 1,100 sub-steps, across the re-sorts
 * before 0, 128, ..., 1,024, the same slots, ids and bits. A ball gathered
 * to the wrong slot, or a radius or mass left behind, changes them. var
 * (NULL: none) is set to val while the engine is made. */
static int resort_against_cpu(const char *var, const char *val)
{
    bp_world *a = two_swarms();
    ENSURE(a != NULL);
    bp_world *c = bp_world_clone(a);
    ENSURE(c != NULL);
    if (var)
        ENSURE(setenv(var, val, 1) == 0);
    bp_engine *ea = sorting_engine(a, 1);
    if (var)
        unsetenv(var);
    if (!ea) {
        bp_world_destroy(a);
        bp_world_destroy(c);
        return BP_TEST_SKIP;
    }
    char err[512];
    bp_engine_opts co = {.threads = 1, .sort_by_place = 1};
    bp_engine *ec = bp_engine_create(BP_BACKEND_CPU, &co, err, sizeof err);
    ENSURE(ec != NULL && bp_engine_attach(ec, c, err, sizeof err) == 0);
    ENSURE(test_step(ea, a, 1100) == 0 && test_step(ec, c, 1100) == 0);
    ENSURE(a->id && c->id && a->count == c->count);
    size_t n = a->count * sizeof(float);
    ENSURE(memcmp(a->id, c->id, a->count * sizeof *a->id) == 0);
    ENSURE(memcmp(a->r, c->r, n) == 0 && memcmp(a->m, c->m, n) == 0);
    ENSURE(memcmp(a->x, c->x, n) == 0 && memcmp(a->y, c->y, n) == 0);
    ENSURE(memcmp(a->vx, c->vx, n) == 0 && memcmp(a->vy, c->vy, n) == 0);
    ENSURE(memcmp(a->contacts, c->contacts, a->count) == 0);
    bp_engine_destroy(ea);
    bp_engine_destroy(ec);
    bp_world_destroy(a);
    bp_world_destroy(c);
    return 0;
}

/* When the re-sorts come (bp_order_every): a world below BP_ORDER_LARGE
 * balls, however small, before sub-steps 0 and 128, unless
 * BALLPIT_SORT_EVERY says otherwise when the engine is made; a larger one
 * (the GPU's) not at 128 nor 256, but before 512 (BP_ORDER_EVERY_LARGE).
 * A world that was never sorted has no ids, so w->id says whether a
 * re-sort came. */
static int resort_schedule_by_size(void)
{
    bp_world *t = bp_world_create(NULL);
    ENSURE(t != NULL);
    ENSURE(bp_world_add_swarm(t, 400.0f, 300.0f, 40, 2.0f, 60.0f, 0.0f, 0.0f, 3, NULL, 0) ==
           40);
    bp_engine *et = sorting_engine(t, 1);
    if (!et) {
        bp_world_destroy(t);
        return BP_TEST_SKIP;
    }
    ENSURE(test_step(et, t, 1) == 0 && t->id != NULL && ids_are_permutation(t));
    bp_engine_destroy(et);
    bp_world_destroy(t);

    for (int every = 0; every < 2; every++) {
        bp_world *s = two_swarms();
        ENSURE(s != NULL);
        s->substeps_done = 127;
        if (every)
            ENSURE(setenv("BALLPIT_SORT_EVERY", "1024", 1) == 0);
        bp_engine *es = sorting_engine(s, 1);
        unsetenv("BALLPIT_SORT_EVERY");
        if (!es) {
            bp_world_destroy(s);
            return BP_TEST_SKIP;
        }
        ENSURE(s->id == NULL && test_step(es, s, 2) == 0 && s->substeps_done == 129);
        ENSURE(every ? s->id == NULL : s->id != NULL);
        bp_engine_destroy(es);
        bp_world_destroy(s);
    }

    bp_world *w = large_swarm(BP_ORDER_LARGE);
    ENSURE(w != NULL);
    w->substeps_done = 127;
    bp_engine *ew = sorting_engine(w, 1);
    ENSURE(ew != NULL);
    ENSURE(test_step(ew, w, 2) == 0 && w->id == NULL); /* not at 128 */
    char err[512];
    w->substeps_done = 255;
    ENSURE(bp_engine_attach(ew, w, err, sizeof err) == 0);
    ENSURE(test_step(ew, w, 2) == 0 && w->id == NULL); /* nor at 256 */
    w->substeps_done = 511;
    ENSURE(bp_engine_attach(ew, w, err, sizeof err) == 0);
    ENSURE(test_step(ew, w, 2) == 0 && w->id != NULL); /* at 512 */
    ENSURE(ids_are_permutation(w));
    bp_engine_destroy(ew);
    bp_world_destroy(w);
    return 0;
}

/* The phase times of a call that a re-sort cuts in two are the whole
 * call's (the bench adds them up per frame): from sub-step 8, 128
 * sub-steps are 120, the re-sort, then 8. Times measured inside the step
 * add up to most of its wall time; the last part alone, as they once
 * were, would be about 8 of the 128 sub-steps. */
static int phase_times_whole_call(void)
{
    bp_world *w = two_swarms();
    ENSURE(w != NULL);
    w->substeps_done = 8;
    bp_engine *e = sorting_engine(w, 1);
    if (!e) {
        bp_world_destroy(w);
        return BP_TEST_SKIP;
    }
    ENSURE(test_step(e, w, 1) == 0); /* the first step's set-up out of the timing */
    char err[512];
    double best = 0.0;
    for (int round = 0; round < 3 && best < 0.8; round++) {
        w->substeps_done = 8;
        double t0 = bp_now();
        ENSURE(bp_engine_step(e, w, 128, err, sizeof err) == 0);
        double wall = bp_now() - t0;
        ENSURE(w->id != NULL && w->substeps_done == 136);
        bp_phase_times t;
        bp_engine_phase_times(e, &t);
        double sum = t.integrate + t.grid + t.ball_contacts + t.static_contacts;
        printf("phases %.2f ms of the call's %.2f ms\n", sum * 1e3, wall * 1e3);
        ENSURE(sum <= wall * 1.01 + 1e-4);
        best = sum / wall > best ? sum / wall : best;
    }
    ENSURE(best >= 0.8);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

/* The CPU engine's pass 1 phase is the first sub-step's pass 1 and every
 * later one's, which runs fused into the sub-step before's pass 5 and
 * which thread 0 clocks block by block in every sub-step, its time moved
 * from the static phase to pass 1's. So on one thread a call of 30
 * sub-steps reports many times a call of one's pass 1 (about 30 times;
 * the fused ones left out, about once). On two threads a call's first
 * pass 1 also holds the second thread's start (0.01-0.05 ms in a CI run,
 * where the fused ones came to 0.2), so there only: every phase > 0 (pass
 * 5 moves the balls, so the fused time never takes all of it), and the
 * phases add up to no more than the call's time, as on one. Medians of 5
 * calls. */
static int cpu_pass1_phase_every_substep(void)
{
    if (test_backend() != BP_BACKEND_CPU)
        return BP_TEST_SKIP;
    for (int threads = 1; threads <= 2; threads++) {
        bp_world *w = large_swarm(20000);
        ENSURE(w != NULL);
        bp_engine *e = test_engine(w, threads);
        ENSURE(e != NULL);
        ENSURE(test_step(e, w, 30) == 0);
        char err[512];
        double one[5], many[5];
        for (int k = 0; k < 5; k++) {
            bp_phase_times t;
            ENSURE(bp_engine_step(e, w, 1, err, sizeof err) == 0);
            bp_engine_phase_times(e, &t);
            one[k] = t.integrate;
            double t0 = bp_now();
            ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == 0);
            double wall = bp_now() - t0;
            bp_engine_phase_times(e, &t);
            many[k] = t.integrate;
            ENSURE(t.integrate > 0 && t.grid > 0 && t.ball_contacts > 0 && t.static_contacts > 0);
            ENSURE(t.integrate + t.grid + t.ball_contacts + t.static_contacts <= wall * 1.01 + 1e-4);
        }
        qsort(one, 5, sizeof one[0], bp_cmp_double);
        qsort(many, 5, sizeof many[0], bp_cmp_double);
        printf("  %d thread(s): pass 1 %.3f ms in a call of 1 sub-step, %.3f ms in 30\n", threads,
               one[2] * 1e3, many[2] * 1e3);
        if (threads == 1)
            ENSURE(many[2] >= 8.0 * one[2]);
        bp_engine_destroy(e);
        bp_world_destroy(w);
    }
    return 0;
}

/* On a CPU device (PoCL) the OpenCL engine's order comes from one
 * work-item's counting sort (bp_k_order_serial); a cell or a tie between
 * two balls of a cell taken otherwise than bp_order_from takes it changes
 * the slots (checked: the kernel's cell from a grid 1% finer fails). */
static int resort_same_bits_as_cpu(void)
{
    return resort_against_cpu(NULL, NULL);
}

/* resort_against_cpu with the OpenCL engine's setting var=val; the CPU
 * backend's run has no such path: skipped. */
static int opencl_resort_against_cpu(const char *var, const char *val)
{
    const char *b = getenv("BALLPIT_BACKEND");
    if (!b || strcmp(b, "opencl") != 0)
        return BP_TEST_SKIP;
    return resort_against_cpu(var, val);
}

/* The same with the OpenCL engine's parallel grid build, as on GPUs: the
 * re-sort's order then comes from bp_k_order_cell and that build on the
 * order's grid. */
static int device_order_same_bits_as_cpu(void)
{
    return opencl_resort_against_cpu("BALLPIT_OCL_GRID", "parallel");
}

/* The same with the order worked out by the host from the positions read
 * back (BALLPIT_OCL_SORT=host, bp_order_from), the device gathering by the
 * order written over. */
static int host_order_same_bits_as_cpu(void)
{
    return opencl_resort_against_cpu("BALLPIT_OCL_SORT", "host");
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(sort_moves_balls_only),
        BP_TEST(sorted_runs_any_chunking),
        BP_TEST(settle_after_sort_keeps_ids),
        BP_TEST(resort_same_bits_as_cpu),
        BP_TEST(device_order_same_bits_as_cpu),
        BP_TEST(host_order_same_bits_as_cpu),
        BP_TEST(large_sort_moves_every_array),
        BP_TEST(resort_schedule_by_size),
        BP_TEST(phase_times_whole_call),
        BP_TEST(cpu_pass1_phase_every_substep),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

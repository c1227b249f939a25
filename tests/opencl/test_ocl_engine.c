/* test_ocl_engine.c - the OpenCL engine on one device: determinism, engine
 * switching, and falling back to the CPU with the world intact when the
 * OpenCL engine fails (faults injected with BALLPIT_OCL_FAIL, ocl_api.h).
 *
 * Skips (exit 77) when no OpenCL device is usable.
 */
#define _GNU_SOURCE 1 /* setenv/unsetenv are POSIX; meson adds the feature macros */
#include "ocl_test_util.h"

#include "bp_util.h"

#include <unistd.h>

/* The dump CSV of w as a string (malloc'ed), for byte comparisons. */
static char *dump_csv(const bp_world *w, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    int rc = bp_world_write_csv(w, f);
    if (fclose(f) != 0 || rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Two OpenCL runs of the same world: identical dump bytes. The grid build
 * uses atomics, whose order varies from run to run; the per-cell sort
 * must make that invisible. */
static int two_runs_same_bytes(void)
{
    bp_world *w = t_world_pile(700);
    ENSURE(w != NULL);
    bp_world *a = t_run_clone(BP_BACKEND_OPENCL, w, 20);
    bp_world *b = t_run_clone(BP_BACKEND_OPENCL, w, 20);
    ENSURE(a != NULL && b != NULL);
    size_t la = 0, lb = 0;
    char *da = dump_csv(a, &la), *db = dump_csv(b, &lb);
    ENSURE(da != NULL && db != NULL);
    ENSURE(la > 1000);
    ENSURE(la == lb && memcmp(da, db, la) == 0);
    ENSURE(t_same_bits(a, b));
    ENSURE(t_compare(w, a).pos > 1.0); /* it did move */
    free(da);
    free(db);
    bp_world_destroy(a);
    bp_world_destroy(b);
    bp_world_destroy(w);
    return 0;
}

static int determinism_two_runs(void)
{
    bp_engine *probe = t_ocl_engine_or_skip();
    if (!probe)
        return BP_TEST_SKIP;
    bp_engine_destroy(probe);
    return two_runs_same_bytes();
}

/* The same with the parallel grid build, where the atomics really do hand
 * out slots in a different order from run to run. */
static int determinism_parallel_grid(void)
{
    bp_engine *probe = t_ocl_engine_or_skip();
    if (!probe)
        return BP_TEST_SKIP;
    bp_engine_destroy(probe);
    ENSURE(setenv("BALLPIT_OCL_GRID", "parallel", 1) == 0);
    int rc = two_runs_same_bytes();
    unsetenv("BALLPIT_OCL_GRID");
    return rc;
}

/* Sets (set = 1) or unsets the settings env: NAME, VALUE pairs ended by
 * NULL. Returns 0, or -1 when one cannot be set. */
static int t_env(const char *const *env, int set)
{
    for (int v = 0; env[v]; v += 2)
        if (set ? setenv(env[v], env[v + 1], 1) : unsetenv(env[v]))
            return -1;
    return 0;
}

/* An OpenCL engine created under the settings env (NAME, VALUE pairs
 * ended by NULL, unset after): 1 when it was refused, with the one-line
 * reason in err (printed), 0 when it started (and was destroyed), -1 when
 * a setting could not be set. */
static int t_refused(const char *const *env, char *err, size_t errlen)
{
    if (t_env(env, 1) != 0)
        return -1;
    bp_engine *e = bp_engine_create(BP_BACKEND_OPENCL, NULL, err, errlen);
    if (t_env(env, 0) != 0)
        return -1;
    if (e) {
        bp_engine_destroy(e);
        return 0;
    }
    printf("  refused: %s\n", err);
    return strchr(err, '\n') == NULL ? 1 : -1;
}

/* A rain (1,500 balls, or `rain` where more balls than grid cells are
 * wanted), a pile (700) and a mixed world (600), 15 frames on the OpenCL
 * engine under each set of settings in turn (NAME, VALUE pairs, ended by
 * NULL; each set's variables are unset after its run): every run ends in
 * the bits of the first, which must have moved. Impacts, deep overlaps
 * and springs. */
#define T_SET_MAX 11
static int same_bits_on_worlds(const char *const sets[][T_SET_MAX], size_t nsets,
                               bp_world *const *worlds, int nworlds, uint32_t frames)
{
    for (int k = 0; k < nworlds; k++) {
        bp_world *w = worlds[k], *first = NULL;
        ENSURE(w != NULL);
        for (size_t i = 0; i < nsets; i++) {
            ENSURE(t_env(sets[i], 1) == 0);
            bp_world *b = t_run_clone(BP_BACKEND_OPENCL, w, frames);
            ENSURE(t_env(sets[i], 0) == 0);
            ENSURE(b != NULL);
            if (!first) {
                ENSURE(t_compare(w, b).pos > 1.0); /* it did move */
                first = b;
                continue;
            }
            if (!t_same_bits(first, b)) {
                fprintf(stderr, "world %d, setting %zu: not the first setting's bits\n", k, i);
                return 1;
            }
            bp_world_destroy(b);
        }
        bp_world_destroy(first);
        bp_world_destroy(w);
    }
    return 0;
}

static int same_bits_across_settings(const char *const sets[][T_SET_MAX], size_t nsets,
                                     uint32_t rain)
{
    bp_engine *probe = t_ocl_engine_or_skip();
    if (!probe)
        return BP_TEST_SKIP;
    bp_engine_destroy(probe);
    bp_world *worlds[3] = {t_world_rain(rain), t_world_pile(700), t_world_mixed(600)};
    return same_bits_on_worlds(sets, nsets, worlds, 3, 15);
}

/* The contact pass in 4, 8 and 16 SIMD lanes (BALLPIT_OCL_LANES; 4 or 8 unless
 * asked) gives the same bits: every lane does the scalar operations and
 * the lanes are summed in neighbour order. (bp_k_steps runs passes 1 and
 * 3-5 on blocks of balls, the separate kernels one ball at a time: every
 * width of both.) And the portable OpenCL C of the lanes' mask and
 * compress, which GPUs run, gives the bits of the AVX2 builtins PoCL on
 * AVX2 takes instead (BALLPIT_OCL_PORTABLE). */
static int lanes_same_bits(void)
{
    static const char *const sets[][T_SET_MAX] = {
        {"BALLPIT_OCL_LANES", "4", NULL},
        {"BALLPIT_OCL_LANES", "8", NULL},
        {"BALLPIT_OCL_LANES", "16", NULL},
        {"BALLPIT_OCL_LANES", "8", "BALLPIT_OCL_PORTABLE", "1", NULL},
        {"BALLPIT_OCL_LANES", "16", "BALLPIT_OCL_PORTABLE", "1", NULL},
    };
    return same_bits_across_settings(sets, sizeof sets / sizeof *sets, 1500);
}

/* 1 when the device named is a CPU in --list-devices' list, 0 when it is
 * another type, -1 when it is not in the list. */
static int t_ocl_is_cpu(const char *name)
{
    char err[512], *text = NULL, line[600];
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return -1;
    int n = bp_opencl_list_devices(f, err, sizeof err);
    fclose(f);
    int found = -1;
    if (n > 0) {
        snprintf(line, sizeof line, " / %s (", name);
        const char *at = strstr(text, line);
        if (at)
            found = strncmp(at + strlen(line), "CPU)", 4) == 0;
    }
    free(text);
    return found;
}

/* Whether the tests' OpenCL device is a CPU, as t_ocl_is_cpu; -2 where
 * there is none (the test skips). */
static int t_device_is_cpu(void)
{
    bp_engine *probe = t_ocl_engine_or_skip();
    if (!probe)
        return -2;
    int cpu = t_ocl_is_cpu(bp_engine_device(probe));
    bp_engine_destroy(probe);
    return cpu;
}

/* The host cores a step keeps busy (what the sandbox's drawing leaves
 * alone): the CPU engine's threads; an OpenCL CPU device's compute units,
 * no more than the host's processors; none on a GPU. */
static int host_cores_reported(void)
{
    char err[512];
    bp_engine_opts three = {.threads = 3};
    bp_engine *c = bp_engine_create(BP_BACKEND_CPU, &three, err, sizeof err);
    ENSURE(c != NULL);
    ENSURE(bp_engine_host_cores(c) == bp_engine_threads(c));
    bp_engine_destroy(c);
    bp_engine *e = t_ocl_engine_or_skip();
    if (!e)
        return BP_TEST_SKIP;
    int cpu = t_ocl_is_cpu(bp_engine_device(e));
    long procs = sysconf(_SC_NPROCESSORS_ONLN);
    int hc = bp_engine_host_cores(e);
    printf("  %s: %s device, %d host cores of %ld\n", bp_engine_device(e),
           cpu == 1 ? "a CPU" : cpu == 0 ? "not a CPU" : "an unlisted", hc, procs);
    ENSURE(cpu >= 0);
    if (cpu)
        ENSURE(hc >= 1 && hc <= procs);
    else
        ENSURE(hc == 0);
    bp_engine_destroy(e);
    return 0;
}

/* On a device that is not a CPU (a GPU) the one-launch step is refused,
 * with the reason: seen on an NVIDIA H100, groups that wait for each other
 * there read stale data, as OpenCL 1.2 allows, and the bits changed. */
static int spin_refused_off_cpu(void)
{
    char err[512];
    static const char *const spin[] = {"BALLPIT_OCL_SYNC", "spin", NULL};
    ENSURE(t_refused(spin, err, sizeof err) == 1);
    ENSURE(strstr(err, "BALLPIT_OCL_SYNC=spin needs a CPU device") != NULL);
    return 0;
}

/* Steps by bp_k_steps, whose work-groups wait for each other by spinning
 * (the default on CPU devices), give the bits of the separate kernels
 * (BALLPIT_OCL_SYNC=kernels): with 1 and 2 groups; with 2 groups that wait
 * for each other 1 turn (BALLPIT_OCL_PATIENCE), so that nearly every
 * launch ends at its first barrier and the next one takes over; with 2
 * groups where group 0 arrives last at every barrier and then lingers
 * 2^21 turns (BALLPIT_OCL_LAG) while group 1 goes on and, after 2^18
 * turns, ends the launch at the next barrier, which group 0 must still
 * reach, having done its part of the pass between (after the move pass:
 * the grid count); with 2 groups whose contact pass evaluates each pair
 * for each of its balls (BALLPIT_OCL_PAIRS=twice) instead of once per
 * pair in ranges of slots cut by the groups' times; and with
 * 5, more than PoCL has threads, where the groups cannot all start, every
 * launch is called off and one group runs the sub-step; and with the
 * steps' launches of 2 groups and of 1 in turn (BALLPIT_OCL_TEAM=alternate,
 * as the engine's pick by time may run them); and with 2 groups that take
 * their parts by their indices (BALLPIT_OCL_ROLES=0) instead of by the
 * processors they run on. Every step after
 * the first runs by bp_k_steps. On a device that is not a CPU, where
 * bp_k_steps may not run, the refusal is checked instead. */
static int one_launch_same_bits(void)
{
    int cpu = t_device_is_cpu();
    if (cpu == -2)
        return BP_TEST_SKIP;
    ENSURE(cpu >= 0);
    if (!cpu)
        return spin_refused_off_cpu();
#define T_SPIN(groups) "BALLPIT_OCL_SYNC", "spin", "BALLPIT_OCL_GROUPS", groups
    static const char *const sets[][T_SET_MAX] = {
        {"BALLPIT_OCL_SYNC", "kernels", NULL},
        {T_SPIN("1"), NULL},
        {T_SPIN("2"), NULL},
        {T_SPIN("2"), "BALLPIT_OCL_PATIENCE", "1", NULL},
        {T_SPIN("2"), "BALLPIT_OCL_PATIENCE", "262144", "BALLPIT_OCL_LAG", "2097152", NULL},
        {T_SPIN("2"), "BALLPIT_OCL_PAIRS", "twice", NULL},
        {T_SPIN("5"), NULL},
        {T_SPIN("2"), "BALLPIT_OCL_TEAM", "alternate", NULL},
        {T_SPIN("2"), "BALLPIT_OCL_ROLES", "0", NULL},
        {T_SPIN("2"), "BALLPIT_OCL_FAIL", "clock", NULL},
    };
#undef T_SPIN
    /* the rain with 2,200 balls, more than the grid's cells (at most
     * 2,048: bp_step_setup), as in the bench's worlds: the grid's parts
     * then each hold more balls than a count array has cells */
    return same_bits_across_settings(sets, sizeof sets / sizeof *sets, 2200);
}

/* bp_k_steps' counters in fine-grained shared virtual memory
 * (BALLPIT_OCL_COUNTERS=svm, the default where the device has it), which
 * the host reads and clears after each launch's wait, or in a buffer read
 * and cleared by commands (commands) give the separate kernels' bits: with
 * 2 groups, with launches that stop at nearly every barrier
 * (BALLPIT_OCL_PATIENCE=1) or where group 0 lingers (BALLPIT_OCL_LAG), and
 * with 5 groups, whose launches are called off. A value out of place is
 * refused in one line, and so is svm where the steps run as separate
 * kernels; svm asked for on a CPU device is taken, or refused with the
 * reason (no fine-grained SVM, no clSVMAlloc), and its runs are left out
 * then. */
static int counters_svm_or_commands(void)
{
    int cpu = t_device_is_cpu();
    if (cpu == -2)
        return BP_TEST_SKIP;
    ENSURE(cpu >= 0);
    char err[512];
    static const char *const bogus[] = {"BALLPIT_OCL_COUNTERS", "host", NULL};
    ENSURE(t_refused(bogus, err, sizeof err) == 1);
    ENSURE(strstr(err, "BALLPIT_OCL_COUNTERS=host is not auto, svm or commands") != NULL);
    static const char *const kernels[] = {"BALLPIT_OCL_SYNC", "kernels", "BALLPIT_OCL_COUNTERS",
                                          "svm", NULL};
    ENSURE(t_refused(kernels, err, sizeof err) == 1);
    ENSURE(strstr(err, "BALLPIT_OCL_COUNTERS=svm needs bp_k_steps") != NULL);
    ENSURE(strstr(err, "runs separate kernels") != NULL);
    if (!cpu)
        return 0; /* bp_k_steps runs on CPU devices only */
#define T_SPIN(groups) "BALLPIT_OCL_SYNC", "spin", "BALLPIT_OCL_GROUPS", groups
#define T_LAG "BALLPIT_OCL_PATIENCE", "262144", "BALLPIT_OCL_LAG", "2097152"
    static const char *const svm[] = {T_SPIN("2"), "BALLPIT_OCL_COUNTERS", "svm", NULL};
    const int refused = t_refused(svm, err, sizeof err);
    ENSURE(refused >= 0);
    if (refused)
        ENSURE(strstr(err, "fine-grained SVM") != NULL || strstr(err, "clSVMAlloc") != NULL);
    const int have_svm = !refused;
    static const char *const sets[][T_SET_MAX] = {
        {"BALLPIT_OCL_SYNC", "kernels", NULL},
        {T_SPIN("2"), "BALLPIT_OCL_COUNTERS", "commands", NULL},
        {T_SPIN("2"), "BALLPIT_OCL_PATIENCE", "1", "BALLPIT_OCL_COUNTERS", "commands", NULL},
        {T_SPIN("2"), T_LAG, "BALLPIT_OCL_COUNTERS", "commands", NULL},
        {T_SPIN("5"), "BALLPIT_OCL_COUNTERS", "commands", NULL},
        /* with svm */
        {T_SPIN("2"), "BALLPIT_OCL_COUNTERS", "svm", NULL},
        {T_SPIN("2"), "BALLPIT_OCL_PATIENCE", "1", "BALLPIT_OCL_COUNTERS", "svm", NULL},
        {T_SPIN("2"), T_LAG, "BALLPIT_OCL_COUNTERS", "svm", NULL},
        {T_SPIN("5"), "BALLPIT_OCL_COUNTERS", "svm", NULL},
    };
#undef T_LAG
#undef T_SPIN
    const size_t nsets = sizeof sets / sizeof *sets;
    return same_bits_across_settings(sets, have_svm ? nsets : nsets - 4, 2200);
}

/* bp_k_steps merges each sub-step's grid from the last one's (but the
 * step's first) and counts it anew where too many balls changed cell:
 * a gas of 900 balls at up to 2,400 px/s, where a fifth of the balls or
 * more change cell every sub-step, gives the separate kernels' bits with
 * the merge on (it refuses and counts, by one group), off, forced, and
 * with the launches stopped at nearly every barrier (the merge's passes
 * begun again in the next launch); and so does the rain, where it
 * merges. BALLPIT_OCL_MERGE=sometimes is refused. */
static int merge_or_count_same_bits(void)
{
    int cpu = t_device_is_cpu();
    if (cpu == -2)
        return BP_TEST_SKIP;
    ENSURE(cpu >= 0);
    /* a value out of place is refused in one line */
    char err[512];
    static const char *const sometimes[] = {"BALLPIT_OCL_MERGE", "sometimes", NULL};
    ENSURE(t_refused(sometimes, err, sizeof err) == 1);
    ENSURE(strstr(err, "BALLPIT_OCL_MERGE=sometimes is not auto, merge or count"));
    if (!cpu)
        return BP_TEST_SKIP; /* bp_k_steps runs on CPU devices only */
#define T_SPIN(groups) "BALLPIT_OCL_SYNC", "spin", "BALLPIT_OCL_GROUPS", groups
    static const char *const sets[][T_SET_MAX] = {
        {"BALLPIT_OCL_SYNC", "kernels", NULL},
        {T_SPIN("2"), NULL},
        {T_SPIN("2"), "BALLPIT_OCL_MERGE", "count", NULL},
        {T_SPIN("2"), "BALLPIT_OCL_MERGE", "merge", NULL},
        {T_SPIN("1"), "BALLPIT_OCL_MERGE", "merge", NULL},
        {T_SPIN("3"), "BALLPIT_OCL_MERGE", "merge", NULL},
        {T_SPIN("2"), "BALLPIT_OCL_MERGE", "merge", "BALLPIT_OCL_PATIENCE", "1", NULL},
    };
#undef T_SPIN
    bp_world *gas = t_world_gas(900);
    ENSURE(gas != NULL);
    for (uint32_t i = 0; i < gas->count; i++) {
        gas->vx[i] *= 12.0f;
        gas->vy[i] *= 12.0f;
    }
    bp_world *worlds[2] = {gas, t_world_rain(1200)};
    return same_bits_on_worlds(sets, sizeof sets / sizeof *sets, worlds, 2, 4);
}

/* One step split in many calls gives the same state as one call: the
 * engine keeps its state on the device between calls, nothing is lost. */
static int steps_split_same_as_whole(void)
{
    char err[512];
    bp_engine *e1 = t_ocl_engine_or_skip();
    if (!e1)
        return BP_TEST_SKIP;
    bp_engine *e2 = bp_engine_create(BP_BACKEND_OPENCL, NULL, err, sizeof err);
    ENSURE(e2 != NULL);
    bp_world *a = t_world_rain(800), *b = bp_world_clone(a);
    ENSURE(a != NULL && b != NULL);
    ENSURE(bp_engine_attach(e1, a, err, sizeof err) == 0);
    ENSURE(bp_engine_attach(e2, b, err, sizeof err) == 0);
    ENSURE(bp_engine_step(e1, a, 60, err, sizeof err) == 0);
    for (int k = 0; k < 60; k += 7)
        ENSURE(bp_engine_step(e2, b, k + 7 <= 60 ? 7 : 60 - (uint32_t)k, err, sizeof err) == 0);
    ENSURE(bp_engine_read(e1, a, err, sizeof err) == 0);
    ENSURE(bp_engine_read(e2, b, err, sizeof err) == 0);
    ENSURE(a->substeps_done == 60 && b->substeps_done == 60 && a->frames == 2);
    ENSURE(t_same_bits(a, b));
    bp_phase_times T;
    bp_engine_phase_times(e1, &T);
    ENSURE(T.integrate > 0 && T.grid > 0 && T.ball_contacts > 0 && T.static_contacts > 0);
    ENSURE(T.readback > 0);
    bp_engine_destroy(e1);
    bp_engine_destroy(e2);
    bp_world_destroy(a);
    bp_world_destroy(b);
    return 0;
}

/* The phase times of steps by bp_k_steps are clocked in the kernel (its
 * group 0 reads the time stamp counter between its passes) where it runs
 * on an x86 CPU with AVX2, PoCL's here: each step's breakdown is then its
 * own, so the ball contacts' share of the step moves from step to step,
 * where shares carried over from the first, separately timed step (the
 * way on other devices) would keep it fixed. Every phase is > 0 and they
 * add up to no more than the step's time. 2,200 balls, so no re-sort by
 * place adds the host's time to a step's grid phase. With `wrapped` the
 * counter runs backwards (BALLPIT_OCL_FAIL=clock), so every difference
 * of it wraps: those count as none, and the steps take the timed step's
 * shares, the same in every step, where the wrapped differences had
 * added garbage to the phases. */
static int phases_of_team_steps(int wrapped)
{
#if defined(__x86_64__) || defined(__i386__)
    int cpu = t_device_is_cpu();
    if (cpu == -2)
        return BP_TEST_SKIP;
    ENSURE(cpu >= 0);
    if (!cpu || !__builtin_cpu_supports("avx2"))
        return BP_TEST_SKIP;
    char err[512];
    static const char *const env[] = {"BALLPIT_OCL_FAIL", "clock", NULL};
    ENSURE(!wrapped || t_env(env, 1) == 0);
    bp_engine *e = t_ocl_engine_or_skip();
    if (wrapped)
        t_env(env, 0);
    ENSURE(e != NULL);
    bp_world *w = t_world_rain(2200);
    ENSURE(w != NULL);
    ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
    ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == 0); /* the timed step */
    double lo = 1.0, hi = 0.0;
    for (int k = 0; k < 8; k++) {
        double t0 = bp_now();
        ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == 0);
        double wall = bp_now() - t0;
        bp_phase_times T;
        bp_engine_phase_times(e, &T);
        double sum = T.integrate + T.grid + T.ball_contacts + T.static_contacts;
        ENSURE(T.integrate > 0 && T.grid > 0 && T.ball_contacts > 0 && T.static_contacts > 0);
        ENSURE(sum <= wall);
        double share = T.ball_contacts / sum;
        lo = share < lo ? share : lo;
        hi = share > hi ? share : hi;
    }
    printf("  the ball contacts' share of 8 steps: %.4f to %.4f\n", lo, hi);
    ENSURE(wrapped ? hi - lo < 1e-9 : hi - lo > 1e-6);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
#else
    (void)wrapped;
    return BP_TEST_SKIP;
#endif
}

static int team_phases_clocked(void)
{
    return phases_of_team_steps(0);
}

static int team_clock_wrapped(void)
{
    return phases_of_team_steps(1);
}

/* bp_engine_switch CPU <-> OpenCL 100 times, 3 sub-steps on each engine in
 * between: after every switch the world is bit for bit what the old engine
 * had (nothing lost or changed), and at the end the run agrees with a run
 * that never switched within the 10-frame parity tolerance. */
static int switch_100_times(void)
{
    char err[512];
    bp_engine *probe = t_ocl_engine_or_skip();
    if (!probe)
        return BP_TEST_SKIP;
    bp_engine_destroy(probe);
    bp_world *w = t_world_pile(500);
    ENSURE(w != NULL);
    bp_world *ref = bp_world_clone(w);
    ENSURE(ref != NULL);
    bp_engine *e = bp_engine_create(BP_BACKEND_CPU, NULL, err, sizeof err);
    ENSURE(e != NULL);
    ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
    bp_world *before = bp_world_clone(w);
    ENSURE(before != NULL);
    uint32_t n = w->count;
    for (int k = 0; k < 100; k++) {
        ENSURE(bp_engine_step(e, w, 3, err, sizeof err) == 0);
        ENSURE(bp_engine_read(e, w, err, sizeof err) == 0);
        ENSURE(bp_world_copy(before, w) == 0);
        bp_backend to = bp_engine_kind(e) == BP_BACKEND_CPU ? BP_BACKEND_OPENCL : BP_BACKEND_CPU;
        if (bp_engine_switch(&e, to, NULL, w, err, sizeof err)) {
            fprintf(stderr, "switch %d: %s\n", k, err);
            return 1;
        }
        ENSURE(bp_engine_kind(e) == to);
        ENSURE(bp_engine_read(e, w, err, sizeof err) == 0);
        ENSURE(w->count == n);
        ENSURE(t_same_bits(before, w));
    }
    ENSURE(bp_engine_kind(e) == BP_BACKEND_CPU); /* an even number of switches */
    /* The same 300 sub-steps without switching. */
    bp_engine *c = bp_engine_create(BP_BACKEND_CPU, NULL, err, sizeof err);
    ENSURE(c != NULL);
    ENSURE(bp_engine_attach(c, ref, err, sizeof err) == 0);
    ENSURE(bp_engine_step(c, ref, 300, err, sizeof err) == 0);
    t_diff d = t_compare(ref, w);
    printf("  after 100 switches: max |dpos| %.3g px, max |dvel| %.3g px/s against a run "
           "without switching, %u of %u identical\n", d.pos, d.vel, d.identical, n);
    ENSURE(d.pos <= 2e-2 && d.vel <= 0.5);
    ENSURE(w->substeps_done == 300);
    bp_engine_destroy(c);
    bp_engine_destroy(e);
    bp_world_destroy(before);
    bp_world_destroy(ref);
    bp_world_destroy(w);
    return 0;
}

/* BALLPIT_OCL_FAIL=step:3 (CL_OUT_OF_RESOURCES) or lost:3
 * (CL_DEVICE_NOT_AVAILABLE) on world w (taken), with the settings env
 * (NAME, VALUE pairs ended by NULL) for both engines: the third step fails
 * with a one-line reason naming the error; the world read back is the
 * state after step 2; the switch to the CPU takes it, and the run goes
 * on. */
static int fault_in_step_on(const char *spec, const char *code, bp_world *w,
                            const char *const *env)
{
    char err[512];
    ENSURE(w != NULL);
    ENSURE(t_env(env, 1) == 0);
    /* Reference: two good steps on a clean engine. */
    bp_world *good = bp_world_clone(w);
    bp_engine *r = bp_engine_create(BP_BACKEND_OPENCL, NULL, err, sizeof err);
    ENSURE(good != NULL && r != NULL);
    ENSURE(bp_engine_attach(r, good, err, sizeof err) == 0);
    ENSURE(bp_engine_step(r, good, 30, err, sizeof err) == 0);
    ENSURE(bp_engine_step(r, good, 30, err, sizeof err) == 0);
    ENSURE(bp_engine_read(r, good, err, sizeof err) == 0);
    bp_engine_destroy(r);

    ENSURE(setenv("BALLPIT_OCL_FAIL", spec, 1) == 0);
    bp_engine *e = bp_engine_create(BP_BACKEND_OPENCL, NULL, err, sizeof err);
    unsetenv("BALLPIT_OCL_FAIL");
    ENSURE(t_env(env, 0) == 0);
    ENSURE(e != NULL);
    ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
    ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == 0);
    ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == 0);
    err[0] = '\0';
    ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == -1);
    printf("  %s: step 3 failed: %s\n", spec, err);
    ENSURE(strstr(err, code) != NULL && strstr(err, "OpenCL") != NULL);
    ENSURE(strchr(err, '\n') == NULL);
    /* Later steps keep failing with the reason instead of running on. */
    ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == -1);
    ENSURE(strstr(err, code) != NULL);
    /* Fall back the way the sandbox does: switch to the CPU engine. */
    ENSURE(bp_engine_switch(&e, BP_BACKEND_CPU, NULL, w, err, sizeof err) == 0);
    ENSURE(bp_engine_kind(e) == BP_BACKEND_CPU);
    ENSURE(t_same_bits(good, w)); /* the state after step 2, intact */
    ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == 0);
    bp_stats s;
    bp_world_measure(w, &s);
    ENSURE(s.nonfinite == 0 && s.escaped == 0 && w->count == good->count);
    bp_engine_destroy(e);
    bp_world_destroy(good);
    bp_world_destroy(w);
    return 0;
}

static int fault_in_step(const char *spec, const char *code)
{
    bp_engine *probe = t_ocl_engine_or_skip();
    if (!probe)
        return BP_TEST_SKIP;
    bp_engine_destroy(probe);
    static const char *const none[] = {NULL};
    return fault_in_step_on(spec, code, t_world_gas(400), none);
}

static int fallback_step_out_of_resources(void)
{
    return fault_in_step("step:3", "CL_OUT_OF_RESOURCES");
}

static int fallback_step_device_lost(void)
{
    return fault_in_step("lost:3", "CL_DEVICE_NOT_AVAILABLE");
}

/* The same in one-launch steps (CPU devices), whose backup must hold the
 * state before pass 0's integration changes the velocities: on a pile
 * under gravity (the gas has none, so a backup taken after that
 * integration would pass there), with 2 groups, and with 2 groups that
 * wait for each other 1 turn, so that launches are called off and end at
 * barriers and the step is many launches. */
static int fallback_step_one_launch(void)
{
    int cpu = t_device_is_cpu();
    if (cpu == -2 || cpu == 0)
        return BP_TEST_SKIP; /* bp_k_steps runs on CPU devices only */
    ENSURE(cpu > 0);
    static const char *const two[] = {"BALLPIT_OCL_SYNC", "spin", "BALLPIT_OCL_GROUPS", "2",
                                      NULL};
    static const char *const impatient[] = {"BALLPIT_OCL_SYNC", "spin", "BALLPIT_OCL_GROUPS",
                                            "2", "BALLPIT_OCL_PATIENCE", "1", NULL};
    if (fault_in_step_on("step:3", "CL_OUT_OF_RESOURCES", t_world_pile(600), two))
        return 1;
    return fault_in_step_on("lost:3", "CL_DEVICE_NOT_AVAILABLE", t_world_pile(600), impatient);
}

/* A kernel build failure or a failed buffer allocation: switching from
 * the CPU to OpenCL fails with the reason, the CPU engine stays in charge
 * and the world is untouched. */
static int switch_refused(const char *spec, const char *what)
{
    char err[512];
    bp_engine *probe = t_ocl_engine_or_skip();
    if (!probe)
        return BP_TEST_SKIP;
    bp_engine_destroy(probe);
    bp_world *w = t_world_rain(600);
    ENSURE(w != NULL);
    bp_engine *e = bp_engine_create(BP_BACKEND_CPU, NULL, err, sizeof err);
    ENSURE(e != NULL);
    ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
    ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == 0);
    bp_world *before = bp_world_clone(w);
    ENSURE(before != NULL);
    bp_engine *old = e;
    ENSURE(setenv("BALLPIT_OCL_FAIL", spec, 1) == 0);
    err[0] = '\0';
    int rc = bp_engine_switch(&e, BP_BACKEND_OPENCL, NULL, w, err, sizeof err);
    unsetenv("BALLPIT_OCL_FAIL");
    printf("  %s: switch refused: %s\n", spec, err);
    ENSURE(rc == -1);
    ENSURE(e == old && bp_engine_kind(e) == BP_BACKEND_CPU);
    ENSURE(strstr(err, what) != NULL && strchr(err, '\n') == NULL);
    ENSURE(t_same_bits(before, w));
    ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == 0); /* still runs */
    bp_engine_destroy(e);
    bp_world_destroy(before);
    bp_world_destroy(w);
    return 0;
}

static int fallback_build_failure(void)
{
    return switch_refused("build", "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE");
}

static int fallback_alloc_failure(void)
{
    return switch_refused("alloc", "CL_MEM_OBJECT_ALLOCATION_FAILURE");
}

/* A typo in BALLPIT_OCL_FAIL is an error, not a silently fault-free run. */
static int fault_spec_checked(void)
{
    char err[512];
    if (!bp_opencl_built())
        return BP_TEST_SKIP;
    ENSURE(setenv("BALLPIT_OCL_FAIL", "step:x", 1) == 0);
    bp_engine *e = bp_engine_create(BP_BACKEND_OPENCL, NULL, err, sizeof err);
    unsetenv("BALLPIT_OCL_FAIL");
    ENSURE(e == NULL);
    ENSURE(strstr(err, "BALLPIT_OCL_FAIL") != NULL);
    return 0;
}

/* --device N out of range: a clear reason, no engine. */
static int device_index_checked(void)
{
    char err[512];
    bp_engine *probe = t_ocl_engine_or_skip();
    if (!probe)
        return BP_TEST_SKIP;
    bp_engine_destroy(probe);
    bp_engine_opts o = {.device = 999, .device_set = 1};
    bp_engine *e = bp_engine_create(BP_BACKEND_OPENCL, &o, err, sizeof err);
    ENSURE(e == NULL);
    ENSURE(strstr(err, "device 999") != NULL);
    o.device = 0;
    e = bp_engine_create(BP_BACKEND_OPENCL, &o, err, sizeof err);
    ENSURE(e != NULL);
    ENSURE(strcmp(bp_engine_name(e), "opencl") == 0 && bp_engine_device(e)[0] != '\0');
    bp_engine_destroy(e);
    return 0;
}

/* Changing gravity and restitution between steps (the sandbox's gravity
 * toggle: read, edit, attach) gives the CPU engine's answer. */
static int params_change_between_steps(void)
{
    char err[512];
    bp_engine *o = t_ocl_engine_or_skip();
    if (!o)
        return BP_TEST_SKIP;
    bp_engine *c = bp_engine_create(BP_BACKEND_CPU, NULL, err, sizeof err);
    bp_world *wc = t_world_pile(400), *wo = bp_world_clone(wc);
    ENSURE(c != NULL && wc != NULL && wo != NULL);
    ENSURE(bp_engine_attach(c, wc, err, sizeof err) == 0);
    ENSURE(bp_engine_attach(o, wo, err, sizeof err) == 0);
    double mean_vy[2] = {0, 0};
    for (int k = 0; k < 4; k++) {
        ENSURE(bp_engine_step(c, wc, 30, err, sizeof err) == 0);
        ENSURE(bp_engine_step(o, wo, 30, err, sizeof err) == 0);
        ENSURE(bp_engine_read(o, wo, err, sizeof err) == 0);
        float gy = k % 2 ? 900.0f : -600.0f, e = k % 2 ? 0.5f : 0.95f;
        wc->params.gravity_y = wo->params.gravity_y = gy;
        wc->params.restitution = wo->params.restitution = e;
        ENSURE(bp_engine_attach(c, wc, err, sizeof err) == 0);
        ENSURE(bp_engine_attach(o, wo, err, sizeof err) == 0);
        if (k < 2)
            for (uint32_t i = 0; i < wo->count; i++)
                mean_vy[k] += wo->vy[i] / wo->count;
    }
    ENSURE(bp_engine_step(c, wc, 30, err, sizeof err) == 0);
    ENSURE(bp_engine_step(o, wo, 30, err, sizeof err) == 0);
    ENSURE(bp_engine_read(o, wo, err, sizeof err) == 0);
    t_diff d = t_compare(wc, wo);
    printf("  after 5 frames with 4 changes: max |dpos| %.3g px, max |dvel| %.3g px/s, "
           "%u of %u identical\n", d.pos, d.vel, d.identical, wc->count);
    ENSURE(d.pos <= 1e-2 && d.vel <= 0.5);
    /* the upward gravity of frame 2 was applied: the falling balls slowed */
    ENSURE(mean_vy[1] < mean_vy[0] - 10.0);
    /* Adding a ball without attaching is refused, not silently lost. */
    ENSURE(bp_world_add_ball(wo, 100, 100, 0, 0, 3, 0, err, sizeof err) >= 0);
    ENSURE(bp_engine_step(o, wo, 30, err, sizeof err) == -1);
    ENSURE(strstr(err, "bp_engine_attach") != NULL);
    ENSURE(bp_engine_attach(o, wo, err, sizeof err) == 0);
    ENSURE(bp_engine_step(o, wo, 30, err, sizeof err) == 0);
    bp_engine_destroy(c);
    bp_engine_destroy(o);
    bp_world_destroy(wc);
    bp_world_destroy(wo);
    return 0;
}

/* A world large enough that the read-back copies into the world in
 * pieces on several threads (engine_ocl.c, ocl_read: from 8 x 65,536
 * balls), of a count that is no whole number of pieces: after a frame it
 * is the CPU engine's bits, every array and every piece in its place. */
static int large_world_read_back(void)
{
    bp_engine *e = t_ocl_engine_or_skip();
    if (!e)
        return BP_TEST_SKIP;
    bp_params p = bp_params_default();
    p.width = 2600;
    p.height = 2600;
    bp_world *w = bp_world_create(&p);
    ENSURE(w != NULL);
    const uint32_t n = 8u * 65536u + 12345u, cols = 800;
    uint64_t s = 11;
    for (uint32_t i = 0; i < n; i++) {
        float x = 5.0f + (float)(i % cols) * 3.2f + 0.5f * t_rand(&s);
        float y = 5.0f + (float)(i / cols) * 3.2f + 0.5f * t_rand(&s);
        ENSURE(t_add_ball(w, x, y, 60.0f * t_rand(&s) - 30.0f, 60.0f * t_rand(&s) - 30.0f,
                          1.2f) == 0);
    }
    bp_world *cpu = t_run_clone(BP_BACKEND_CPU, w, 1);
    ENSURE(cpu != NULL);
    ENSURE(t_run(e, w, 1) == 0);
    t_diff d = t_compare(w, cpu);
    printf("  %u balls: %u the same bits, largest differences %.3g px, %.3g px/s\n", n,
           d.identical, d.pos, d.vel);
    ENSURE(t_same_bits(w, cpu));
    ENSURE(memcmp(w->contacts, cpu->contacts, n) == 0);
    bp_engine_destroy(e);
    bp_world_destroy(cpu);
    bp_world_destroy(w);
    return 0;
}

/* An empty world and a world that grows between steps. */
static int empty_and_growing_world(void)
{
    char err[512];
    bp_engine *e = t_ocl_engine_or_skip();
    if (!e)
        return BP_TEST_SKIP;
    bp_world *w = bp_world_create(NULL);
    ENSURE(w != NULL);
    ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
    ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == 0);
    ENSURE(bp_engine_read(e, w, err, sizeof err) == 0);
    for (int k = 0; k < 5; k++) {
        ENSURE(bp_world_add_swarm(w, 300 + 100 * k, 200, 200, 3, 60, 50, 0, (uint64_t)k, err,
                                  sizeof err) == 200);
        ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
        ENSURE(bp_engine_step(e, w, 30, err, sizeof err) == 0);
        ENSURE(bp_engine_read(e, w, err, sizeof err) == 0);
    }
    bp_stats s;
    bp_world_measure(w, &s);
    ENSURE(w->count == 1000 && s.nonfinite == 0 && s.escaped == 0);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

/* BALLPIT_OCL_BUILD_OPTIONS reaches the compiler after the engine's own
 * options: a -D that stops the kernels' source at its #error (lanes that
 * are not 4, 8 or 16) fails the build, refused in one line that names
 * the variable; a -D the kernels do not read builds, and its engine ends a
 * gas's frames in the bits of one without it. A value too long, or with
 * a control character, is refused before the build. */
static int build_options_passed_on(void)
{
    bp_engine *probe = t_ocl_engine_or_skip();
    if (!probe)
        return BP_TEST_SKIP;
    bp_engine_destroy(probe);
    char err[1024];
    static const char *const lanes5[] = {"BALLPIT_OCL_BUILD_OPTIONS", "-DBP_LANES=5", NULL};
    ENSURE(t_refused(lanes5, err, sizeof err) == 1);
    ENSURE(strstr(err, "clBuildProgram failed") != NULL);
    ENSURE(strstr(err, "with BALLPIT_OCL_BUILD_OPTIONS=-DBP_LANES=5") != NULL);
    char longv[514];
    memset(longv, 'x', sizeof longv - 1u);
    longv[sizeof longv - 1u] = '\0';
    const char *const toolong[] = {"BALLPIT_OCL_BUILD_OPTIONS", longv, NULL};
    ENSURE(t_refused(toolong, err, sizeof err) == 1);
    ENSURE(strstr(err, "BALLPIT_OCL_BUILD_OPTIONS is 513 characters, at most 512") != NULL);
    static const char *const tab[] = {"BALLPIT_OCL_BUILD_OPTIONS", "-DA=1\t-DB=2", NULL};
    ENSURE(t_refused(tab, err, sizeof err) == 1);
    ENSURE(strstr(err, "not printable ASCII at 6") != NULL);
    bp_world *w = t_world_gas(900);
    ENSURE(w != NULL);
    bp_world *plain = t_run_clone(BP_BACKEND_OPENCL, w, 15);
    ENSURE(setenv("BALLPIT_OCL_BUILD_OPTIONS", "-DBP_NOT_READ_BY_THE_KERNELS=1", 1) == 0);
    bp_world *more = t_run_clone(BP_BACKEND_OPENCL, w, 15);
    unsetenv("BALLPIT_OCL_BUILD_OPTIONS");
    ENSURE(plain != NULL && more != NULL);
    ENSURE(t_compare(w, plain).pos > 1.0); /* it did move */
    ENSURE(t_same_bits(plain, more));
    bp_world_destroy(more);
    bp_world_destroy(plain);
    bp_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(determinism_two_runs),
        BP_TEST(determinism_parallel_grid),
        BP_TEST(lanes_same_bits),
        BP_TEST(one_launch_same_bits),
        BP_TEST(merge_or_count_same_bits),
        BP_TEST(counters_svm_or_commands),
        BP_TEST(steps_split_same_as_whole),
        BP_TEST(team_phases_clocked),
        BP_TEST(team_clock_wrapped),
        BP_TEST(switch_100_times),
        BP_TEST(fallback_step_out_of_resources),
        BP_TEST(fallback_step_device_lost),
        BP_TEST(fallback_step_one_launch),
        BP_TEST(fallback_build_failure),
        BP_TEST(fallback_alloc_failure),
        BP_TEST(fault_spec_checked),
        BP_TEST(device_index_checked),
        BP_TEST(params_change_between_steps),
        BP_TEST(empty_and_growing_world),
        BP_TEST(large_world_read_back),
        BP_TEST(host_cores_reported),
        BP_TEST(build_options_passed_on),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

/* ab_frames - times two engine set-ups against each other on this noisy
 * machine. Runs of one binary here are up to 20% apart, so A/B runs of
 * whole processes need many repeats to see a 2% effect. Here both set-ups
 * run in one process on copies of one world and take turns frame by frame
 * (the order swapped every frame), so a slow spell of the host falls on
 * both; the figure to read is the median of the per-frame ratios B/A.
 * Run as A/A it gives 0.99-1.01 (docs/benchmarks.md).
 *
 *   ab_frames [--scene rain|pile] [--balls N] [--frames F] [--expect-same] A B
 *
 * A and B are "cpu" or "opencl", each optionally followed by
 * ":VAR=VALUE,VAR=VALUE": environment settings in force only while that
 * engine is created (BALLPIT_OCL_LOCAL, BALLPIT_OCL_LANES,
 * BALLPIT_OCL_GRID, ...; BALLPIT_OCL_BUILD_OPTIONS=-DNAME=1 for a
 * variant of the kernels' source; PoCL reads its own POCL_* settings once
 * per process, so those cannot differ). A CPU engine against an OpenCL one is
 * not a fair pair: the OpenMP threads spin on after the CPU engine's frame
 * and take a core from the next one. At the end it says whether the two worlds hold
 * the same bits, which they should for any two set-ups of one engine;
 * with --expect-same it exits with status 1 when they do not.
 * AB_THREADS=T runs the CPU engines on T threads (default: all cores);
 * AB_DEVICE=N gives an OpenCL engine device N of `ballpit --list-devices`.
 */
#include "ballpit.h"
#include "bp_util.h"
#include "cli_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARMUP_FRAMES 3

/* Sets (set = 1) or unsets the VAR=VALUE list of a spec. */
static int apply_env(const char *list, int set)
{
    char buf[512];
    if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf) {
        fprintf(stderr, "ab_frames: settings '%s' are too long\n", list);
        return -1;
    }
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        if (!eq || eq == tok) {
            fprintf(stderr, "ab_frames: '%s' is not VAR=VALUE\n", tok);
            return -1;
        }
        *eq = '\0';
        if (set ? setenv(tok, eq + 1, 1) : unsetenv(tok)) {
            fprintf(stderr, "ab_frames: cannot set %s\n", tok);
            return -1;
        }
    }
    return 0;
}

/* *out = the integer in environment variable name, lo..hi, where it is
 * set; -1 with a line where it is not such a number. */
static int env_long(const char *name, const char *what, long lo, long hi, long *out)
{
    const char *v = getenv(name);
    if (!v)
        return 0;
    char *end;
    long x = strtol(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < lo || x > hi) {
        fprintf(stderr, "ab_frames: %s=%s is not %s %ld..%ld\n", name, v, what, lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

static bp_engine *make_engine(const char *spec)
{
    char kind[16];
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    if (len >= sizeof kind) {
        fprintf(stderr, "ab_frames: '%s': the engine is cpu or opencl\n", spec);
        return NULL;
    }
    memcpy(kind, spec, len);
    kind[len] = '\0';
    bp_backend b;
    if (strcmp(kind, "cpu") == 0) {
        b = BP_BACKEND_CPU;
    } else if (strcmp(kind, "opencl") == 0) {
        b = BP_BACKEND_OPENCL;
    } else {
        fprintf(stderr, "ab_frames: '%s': the engine is cpu or opencl\n", spec);
        return NULL;
    }
    if (colon && apply_env(colon + 1, 1))
        return NULL;
    char err[256];
    bp_engine_opts o = {0};
    /* AB_THREADS=T: the CPU engine's threads; opencl:AB_DEVICE=N: device
     * N of --list-devices (PoCL's basic device against its pthread one) */
    long t = 0, d = -1;
    if (env_long("AB_THREADS", "a thread count", 1, 1024, &t) ||
        env_long("AB_DEVICE", "a device index", 0, 1023, &d)) {
        if (colon)
            apply_env(colon + 1, 0);
        return NULL;
    }
    o.threads = (int)t;
    o.device = d >= 0 ? (int)d : 0;
    o.device_set = d >= 0;
    const char *sort = getenv("AB_SORT"); /* cpu:AB_SORT=1: re-sort by place */
    o.sort_by_place = sort && strcmp(sort, "1") == 0;
    bp_engine *e = bp_engine_create(b, &o, err, sizeof err);
    if (!e)
        fprintf(stderr, "ab_frames: %s: %s\n", spec, err);
    if (colon)
        apply_env(colon + 1, 0);
    return e;
}

static int usage(void)
{
    fprintf(stderr, "usage: ab_frames [--scene rain|pile] [--balls N] [--frames F] "
                    "[--expect-same] A B\n"
                    "  A, B: cpu|opencl[:VAR=VALUE,...]\n");
    return 2;
}

int main(int argc, char **argv)
{
    const char *scene = "rain", *spec[2] = {NULL, NULL};
    long balls = 10000, frames = 60;
    int nspec = 0, expect_same = 0;
    for (int a = 1; a < argc; a++) {
        char *end = NULL;
        if (strcmp(argv[a], "--scene") == 0 && a + 1 < argc) {
            scene = argv[++a];
            if (strcmp(scene, "rain") != 0 && strcmp(scene, "pile") != 0)
                return usage();
        } else if (strcmp(argv[a], "--balls") == 0 && a + 1 < argc) {
            balls = strtol(argv[++a], &end, 10);
            if (*end != '\0' || balls < 1 || balls > (long)BP_MAX_BALLS)
                return usage();
        } else if (strcmp(argv[a], "--frames") == 0 && a + 1 < argc) {
            frames = strtol(argv[++a], &end, 10);
            if (*end != '\0' || frames < 1 || frames > 100000)
                return usage();
        } else if (strcmp(argv[a], "--expect-same") == 0) {
            expect_same = 1;
        } else if (argv[a][0] != '-' && nspec < 2) {
            spec[nspec++] = argv[a];
        } else {
            return usage();
        }
    }
    if (nspec != 2)
        return usage();

    char err[256];
    bp_engine *e[2] = {NULL, NULL};
    bp_world *w[2] = {NULL, NULL};
    double *ratio = calloc((size_t)frames, sizeof *ratio), total[2] = {0.0, 0.0};
    int rc = 1;
    if (!ratio)
        goto out;
    for (int i = 0; i < 2; i++) {
        w[i] = strcmp(scene, "pile") == 0 ? bp_pile_build((uint32_t)balls, err, sizeof err)
                                          : bp_rain_build((uint32_t)balls, err, sizeof err);
        if (!w[i]) {
            fprintf(stderr, "ab_frames: %s\n", err);
            goto out;
        }
        if (!(e[i] = make_engine(spec[i])))
            goto out;
        if (bp_engine_attach(e[i], w[i], err, sizeof err) != 0)
            goto fail;
    }
    uint32_t sub = (uint32_t)w[0]->params.substeps;
    for (int f = 0; f < WARMUP_FRAMES; f++)
        for (int i = 0; i < 2; i++)
            if (bp_engine_step(e[i], w[i], sub, err, sizeof err) != 0)
                goto fail;
    for (long f = 0; f < frames; f++) {
        double t[2];
        for (int k = 0; k < 2; k++) {
            int i = (f & 1) ? 1 - k : k;
            double t0 = bp_now();
            if (bp_engine_step(e[i], w[i], sub, err, sizeof err) != 0)
                goto fail;
            t[i] = bp_now() - t0;
            total[i] += t[i];
        }
        ratio[f] = t[1] / t[0];
    }
    for (int i = 0; i < 2; i++)
        if (bp_engine_read(e[i], w[i], err, sizeof err) != 0)
            goto fail;
    size_t bytes = (size_t)w[0]->count * sizeof(float);
    int same = memcmp(w[0]->x, w[1]->x, bytes) == 0 && memcmp(w[0]->y, w[1]->y, bytes) == 0 &&
               memcmp(w[0]->vx, w[1]->vx, bytes) == 0 && memcmp(w[0]->vy, w[1]->vy, bytes) == 0;
    qsort(ratio, (size_t)frames, sizeof *ratio, bp_cmp_double);
    printf("%s %ld balls, %ld frames: A %.2f ms/frame (%s), B %.2f ms/frame (%s)\n"
           "B/A per frame: median %.4f, quartiles %.4f %.4f; final states: %s\n",
           scene, balls, frames, total[0] * 1e3 / (double)frames, spec[0],
           total[1] * 1e3 / (double)frames, spec[1], ratio[frames / 2], ratio[frames / 4],
           ratio[(3 * frames) / 4], same ? "same bits" : "differ");
    rc = expect_same && !same ? 1 : 0;
    goto out;
fail:
    fprintf(stderr, "ab_frames: %s\n", err);
out:
    for (int i = 0; i < 2; i++) {
        if (e[i])
            bp_engine_destroy(e[i]);
        if (w[i])
            bp_world_destroy(w[i]);
    }
    free(ratio);
    return rc;
}

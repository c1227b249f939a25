/* headless.c - `ballpit --headless SCENE --frames N`: run a scene with no
 * display, then write the dump CSV and/or the one-line stats JSON
 * (contracts: docs/cli.md).
 *
 * Exit statuses: 0 done, 1 a run-time failure (engine error, a file that
 * could not be written), 2 a bad scene, 3 the OpenCL engine is unusable.
 * --backend opencl never falls back to the CPU here: a script that asked
 * for OpenCL must learn that it did not get it.
 */
#include "cli.h"
#include "cli_internal.h"
#include "bp_util.h"
#include "scene_io.h"

#include <stdlib.h>
#include <string.h>

static int write_csv(FILE *f, void *ctx)
{
    return bp_world_write_csv(ctx, f) < 0 ? -1 : 0;
}

/* Exit status for an engine failure: OpenCL problems are status 3. */
static int engine_status(bp_backend kind)
{
    return kind == BP_BACKEND_OPENCL ? 3 : 1;
}

static void print_stats(const bp_cli *cli, const bp_world *w, const bp_engine *e,
                        double wall)
{
    bp_stats s;
    bp_world_measure(w, &s);
    double substeps_total = (double)cli->frames * w->params.substeps;
    double ball_steps = substeps_total * w->count;
    FILE *f = stdout;
    fputs("{\"frames\":", f);
    fprintf(f, "%ld", cli->frames);
    fprintf(f, ",\"substeps\":%d,\"balls\":%u,\"lines\":%u", w->params.substeps,
            w->count, w->nlines);
    fputs(",\"kinetic_energy\":", f);
    bp_json_number(f, s.kinetic_energy);
    fputs(",\"momentum_x\":", f);
    bp_json_number(f, s.momentum_x);
    fputs(",\"momentum_y\":", f);
    bp_json_number(f, s.momentum_y);
    fprintf(f, ",\"escaped\":%u", s.escaped);
    fputs(",\"max_overlap\":", f);
    bp_json_number(f, s.max_overlap);
    fputs(",\"rms_speed\":", f);
    bp_json_number(f, s.rms_speed);
    fputs(",\"max_speed\":", f);
    bp_json_number(f, s.max_speed);
    fprintf(f, ",\"nonfinite\":%u", s.nonfinite);
    fputs(",\"wall_s\":", f);
    bp_json_number(f, wall);
    fputs(",\"ms_per_frame\":", f);
    bp_json_number(f, cli->frames > 0 ? wall * 1000.0 / (double)cli->frames : 0.0);
    fputs(",\"ball_steps_per_s\":", f);
    bp_json_number(f, wall > 0.0 ? ball_steps / wall : 0.0);
    fputs(",\"backend\":", f);
    bp_json_string(f, bp_engine_name(e));
    fprintf(f, ",\"threads\":%d", bp_engine_threads(e));
    fputs(",\"device\":", f);
    bp_json_string(f, bp_engine_device(e));
    fputs(",\"scene\":", f);
    bp_json_string(f, cli->scene ? cli->scene : "default");
    fputs(",\"version\":", f);
    bp_json_string(f, BP_VERSION);
    fputs("}\n", f);
}

int bp_headless_run(const bp_cli *cli)
{
    char err[1024] = "";
    bp_world *w = bp_cli_load_scene(cli->scene, err, sizeof err);
    if (!w) {
        fprintf(stderr, "ballpit: %s\n", err);
        return 2;
    }
    /* A dump that cannot be written is said before the run, not after
     * hours of it (the same message and status as the write would give;
     * the write at the end still reports a disk that filled meanwhile). */
    if (cli->dump && bp_file_check_writable(cli->dump, err, sizeof err) != 0) {
        fprintf(stderr, "ballpit: --dump %s\n", err);
        bp_world_destroy(w);
        return 1;
    }
    bp_backend kind = cli->backend;
    const char *kname = kind == BP_BACKEND_OPENCL ? "opencl" : "cpu";
    bp_engine *e = bp_engine_create(kind, &cli->engine, err, sizeof err);
    if (!e) {
        fprintf(stderr, "ballpit: cannot start the %s engine: %s\n", kname, err);
        bp_world_destroy(w);
        return engine_status(kind);
    }
    int status = 0;
    if (bp_engine_attach(e, w, err, sizeof err) != 0) {
        fprintf(stderr, "ballpit: %s engine: cannot take the scene: %s\n", kname, err);
        status = engine_status(kind);
        goto done;
    }

    /* One frame per call, as the sandbox does: a failure is reported with
     * the frame it happened in. */
    uint32_t sub = (uint32_t)w->params.substeps;
    double t0 = bp_now();
    for (long f = 0; f < cli->frames; f++) {
        if (bp_engine_step(e, w, sub, err, sizeof err) != 0) {
            fprintf(stderr, "ballpit: %s engine failed in frame %ld: %s\n", kname, f + 1,
                    err);
            status = engine_status(kind);
            goto done;
        }
    }
    double wall = bp_now() - t0;
    if (bp_engine_read(e, w, err, sizeof err) != 0) {
        fprintf(stderr, "ballpit: %s engine: cannot read the state back: %s\n", kname,
                err);
        status = engine_status(kind);
        goto done;
    }

    if (cli->dump &&
        bp_file_write_atomic(cli->dump, write_csv, w, err, sizeof err) != 0) {
        fprintf(stderr, "ballpit: --dump %s\n", err);
        status = 1;
    }
    if (cli->stats) {
        print_stats(cli, w, e, wall);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "ballpit: --stats: cannot write to stdout\n");
            status = 1;
        }
    }
done:
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return status;
}

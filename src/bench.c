/* bench.c - `ballpit --bench`: ball-steps per second of each engine on the
 * rain scene at several sizes and on a dense pile, with the per-phase
 * breakdown (docs/benchmarks.md records the results).
 *
 * A row: build the world, create the engine, run a few warm-up frames
 * (first-touch memory, OpenCL program build and buffer upload stay out of
 * the timing), then time M frames one frame per call as the sandbox runs
 * them. M defaults to BENCH_FRAMES: the same simulated second for every
 * engine and every commit, so rows compare like with like (a count that
 * followed the engine's speed would give a faster engine more, and
 * different, frames: the rain gets denser as it lands).
 */
#include "cli.h"
#include "cli_internal.h"
#include "bp_util.h"
#include "scene_io.h"

#ifdef BP_HAVE_SDL
#include "app/drawbench.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Timed frames of a row when --bench-frames is not given: 1 s simulated. */
#define BENCH_FRAMES 33
#define BENCH_WARMUP_FRAMES 3
/* Timed frames whose own times a row keeps (the JSON's ms_each_frame): the
 * course of a rain, whose frames cost twice as much once it lands. */
#define BENCH_EACH_MAX 1000
/* Balls of the drawing row when --bench-draw is not given (issue 6). */
#define BENCH_DRAW_N 100000L
/* Pile row size (the dense case). */
#define BENCH_PILE_N 50000u

/* ---- Benchmark worlds ------------------------------------------------ */

/* The rain layout at the reference size (assets/scenes/rain.scene holds the
 * same numbers): 24 swarm discs in 3 rows of 8 above 8 ramps in 4 rows,
 * funnels (sloping toward the middle) alternating with roofs (two ramps
 * sharing an apex, so endpoint contacts are exercised). */
static const float rain_ramps[8][4] = {
    { 40, 480, 600, 540 },   { 1240, 480, 680, 540 },  /* funnel */
    { 640, 590, 220, 650 },  { 640, 590, 1060, 650 },  /* roof */
    { 40, 700, 600, 760 },   { 1240, 700, 680, 760 },  /* funnel */
    { 640, 810, 220, 870 },  { 640, 810, 1060, 870 },  /* roof */
};
#define RAIN_W 1280.0f
#define RAIN_H 960.0f
#define RAIN_COLS 8
#define RAIN_ROWS 3
#define RAIN_SPREAD 70.0f
#define RAIN_VY 60.0f
#define RAIN_R 2.0f

bp_world *bp_rain_build(uint32_t n, char *err, size_t errlen)
{
    if (n < 1 || n > BP_MAX_BALLS) {
        snprintf(err, errlen, "rain: %u balls is out of range (1..%u)", n, BP_MAX_BALLS);
        return NULL;
    }
    float s = n > BP_RAIN_REF_N ? sqrtf((float)n / (float)BP_RAIN_REF_N) : 1.0f;
    bp_params p = bp_params_default();
    p.width = RAIN_W * s;
    p.height = RAIN_H * s;
    if (p.width > BP_MAX_WORLD || p.height > BP_MAX_WORLD) {
        snprintf(err, errlen, "rain: %u balls need a %gx%g box, above the %g px limit", n,
                 (double)p.width, (double)p.height, (double)BP_MAX_WORLD);
        return NULL;
    }
    bp_world *w = bp_world_create(&p);
    if (!w) {
        snprintf(err, errlen, "rain: out of memory");
        return NULL;
    }
    for (int i = 0; i < 8; i++) {
        if (bp_world_add_line(w, rain_ramps[i][0] * s, rain_ramps[i][1] * s,
                              rain_ramps[i][2] * s, rain_ramps[i][3] * s, err, errlen) < 0)
            goto fail;
    }
    uint32_t nswarm = RAIN_COLS * RAIN_ROWS;
    for (uint32_t k = 0; k < nswarm; k++) {
        uint32_t count = n / nswarm + (k < n % nswarm ? 1u : 0u);
        if (count == 0)
            continue;
        float cx = (80.0f + 160.0f * (float)(k % RAIN_COLS)) * s;
        float cy = (80.0f + 150.0f * (float)(k / RAIN_COLS)) * s;
        if (bp_world_add_swarm(w, cx, cy, count, RAIN_R, RAIN_SPREAD * s, 0.0f, RAIN_VY,
                               k + 1, err, errlen) != (int64_t)count)
            goto fail;
    }
    return w;
fail:
    bp_world_destroy(w);
    return NULL;
}

bp_world *bp_pile_build(uint32_t n, char *err, size_t errlen)
{
    if (n < 1 || n > BP_MAX_BALLS) {
        snprintf(err, errlen, "pile: %u balls is out of range (1..%u)", n, BP_MAX_BALLS);
        return NULL;
    }
    double s = n > BENCH_PILE_N ? sqrt((double)n / BENCH_PILE_N) : 1.0;
    bp_params p = bp_params_default();
    p.width = (float)(1280.0 * s);
    p.height = (float)(720.0 * s);
    if (p.width > BP_MAX_WORLD || p.height > BP_MAX_WORLD) {
        snprintf(err, errlen, "pile: %u balls need a box above the %g px limit", n,
                 (double)BP_MAX_WORLD);
        return NULL;
    }
    bp_world *w = bp_world_create(&p);
    if (!w) {
        snprintf(err, errlen, "pile: out of memory");
        return NULL;
    }
    /* Hexagonal rows from the floor up, 0.02 px apart so nothing starts
     * overlapping; gravity closes the gaps in the first frame. */
    const double r = 2.0, d = 2.0 * r + 0.02, pitch = d * sqrt(3.0) / 2.0;
    uint32_t added = 0;
    for (int row = 0; added < n; row++) {
        double y = p.height - r - row * pitch;
        if (y < r) {
            snprintf(err, errlen, "pile: %u balls do not fit in the box", n);
            goto fail;
        }
        double x0 = r + (row % 2 ? d / 2.0 : 0.0);
        for (double x = x0; x <= p.width - r && added < n; x += d, added++) {
            if (bp_world_add_ball(w, (float)x, (float)y, 0.0f, 0.0f, (float)r, 0.0f, err,
                                  errlen) < 0)
                goto fail;
        }
    }
    return w;
fail:
    bp_world_destroy(w);
    return NULL;
}

/* ---- Running rows ---------------------------------------------------- */

typedef struct bench_row {
    const char *scene;
    uint32_t n;
    const char *backend;
    char device[256];
    int threads;
    long frames;
    int substeps;
    double fps;
    double wall_s, ms_per_frame, ball_steps_per_s, realtime;
    bp_phase_times phase_ms;   /* per frame, milliseconds */
    double read_ms;            /* the final read-back, once */
    double each_ms[BENCH_EACH_MAX]; /* the first timed frames' own ms, in order */
    uint32_t escaped, nonfinite;
    double bytes_per_ball;     /* the world's ball state and the engine's memory, per ball */
} bench_row;

/* Runs one row. Returns 0, or -1 with a reason (engine_missing set when the
 * engine could not even be created). */
static int run_row(const bp_cli *cli, bp_backend kind, const char *scene, uint32_t n,
                   bench_row *row, int *engine_missing, char *err, size_t errlen)
{
    *engine_missing = 0;
    bp_world *w = strcmp(scene, "pile") == 0 ? bp_pile_build(n, err, errlen)
                                             : bp_rain_build(n, err, errlen);
    if (!w)
        return -1;
    bp_engine *e = bp_engine_create(kind, &cli->engine, err, errlen);
    if (!e) {
        *engine_missing = 1;
        bp_world_destroy(w);
        return -1;
    }
    int rc = -1;
    uint32_t sub = (uint32_t)w->params.substeps;
    if (bp_engine_attach(e, w, err, errlen) != 0)
        goto out;
    for (int f = 0; f < BENCH_WARMUP_FRAMES; f++)
        if (bp_engine_step(e, w, sub, err, errlen) != 0)
            goto out;
    long m = cli->bench_frames > 0 ? cli->bench_frames : BENCH_FRAMES;
    bp_phase_times sum = { 0 }, t;
    double wall = 0.0;
    for (long f = 0; f < m; f++) {
        double a = bp_now();
        if (bp_engine_step(e, w, sub, err, errlen) != 0)
            goto out;
        double d = bp_now() - a;
        wall += d;
        if (f < BENCH_EACH_MAX)
            row->each_ms[f] = d * 1000.0;
        bp_engine_phase_times(e, &t);
        sum.integrate += t.integrate;
        sum.grid += t.grid;
        sum.ball_contacts += t.ball_contacts;
        sum.static_contacts += t.static_contacts;
    }
    double r0 = bp_now();
    if (bp_engine_read(e, w, err, errlen) != 0)
        goto out;
    row->read_ms = (bp_now() - r0) * 1000.0;
    /* The read-back phase: what the sandbox pays each frame to draw, the
     * engine's own time for one more read of the same state (the first
     * may allocate its buffers). The timed frames read nothing, so no
     * earlier read's time (a re-sort by place reads) stands in for it. */
    if (bp_engine_read(e, w, err, errlen) != 0)
        goto out;
    bp_engine_phase_times(e, &t);

    bp_stats st;
    bp_world_measure(w, &st);
    row->scene = scene;
    row->n = w->count;
    row->backend = bp_engine_name(e);
    snprintf(row->device, sizeof row->device, "%s", bp_engine_device(e));
    row->threads = bp_engine_threads(e);
    row->frames = m;
    row->substeps = w->params.substeps;
    row->fps = w->params.fps;
    row->wall_s = wall;
    row->ms_per_frame = wall * 1000.0 / (double)m;
    row->ball_steps_per_s = wall > 0.0 ? (double)w->count * sub * (double)m / wall : 0.0;
    row->realtime = wall > 0.0 ? ((double)m / w->params.fps) / wall : 0.0;
    double k = 1000.0 / (double)m;
    row->phase_ms.integrate = sum.integrate * k;
    row->phase_ms.grid = sum.grid * k;
    row->phase_ms.ball_contacts = sum.ball_contacts * k;
    row->phase_ms.static_contacts = sum.static_contacts * k;
    row->phase_ms.readback = t.readback * 1000.0;
    /* The world's per-ball arrays (x, y, vx, vy, r, m, contacts, id) and all
     * the engine holds: issue 6's "engine state and broad phase". */
    size_t world_ball = 4 * sizeof *w->x + sizeof *w->r + sizeof *w->m + sizeof *w->contacts +
                        (w->id ? sizeof *w->id : 0u); /* ids, once sorted by place */
    row->bytes_per_ball =
        ((double)world_ball * w->count + (double)bp_engine_memory(e)) / (double)w->count;
    row->escaped = st.escaped;
    row->nonfinite = st.nonfinite;
    rc = 0;
out:
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return rc;
}

static void print_header(FILE *f)
{
    fprintf(f, "%-5s %8s %-7s %-22s %9s %12s %8s | %8s %8s %8s %8s %8s | %6s\n", "scene", "N",
            "backend", "device", "ms/frame", "ball-steps/s", "realtime", "integr", "grid",
            "balls", "static", "readback", "B/ball");
}

static void print_row(FILE *f, const bench_row *r)
{
    fprintf(f,
            "%-5s %8u %-7s %-22.22s %9.2f %12.4g %7.2fx | %8.2f %8.2f %8.2f %8.2f %8.2f | %6.1f\n",
            r->scene, r->n, r->backend, r->device, r->ms_per_frame, r->ball_steps_per_s,
            r->realtime, r->phase_ms.integrate, r->phase_ms.grid, r->phase_ms.ball_contacts,
            r->phase_ms.static_contacts, r->phase_ms.readback, r->bytes_per_ball);
    if (r->escaped || r->nonfinite)
        fprintf(f, "      warning: %u balls escaped, %u non-finite after the row\n",
                r->escaped, r->nonfinite);
    fflush(f);
}

static void cpu_model(char *out, size_t n)
{
    snprintf(out, n, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t')
                    c++;
                snprintf(out, n, "%s", c);
                out[strcspn(out, "\n")] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

/* The runs of row i (of nrows) of engine k in all: runs entries, in the
 * order they ran (bp_bench_run's table of results). */
static bench_row *row_runs(bench_row *all, int k, int i, int nrows, int runs)
{
    return all + ((size_t)k * (size_t)nrows + (size_t)i) * (size_t)runs;
}

/* The median of v[0..n-1] (the lower of the two middle values for even
 * n), sorted in tmp (room for n); v stays in its order. */
static double lower_median(const double *v, int n, double *tmp)
{
    memcpy(tmp, v, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, bp_cmp_double);
    return tmp[(n - 1) / 2];
}

/* One JSON row: r, the median of `runs` runs whose ms/frame were ms[0..runs-1]
 * in the order they ran; vs (NULL for none): an OpenCL row's speed over
 * the CPU engine's row run by run, vs_med their median. */
static void json_row(FILE *f, const bench_row *r, const char *cpu, long cores, int runs,
                     const double *ms, const double *vs, double vs_med)
{
    fputs("{\"scene\":", f);
    bp_json_string(f, r->scene);
    fprintf(f, ",\"n\":%u,\"backend\":", r->n);
    bp_json_string(f, r->backend);
    fputs(",\"device\":", f);
    bp_json_string(f, r->device);
    fprintf(f, ",\"threads\":%d,\"frames\":%ld,\"substeps\":%d,\"fps\":", r->threads,
            r->frames, r->substeps);
    bp_json_number(f, r->fps);
    const struct { const char *k; double v; } nums[] = {
        { "wall_s", r->wall_s },
        { "ms_per_frame", r->ms_per_frame },
        { "ball_steps_per_s", r->ball_steps_per_s },
        { "realtime_factor", r->realtime },
        { "integrate_ms", r->phase_ms.integrate },
        { "grid_ms", r->phase_ms.grid },
        { "ball_contacts_ms", r->phase_ms.ball_contacts },
        { "static_contacts_ms", r->phase_ms.static_contacts },
        { "readback_ms", r->phase_ms.readback },
        { "final_read_ms", r->read_ms },
        { "bytes_per_ball", r->bytes_per_ball },
    };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++) {
        fprintf(f, ",\"%s\":", nums[i].k);
        bp_json_number(f, nums[i].v);
    }
    fprintf(f, ",\"runs\":%d,\"ms_per_frame_runs\":[", runs);
    for (int k = 0; k < runs; k++) {
        if (k)
            fputc(',', f);
        bp_json_number(f, ms[k]);
    }
    if (vs) {
        fputs("],\"speed_vs_cpu\":", f);
        bp_json_number(f, vs_med);
        fputs(",\"speed_vs_cpu_runs\":[", f);
        for (int k = 0; k < runs; k++) {
            if (k)
                fputc(',', f);
            bp_json_number(f, vs[k]);
        }
    }
    fputs("],\"ms_each_frame\":[", f);
    for (long k = 0; k < r->frames && k < BENCH_EACH_MAX; k++) {
        if (k)
            fputc(',', f);
        bp_json_number(f, r->each_ms[k]);
    }
    fputc(']', f);
    fprintf(f, ",\"escaped\":%u,\"nonfinite\":%u,\"cores\":%ld,\"cpu\":", r->escaped,
            r->nonfinite, cores);
    bp_json_string(f, cpu);
    fputs(",\"version\":", f);
    bp_json_string(f, BP_VERSION);
    fputs("}\n", f);
}

/* The drawing row: the sandbox's renderer on n balls, no simulation
 * (src/app/drawbench.c). No display is not an error: the row is skipped
 * with a note. Returns 0, or 1 when the drawing failed. */
static int draw_row(const bp_cli *cli, long n, FILE *out, FILE *js, const char *cpu, long cores)
{
#ifdef BP_HAVE_SDL
    int frames = (int)(cli->bench_frames > 0 ? cli->bench_frames : BENCH_FRAMES);
    bp_draw_result d;
    char err[512] = "";
    int rc = bp_draw_bench((uint32_t)n, frames, &d, err, sizeof err);
    if (rc == 1) {
        fprintf(out, "(draw: skipped: %s)\n", err);
        return 0;
    }
    if (rc != 0) {
        fprintf(stderr, "ballpit: bench draw %ld: %s\n", n, err);
        return 1;
    }
    fprintf(out, "draw  %8ld balls, renderer %s (%s): balls %.2f ms a frame (the HUD's "
            "\"draw\"), whole frame %.2f ms; medians of %d frames\n",
            n, d.renderer, d.mode, d.batch_ms, d.frame_ms, frames);
    if (js) {
        fprintf(js, "{\"scene\":\"draw\",\"n\":%ld,\"backend\":\"sdl\",\"device\":", n);
        bp_json_string(js, d.renderer);
        fputs(",\"mode\":", js);
        bp_json_string(js, d.mode);
        fprintf(js, ",\"frames\":%d,\"draw_ms\":", frames);
        bp_json_number(js, d.batch_ms);
        fputs(",\"frame_ms\":", js);
        bp_json_number(js, d.frame_ms);
        fprintf(js, ",\"cores\":%ld,\"cpu\":", cores);
        bp_json_string(js, cpu);
        fputs(",\"version\":", js);
        bp_json_string(js, BP_VERSION);
        fputs("}\n", js);
        fflush(js);
    }
    return 0;
#else
    (void)cli; (void)js; (void)cpu; (void)cores;
    fprintf(out, "(draw: skipped: this ballpit was built without the sandbox window; %ld "
            "balls not drawn)\n", n);
    return 0;
#endif
}

typedef struct json_buf {
    char *data;
    size_t len;
} json_buf;

static int write_json(FILE *f, void *ctx)
{
    const json_buf *b = ctx;
    return b->len && fwrite(b->data, 1, b->len, f) != b->len ? -1 : 0;
}

int bp_bench_run(const bp_cli *cli)
{
    char err[1024] = "";
    /* The default is issue 6's scaling table, 1k to 200k. */
    uint32_t sizes[BP_BENCH_MAX_SIZES] = { 1000, 10000, 50000, 100000, 200000 };
    int nsizes = 5;
    if (cli->bench_sizes) {
        nsizes = bp_parse_sizes(cli->bench_sizes, sizes, BP_BENCH_MAX_SIZES, err, sizeof err);
        if (nsizes < 0) {
            fprintf(stderr, "ballpit: %s\n", err);
            return 2;
        }
    }
    /* The pile row runs at 50k, or at the largest rain size if all are
     * smaller (quick runs stay quick). */
    uint32_t pile_n = 0;
    for (int i = 0; i < nsizes; i++)
        pile_n = sizes[i] > pile_n ? sizes[i] : pile_n;
    if (pile_n > BENCH_PILE_N || !cli->bench_sizes)
        pile_n = BENCH_PILE_N;

    int json_stdout = cli->bench_json && strcmp(cli->bench_json, "-") == 0;
    FILE *out = json_stdout ? stderr : stdout;
    json_buf jb = { NULL, 0 };
    FILE *js = NULL;
    if (cli->bench_json && !json_stdout &&
        bp_file_check_writable(cli->bench_json, err, sizeof err) != 0) {
        fprintf(stderr, "ballpit: --bench-json %s\n", err); /* before the runs */
        return 1;
    }
    if (cli->bench_json) {
        js = json_stdout ? stdout : open_memstream(&jb.data, &jb.len);
        if (!js) {
            fprintf(stderr, "ballpit: --bench-json: out of memory\n");
            return 1;
        }
    }

    char cpu[256];
    cpu_model(cpu, sizeof cpu);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    fprintf(out, "ballpit %s bench on %s (%ld cores); rain: r=2, 8 ramps, e=0.9, "
            "30 sub-steps per 1/33 s frame; times per frame in ms\n",
            BP_VERSION, cpu, cores);
    print_header(out);

    bp_backend kinds[2] = { BP_BACKEND_CPU, BP_BACKEND_OPENCL };
    int nkinds = 2, status = 0;
    if (cli->backend_set) {
        kinds[0] = cli->backend;
        nkinds = 1;
    } else if (!bp_opencl_built()) {
        fprintf(out, "(opencl: not built into this ballpit; CPU rows only)\n");
        nkinds = 1;
    }
    /* --bench-runs N: every row N times, in turns (all rows, then again),
     * so that a slow spell of the host falls on all of them; each row's
     * two engines one after the other, the CPU engine first in odd runs
     * and OpenCL first in even ones, so that each run's pair of a row met
     * the same host (a pair's runs are a second or so apart; the engines'
     * halves of a run of the whole bench had been ten seconds or more
     * apart, docs/benchmarks.md). Each row shown once, after its last
     * run: the run with the median ms/frame (the lower one of the two
     * middle runs for even N); an OpenCL row also with its speed over the
     * CPU engine's run by run. */
    const int runs = cli->bench_runs > 1 ? (int)cli->bench_runs : 1, nrows = nsizes + 1;
    bench_row *all = calloc((size_t)nkinds * (size_t)nrows * (size_t)runs, sizeof *all);
    unsigned char *failed = calloc((size_t)nkinds * (size_t)nrows, 1);
    double *ms = malloc((size_t)runs * sizeof *ms), *sorted_ms = malloc((size_t)runs * sizeof *ms);
    double *vs = malloc((size_t)runs * sizeof *vs);
    if (!all || !failed || !ms || !sorted_ms || !vs) {
        fprintf(stderr, "ballpit: bench: out of memory\n");
        free(all);
        free(failed);
        free(ms);
        free(sorted_ms);
        free(vs);
        if (js && !json_stdout) {
            fclose(js);
            free(jb.data);
        }
        return 1;
    }
    int skip_kind[2] = { 0, 0 };
    for (int run = 0; run < runs; run++) {
        for (int i = 0; i <= nsizes; i++) {
            const char *scene = i < nsizes ? "rain" : "pile";
            uint32_t n = i < nsizes ? sizes[i] : pile_n;
            for (int kk = 0; kk < nkinds; kk++) {
                int k = nkinds == 2 && run % 2 ? 1 - kk : kk;
                if (skip_kind[k] || failed[k * nrows + i])
                    continue;
                bench_row *rows = row_runs(all, k, i, nrows, runs);
                int missing = 0;
                if (run_row(cli, kinds[k], scene, n, &rows[run], &missing, err, sizeof err) != 0) {
                    const char *kn = kinds[k] == BP_BACKEND_OPENCL ? "opencl" : "cpu";
                    if (missing && kinds[k] == BP_BACKEND_OPENCL && !cli->backend_set) {
                        /* No device is not an error for the default bench. */
                        fprintf(out, "(opencl: skipped: %s)\n", err);
                        skip_kind[k] = 1;
                        continue;
                    }
                    fprintf(stderr, "ballpit: bench %s %u %s: %s\n", scene, n, kn, err);
                    status = missing && kinds[k] == BP_BACKEND_OPENCL ? 3 : 1;
                    failed[k * nrows + i] = 1;
                    if (missing)
                        skip_kind[k] = 1;
                }
            }
            if (run + 1 < runs)
                continue;
            const bench_row *cpu_rows = NULL; /* this row's CPU engine runs */
            for (int k = 0; k < nkinds; k++) {
                if (skip_kind[k] || failed[k * nrows + i])
                    continue;
                const bench_row *rows = row_runs(all, k, i, nrows, runs);
                for (int q = 0; q < runs; q++)
                    ms[q] = rows[q].ms_per_frame;
                const double ms_med = lower_median(ms, runs, sorted_ms);
                const bench_row *med = rows;
                for (int q = 0; q < runs; q++)
                    if (rows[q].ms_per_frame == ms_med) {
                        med = rows + q;
                        break;
                    }
                print_row(out, med);
                if (runs > 1) {
                    fprintf(out, "      the median of %d runs; ms/frame:", runs);
                    for (int q = 0; q < runs; q++)
                        fprintf(out, " %.2f", ms[q]);
                    fputc('\n', out);
                }
                /* an OpenCL row after its CPU row: the CPU engine's ms over
                 * this one's, run by run (above 1: OpenCL the faster) */
                int paired = kinds[k] == BP_BACKEND_OPENCL && cpu_rows != NULL;
                double vs_med = 0.0;
                if (paired) {
                    for (int q = 0; q < runs; q++)
                        vs[q] = cpu_rows[q].ms_per_frame / rows[q].ms_per_frame;
                    vs_med = lower_median(vs, runs, sorted_ms);
                    fprintf(out, "      speed over the cpu row's, run by run: median %.3f;", vs_med);
                    for (int q = 0; q < runs; q++)
                        fprintf(out, " %.3f", vs[q]);
                    fputc('\n', out);
                }
                fflush(out);
                if (js) {
                    json_row(js, med, cpu, cores, runs, ms, paired ? vs : NULL, vs_med);
                    fflush(js);
                }
                if (kinds[k] == BP_BACKEND_CPU)
                    cpu_rows = rows;
            }
        }
    }
    free(all);
    free(failed);
    free(ms);
    free(sorted_ms);
    free(vs);
    long draw_n = cli->bench_draw_set ? cli->bench_draw : cli->bench_sizes ? 0 : BENCH_DRAW_N;
    if (draw_n > 0 && draw_row(cli, draw_n, out, js, cpu, cores) != 0)
        status = status ? status : 1;
    if (js && !json_stdout) {
        if (fclose(js) != 0) {
            fprintf(stderr, "ballpit: --bench-json: out of memory\n");
            status = status ? status : 1;
        } else if (bp_file_write_atomic(cli->bench_json, write_json, &jb, err,
                                        sizeof err) != 0) {
            fprintf(stderr, "ballpit: --bench-json %s\n", err);
            status = status ? status : 1;
        }
        free(jb.data);
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "ballpit: cannot write to stdout\n");
        status = status ? status : 1;
    }
    return status;
}

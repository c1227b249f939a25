/* test_builtin.c - the built-in scenes, the bench worlds and the command
 * line parser (bp_cli_parse), tested in process.
 *
 * The key check: bp_rain_build(10000), the world `ballpit --bench` times,
 * is bit for bit the world assets/scenes/rain.scene describes.
 */
#include "cli.h"
#include "cli_internal.h"
#include "test.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bp_world *builtin(const char *name)
{
    char err[512] = "";
    const bp_builtin_scene *b = bp_builtin_scene_find(name);
    if (!b) {
        fprintf(stderr, "no built-in scene '%s'\n", name);
        return NULL;
    }
    bp_world *w = bp_scene_parse(b->text, b->len, name, err, sizeof err);
    if (!w)
        fprintf(stderr, "%s\n", err);
    return w;
}

static int same_world(const bp_world *a, const bp_world *b)
{
    size_t nb = (size_t)a->count * sizeof(float), nl = (size_t)a->nlines * sizeof(float);
    return !memcmp(&a->params, &b->params, sizeof a->params) && a->count == b->count &&
           a->nlines == b->nlines && !memcmp(a->x, b->x, nb) && !memcmp(a->y, b->y, nb) &&
           !memcmp(a->vx, b->vx, nb) && !memcmp(a->vy, b->vy, nb) &&
           !memcmp(a->r, b->r, nb) && !memcmp(a->m, b->m, nb) &&
           !memcmp(a->lx1, b->lx1, nl) && !memcmp(a->ly1, b->ly1, nl) &&
           !memcmp(a->lx2, b->lx2, nl) && !memcmp(a->ly2, b->ly2, nl);
}

static int test_builtin_scenes_parse(void)
{
    static const char *const names[] = { "default", "gas", "pile", "rain" };
    ENSURE(bp_builtin_scene_count == 4);
    for (int i = 0; i < 4; i++) {
        bp_world *w = builtin(names[i]);
        ENSURE(w != NULL);
        bp_stats s;
        bp_world_measure(w, &s);
        ENSURE(s.escaped == 0 && s.nonfinite == 0);
        ENSURE(w->count >= 1000 && w->nlines >= 3);
        bp_world_destroy(w);
    }
    ENSURE(bp_builtin_scene_find("nope") == NULL);
    return 0;
}

static int test_scene_contents(void)
{
    bp_world *d = builtin("default"), *g = builtin("gas"), *p = builtin("pile"),
             *r = builtin("rain");
    ENSURE(d && g && p && r);
    /* default: the 1280x720 sandbox with a few thousand balls */
    ENSURE(d->params.width == 1280.0f && d->params.height == 720.0f);
    ENSURE(d->count >= 2000 && d->count <= 5000);
    /* gas: e=1, no gravity */
    ENSURE(g->params.restitution == 1.0f && g->params.gravity_x == 0.0f &&
           g->params.gravity_y == 0.0f);
    ENSURE(g->count >= 2000);
    /* the gas swarms do not all move the same way */
    float vx0 = g->vx[0], vy0 = g->vy[0];
    int differ = 0;
    for (uint32_t i = 0; i < g->count; i++)
        differ += g->vx[i] != vx0 || g->vy[i] != vy0;
    ENSURE(differ > (int)g->count / 2);
    /* pile: gravity down */
    ENSURE(p->params.gravity_y > 0.0f && p->count >= 1000);
    /* default and pile settle their swarms: no ball starts overlapping
     * another, so neither bursts apart in its first frame */
    bp_stats sd, sp;
    bp_world_measure(d, &sd);
    bp_world_measure(p, &sp);
    ENSURE(sd.max_overlap == 0.0 && sp.max_overlap == 0.0);
    /* rain: r=2 everywhere, 8 ramps, gravity, e=0.9, 30 sub-steps at 33 fps */
    ENSURE(r->count == BP_RAIN_REF_N && r->nlines == 8);
    for (uint32_t i = 0; i < r->count; i++)
        ENSURE(r->r[i] == 2.0f);
    for (uint32_t i = 0; i < r->nlines; i++)
        ENSURE(r->ly1[i] != r->ly2[i]); /* slanted */
    ENSURE(r->params.restitution == 0.9f && r->params.gravity_y == 900.0f);
    ENSURE(r->params.substeps == 30 && r->params.fps == 33.0f);
    bp_world_destroy(d);
    bp_world_destroy(g);
    bp_world_destroy(p);
    bp_world_destroy(r);
    return 0;
}

static int test_rain_build_matches_scene_file(void)
{
    char err[256] = "";
    bp_world *file = builtin("rain");
    bp_world *code = bp_rain_build(BP_RAIN_REF_N, err, sizeof err);
    ENSURE(file && code);
    ENSURE(same_world(file, code));
    bp_world_destroy(file);
    bp_world_destroy(code);
    return 0;
}

static int test_rain_build_scales(void)
{
    char err[256] = "";
    bp_world *small = bp_rain_build(1000, err, sizeof err);
    bp_world *big = bp_rain_build(40000, err, sizeof err);
    bp_world *ref = bp_rain_build(BP_RAIN_REF_N, err, sizeof err);
    ENSURE(small && big && ref);
    ENSURE(small->count == 1000 && big->count == 40000);
    /* Below the reference size the box stays; above it every length
     * doubles when N quadruples. */
    ENSURE(small->params.width == ref->params.width);
    ENSURE(big->params.width == 2.0f * ref->params.width &&
           big->params.height == 2.0f * ref->params.height);
    ENSURE(big->nlines == 8);
    for (uint32_t i = 0; i < 8; i++)
        ENSURE(big->lx1[i] == 2.0f * ref->lx1[i] && big->ly2[i] == 2.0f * ref->ly2[i]);
    bp_stats s;
    bp_world_measure(big, &s);
    ENSURE(s.escaped == 0 && s.nonfinite == 0);
    ENSURE(bp_rain_build(0, err, sizeof err) == NULL && strstr(err, "out of range"));
    bp_world_destroy(small);
    bp_world_destroy(big);
    bp_world_destroy(ref);
    return 0;
}

static int test_pile_build(void)
{
    char err[256] = "";
    bp_world *w = bp_pile_build(50000, err, sizeof err);
    ENSURE(w != NULL);
    ENSURE(w->count == 50000 && w->nlines == 0);
    ENSURE(w->params.width == 1280.0f && w->params.height == 720.0f);
    bp_stats s;
    bp_world_measure(w, &s);
    ENSURE(s.escaped == 0 && s.max_overlap == 0.0 && s.kinetic_energy == 0.0);
    /* Densely packed: the lowest row sits on the floor, rows 3.48 px apart. */
    float top = w->params.height;
    for (uint32_t i = 0; i < w->count; i++)
        top = w->y[i] < top ? w->y[i] : top;
    ENSURE(top > 150.0f && top < 200.0f);
    bp_world_destroy(w);
    return 0;
}

/* Issue 6's memory budget: the CPU engine attached to the bench's worlds
 * holds at most 64 bytes per ball together with the world's own ball
 * arrays (x, y, vx, vy, r, m, contacts: 25), grids included, as
 * `ballpit --bench` reports it; and a world that grows gets 25% slack,
 * so a sandbox pouring balls does not reallocate every frame. */
static int test_cpu_engine_memory(void)
{
    char err[256] = "";
    static const struct { const char *scene; uint32_t n; } rows[] = {
        { "rain", 10000 }, { "rain", 50000 }, { "rain", 200000 }, { "pile", 50000 },
    };
    const double world = 6 * sizeof(float) + 1;
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        bp_world *w = !strcmp(rows[k].scene, "pile") ? bp_pile_build(rows[k].n, err, sizeof err)
                                                     : bp_rain_build(rows[k].n, err, sizeof err);
        bp_engine_opts o = { .sort_by_place = 1 }; /* as the program runs it */
        bp_engine *e = bp_engine_create(BP_BACKEND_CPU, &o, err, sizeof err);
        ENSURE(w && e);
        ENSURE(bp_engine_memory(e) == 0);
        ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
        /* one sub-step: the first sorts the balls by place, and the ids
         * that keeps (4 bytes a ball) count too */
        ENSURE(bp_engine_step(e, w, 1, err, sizeof err) == 0);
        ENSURE(w->id != NULL);
        double per_ball = world + sizeof *w->id + (double)bp_engine_memory(e) / w->count;
        fprintf(stderr, "%s %u: %.2f bytes per ball\n", rows[k].scene, w->count, per_ball);
        /* the 33 bytes of per-ball scratch are all there, and the grids
         * on top stay within the budget */
        ENSURE(per_ball >= world + 33.0);
        ENSURE(per_ball <= 64.0);
        if (k == 0) {
            /* one more ball: the engine grows to 1.25x, once */
            size_t before = bp_engine_memory(e);
            ENSURE(bp_world_add_ball(w, 5.0f, 5.0f, 0.0f, 0.0f, 2.0f, 0.0f, err, sizeof err) >= 0);
            ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
            size_t grown = bp_engine_memory(e);
            ENSURE(grown > before + 33 * (size_t)(w->count / 5));
            ENSURE(bp_world_add_ball(w, 9.0f, 5.0f, 0.0f, 0.0f, 2.0f, 0.0f, err, sizeof err) >= 0);
            ENSURE(bp_engine_attach(e, w, err, sizeof err) == 0);
            ENSURE(bp_engine_memory(e) <= grown + 64);
            ENSURE(bp_engine_step(e, w, 3, err, sizeof err) == 0);
        }
        bp_engine_destroy(e);
        bp_world_destroy(w);
    }
    return 0;
}

static int test_parse_sizes(void)
{
    uint32_t v[BP_BENCH_MAX_SIZES];
    char err[256];
    ENSURE(bp_parse_sizes("1000,10k,2M", v, BP_BENCH_MAX_SIZES, err, sizeof err) == 3);
    ENSURE(v[0] == 1000 && v[1] == 10000 && v[2] == 2000000);
    ENSURE(bp_parse_sizes("7", v, BP_BENCH_MAX_SIZES, err, sizeof err) == 1 && v[0] == 7);
    static const char *const bad[] = { "", "0", "1,,2", "1,", ",1", "abc", "1.5k", "-5",
                                       "5M", "10x", "1000000000000" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        if (bp_parse_sizes(bad[i], v, BP_BENCH_MAX_SIZES, err, sizeof err) != -1) {
            fprintf(stderr, "accepted --bench-sizes '%s'\n", bad[i]);
            return 1;
        }
        ENSURE(strncmp(err, "--bench-sizes", 13) == 0);
    }
    ENSURE(bp_parse_sizes("1,2,3", v, 2, err, sizeof err) == -1);
    return 0;
}

/* Runs bp_cli_parse on a NULL-terminated list of arguments. */
static int parse(bp_cli *c, char *err, size_t errlen, const char *a0, ...)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = (char *)"ballpit";
    va_list ap;
    va_start(ap, a0);
    for (const char *a = a0; a && argc < 31; a = va_arg(ap, const char *))
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    return bp_cli_parse(argc, argv, c, err, errlen);
}

static int test_cli_parse_good(void)
{
    bp_cli c;
    char err[256];
    ENSURE(parse(&c, err, sizeof err, (const char *)NULL) == 0);
    ENSURE(c.mode == BP_MODE_SANDBOX && c.scene == NULL && c.backend == BP_BACKEND_CPU);
    ENSURE(parse(&c, err, sizeof err, "--headless", "gas", "--frames", "12", "--threads",
                 "2", "--dump", "out.csv", "--stats", (const char *)NULL) == 0);
    ENSURE(c.mode == BP_MODE_HEADLESS && !strcmp(c.scene, "gas") && c.frames == 12);
    ENSURE(c.engine.threads == 2 && !strcmp(c.dump, "out.csv") && c.stats == 1);
    ENSURE(parse(&c, err, sizeof err, "--headless=x.scene", "--frames=0", "--backend",
                 "opencl", "--device", "1", (const char *)NULL) == 0);
    ENSURE(c.frames == 0 && c.backend == BP_BACKEND_OPENCL && c.backend_set);
    ENSURE(c.engine.device == 1 && c.engine.device_set);
    ENSURE(parse(&c, err, sizeof err, "--bench", "--bench-sizes", "1k,2k", "--bench-frames",
                 "7", "--bench-json", "-", (const char *)NULL) == 0);
    ENSURE(c.mode == BP_MODE_BENCH && !strcmp(c.bench_sizes, "1k,2k") && c.bench_frames == 7);
    ENSURE(!strcmp(c.bench_json, "-") && !c.bench_draw_set && c.bench_runs == 0);
    ENSURE(parse(&c, err, sizeof err, "--bench", "--bench-runs", "5", (const char *)NULL) == 0);
    ENSURE(c.bench_runs == 5);
    ENSURE(parse(&c, err, sizeof err, "--bench", "--bench-draw", "0", (const char *)NULL) == 0);
    ENSURE(c.bench_draw_set && c.bench_draw == 0);
    ENSURE(parse(&c, err, sizeof err, "--bench", "--bench-draw=100000", (const char *)NULL) == 0);
    ENSURE(c.bench_draw_set && c.bench_draw == 100000);
    ENSURE(parse(&c, err, sizeof err, "my.scene", "--window", "800x600", "--font", "f.ttf",
                 "--screenshot-dir", "shots", "--save-to", "s.scene", "--screenshot-after",
                 "5", "--screenshot-path", "a.png", "--state-file", "st.json",
                 (const char *)NULL) == 0);
    ENSURE(c.mode == BP_MODE_SANDBOX && !strcmp(c.scene, "my.scene"));
    ENSURE(c.width == 800 && c.height == 600 && !strcmp(c.font, "f.ttf"));
    ENSURE(!strcmp(c.screenshot_dir, "shots") && !strcmp(c.save_to, "s.scene"));
    ENSURE(c.screenshot_after == 5 && !strcmp(c.screenshot_path, "a.png"));
    ENSURE(!strcmp(c.state_file, "st.json"));
    ENSURE(parse(&c, err, sizeof err, "--list-devices", (const char *)NULL) == 0 &&
           c.mode == BP_MODE_LIST_DEVICES);
    /* --help and --version win, even next to other flags. */
    ENSURE(parse(&c, err, sizeof err, "--frames", "x", "--help", (const char *)NULL) == 0 &&
           c.mode == BP_MODE_HELP);
    ENSURE(parse(&c, err, sizeof err, "--bench", "--version", (const char *)NULL) == 0 &&
           c.mode == BP_MODE_VERSION);
    /* "--" ends the flags: a scene may start with a dash. */
    ENSURE(parse(&c, err, sizeof err, "--", "-odd.scene", (const char *)NULL) == 0 &&
           !strcmp(c.scene, "-odd.scene"));
    return 0;
}

static int test_cli_parse_bad(void)
{
    static const struct {
        const char *args[8];
        const char *what;
    } bad[] = {
        { { "--bogus" }, "unknown option '--bogus'" },
        { { "-x" }, "unknown option '-x'" },
        { { "--headless", "rain" }, "--headless needs --frames N" },
        { { "--headless" }, "--headless needs a value" },
        { { "--headless", "rain", "--frames", "-3" }, "--frames: '-3' is not a whole number" },
        { { "--headless", "rain", "--frames", "abc" }, "--frames: 'abc' is not a whole number" },
        { { "--headless", "rain", "--frames", "2000000000" }, "out of range" },
        { { "--headless", "rain", "--frames" }, "--frames needs a value" },
        { { "--headless", "rain", "--frames", "--stats" }, "--frames needs a value" },
        { { "--headless", "rain", "--frames", "1", "--threads", "0" }, "--threads: 0 is out of range" },
        { { "--headless", "rain", "--frames", "1", "--threads", "1.5" }, "not a whole number" },
        { { "--headless", "rain", "--frames", "1", "--backend", "gpu" }, "'gpu' is not cpu or opencl" },
        { { "--headless", "rain", "--frames", "1", "--device", "1" }, "--device needs --backend opencl" },
        { { "--headless", "rain", "--frames", "1", "--frames", "2" }, "--frames given twice" },
        { { "--headless", "rain", "--frames", "1", "--font", "f" }, "--font is for the sandbox window" },
        { { "--headless", "rain", "--frames", "1", "--bench-frames", "3" }, "--bench-frames needs --bench" },
        { { "--headless", "rain", "--frames", "1", "extra" }, "unexpected argument 'extra'" },
        { { "--headless", "rain", "--frames", "1", "--bench" }, "cannot be combined" },
        { { "--frames", "3" }, "--frames needs --headless" },
        { { "--stats" }, "--stats needs --headless" },
        { { "--stats=1", "--headless", "a", "--frames", "1" }, "--stats takes no value" },
        { { "--dump", "" }, "--dump: empty value" },
        { { "" }, "empty scene name" },
        { { "--fr\names" }, "unknown option '--fr?ames'" },
        { { "--bench", "--bench-sizes", "0" }, "--bench-sizes" },
        { { "--bench", "--bench-frames", "0" }, "--bench-frames: 0 is out of range" },
        { { "--bench", "--bench-draw", "1e5" }, "--bench-draw: '1e5' is not a whole number" },
        { { "--bench", "--bench-draw", "5000000" }, "--bench-draw: 5000000 is out of range" },
        { { "--bench-draw", "10" }, "--bench-draw needs --bench" },
        { { "--bench", "--bench-runs", "0" }, "--bench-runs: 0 is out of range" },
        { { "--bench", "--bench-runs", "100" }, "--bench-runs: 100 is out of range" },
        { { "--bench", "--bench-runs", "two" }, "--bench-runs: 'two' is not a whole number" },
        { { "--headless", "rain", "--frames", "1", "--bench-runs", "3" }, "--bench-runs needs --bench" },
        { { "--bench", "rain" }, "unexpected argument 'rain' with --bench" },
        { { "--list-devices", "--threads", "2" }, "--threads cannot be used with --list-devices" },
        { { "a.scene", "b.scene" }, "more than one scene" },
        { { "--window", "800" }, "--window: '800' is not WIDTHxHEIGHT" },
        { { "--window", "10x10" }, "out of range" },
        { { "--window", "800xabc" }, "not a whole number" },
        { { "--screenshot-after", "0" }, "--screenshot-after: 0 is out of range" },
        { { "--screenshot-path", "a.png" }, "--screenshot-path needs --screenshot-after" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *argv[10];
        int argc = 0;
        argv[argc++] = (char *)"ballpit";
        for (int k = 0; k < 8 && bad[i].args[k]; k++)
            argv[argc++] = (char *)bad[i].args[k];
        argv[argc] = NULL;
        bp_cli c;
        char err[256] = "";
        int rc = bp_cli_parse(argc, argv, &c, err, sizeof err);
        if (rc != 2 || !strstr(err, bad[i].what) || strchr(err, '\n')) {
            fprintf(stderr, "case %zu (%s ...): rc %d, message '%s', wanted '%s'\n", i,
                    bad[i].args[0], rc, err, bad[i].what);
            return 1;
        }
    }
    return 0;
}

static int test_load_scene_path_wins(void)
{
    char err[512] = "";
    /* The test runs in its build folder: a file named "pile" there wins
     * over the built-in pile. */
    FILE *f = fopen("pile", "w");
    ENSURE(f != NULL);
    fputs("ballpit-scene 1\nball 10 10 0 0 2\n", f);
    ENSURE(fclose(f) == 0);
    bp_world *w = bp_cli_load_scene("pile", err, sizeof err);
    unlink("pile");
    ENSURE(w != NULL && w->count == 1);
    bp_world_destroy(w);
    w = bp_cli_load_scene("pile", err, sizeof err);
    ENSURE(w != NULL && w->count > 1);
    bp_world_destroy(w);
    w = bp_cli_load_scene(NULL, err, sizeof err); /* the default scene */
    ENSURE(w != NULL && w->count >= 2000);
    bp_world_destroy(w);
    w = bp_cli_load_scene("no-such-scene", err, sizeof err);
    ENSURE(w == NULL);
    ENSURE(!strcmp(err, "no-such-scene: no such file, and not a built-in scene "
                        "(default, gas, pile, rain)"));
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(test_builtin_scenes_parse),
        BP_TEST(test_scene_contents),
        BP_TEST(test_rain_build_matches_scene_file),
        BP_TEST(test_rain_build_scales),
        BP_TEST(test_pile_build),
        BP_TEST(test_cpu_engine_memory),
        BP_TEST(test_parse_sizes),
        BP_TEST(test_cli_parse_good),
        BP_TEST(test_cli_parse_bad),
        BP_TEST(test_load_scene_path_wins),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

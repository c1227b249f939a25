/* test_scene.c - the scene file format v1 (docs/scene-format.md): every
 * malformed line is rejected with "FILE:LINE: what is wrong", good files
 * parse to the values they say, save -> load is bit-exact, and a failed
 * save never harms the old file.
 */
#include "ballpit.h"
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define H "ballpit-scene 1\n"

/* Parses text named "t.scene" and expects a failure on `line` whose message
 * contains `what`; prints the details when it is not so. */
static int expect_error(const char *text, size_t len, int line, const char *what)
{
    char err[512] = "";
    bp_world *w = bp_scene_parse(text, len, "t.scene", err, sizeof err);
    if (w) {
        fprintf(stderr, "accepted a bad scene:\n%.200s\n", text);
        bp_world_destroy(w);
        return 1;
    }
    char prefix[64];
    snprintf(prefix, sizeof prefix, "t.scene:%d: ", line);
    if (strncmp(err, prefix, strlen(prefix)) != 0 || !strstr(err, what) ||
        strchr(err, '\n')) {
        fprintf(stderr, "scene:\n%.200s\ngot error:  %s\nwanted: %s...%s...\n", text, err,
                prefix, what);
        return 1;
    }
    return 0;
}

typedef struct bad_case {
    const char *text;
    int line;
    const char *what;
} bad_case;

static const bad_case bad_cases[] = {
    /* header */
    { "", 1, "missing header" },
    { "# only a comment\n\n", 2, "missing header" },
    { "world 100 100\n", 1, "missing header" },
    { "ballpit-scene\n", 1, "header has no version" },
    { "ballpit-scene 2\n", 1, "unknown scene format version '2'" },
    { "ballpit-scene one\n", 1, "unknown scene format version 'one'" },
    { "ballpit-scene 1 extra\n", 1, "extra field 'extra'" },
    { H "ballpit-scene 1\n", 2, "given twice" },
    /* unknown keywords */
    { H "foo 1 2\n", 2, "unknown keyword 'foo'" },
    { H "Ball 1 2 0 0 2\n", 2, "unknown keyword 'Ball'" },
    { H "\n# comment\n  balls 1 2 0 0 2\n", 4, "unknown keyword 'balls'" },
    /* missing and extra fields */
    { H "ball 1 2 3\n", 2, "'ball' needs X Y VX VY R [M], got 3 fields" },
    { H "ball 10 10 0 0 2 1 5\n", 2, "extra field '5'" },
    { H "line 1 2 3\n", 2, "'line' needs X1 Y1 X2 Y2" },
    { H "line 1 2 3 4 5\n", 2, "extra field '5'" },
    { H "swarm 100 100 10 2 5 0\n", 2, "'swarm' needs" },
    { H "swarm 100 100 10 2 5 0 0 1 9\n", 2, "extra field '9'" },
    { H "swarm 100 100 10 2 5 0 0 1 settle 9\n", 2, "extra field 'settle'" },
    { H "swarm 100 100 10 2 5 0 0 1 2 3 4 5 6 settle\n", 2, "extra field '2'" },
    { H "swarm 100 100 10 2 5 0 0 settled\n", 2, "seed 'settled' is not a whole number" },
    { H "swarm 100 100 10 2 5 0 settle\n", 2, "vy 'settle' is not a number" },
    { H "world 100\n", 2, "'world' needs W H" },
    { H "world 100 100 100\n", 2, "extra field '100'" },
    { H "gravity 0\n", 2, "'gravity' needs GX GY" },
    { H "restitution\n", 2, "'restitution' needs E" },
    { H "restitution 0.5 0.5\n", 2, "extra field '0.5'" },
    { H "fps 33 1\n", 2, "extra field '1'" },
    { H "substeps\n", 2, "'substeps' needs S" },
    { H "speed_cap 1 2\n", 2, "extra field '2'" },
    /* non-numbers */
    { H "ball 10 abc 0 0 2\n", 2, "y 'abc' is not a number" },
    { H "ball 10 10 0 0 2x\n", 2, "radius '2x' is not a number" },
    { H "ball 10 10 0 0 2 heavy\n", 2, "mass 'heavy' is not a number" },
    { H "line 1 2 3 four\n", 2, "y2 'four' is not a number" },
    { H "gravity 0 down\n", 2, "gravity y 'down' is not a number" },
    { H "world 1,280 720\n", 2, "width '1,280' is not a number" },
    { H "swarm 100 100 ten 2 5 0 0\n", 2, "count 'ten' is not a whole number" },
    { H "swarm 100 100 -5 2 5 0 0\n", 2, "count '-5' is not a whole number" },
    { H "swarm 100 100 2.5 2 5 0 0\n", 2, "count '2.5' is not a whole number" },
    { H "swarm 100 100 10 2 5 0 0 -1\n", 2, "seed '-1' is not a whole number" },
    { H "substeps 2.5\n", 2, "substeps '2.5' is not a whole number" },
    /* NaN and infinity */
    { H "ball 10 nan 0 0 2\n", 2, "y 'nan' is not a finite number" },
    { H "ball 10 10 inf 0 2\n", 2, "vx 'inf' is not a finite number" },
    { H "ball 10 10 0 -Infinity 2\n", 2, "vy '-Infinity' is not a finite number" },
    { H "gravity NAN 0\n", 2, "not a finite number" },
    { H "line 0 0 1e99 0\n", 2, "x2 '1e99' is out of range" },
    { H "ball 10 10 2e7 0 2\n", 2, "vx '2e7' is out of range" },
    { H "restitution nan\n", 2, "not a finite number" },
    /* radius */
    { H "ball 10 10 0 0 0\n", 2, "radius 0 must be > 0" },
    { H "ball 10 10 0 0 -3\n", 2, "radius -3 must be > 0" },
    { H "ball 10 10 0 0 0.1\n", 2, "radius 0.1 is outside 0.5..200" },
    { H "ball 300 300 0 0 250\n", 2, "radius 250 is outside 0.5..200" },
    { H "swarm 100 100 10 0 5 0 0\n", 2, "radius 0 must be > 0" },
    { H "swarm 100 100 10 201 5 0 0\n", 2, "radius 201 is outside" },
    /* mass */
    { H "ball 10 10 0 0 2 0\n", 2, "mass 0 must be > 0" },
    { H "ball 10 10 0 0 2 -1\n", 2, "mass -1 must be > 0" },
    /* restitution */
    { H "restitution 1.5\n", 2, "restitution 1.5 is outside 0..1" },
    { H "restitution -0.1\n", 2, "restitution -0.1 is outside 0..1" },
    /* outside the world */
    { H "ball 2000 10 0 0 2\n", 2, "ball centre (2000, 10) is outside the world 0..1280 x 0..720" },
    { H "ball 10 -1 0 0 2\n", 2, "outside the world" },
    { H "world 200 100\nball 150 150 0 0 2\n", 3, "outside the world 0..200 x 0..100" },
    { H "swarm 1300 100 10 2 5 0 0\n", 2, "swarm centre (1300, 100) is outside the world" },
    /* counts */
    { H "swarm 100 100 5000000 2 10 0 0\n", 2, "count '5000000' is above the limit 4194304" },
    { H "swarm 100 100 0 2 10 0 0\n", 2, "swarm count must be 1..4194304" },
    { H "swarm 100 100 99999999999999999999999 2 10 0 0\n", 2, "above the limit 4194304" },
    { H "substeps 1001\n", 2, "above the limit 1000" },
    { H "substeps 0\n", 2, "substeps must be 1..1000" },
    /* world size */
    { H "world 8 720\n", 2, "world size 8x720 is out of range (each side 16..65536 px)" },
    { H "world 1280 100000\n", 2, "world size 1280x100000 is out of range" },
    { H "world -100 100\n", 2, "out of range" },
    /* other settings */
    { H "fps 0\n", 2, "fps 0 is out of range" },
    { H "fps 5000\n", 2, "fps 5000 is out of range" },
    { H "speed_cap 0\n", 2, "speed_cap 0 is out of range" },
    { H "speed_cap 200000\n", 2, "speed_cap 200000 is out of range" },
    { H "speed_cap 100\nball 10 10 200 0 2\n", 3, "speed 200 px/s is above the speed cap 100" },
    { H "swarm 100 100 10 2 5 30000 0\n", 2, "above the speed cap 20000" },
    /* order and duplicates */
    { H "world 100 100\nworld 200 200\n", 3, "'world' given twice (first on line 2)" },
    { H "ball 10 10 0 0 2\ngravity 0 0\n", 3,
      "'gravity' must come before the first line, ball or swarm (line 2)" },
    { H "line 0 0 1 1\n\nworld 100 100\n", 4, "'world' must come before" },
    /* control bytes in a field are shown as '?' so the message stays one line */
    { H "b\x1b[2Jall 1 2\n", 2, "unknown keyword 'b?[2Jall'" },
    { H "ball 1 2 3 4 \x01\n", 2, "radius '?' is not a number" },
    /* line numbers count blank lines, comments and CRLF line ends */
    { "# a scene\r\n" H "\r\n  # indented comment\r\nball 10 10 0 0 2 # ok\r\nball 1 2\r\n", 6,
      "'ball' needs" },
};

static int test_bad_inputs(void)
{
    int failed = 0;
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++)
        failed |= expect_error(bad_cases[i].text, strlen(bad_cases[i].text),
                               bad_cases[i].line, bad_cases[i].what);
    return failed;
}

static int test_too_many_balls_total(void)
{
    /* Each swarm is within the limit, together they are not. */
    const char *t = H "world 4000 4000\nswarm 2000 2000 3000000 0.5 1900 0 0\n"
                      "swarm 2000 2000 2000000 0.5 1900 0 0\n";
    return expect_error(t, strlen(t), 4, "too many balls: this swarm makes 5000000, the "
                        "limit is 4194304");
}

static int test_long_line(void)
{
    size_t n = 5000;
    char *t = malloc(n + 64);
    ENSURE(t);
    strcpy(t, H "gravity 0 900\n# ");
    size_t at = strlen(t);
    memset(t + at, 'x', n);
    strcpy(t + at + n, "\nball 10 10 0 0 2\n");
    int rc = expect_error(t, strlen(t), 3, "line is longer than 4096 characters");
    /* A line of exactly 4096 characters is fine. */
    strcpy(t, H "#");
    at = strlen(t);
    memset(t + at, 'y', 4095);
    strcpy(t + at + 4095, "\n");
    char err[256];
    bp_world *w = bp_scene_parse(t, strlen(t), "t.scene", err, sizeof err);
    free(t);
    ENSURE(rc == 0);
    ENSURE(w != NULL);
    bp_world_destroy(w);
    return 0;
}

static int test_nul_byte(void)
{
    const char t[] = H "ball 10 10 0 0 2\nba\0ll 1 1 0 0 2\n";
    return expect_error(t, sizeof t - 1, 3, "NUL byte");
}

static int test_good_scene(void)
{
    const char *t =
        "# a comment before the header\n"
        "\n"
        "ballpit-scene 1   # trailing comment\n"
        "world 800 600\n"
        "gravity\t-10.5  450\n"
        "restitution 0.25\n"
        "fps 60\n"
        "substeps 12\n"
        "speed_cap 5000\n"
        "line 0 500 800 550   # a ramp\n"
        "line 100 100 100 100\n"
        "ball 400 300 10 -20 5\n"
        "ball 10.5 20.25 0 0 3 7.5\n"
        "swarm 400 200 100 2 50 5 6 42\n";
    char err[256] = "";
    bp_world *w = bp_scene_parse(t, strlen(t), "good.scene", err, sizeof err);
    if (!w)
        fprintf(stderr, "%s\n", err);
    ENSURE(w != NULL);
    ENSURE(w->params.width == 800.0f && w->params.height == 600.0f);
    ENSURE(w->params.gravity_x == -10.5f && w->params.gravity_y == 450.0f);
    ENSURE(w->params.restitution == 0.25f);
    ENSURE(w->params.fps == 60.0f && w->params.substeps == 12);
    ENSURE(w->params.speed_cap == 5000.0f);
    ENSURE(w->nlines == 2);
    ENSURE(w->lx1[0] == 0.0f && w->ly1[0] == 500.0f && w->lx2[0] == 800.0f &&
           w->ly2[0] == 550.0f);
    ENSURE(w->lx1[1] == 100.0f && w->lx2[1] == 100.0f);
    ENSURE(w->count == 102);
    ENSURE(w->x[0] == 400.0f && w->y[0] == 300.0f && w->vx[0] == 10.0f &&
           w->vy[0] == -20.0f && w->r[0] == 5.0f);
    ENSURE_NEAR(w->m[0], 3.14159265 * 25.0, 1e-3); /* default mass pi r^2 */
    ENSURE(w->x[1] == 10.5f && w->y[1] == 20.25f && w->r[1] == 3.0f && w->m[1] == 7.5f);
    for (uint32_t i = 2; i < w->count; i++) {
        double dx = w->x[i] - 400.0, dy = w->y[i] - 200.0;
        ENSURE(sqrt(dx * dx + dy * dy) <= 50.0 + 1e-3);
        ENSURE(w->r[i] == 2.0f && w->vx[i] == 5.0f && w->vy[i] == 6.0f);
    }
    bp_world_destroy(w);
    return 0;
}

static int test_defaults_and_empty(void)
{
    char err[256] = "";
    bp_world *w = bp_scene_parse(H, strlen(H), "e.scene", err, sizeof err);
    ENSURE(w != NULL);
    bp_params d = bp_params_default();
    ENSURE(w->params.width == d.width && w->params.height == d.height);
    ENSURE(w->params.gravity_x == d.gravity_x && w->params.gravity_y == d.gravity_y);
    ENSURE(w->params.restitution == d.restitution && w->params.fps == d.fps);
    ENSURE(w->params.substeps == d.substeps && w->params.speed_cap == d.speed_cap);
    ENSURE(w->count == 0 && w->nlines == 0);
    bp_world_destroy(w);
    /* Gravity 0 0 and restitution 0 and 1 are valid values, not "unset". */
    const char *t = H "gravity 0 0\nrestitution 0\n";
    w = bp_scene_parse(t, strlen(t), "z.scene", err, sizeof err);
    ENSURE(w != NULL);
    ENSURE(w->params.gravity_y == 0.0f && w->params.restitution == 0.0f);
    bp_world_destroy(w);
    /* A UTF-8 byte order mark before the header is skipped. */
    t = "\xEF\xBB\xBF" H "restitution 0.5\n";
    w = bp_scene_parse(t, strlen(t), "bom.scene", err, sizeof err);
    ENSURE(w != NULL && w->params.restitution == 0.5f);
    bp_world_destroy(w);
    /* No newline at the end of the last line. */
    t = H "restitution 1";
    w = bp_scene_parse(t, strlen(t), "z.scene", err, sizeof err);
    ENSURE(w != NULL && w->params.restitution == 1.0f);
    bp_world_destroy(w);
    return 0;
}

static int same_balls(const bp_world *a, const bp_world *b)
{
    size_t nb = (size_t)a->count * sizeof(float);
    return a->count == b->count && !memcmp(a->x, b->x, nb) && !memcmp(a->y, b->y, nb) &&
           !memcmp(a->vx, b->vx, nb) && !memcmp(a->vy, b->vy, nb) &&
           !memcmp(a->r, b->r, nb) && !memcmp(a->m, b->m, nb);
}

static int same_lines(const bp_world *a, const bp_world *b)
{
    size_t nl = (size_t)a->nlines * sizeof(float);
    return a->nlines == b->nlines && !memcmp(a->lx1, b->lx1, nl) &&
           !memcmp(a->ly1, b->ly1, nl) && !memcmp(a->lx2, b->lx2, nl) &&
           !memcmp(a->ly2, b->ly2, nl);
}

static int test_swarm_deterministic_and_default_seed(void)
{
    const char *a = H "swarm 300 300 500 2 100 0 0\nswarm 600 300 500 2 100 0 0\n";
    const char *b = H "swarm 300 300 500 2 100 0 0 1\nswarm 600 300 500 2 100 0 0 2\n";
    const char *c = H "swarm 300 300 500 2 100 0 0 7\nswarm 600 300 500 2 100 0 0 2\n";
    char err[256];
    bp_world *wa = bp_scene_parse(a, strlen(a), "a", err, sizeof err);
    bp_world *wa2 = bp_scene_parse(a, strlen(a), "a", err, sizeof err);
    bp_world *wb = bp_scene_parse(b, strlen(b), "b", err, sizeof err);
    bp_world *wc = bp_scene_parse(c, strlen(c), "c", err, sizeof err);
    ENSURE(wa && wa2 && wb && wc);
    ENSURE(wa->count == 1000);
    ENSURE(same_balls(wa, wa2));   /* same text, same balls */
    ENSURE(same_balls(wa, wb));    /* default seeds are 1, 2, ... */
    ENSURE(!same_balls(wa, wc));   /* another seed, other positions */
    bp_world_destroy(wa);
    bp_world_destroy(wa2);
    bp_world_destroy(wb);
    bp_world_destroy(wc);
    return 0;
}

/* A swarm line ending in `settle` (an extension of v1) draws the same balls
 * (default seeds as without it) and then gives them room among the balls
 * and lines before it: no two balls and no ball and line closer than the
 * resting skin (0.05 of a radius), the balls with room as drawn left where
 * they were, the same balls on every parse. The plain lines overlap. */
static int test_swarm_settle(void)
{
    const char *plain = H "line 250 250 350 350\nswarm 300 300 500 2 60 0 0\n"
                          "swarm 520 300 500 2 60 0 0\n";
    const char *settled = H "line 250 250 350 350\nswarm 300 300 500 2 60 0 0 settle\n"
                            "swarm 520 300 500 2 60 0 0 2 settle\n";
    char err[256];
    bp_world *p = bp_scene_parse(plain, strlen(plain), "plain", err, sizeof err);
    bp_world *w = bp_scene_parse(settled, strlen(settled), "settled", err, sizeof err);
    bp_world *w2 = bp_scene_parse(settled, strlen(settled), "settled", err, sizeof err);
    ENSURE(p && w && w2);
    ENSURE(p->count == 1000 && w->count == 1000 && same_balls(w, w2));
    bp_stats sp, sw;
    bp_world_measure(p, &sp);
    bp_world_measure(w, &sw);
    printf("largest overlap: plain %.3f r, settled %.3f r\n", sp.max_overlap, sw.max_overlap);
    ENSURE(sp.max_overlap > 0.5 && sw.max_overlap == 0.0);
    uint32_t moved = 0;
    double gap = INFINITY, line_gap = INFINITY;
    for (uint32_t i = 0; i < w->count; i++) {
        moved += w->x[i] != p->x[i] || w->y[i] != p->y[i];
        ENSURE(w->vx[i] == p->vx[i] && w->vy[i] == p->vy[i] && w->r[i] == p->r[i]);
        for (uint32_t j = i + 1; j < w->count; j++)
            gap = fmin(gap, hypot((double)w->x[j] - w->x[i], (double)w->y[j] - w->y[i]) - 4.0);
        /* the line runs along x = y: the distance of a centre is |x - y| / sqrt 2 */
        if (w->x[i] >= 250.0f && w->x[i] <= 350.0f)
            line_gap = fmin(line_gap, fabs((double)w->x[i] - w->y[i]) / sqrt(2.0) - 2.0);
    }
    printf("moved %u of 1000; smallest gap %.3f px, to the line %.3f px\n", moved, gap, line_gap);
    ENSURE(moved > 100 && moved < 900);
    ENSURE(gap >= 0.05 * 2.0 && line_gap >= 0.05 * 2.0);
    bp_world_destroy(p);
    bp_world_destroy(w);
    bp_world_destroy(w2);
    return 0;
}

/* A `settle` swarm whose disc crosses the box: the balls drawn outside it
 * are mirrored back in, not all put on the wall one on another (there, 1,500
 * balls on one line left the search without room: 1,305 of these 6,000
 * stayed overlapping, up to 2 radii, and burst apart at 379 px/s RMS in the
 * first frame). Every ball finds room and the first frame is gravity's
 * alone (27 px/s). Without `settle` the swarm is placed as before, on the
 * wall. */
static int test_swarm_settle_across_walls(void)
{
    const char *settled = H "swarm 640 620 6000 1.5 300 0 0 1 settle\n"
                            "swarm 60 60 800 2 150 0 0 2 settle\n";
    const char *plain = H "swarm 640 620 6000 1.5 300 0 0 1\n"
                          "swarm 60 60 800 2 150 0 0 2\n";
    char err[256];
    bp_world *w = bp_scene_parse(settled, strlen(settled), "settled", err, sizeof err);
    bp_world *p = bp_scene_parse(plain, strlen(plain), "plain", err, sizeof err);
    ENSURE(w && p && w->count == 6800 && p->count == 6800);
    bp_stats sw, sp;
    bp_world_measure(w, &sw);
    bp_world_measure(p, &sp);
    uint32_t on_wall = 0, same = 0;
    for (uint32_t i = 0; i < w->count; i++) {
        float r = w->r[i];
        ENSURE(w->x[i] >= r && w->x[i] <= 1280.0f - r && w->y[i] >= r && w->y[i] <= 720.0f - r);
        on_wall += p->x[i] == p->r[i] || p->y[i] == p->r[i] || p->y[i] == 720.0f - p->r[i];
        same += w->x[i] == p->x[i] && w->y[i] == p->y[i];
    }
    printf("largest overlap: settled %.3f r, plain %.3f r; plain balls on a wall %u, "
           "settled balls where the plain ones are %u\n",
           sw.max_overlap, sp.max_overlap, on_wall, same);
    ENSURE(sw.max_overlap == 0.0 && sp.max_overlap > 1.9 && on_wall > 2000);
    ENSURE(same > 2500); /* the balls drawn inside with room stay */
    bp_engine *e = bp_engine_create(BP_BACKEND_CPU, NULL, err, sizeof err);
    ENSURE(e && bp_engine_attach(e, w, err, sizeof err) == 0);
    ENSURE(bp_engine_step(e, w, (uint32_t)w->params.substeps, err, sizeof err) == 0);
    ENSURE(bp_engine_read(e, w, err, sizeof err) == 0);
    bp_world_measure(w, &sw);
    printf("after one frame: RMS speed %.1f px/s, largest %.1f\n", sw.rms_speed, sw.max_speed);
    ENSURE(sw.rms_speed < 30.0 && sw.max_speed < 40.0);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    bp_world_destroy(p);
    return 0;
}

/* ---- Files ----------------------------------------------------------- */

static char tmpdir[64];

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Reads a whole file into a malloc'ed NUL-terminated buffer. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap + 1);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(b, 2 * cap + 1);
            if (!nb) {
                free(b);
                b = NULL;
                break;
            }
            b = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (b) {
        b[n] = '\0';
        if (len)
            *len = n;
    }
    return b;
}

/* 1 when the folder holds a leftover temporary file. */
static int leftover_temp(void)
{
    DIR *d = opendir(tmpdir);
    if (!d)
        return 1;
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp"))
            found = 1;
    closedir(d);
    return found;
}

static uint64_t rng = 12345;
static float frand(float lo, float hi)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    double u = (double)(rng >> 11) / 9007199254740992.0;
    return (float)(lo + (hi - lo) * u);
}

/* A world with awkward float values everywhere. */
static bp_world *odd_world(uint32_t nballs)
{
    bp_params p = bp_params_default();
    p.width = 1234.567f;
    p.height = 765.4321f;
    p.gravity_x = -3.14159274f;
    p.gravity_y = 912.345678f;
    p.restitution = 0.7310585f;
    p.fps = 59.94f;
    p.substeps = 17;
    p.speed_cap = 12345.678f;
    bp_world *w = bp_world_create(&p);
    if (!w)
        return NULL;
    for (uint32_t i = 0; i < nballs; i++) {
        float r = frand(0.5f, 9.0f);
        float m = i % 3 ? frand(0.001f, 1e5f) : 0.0f;
        if (bp_world_add_ball(w, frand(r, p.width - r), frand(r, p.height - r),
                              frand(-5000.0f, 5000.0f), frand(-5000.0f, 5000.0f), r, m, NULL,
                              0) < 0) {
            bp_world_destroy(w);
            return NULL;
        }
    }
    for (int i = 0; i < 9; i++)
        bp_world_add_line(w, frand(-100.0f, 1300.0f), frand(-100.0f, 800.0f),
                          frand(-100.0f, 1300.0f), frand(-100.0f, 800.0f), NULL, 0);
    bp_world_add_line(w, 1e-7f, 3.0e-39f, 1.17549435e-38f, 16777217.0f / 16.0f, NULL, 0);
    return w;
}

static int test_round_trip(void)
{
    char path[512], err[512] = "";
    path_in(path, sizeof path, "round.scene");
    bp_world *w = odd_world(2000);
    ENSURE(w != NULL);
    ENSURE(bp_scene_save(w, path, err, sizeof err) == 0);
    bp_world *b = bp_scene_load(path, err, sizeof err);
    if (!b)
        fprintf(stderr, "%s\n", err);
    ENSURE(b != NULL);
    ENSURE(memcmp(&w->params, &b->params, sizeof w->params) == 0);
    ENSURE(same_balls(w, b));
    ENSURE(same_lines(w, b));
    /* Saving the loaded world gives the same bytes again. */
    char path2[512];
    path_in(path2, sizeof path2, "round2.scene");
    ENSURE(bp_scene_save(b, path2, err, sizeof err) == 0);
    size_t n1, n2;
    char *t1 = read_all(path, &n1), *t2 = read_all(path2, &n2);
    ENSURE(t1 && t2 && n1 == n2 && memcmp(t1, t2, n1) == 0);
    ENSURE(strncmp(t1, "ballpit-scene 1\n", 16) == 0);
    free(t1);
    free(t2);
    ENSURE(!leftover_temp());
    bp_world_destroy(w);
    bp_world_destroy(b);
    return 0;
}

static int test_load_errors_name_the_file(void)
{
    char path[512], err[512] = "";
    path_in(path, sizeof path, "bad.scene");
    ENSURE(write_text(path, H "world 100 100\n\nball 10 10 0 0 -2\n") == 0);
    bp_world *w = bp_scene_load(path, err, sizeof err);
    ENSURE(w == NULL);
    char want[600];
    snprintf(want, sizeof want, "%s:4: radius -2 must be > 0", path);
    if (strcmp(err, want) != 0)
        fprintf(stderr, "got %s\nwant %s\n", err, want);
    ENSURE(strcmp(err, want) == 0);
    /* A NUL byte stops the read at once and names its line. */
    path_in(path, sizeof path, "binary.scene");
    FILE *f = fopen(path, "wb");
    ENSURE(f != NULL);
    ENSURE(fwrite(H "# x\n\0\0\0", 1, 22, f) == 22 && fclose(f) == 0);
    w = bp_scene_load(path, err, sizeof err);
    snprintf(want, sizeof want, "%s:3: NUL byte", path);
    ENSURE(w == NULL && strncmp(err, want, strlen(want)) == 0);
    path_in(path, sizeof path, "missing.scene");
    w = bp_scene_load(path, err, sizeof err);
    ENSURE(w == NULL && strstr(err, "missing.scene: cannot open") && !strchr(err, '\n'));
    w = bp_scene_load(tmpdir, err, sizeof err);
    ENSURE(w == NULL && strstr(err, tmpdir) && !strchr(err, '\n'));
    return 0;
}

static const char old_text[] = "ballpit-scene 1\n# the old file\nball 10 10 0 0 2\n";

static int old_file_intact(const char *path)
{
    char *t = read_all(path, NULL);
    int ok = t && strcmp(t, old_text) == 0;
    free(t);
    return ok;
}

static int test_save_failures_keep_old_file(void)
{
    char path[512], err[512];
    bp_world *w = odd_world(50);
    ENSURE(w != NULL);

    /* Nonexistent folder. */
    path_in(path, sizeof path, "no/such/folder/x.scene");
    err[0] = '\0';
    ENSURE(bp_scene_save(w, path, err, sizeof err) == -1);
    ENSURE(strstr(err, "x.scene") && strstr(err, "No such file") && !strchr(err, '\n'));

    /* A regular file used as a folder. */
    char file[256];
    path_in(file, sizeof file, "plain.txt");
    ENSURE(write_text(file, "x") == 0);
    snprintf(path, sizeof path, "%s/x.scene", file);
    err[0] = '\0';
    ENSURE(bp_scene_save(w, path, err, sizeof err) == -1);
    ENSURE(strstr(err, "Not a directory"));

    /* The target is a folder: refused, folder untouched. */
    path_in(path, sizeof path, "adir");
    ENSURE(mkdir(path, 0755) == 0);
    err[0] = '\0';
    ENSURE(bp_scene_save(w, path, err, sizeof err) == -1);
    ENSURE(strstr(err, "folder"));
    struct stat st;
    ENSURE(stat(path, &st) == 0 && S_ISDIR(st.st_mode));

    /* A read-only folder (root may write anyway: then only check no damage). */
    char ro[256];
    path_in(ro, sizeof ro, "ro");
    ENSURE(mkdir(ro, 0755) == 0);
    snprintf(path, sizeof path, "%s/keep.scene", ro);
    ENSURE(write_text(path, old_text) == 0);
    ENSURE(chmod(ro, 0555) == 0);
    int rc = bp_scene_save(w, path, err, sizeof err);
    if (geteuid() != 0) {
        ENSURE(rc == -1);
        ENSURE(strstr(err, "keep.scene") && strstr(err, "Permission denied"));
        ENSURE(old_file_intact(path));
    }
    ENSURE(chmod(ro, 0755) == 0);

    /* A non-finite value is refused before anything is written. */
    path_in(path, sizeof path, "nan.scene");
    ENSURE(write_text(path, old_text) == 0);
    w->vx[3] = NAN;
    ENSURE(bp_scene_save(w, path, err, sizeof err) == -1);
    ENSURE(strstr(err, "non-finite"));
    ENSURE(old_file_intact(path));
    w->vx[3] = 1.0f;

    /* Through a symbolic link: the file it points to is replaced, the link
     * stays a link. */
    char real[256], link[256];
    path_in(real, sizeof real, "real.scene");
    path_in(link, sizeof link, "link.scene");
    ENSURE(write_text(real, old_text) == 0);
    ENSURE(symlink("real.scene", link) == 0);
    ENSURE(bp_scene_save(w, link, err, sizeof err) == 0);
    ENSURE(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    bp_world *b = bp_scene_load(real, err, sizeof err);
    ENSURE(b && b->count == w->count);
    bp_world_destroy(b);

    /* A device is written in place: /dev/null swallows it, no temp file. */
    ENSURE(bp_scene_save(w, "/dev/null", err, sizeof err) == 0);
    /* /dev/full fails like a full disk, with a message. */
    if (access("/dev/full", W_OK) == 0) {
        ENSURE(bp_scene_save(w, "/dev/full", err, sizeof err) == -1);
        ENSURE(strstr(err, "/dev/full: write failed: No space left on device"));
    }

    ENSURE(!leftover_temp());
    bp_world_destroy(w);
    return 0;
}

/* A real short write: the file size limit (RLIMIT_FSIZE) makes write()
 * fail with EFBIG part way through, as a full disk would. */
static int test_short_write_keeps_old_file(void)
{
    char path[512], err[512] = "";
    path_in(path, sizeof path, "full.scene");
    ENSURE(write_text(path, old_text) == 0);
    bp_world *w = odd_world(3000); /* ~200 KB of text */
    ENSURE(w != NULL);

    struct rlimit old;
    ENSURE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    void (*old_handler)(int) = signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = old;
    lim.rlim_cur = 20000;
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim.rlim_cur)
        lim.rlim_cur = old.rlim_max;
    ENSURE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    int rc = bp_scene_save(w, path, err, sizeof err);
    int saved_errno_ok = strstr(err, "File too large") != NULL;
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, old_handler);

    ENSURE(rc == -1);
    if (!saved_errno_ok)
        fprintf(stderr, "message: %s\n", err);
    ENSURE(saved_errno_ok);
    ENSURE(strstr(err, "full.scene") && strstr(err, "old file") && !strchr(err, '\n'));
    ENSURE(old_file_intact(path));
    ENSURE(!leftover_temp());

    /* With the limit lifted the same save works and replaces the file,
     * keeping its permission bits. */
    ENSURE(chmod(path, 0600) == 0);
    ENSURE(bp_scene_save(w, path, err, sizeof err) == 0);
    struct stat st;
    ENSURE(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
    bp_world *b = bp_scene_load(path, err, sizeof err);
    ENSURE(b && same_balls(w, b));
    bp_world_destroy(b);
    bp_world_destroy(w);
    return 0;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[1024];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
            chmod(p, 0755);
            remove_tree(p);
        } else {
            unlink(p);
        }
    }
    closedir(d);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    snprintf(tmpdir, sizeof tmpdir, "scene-test-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        fprintf(stderr, "cannot create a temporary folder: %s\n", strerror(errno));
        return 1;
    }
    static const bp_test tests[] = {
        BP_TEST(test_bad_inputs),
        BP_TEST(test_too_many_balls_total),
        BP_TEST(test_long_line),
        BP_TEST(test_nul_byte),
        BP_TEST(test_good_scene),
        BP_TEST(test_defaults_and_empty),
        BP_TEST(test_swarm_deterministic_and_default_seed),
        BP_TEST(test_swarm_settle),
        BP_TEST(test_swarm_settle_across_walls),
        BP_TEST(test_round_trip),
        BP_TEST(test_load_errors_name_the_file),
        BP_TEST(test_save_failures_keep_old_file),
        BP_TEST(test_short_write_keeps_old_file),
    };
    int rc = bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
    remove_tree(tmpdir);
    return rc;
}

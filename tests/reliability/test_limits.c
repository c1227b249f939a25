/* test_limits.c - every limit of ballpit.h gives a clear message, never a
 * crash or a blind allocation (docs/reliability.md, "Limits").
 *
 * The ball limit is tested for real: a world filled to BP_MAX_BALLS - 5
 * holds 4 Mi x 6 floats = 96 MiB, small enough for CI, so the swarm
 * clipping runs on the very code the sandbox uses.
 */
#include "ballpit.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Parses text; returns the world, or NULL with the message in err. */
static bp_world *parse(const char *text, char *err, size_t errlen)
{
    return bp_scene_parse(text, strlen(text), "limits.scene", err, errlen);
}

/* A message is one line naming the place: no newline, not empty. */
static int one_line(const char *err)
{
    return err[0] != '\0' && strchr(err, '\n') == NULL;
}

static int swarm_clipped_at_max_balls(void)
{
    bp_params p = bp_params_default();
    p.width = p.height = 4096.0f;
    bp_world *w = bp_world_create(&p);
    ENSURE(w != NULL);
    char err[256] = "";
    const uint32_t fill = BP_MAX_BALLS - 5;
    ENSURE(bp_world_add_swarm(w, 2048, 2048, fill, 0.5f, 2000, 0, 0, 1, err, sizeof err) ==
           (int64_t)fill);
    ENSURE(err[0] == '\0'); /* not clipped: no message */
    ENSURE(w->count == fill);
    /* 10 more: 5 fit, the rest is clipped with a message, not refused. */
    int64_t got = bp_world_add_swarm(w, 100, 100, 10, 0.5f, 10, 0, 0, 2, err, sizeof err);
    ENSURE(got == 5);
    ENSURE(w->count == BP_MAX_BALLS);
    ENSURE(one_line(err));
    ENSURE(strstr(err, "clipped from 10 to 5") != NULL);
    ENSURE(strstr(err, "4194304") != NULL);
    /* Full: a swarm adds nothing (with the message), a single ball is refused. */
    err[0] = '\0';
    ENSURE(bp_world_add_swarm(w, 100, 100, 3, 0.5f, 10, 0, 0, 3, err, sizeof err) == 0);
    ENSURE(strstr(err, "clipped from 3 to 0") != NULL);
    err[0] = '\0';
    ENSURE(bp_world_add_ball(w, 10, 10, 0, 0, 1, 0, err, sizeof err) == -1);
    ENSURE(strstr(err, "too many balls: the limit is 4194304") != NULL);
    ENSURE(w->count == BP_MAX_BALLS);
    /* Capacity never grew past the limit (no blind doubling). */
    ENSURE(w->capacity == BP_MAX_BALLS);
    bp_world_destroy(w);
    return 0;
}

static int scene_swarm_over_limit_refused_with_line(void)
{
    char err[256] = "";
    /* One swarm over the limit: the count itself is refused. */
    ENSURE(parse("ballpit-scene 1\nswarm 10 10 4194305 1 5 0 0\n", err, sizeof err) == NULL);
    ENSURE(one_line(err));
    ENSURE(strstr(err, "limits.scene:2: count '4194305' is above the limit 4194304") != NULL);
    /* Two swarms that pass it together: refused before any allocation. */
    ENSURE(parse("ballpit-scene 1\nswarm 10 10 4194304 1 5 0 0\nswarm 10 10 1 1 5 0 0\n", err,
                 sizeof err) == NULL);
    ENSURE(strstr(err, "limits.scene:3: too many balls: this swarm makes 4194305") != NULL);
    return 0;
}

static int too_many_lines(void)
{
    bp_world *w = bp_world_create(NULL);
    ENSURE(w != NULL);
    char err[256] = "";
    for (uint32_t i = 0; i < BP_MAX_LINES; i++)
        ENSURE(bp_world_add_line(w, 0, (float)(i % 700), 100, 50, err, sizeof err) == (int64_t)i);
    ENSURE(bp_world_add_line(w, 0, 0, 1, 1, err, sizeof err) == -1);
    ENSURE(one_line(err) && strstr(err, "too many lines: the limit is 65536") != NULL);
    ENSURE(w->nlines == BP_MAX_LINES && w->lines_capacity == BP_MAX_LINES);
    bp_world_destroy(w);

    /* The same limit from a scene file, with the offending line's number. */
    size_t cap = 32 + (size_t)(BP_MAX_LINES + 1) * 16;
    char *text = malloc(cap);
    ENSURE(text != NULL);
    size_t n = (size_t)snprintf(text, cap, "ballpit-scene 1\n");
    for (uint32_t i = 0; i <= BP_MAX_LINES; i++)
        n += (size_t)snprintf(text + n, cap - n, "line 0 1 2 3\n");
    w = bp_scene_parse(text, n, "lines.scene", err, sizeof err);
    free(text);
    ENSURE(w == NULL);
    ENSURE(strstr(err, "lines.scene:65538: too many lines: the limit is 65536") != NULL);
    return 0;
}

static int radius_range(void)
{
    bp_world *w = bp_world_create(NULL);
    ENSURE(w != NULL);
    char err[256] = "";
    ENSURE(bp_world_add_ball(w, 300, 300, 0, 0, BP_MIN_RADIUS, 0, err, sizeof err) == 0);
    ENSURE(bp_world_add_ball(w, 300, 300, 0, 0, BP_MAX_RADIUS, 0, err, sizeof err) == 1);
    ENSURE(bp_world_add_ball(w, 300, 300, 0, 0, 0.49f, 0, err, sizeof err) == -1);
    ENSURE(strstr(err, "radius 0.49 is outside 0.5..200 px") != NULL);
    ENSURE(bp_world_add_ball(w, 300, 300, 0, 0, 200.5f, 0, err, sizeof err) == -1);
    ENSURE(strstr(err, "radius 200.5 is outside 0.5..200 px") != NULL);
    ENSURE(bp_world_add_swarm(w, 300, 300, 5, 0.25f, 5, 0, 0, 1, err, sizeof err) == -1);
    ENSURE(strstr(err, "radius 0.25 is outside") != NULL);
    ENSURE(w->count == 2);
    bp_world_destroy(w);
    /* A legal radius that does not fit the world box. */
    bp_params p = bp_params_default();
    p.width = p.height = BP_MIN_WORLD;
    w = bp_world_create(&p);
    ENSURE(w != NULL);
    ENSURE(bp_world_add_ball(w, 8, 8, 0, 0, 9, 0, err, sizeof err) == -1);
    ENSURE(one_line(err) && strstr(err, "does not fit") != NULL);
    bp_world_destroy(w);
    /* From a scene file. */
    ENSURE(parse("ballpit-scene 1\nball 10 10 0 0 0.4\n", err, sizeof err) == NULL);
    ENSURE(strstr(err, "limits.scene:2: radius 0.4 is outside 0.5..200 px") != NULL);
    ENSURE(parse("ballpit-scene 1\nswarm 100 100 5 201 5 0 0\n", err, sizeof err) == NULL);
    ENSURE(strstr(err, "limits.scene:2: radius 201 is outside 0.5..200 px") != NULL);
    return 0;
}

static int world_size_range(void)
{
    char err[256] = "";
    bp_params p = bp_params_default();
    p.width = BP_MIN_WORLD;
    p.height = BP_MAX_WORLD;
    ENSURE(bp_params_check(&p, err, sizeof err) == 0);
    p.width = 15.9f;
    ENSURE(bp_params_check(&p, err, sizeof err) == -1);
    ENSURE(one_line(err) && strstr(err, "outside 16..65536 px") != NULL);
    p.width = 100.0f;
    p.height = 65537.0f;
    ENSURE(bp_params_check(&p, err, sizeof err) == -1);
    ENSURE(parse("ballpit-scene 1\nworld 15 100\n", err, sizeof err) == NULL);
    ENSURE(strstr(err, "limits.scene:2: world size 15x100 is out of range (each side "
                       "16..65536 px)") != NULL);
    ENSURE(parse("ballpit-scene 1\nworld 100 1e6\n", err, sizeof err) == NULL);
    ENSURE(strstr(err, "limits.scene:2: world size") != NULL);
    bp_world *w = parse("ballpit-scene 1\nworld 16 65536\n", err, sizeof err);
    ENSURE(w != NULL);
    ENSURE(w->params.width == 16.0f && w->params.height == 65536.0f);
    bp_world_destroy(w);
    return 0;
}

/* fps below 1 made the sub-step infinite (found by fuzz_world). */
static int fps_range(void)
{
    char err[256] = "";
    bp_params p = bp_params_default();
    p.fps = 0.5f;
    ENSURE(bp_params_check(&p, err, sizeof err) == -1);
    ENSURE(strstr(err, "fps 0.5 is outside [1, 1000]") != NULL);
    p.fps = 1.0f;
    ENSURE(bp_params_check(&p, err, sizeof err) == 0);
    ENSURE(parse("ballpit-scene 1\nfps 1e-40\n", err, sizeof err) == NULL);
    ENSURE(strstr(err, "limits.scene:2: fps") != NULL && strstr(err, "out of range") != NULL);
    return 0;
}

static int overlong_scene_line(void)
{
    char err[256] = "";
    /* A 4096-character line is the longest accepted (a comment here). */
    size_t cap = 64 + 8192;
    char *text = malloc(cap);
    ENSURE(text != NULL);
    int n = snprintf(text, cap, "ballpit-scene 1\n#");
    memset(text + n, 'x', 4095);
    n += 4095;
    n += snprintf(text + n, cap - (size_t)n, "\nball 10 10 0 0 1\n");
    bp_world *w = bp_scene_parse(text, (size_t)n, "long.scene", err, sizeof err);
    ENSURE(w != NULL && w->count == 1);
    bp_world_destroy(w);
    /* One more character: refused with the line number, nothing parsed. */
    n = snprintf(text, cap, "ballpit-scene 1\nball 10 10 0 0 1\n#");
    memset(text + n, 'x', 4096);
    n += 4096;
    text[n++] = '\n';
    w = bp_scene_parse(text, (size_t)n, "long.scene", err, sizeof err);
    ENSURE(w == NULL);
    ENSURE(one_line(err));
    ENSURE(strstr(err, "long.scene:3: line is longer than 4096 characters") != NULL);
    /* A huge line without any newline (a binary file) stops at the limit. */
    memset(text, 'a', 8192);
    w = bp_scene_parse(text, 8192, "long.scene", err, sizeof err);
    ENSURE(w == NULL && strstr(err, "long.scene:1: line is longer") != NULL);
    free(text);
    return 0;
}

/* Values past BP_MAX_ABS_VALUE or not finite never enter a world. */
static int value_range(void)
{
    char err[256] = "";
    bp_world *w = bp_world_create(NULL);
    ENSURE(w != NULL);
    ENSURE(bp_world_add_ball(w, 10, 10, 2e7f, 0, 1, 0, err, sizeof err) == -1);
    ENSURE(one_line(err) && strstr(err, "finite") != NULL);
    ENSURE(bp_world_add_line(w, 0, 0, NAN, 1, err, sizeof err) == -1);
    ENSURE(bp_world_add_line(w, 0, 0, 1e8f, 1, err, sizeof err) == -1);
    /* A legal velocity above the speed cap is capped, not refused. */
    ENSURE(bp_world_add_ball(w, 10, 10, 1e7f, 0, 1, 0, err, sizeof err) == 0);
    ENSURE(w->vx[0] <= w->params.speed_cap);
    bp_world_destroy(w);
    ENSURE(parse("ballpit-scene 1\nball 10 10 0 0 nan\n", err, sizeof err) == NULL);
    ENSURE(strstr(err, "limits.scene:2: radius 'nan' is not a finite number") != NULL);
    ENSURE(parse("ballpit-scene 1\nline 0 0 1e99 0\n", err, sizeof err) == NULL);
    ENSURE(strstr(err, "limits.scene:2: x2 '1e99' is out of range") != NULL);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(swarm_clipped_at_max_balls),
        BP_TEST(scene_swarm_over_limit_refused_with_line),
        BP_TEST(too_many_lines),
        BP_TEST(radius_range),
        BP_TEST(world_size_range),
        BP_TEST(fps_range),
        BP_TEST(overlong_scene_line),
        BP_TEST(value_range),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

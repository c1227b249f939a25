/* fuzz_scene.c - libFuzzer target for the scene parser (bp_scene_parse).
 *
 * Any byte string is a scene file to the parser. It must either return a
 * world that keeps every promise of ballpit.h (finite values, radii in
 * range, centres inside the box, counts within the limits) or return NULL
 * with a non-empty one-line message "NAME:LINE: what is wrong". Anything
 * else is a bug: abort() so libFuzzer saves the input.
 *
 * Build: meson setup build-fuzz -Dfuzz=true (CC=clang), see tests/fuzz/meson.build.
 */
#include "ballpit.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Prints why and aborts: libFuzzer records the input as a crash. */
static void fail(const char *why, const char *detail)
{
    fprintf(stderr, "fuzz_scene: %s: %s\n", why, detail ? detail : "");
    abort();
}

static int finite_in(float v, float lo, float hi)
{
    return isfinite(v) && v >= lo && v <= hi;
}

/* Every invariant a parsed world must hold. */
static void check_world(const bp_world *w)
{
    char why[256] = "";
    if (bp_params_check(&w->params, why, sizeof why) != 0)
        fail("parsed world has bad parameters", why);
    const bp_params *p = &w->params;
    if (w->count > BP_MAX_BALLS || w->count > w->capacity)
        fail("ball count over the limit or capacity", NULL);
    if (w->nlines > BP_MAX_LINES || w->nlines > w->lines_capacity)
        fail("line count over the limit or capacity", NULL);
    float vmax = p->speed_cap * 1.001f;
    for (uint32_t i = 0; i < w->count; i++) {
        if (!finite_in(w->x[i], 0.0f, p->width) || !finite_in(w->y[i], 0.0f, p->height))
            fail("ball centre outside the box", NULL);
        if (!finite_in(w->r[i], BP_MIN_RADIUS, BP_MAX_RADIUS))
            fail("ball radius out of range", NULL);
        if (!(isfinite(w->m[i]) && w->m[i] > 0.0f))
            fail("ball mass not finite and positive", NULL);
        if (!isfinite(w->vx[i]) || !isfinite(w->vy[i]) ||
            hypotf(w->vx[i], w->vy[i]) > vmax)
            fail("ball velocity not finite or above the speed cap", NULL);
    }
    for (uint32_t i = 0; i < w->nlines; i++)
        if (!finite_in(w->lx1[i], -BP_MAX_ABS_VALUE, BP_MAX_ABS_VALUE) ||
            !finite_in(w->ly1[i], -BP_MAX_ABS_VALUE, BP_MAX_ABS_VALUE) ||
            !finite_in(w->lx2[i], -BP_MAX_ABS_VALUE, BP_MAX_ABS_VALUE) ||
            !finite_in(w->ly2[i], -BP_MAX_ABS_VALUE, BP_MAX_ABS_VALUE))
            fail("line end point not finite or out of range", NULL);
}

/* A failure message must name the place and stay one plain line. */
static void check_message(const char *err)
{
    size_t n = strlen(err);
    if (n == 0)
        fail("parse failed without a message", NULL);
    if (strncmp(err, "fuzz:", 5) != 0)
        fail("message does not start with the scene name", err);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)err[i] < 0x20 || err[i] == 0x7f)
            fail("message holds a control byte", err);
}

static int blank(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Sum of the COUNT fields of the swarm lines, read roughly the way the
 * parser does (saturating). Inputs asking for more than FS_MAX_SWARMED
 * balls are skipped: a 4 Mi-ball swarm takes a second to build and would
 * slow the fuzzer a hundredfold. The limit itself (BP_MAX_BALLS) is
 * tested in tests/reliability/test_limits.c. */
#define FS_MAX_SWARMED 100000u
static uint64_t swarmed(const uint8_t *d, size_t n)
{
    uint64_t sum = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && blank(d[i]))
            i++;
        int is_swarm = n - i > 5 && memcmp(d + i, "swarm", 5) == 0 &&
                       (blank(d[i + 5]) || d[i + 5] == '\n');
        for (int field = 0; is_swarm && field < 3; field++) {
            while (i < n && !blank(d[i]) && d[i] != '\n')
                i++;
            while (i < n && blank(d[i]))
                i++;
        }
        if (is_swarm) {
            uint64_t c = 0;
            while (i < n && d[i] >= '0' && d[i] <= '9' && c <= FS_MAX_SWARMED)
                c = c * 10 + (uint64_t)(d[i++] - '0');
            sum += c;
        }
        while (i < n && d[i] != '\n')
            i++;
        i++;
    }
    return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (swarmed(data, size) > FS_MAX_SWARMED)
        return 0;
    char err[512];
    memset(err, 'X', sizeof err); /* an unterminated message would show */
    err[0] = '\0';
    bp_world *w = bp_scene_parse((const char *)data, size, "fuzz", err, sizeof err);
    if (w) {
        check_world(w);
        bp_world_destroy(w);
        return 0;
    }
    if (!memchr(err, '\0', sizeof err))
        fail("message not terminated", NULL);
    check_message(err);
    /* A tiny message buffer must be truncated, never overflowed (ASan
     * sees an overflow; the parse fails again at the same line). */
    char small[8];
    w = bp_scene_parse((const char *)data, size, "fuzz", small, sizeof small);
    if (w)
        fail("second parse of the same bytes succeeded", NULL);
    if (!memchr(small, '\0', sizeof small))
        fail("short message buffer not terminated", NULL);
    return 0;
}

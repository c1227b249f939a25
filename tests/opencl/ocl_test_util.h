/* ocl_test_util.h - shared by the OpenCL tests: small worlds built in code,
 * an OpenCL engine or a skip with the reason, running, comparing.
 *
 * The worlds are small (hundreds of balls) so the suite stays fast on PoCL
 * with two cores, yet dense enough that every contact kind occurs: gas (no
 * gravity, e = 1, segments), pile (a box filling under gravity) and rain
 * (balls falling onto slanted ramps).
 */
#ifndef BP_OCL_TEST_UTIL_H
#define BP_OCL_TEST_UTIL_H

#include "ballpit.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fixed pseudo-random sequence (64-bit LCG, top bits), so every run and
 * every machine builds the same worlds. */
static inline float t_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((*s >> 40) & 0xffffffu) / 16777216.0f;
}

static inline int t_add_ball(bp_world *w, float x, float y, float vx, float vy, float r)
{
    char err[256];
    if (bp_world_add_ball(w, x, y, vx, vy, r, 0.0f, err, sizeof err) < 0) {
        fprintf(stderr, "add_ball: %s\n", err);
        return -1;
    }
    return 0;
}

static inline int t_add_line(bp_world *w, float x1, float y1, float x2, float y2)
{
    char err[256];
    if (bp_world_add_line(w, x1, y1, x2, y2, err, sizeof err) < 0) {
        fprintf(stderr, "add_line: %s\n", err);
        return -1;
    }
    return 0;
}

/* Gas: no gravity, e = 1, n balls of radius 2..4 on a jittered lattice with
 * random velocities up to 200 px/s, two segments and a zero-length one. */
static inline bp_world *t_world_gas(uint32_t n)
{
    bp_params p = bp_params_default();
    p.width = 480;
    p.height = 320;
    p.gravity_x = 0;
    p.gravity_y = 0;
    p.restitution = 1.0f;
    bp_world *w = bp_world_create(&p);
    if (!w)
        return NULL;
    uint64_t s = 11;
    uint32_t cols = 40;
    for (uint32_t i = 0; i < n; i++) {
        float x = 20.0f + (float)(i % cols) * 11.0f + t_rand(&s) * 2.0f;
        float y = 20.0f + (float)(i / cols) * 11.0f + t_rand(&s) * 2.0f;
        float r = 2.0f + 2.0f * t_rand(&s);
        float a = 6.2831853f * t_rand(&s), v = 200.0f * t_rand(&s);
        if (y > p.height - 10.0f || t_add_ball(w, x, y, v * cosf(a), v * sinf(a), r)) {
            bp_world_destroy(w);
            return NULL;
        }
    }
    if (t_add_line(w, 100, 250, 380, 280) || t_add_line(w, 60, 120, 60, 200) ||
        t_add_line(w, 400, 60, 400, 60)) {
        bp_world_destroy(w);
        return NULL;
    }
    return w;
}

/* Pile: gravity, e = 0.5, n balls of radius 3 dropped into a 240x300 box
 * with a ramp on each side, so they land, roll and stack. */
static inline bp_world *t_world_pile(uint32_t n)
{
    bp_params p = bp_params_default();
    p.width = 240;
    p.height = 300;
    p.restitution = 0.5f;
    bp_world *w = bp_world_create(&p);
    if (!w)
        return NULL;
    uint64_t s = 23;
    uint32_t cols = 30;
    for (uint32_t i = 0; i < n; i++) {
        float x = 12.0f + (float)(i % cols) * 7.2f + t_rand(&s);
        float y = 10.0f + (float)(i / cols) * 7.2f + t_rand(&s);
        if (y > 200.0f || t_add_ball(w, x, y, 20.0f * (t_rand(&s) - 0.5f), 0.0f, 3.0f)) {
            bp_world_destroy(w);
            return NULL;
        }
    }
    if (t_add_line(w, 0, 230, 60, 270) || t_add_line(w, 240, 230, 180, 270)) {
        bp_world_destroy(w);
        return NULL;
    }
    return w;
}

/* Mixed sizes: one ball of radius 12 among n balls of radius 1.5 packed in
 * a 120x120 box. The big ball sizes the grid's cells (25 px), so a row of
 * 3 cells holds about 30 small balls: every lane of the widest screening
 * (16) and runs of several steps. */
static inline bp_world *t_world_mixed(uint32_t n)
{
    bp_params p = bp_params_default();
    p.width = 120;
    p.height = 120;
    bp_world *w = bp_world_create(&p);
    if (!w)
        return NULL;
    uint64_t s = 41;
    if (t_add_ball(w, 60.0f, 20.0f, 0.0f, 0.0f, 12.0f)) {
        bp_world_destroy(w);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        float x = 4.0f + (float)(i % 34) * 3.4f + 0.5f * t_rand(&s);
        float y = 40.0f + (float)(i / 34) * 3.4f + 0.5f * t_rand(&s);
        if (y > 116.0f || t_add_ball(w, x, y, 30.0f * (t_rand(&s) - 0.5f), 0.0f, 1.5f)) {
            bp_world_destroy(w);
            return NULL;
        }
    }
    return w;
}

/* Rain: n balls of radius 2 in a sheet falling onto 8 slanted ramps. */
static inline bp_world *t_world_rain(uint32_t n)
{
    bp_params p = bp_params_default();
    p.width = 640;
    p.height = 360;
    bp_world *w = bp_world_create(&p);
    if (!w)
        return NULL;
    uint64_t s = 37;
    uint32_t cols = 100;
    for (uint32_t i = 0; i < n; i++) {
        float x = 10.0f + (float)(i % cols) * 6.2f + t_rand(&s);
        float y = 10.0f + (float)(i / cols) * 6.2f + t_rand(&s);
        if (y > 150.0f || t_add_ball(w, x, y, 0.0f, 100.0f * t_rand(&s), 2.0f)) {
            bp_world_destroy(w);
            return NULL;
        }
    }
    for (int k = 0; k < 8; k++) {
        float x0 = 20.0f + (float)(k % 4) * 160.0f, y0 = k < 4 ? 200.0f : 300.0f;
        float dy = (k % 2) ? 30.0f : -30.0f;
        if (t_add_line(w, x0, y0, x0 + 110.0f, y0 + dy)) {
            bp_world_destroy(w);
            return NULL;
        }
    }
    return w;
}

/* An OpenCL engine, or NULL after printing why the test must be skipped. */
static inline bp_engine *t_ocl_engine_or_skip(void)
{
    char err[512];
    if (!bp_opencl_built()) {
        printf("skip: this ballpit was built without OpenCL\n");
        return NULL;
    }
    bp_engine *e = bp_engine_create(BP_BACKEND_OPENCL, NULL, err, sizeof err);
    if (!e)
        printf("skip: no usable OpenCL device: %s\n", err);
    return e;
}

/* Attaches w to e and runs frames frames, then reads back. 0 or -1. */
static inline int t_run(bp_engine *e, bp_world *w, uint32_t frames)
{
    char err[512];
    if (bp_engine_attach(e, w, err, sizeof err)) {
        fprintf(stderr, "attach: %s\n", err);
        return -1;
    }
    for (uint32_t f = 0; f < frames; f++)
        if (bp_engine_step(e, w, (uint32_t)w->params.substeps, err, sizeof err)) {
            fprintf(stderr, "step: %s\n", err);
            return -1;
        }
    if (bp_engine_read(e, w, err, sizeof err)) {
        fprintf(stderr, "read: %s\n", err);
        return -1;
    }
    return 0;
}

/* Runs a clone of w on a new engine of kind k; NULL on failure. The CPU
 * reference runs on one thread: the CPU engine gives the same bits for any
 * thread count (the physics suite tests that), and on a loaded two-core
 * test machine one thread is the fastest way to get them. */
static inline bp_world *t_run_clone(bp_backend k, const bp_world *w, uint32_t frames)
{
    char err[512];
    bp_engine_opts one = {.threads = 1};
    bp_world *c = bp_world_clone(w);
    bp_engine *e = c ? bp_engine_create(k, k == BP_BACKEND_CPU ? &one : NULL, err, sizeof err)
                     : NULL;
    if (!e) {
        fprintf(stderr, "engine: %s\n", c ? err : "out of memory");
        bp_world_destroy(c);
        return NULL;
    }
    int rc = t_run(e, c, frames);
    bp_engine_destroy(e);
    if (rc) {
        bp_world_destroy(c);
        return NULL;
    }
    return c;
}

/* Largest ball-by-ball difference of position (px) and velocity (px/s);
 * also how many balls are the same bits. */
typedef struct t_diff {
    double pos, vel;
    uint32_t identical;
} t_diff;

static inline t_diff t_compare(const bp_world *a, const bp_world *b)
{
    t_diff d = {0, 0, 0};
    for (uint32_t i = 0; i < a->count && i < b->count; i++) {
        double dp = fmax(fabs((double)a->x[i] - b->x[i]), fabs((double)a->y[i] - b->y[i]));
        double dv = fmax(fabs((double)a->vx[i] - b->vx[i]), fabs((double)a->vy[i] - b->vy[i]));
        d.pos = fmax(d.pos, dp);
        d.vel = fmax(d.vel, dv);
        if (a->x[i] == b->x[i] && a->y[i] == b->y[i] && a->vx[i] == b->vx[i] &&
            a->vy[i] == b->vy[i])
            d.identical++;
    }
    return d;
}

/* The world's ball state is the same bits in a and b (count, x, y, vx,
 * vy, r, m). */
static inline int t_same_bits(const bp_world *a, const bp_world *b)
{
    size_t n = (size_t)a->count * sizeof(float);
    return a->count == b->count && !memcmp(a->x, b->x, n) && !memcmp(a->y, b->y, n) &&
           !memcmp(a->vx, b->vx, n) && !memcmp(a->vy, b->vy, n) && !memcmp(a->r, b->r, n) &&
           !memcmp(a->m, b->m, n);
}

#endif

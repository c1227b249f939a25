/* physics_common.h - helpers for the physics tests: the backend under test
 * comes from BALLPIT_BACKEND (cpu, the default, or opencl), so every test
 * runs against both engines without being written twice. */
#ifndef BP_PHYSICS_COMMON_H
#define BP_PHYSICS_COMMON_H

#include "ballpit.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static bp_backend test_backend(void)
{
    const char *b = getenv("BALLPIT_BACKEND");
    return b && strcmp(b, "opencl") == 0 ? BP_BACKEND_OPENCL : BP_BACKEND_CPU;
}

/* An engine of the backend under test with options o, attached to w, or
 * NULL when the backend is unusable here (the caller skips). */
static inline bp_engine *test_engine_opts(bp_world *w, const bp_engine_opts *o)
{
    char err[512];
    bp_engine *e = bp_engine_create(test_backend(), o, err, sizeof err);
    if (!e) {
        fprintf(stderr, "skip: %s\n", err);
        return NULL;
    }
    if (bp_engine_attach(e, w, err, sizeof err)) {
        fprintf(stderr, "attach: %s\n", err);
        bp_engine_destroy(e);
        return NULL;
    }
    return e;
}

/* The same with threads threads (0: all cores) and the other options 0. */
static inline bp_engine *test_engine(bp_world *w, int threads)
{
    bp_engine_opts o = {.threads = threads};
    return test_engine_opts(w, &o);
}

/* Steps n sub-steps and reads the state back into w; 0 on success. */
static int test_step(bp_engine *e, bp_world *w, uint32_t n)
{
    char err[512];
    if (bp_engine_step(e, w, n, err, sizeof err) || bp_engine_read(e, w, err, sizeof err)) {
        fprintf(stderr, "step: %s\n", err);
        return -1;
    }
    return 0;
}

static inline bp_params params_free_space(float w, float h)
{
    bp_params p = bp_params_default();
    p.width = w;
    p.height = h;
    p.gravity_x = 0.0f;
    p.gravity_y = 0.0f;
    p.restitution = 1.0f;
    return p;
}

#endif

/* engine.c - the engine interface: dispatch to a backend, and switching. */
#include "engine_impl.h"
#include "order.h"
#include "bp_util.h"

#include <string.h>

bp_engine *bp_engine_create(bp_backend kind, const bp_engine_opts *opts, char *err, size_t errlen)
{
    bp_engine_opts def = {0};
    if (!opts)
        opts = &def;
    if (err && errlen)
        err[0] = '\0';
    /* BALLPIT_SORT_EVERY=N: re-sort every N sub-steps whatever the
     * world's size, for A/B runs of the interval (src/sim/order.h).
     * Engines made with the same setting keep the same bits. */
    unsigned long every = 0;
    if (bp_env_count("", "BALLPIT_SORT_EVERY", 1, 1ul << 20, &every, err, errlen))
        return NULL;
    /* BALLPIT_HUGEPAGES=0 keeps the engine's large blocks off huge pages
     * (bp_alloc_big), for A/B runs */
    int huge = 1;
    if (bp_env_choice("", "BALLPIT_HUGEPAGES", "1", "0", &huge, err, errlen))
        return NULL;
    bp_engine *e = NULL;
    switch (kind) {
    case BP_BACKEND_CPU:
        e = bp_cpu_engine_create(opts, err, errlen);
        break;
    case BP_BACKEND_OPENCL:
        e = bp_ocl_engine_create(opts, err, errlen);
        break;
    default:
        bp_fail(err, errlen, "unknown backend %d", (int)kind);
    }
    if (e) {
        e->sort_by_place = opts->sort_by_place != 0;
        e->sort_every = (uint32_t)every;
        e->huge_pages = huge;
    }
    return e;
}

void bp_engine_destroy(bp_engine *e)
{
    if (e)
        e->ops->destroy(e);
}

int bp_engine_attach(bp_engine *e, bp_world *w, char *err, size_t errlen)
{
    return e->ops->attach(e, w, err, errlen);
}

/* The world re-sorted by place (order.h): brought up to date from the
 * engine, sorted, and attached again, as an engine switch does. */
static int sort_by_place(bp_engine *e, bp_world *w, char *err, size_t errlen)
{
    if (e->ops->reorder) {
        int rc = e->ops->reorder(e, w, err, errlen);
        if (rc <= 0)
            return rc;
    }
    if (e->ops->read(e, w, err, errlen))
        return -1;
    size_t bytes = 0;
    void *tmp = e->ops->scratch ? e->ops->scratch(e, &bytes) : NULL;
    if (bp_world_sort_by_place(w, tmp, bytes))
        return bp_fail(err, errlen, "%s engine: out of memory to sort %u balls by place",
                       e->ops->name, w->count);
    return e->ops->attach(e, w, err, errlen);
}

int bp_engine_step(bp_engine *e, bp_world *w, uint32_t n, char *err, size_t errlen)
{
    /* With sort_by_place, the call cut where the world's sub-step count
     * reaches a multiple of bp_order_every(), the balls re-sorted there.
     * The phase times are the whole call's: each part's added up, and the
     * re-sorts' time counted in the grid's (they keep the broad phase's
     * order). */
    int sort = e->sort_by_place && w->count >= BP_ORDER_MIN;
    bp_phase_times sum = {0};
    while (n > 0) {
        uint32_t every = e->sort_every ? e->sort_every : bp_order_every(w->count);
        uint32_t to_next = every - (uint32_t)(w->substeps_done % every);
        if (sort && to_next == every) { /* a re-sort is due before this sub-step */
            double t0 = bp_now();
            if (sort_by_place(e, w, err, errlen))
                return -1;
            sum.grid += bp_now() - t0;
        }
        uint32_t k = sort && to_next < n ? to_next : n;
        if (e->ops->step(e, w, k, err, errlen))
            return -1;
        sum.integrate += e->times.integrate;
        sum.grid += e->times.grid;
        sum.ball_contacts += e->times.ball_contacts;
        sum.static_contacts += e->times.static_contacts;
        n -= k;
    }
    sum.readback = e->times.readback;
    e->times = sum;
    return 0;
}

int bp_engine_read(bp_engine *e, bp_world *w, char *err, size_t errlen)
{
    return e->ops->read(e, w, err, errlen);
}

bp_backend bp_engine_kind(const bp_engine *e) { return e->kind; }
const char *bp_engine_name(const bp_engine *e) { return e->ops->name; }
const char *bp_engine_device(const bp_engine *e) { return e->device; }
int bp_engine_threads(const bp_engine *e) { return e->threads; }

int bp_engine_host_cores(const bp_engine *e) { return e->host_cores; }

size_t bp_engine_memory(const bp_engine *e) { return e->bytes; }

void bp_engine_phase_times(const bp_engine *e, bp_phase_times *out)
{
    *out = e->times;
}

int bp_engine_adopt(bp_engine **e, bp_engine *n, bp_world *w, char *err, size_t errlen)
{
    /* Bring the world up to date from the old engine first: if that fails
     * the old engine is still the one in charge. */
    if (bp_engine_read(*e, w, err, errlen) || bp_engine_attach(n, w, err, errlen)) {
        bp_engine_destroy(n);
        return -1;
    }
    bp_engine_destroy(*e);
    *e = n;
    return 0;
}

int bp_engine_switch(bp_engine **e, bp_backend to, const bp_engine_opts *opts, bp_world *w,
                     char *err, size_t errlen)
{
    bp_engine *n = bp_engine_create(to, opts, err, errlen);
    return n ? bp_engine_adopt(e, n, w, err, errlen) : -1;
}

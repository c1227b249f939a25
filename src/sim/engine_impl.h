/* engine_impl.h - private: what a backend provides behind bp_engine.
 *
 * A backend embeds `bp_engine` as its first member and fills in `ops`
 * (the Chipmunk cpSpatialIndex shape: one small table of operations).
 * bp_engine_* in engine.c dispatch through it; switching engines is
 * read() from one, attach() to the other.
 */
#ifndef BP_ENGINE_IMPL_H
#define BP_ENGINE_IMPL_H

#include "ballpit.h"
#include "bp_util.h"

typedef struct bp_engine_ops {
    const char *name; /* "cpu" / "opencl" */
    int (*attach)(bp_engine *e, bp_world *w, char *err, size_t errlen);
    int (*step)(bp_engine *e, bp_world *w, uint32_t n, char *err, size_t errlen);
    int (*read)(bp_engine *e, bp_world *w, char *err, size_t errlen);
    void (*destroy)(bp_engine *e);
    /* Optional: scratch memory that is dead between calls to step, for
     * the re-sort by place (order.h); NULL where there is none. */
    void *(*scratch)(bp_engine *e, size_t *bytes);
    /* Optional: the re-sort by place done by the engine on its own copy
     * of the balls, the world's arrays and ids moved alike (the same
     * order as read, bp_world_sort_by_place, attach). Returns 0 when
     * done, -1 on failure, 1 when it does not apply now (then the engine
     * does read, sort and attach). */
    int (*reorder)(bp_engine *e, bp_world *w, char *err, size_t errlen);
} bp_engine_ops;

struct bp_engine {
    const bp_engine_ops *ops;
    bp_backend kind;
    int threads;
    int host_cores; /* host cores a step keeps busy (bp_engine_host_cores) */
    char device[256];
    bp_phase_times times;
    size_t bytes; /* held for the attached world (bp_engine_memory), set by attach */
    int sort_by_place; /* bp_engine_opts.sort_by_place */
    uint32_t sort_every; /* BALLPIT_SORT_EVERY; 0: bp_order_every's rule */
    int huge_pages; /* BALLPIT_HUGEPAGES (default 1): bp_alloc_big's request */
};

bp_engine *bp_cpu_engine_create(const bp_engine_opts *opts, char *err, size_t errlen);
/* Defined in engine_ocl.c (or ocl_stub.c when built without OpenCL). */
bp_engine *bp_ocl_engine_create(const bp_engine_opts *opts, char *err, size_t errlen);

#endif

/* order.c - the balls sorted by place (order.h). */
#include "order.h"
#include "bp_physics.h"
#include "bp_util.h"

#include <math.h>
#include <stdlib.h>

void bp_order_grid(const bp_world *w, float *inv_cell, uint32_t *gw, uint32_t *gh)
{
    double area = (double)w->params.width * w->params.height;
    double cell = sqrt(area / (0.5 * (w->count ? w->count : 1u)));
    if (cell < 1.0)
        cell = 1.0;
    *inv_cell = (float)(1.0 / cell);
    /* by the ball grid's rows, which run along the world's height (BP_GX) */
    *gw = (uint32_t)(BP_GX(w->params.width, w->params.height) / cell) + 1u;
    *gh = (uint32_t)(BP_GY(w->params.width, w->params.height) / cell) + 1u;
}

size_t bp_order_tmp_bytes(const bp_world *w)
{
    float inv;
    uint32_t gw, gh;
    bp_order_grid(w, &inv, &gw, &gh);
    /* the new order, one array moved at a time, the cells' counts */
    return ((size_t)2 * w->count + (size_t)gw * gh + 1u) * sizeof(uint32_t);
}

/* From this many balls on, bp_world_apply_order moves the arrays on all
 * threads: its moves gather through from[], and once the arrays outgrow
 * the caches each load waits on memory (docs/benchmarks.md). */
#define BP_ORDER_PAR_MIN 262144u

/* The moves of one array through tmp, an element type each: worksharing
 * loops, so inside bp_world_apply_order's parallel region the threads
 * split them (each loop ends in a barrier); elsewhere they run on the
 * calling thread. */
#define ORDER_MOVE(name, type)                                               \
    static void name(type *a, const uint32_t *from, uint32_t n, type *tmp) \
    {                                                                        \
        _Pragma("omp for schedule(static)") for (uint32_t k = 0; k < n; k++) \
            tmp[k] = a[from[k]];                                             \
        _Pragma("omp for schedule(static)") for (uint32_t k = 0; k < n; k++) \
            a[k] = tmp[k];                                                   \
    }
ORDER_MOVE(move_floats, float)
ORDER_MOVE(move_words, uint32_t)
ORDER_MOVE(move_bytes, uint8_t)

void bp_order_from(const bp_world *w, const float *x, const float *y, uint32_t *from,
                   uint32_t *tmp)
{
    uint32_t n = w->count;
    float inv;
    uint32_t gw, gh;
    bp_order_grid(w, &inv, &gw, &gh);
    /* each ball's cell into tmp, the cells' counts after it (gw * gh + 1
     * words): the counting sort the OpenCL engine's bp_k_order_serial runs */
    bp_order_sort(n, x, y, inv, (bp_i32)gw, (bp_i32)gh, gw * gh, tmp, tmp + n, from);
}

int bp_world_own_ids(bp_world *w)
{
    if (w->id)
        return 0;
    size_t bytes = (size_t)(w->capacity ? w->capacity : 1u) * sizeof(uint32_t);
    uint32_t *ids = bp_grow_aligned(NULL, 0, bytes);
    if (!ids)
        return -1;
    for (uint32_t i = 0; i < w->count; i++)
        ids[i] = i;
    w->id = ids;
    return 0;
}

int bp_world_apply_order(bp_world *w, const uint32_t *from, uint32_t *tmp)
{
    uint32_t n = w->count;
    if (bp_world_own_ids(w))
        return -1;
    float *f = (float *)tmp;
#pragma omp parallel if (n >= BP_ORDER_PAR_MIN)
    {
        move_floats(w->x, from, n, f);
        move_floats(w->y, from, n, f);
        move_floats(w->vx, from, n, f);
        move_floats(w->vy, from, n, f);
        move_floats(w->r, from, n, f);
        move_floats(w->m, from, n, f);
        move_words(w->id, from, n, tmp);
        move_bytes(w->contacts, from, n, (uint8_t *)tmp);
    }
    w->balls_version++;
    return 0;
}

int bp_world_sort_by_place(bp_world *w, void *tmp, size_t tmp_bytes)
{
    uint32_t n = w->count;
    if (n == 0u)
        return 0;
    size_t need = bp_order_tmp_bytes(w);
    void *own = NULL;
    if (!tmp || tmp_bytes < need) {
        tmp = own = malloc(need);
        if (!tmp)
            return -1;
    }
    uint32_t *from = tmp;
    bp_order_from(w, w->x, w->y, from, from + n);
    int rc = bp_world_apply_order(w, from, from + n);
    free(own);
    return rc;
}

uint32_t *bp_world_slots_by_id(const bp_world *w, int *owned)
{
    *owned = 0;
    if (!w->id)
        return NULL;
    uint32_t *slot = malloc((size_t)(w->count ? w->count : 1u) * sizeof *slot);
    *owned = 1;
    if (!slot)
        return NULL;
    for (uint32_t i = 0; i < w->count; i++)
        slot[w->id[i]] = i;
    return slot;
}

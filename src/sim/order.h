/* order.h - private: the balls' storage order (docs/architecture.md,
 * "Ball order").
 *
 * A world's slots start in creation order. The engines walk the balls in
 * slot order and look up their neighbours by place, so once the balls of
 * a running world have mixed (a swarm spreads, a pile is fed from above),
 * neighbours lie far apart in memory and every contact costs cache misses:
 * the 50k rain after 12 s runs 1.37x slower than the same world sorted by
 * place. On two threads it is worse: the threads split the contact pass by
 * place and the others by slot, so balls out of place put both threads'
 * writes in the same cache lines (the 2,400-ball gas in creation order
 * took 1.5x as long on two threads as on one, and 1.9x as long as sorted).
 * bp_engine_step therefore re-sorts every world of BP_ORDER_MIN balls or
 * more by place every bp_order_every() sub-steps (counted from the world's
 * first, so the answer does not depend on how the sub-steps are cut into
 * calls), the same way for every engine. w->id keeps each ball's id. */
#ifndef BP_ORDER_H
#define BP_ORDER_H

#include "ballpit.h"

#define BP_ORDER_MIN 1u       /* every world with a ball (4,096 until the 39th session) */
#define BP_ORDER_EVERY 128u   /* sub-steps between re-sorts */
#define BP_ORDER_LARGE 262144u      /* from this many balls: */
#define BP_ORDER_EVERY_LARGE 512u   /* sub-steps between re-sorts */

/* Sub-steps between the re-sorts of a world of n balls. Every 128: the
 * rain's balls fall through many cells between re-sorts, and an order
 * 1,024 sub-steps old cost the CPU engine 1.07-1.12x the frame time on
 * two threads (the passes that walk the balls by slot and those that walk
 * them by place split them differently between the threads, so an old
 * order sends their data from core to core) and PoCL as much; the re-sort
 * costs little beside that (docs/benchmarks.md, thirty-ninth session).
 * Worlds of BP_ORDER_LARGE balls or more are the GPU's, where the re-sort's
 * host half (the world's arrays moved) weighs against a frame of a few
 * ms: every 512 (the rain 4M 0.96-0.97 of the frame time against every
 * 1,024 on an H100 and an H200, a fresher order for the contact kernel's
 * gathers; the 1M 0.96-0.97 to level; 256 no better at 4M, 128 slower;
 * the CPU engine level to faster: forty-third session). A function of
 * the world alone, so every engine re-sorts at the same sub-steps and
 * they keep the same bits. */
static inline uint32_t bp_order_every(uint32_t n)
{
    return n >= BP_ORDER_LARGE ? BP_ORDER_EVERY_LARGE : BP_ORDER_EVERY;
}

/* Sorts the balls by place (rows of cells of about two balls' area, left
 * to right in a row; ties in slot order, so a sorted world stays as it
 * is), moving every per-ball array and the ids along. tmp: at least
 * bp_order_tmp_bytes(w) bytes of scratch, or NULL to allocate it here.
 * Returns 0, or -1 when out of memory (the world is then unchanged). */
int bp_world_sort_by_place(bp_world *w, void *tmp, size_t tmp_bytes);
size_t bp_order_tmp_bytes(const bp_world *w);

/* The sort's grid: about one cell per two balls, square cells of side
 * 1 / inv_cell, gw x gh of them; a ball's cell is bp_grid_cell's
 * (kernels/bp_physics.h), so the OpenCL engine's bp_k_order_cell finds
 * the same. */
void bp_order_grid(const bp_world *w, float *inv_cell, uint32_t *gw, uint32_t *gh);

/* The two halves of bp_world_sort_by_place, for an engine that moves its
 * own copy of the balls (engine_ocl.c): from[k] = the slot whose ball goes
 * to slot k, sorting by the positions x, y (w->count of each; tmp: the
 * bp_order_tmp_bytes(w) less the n words of from); then every per-ball
 * array of w and the ids moved by from (tmp: n words). The latter returns
 * -1 when out of memory for the ids (the world is then unchanged). */
void bp_order_from(const bp_world *w, const float *x, const float *y, uint32_t *from,
                   uint32_t *tmp);
int bp_world_apply_order(bp_world *w, const uint32_t *from, uint32_t *tmp);
/* Gives w an id array (each slot's id its slot) if it has none, as
 * bp_world_apply_order does first: 0, or -1 when out of memory. */
int bp_world_own_ids(bp_world *w);

/* The slot of each id (n entries), or NULL with *owned 0 when the slots
 * are in id order; free() it when *owned. NULL with *owned 1: out of
 * memory. */
uint32_t *bp_world_slots_by_id(const bp_world *w, int *owned);

#endif

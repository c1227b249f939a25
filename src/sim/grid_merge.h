/* grid_merge.h - private: the CPU engine's ball grid rebuilt from the last
 * sub-step's (docs/architecture.md, "The engine"): the merge of
 * kernels/bp_physics.h ("Pass 2 merged from the last sub-step's grid"),
 * which the OpenCL engine's one-launch step runs too, at the lane width of
 * the engine's block passes.
 *
 * Each thread of the team takes a part: bp_merge_cut cuts the old grid
 * into parts of whole cells, bp_merge_scan lists a part's balls that
 * stayed and its movers; after a barrier, where bp_merge_fits says the
 * movers fit in the scratch (4 words a ball, dead while the grid is
 * built), bp_merge_place writes each part's cells; where not, the engine
 * counts the grid anew. The same sorted[], start[] and spos as the count.
 */
#ifndef BP_GRID_MERGE_H
#define BP_GRID_MERGE_H

#include "cpu_blocks.h"

#include <stddef.h>
#include <stdint.h>

#define BP_MERGE_MAX_PARTS 16

/* Part p's first half, before the barrier (bp_merge_scan_lanes): returns
 * how many movers the part has. */
static inline uint32_t bp_merge_scan(const bp_block_passes *B, const bp_merge_part *p,
                                     float inv_cell, int32_t gw, int32_t gh,
                                     const uint32_t *sorted, const float *spos, size_t ystride,
                                     const uint32_t *cell, uint32_t *scratch)
{
    return B->merge_scan(p, inv_cell, gw, gh, sorted, spos, (uint32_t)ystride, cell, scratch);
}

/* Part u's second half, after the barrier (bp_merge_place_lanes). */
static inline void bp_merge_place(const bp_block_passes *B, const bp_merge_part *p, int parts,
                                  int u, const uint32_t *moved, uint32_t *scratch,
                                  uint32_t *start, uint32_t *sorted, const float *x,
                                  const float *y, float *spos, size_t ystride)
{
    B->merge_place(p, parts, u, moved, scratch, start, sorted, x, y, spos, (uint32_t)ystride);
}

#endif

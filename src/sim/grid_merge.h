/* grid_merge.h - private: the CPU engine's ball grid rebuilt from the last
 * sub-step's (docs/architecture.md, "The engine").
 *
 * Most balls keep their cell from one sub-step to the next, so the grid's
 * order (sorted[], start[]: bp_grid_build's, cells in order, a cell's
 * balls ascending) can be built from the last one instead of counted anew:
 * each part of the team walks the old slots of its range of cells, keeps
 * the balls that stayed (already in order) and lists the movers; after a
 * barrier each part merges into its cells the movers that came to them,
 * sorted by (cell, ball). The same sorted[], start[] and spos as the count
 * (bp_grid_count, bp_grid_offsets, bp_grid_place), with one barrier fewer
 * and no count array that another core reads.
 *
 * The parts' working memory is the engine's scratch (4 words a ball, dead
 * while the grid is built): part u the words 4 * ob .. 4 * oe of its old
 * slots ob .. oe - 1, where it keeps the balls of those slots that
 * stayed, its movers and the movers that come to it. bp_merge_fits says
 * whether they fit; where not, the engine counts the grid anew.
 */
#ifndef BP_GRID_MERGE_H
#define BP_GRID_MERGE_H

#include "cpu_blocks.h"

#include <stddef.h>
#include <stdint.h>

#define BP_MERGE_MAX_PARTS 16

/* Part u of a merge: cells c0 .. c1 - 1, which held the old slots
 * ob .. oe - 1. */
typedef struct bp_merge_part {
    uint32_t c0, c1, ob, oe;
} bp_merge_part;

/* Cuts the old grid (start[], ncells cells, n balls) into `parts` parts of
 * whole cells, part u beginning at the cell that holds old slot cut[u]
 * (cut[0] = 0, ascending). */
void bp_merge_cut(const uint32_t *start, uint32_t ncells, uint32_t n, int parts,
                  const uint32_t *cut, bp_merge_part *p);

/* Part p's first half, before the barrier: the balls of its old slots
 * that kept their cell listed in slot order and the movers (new cell,
 * ball) with their old cells, in its words of scratch. A slot's old cell
 * is the cell of the position it was sorted by (spos, x at spos[k], y at
 * spos[ystride + k]; bp_cell_of's with inv_cell, gw, gh); cell[]: every
 * ball's new cell. Returns how many movers the part has. */
uint32_t bp_merge_scan(const bp_block_passes *B, const bp_merge_part *p, float inv_cell,
                       int32_t gw, int32_t gh, const uint32_t *sorted, const float *spos,
                       size_t ystride, const uint32_t *cell, uint32_t *scratch);

/* Whether the movers counted (moved[u], part u's) fit in the parts'
 * words of scratch: the same answer for every part. */
int bp_merge_fits(const bp_merge_part *p, int parts, const uint32_t *moved);

/* Part u's second half, after the barrier: its cells' new start[] words
 * and their balls in sorted[] and spos (x at spos[k], y at
 * spos[ystride + k]). Reads every part's movers; writes only its own
 * cells' words of start[] (not start[ncells], which stays n) and their
 * slots. B: the lanes' passes (merge_scan, merge_put). */
void bp_merge_place(const bp_block_passes *B, const bp_merge_part *p, int parts, int u,
                    const uint32_t *moved,
                    uint32_t *scratch, uint32_t *start, uint32_t *sorted, const float *x,
                    const float *y, float *spos, size_t ystride);

#endif

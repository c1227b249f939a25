/* cpu_blocks.h - private: the CPU engine's passes 1, 3, 4 and 5 on blocks
 * of balls in full SIMD lanes (bp_block_integrate, bp_block_contacts,
 * bp_block_resolve, bp_block_move in kernels/bp_physics.h).
 *
 * cpu_blocks.c is compiled for 4 lanes (any processor) and, where the
 * compiler can, for 8 lanes with AVX2 (x86-64-v3) and 16 with AVX-512
 * (x86-64-v4); bp_blocks_best picks the widest the processor runs. Every variant gives
 * the bits of the per-ball passes (bp_contacts, bp_move_static), which the
 * OpenCL kernels run on GPUs.
 */
#ifndef BP_CPU_BLOCKS_H
#define BP_CPU_BLOCKS_H

#include "bp_physics.h"

typedef struct bp_block_passes {
    /* pass 1 (bp_integrate, bp_cell_of) for balls i0..i1-1: the largest of
     * m and their speeds^2 */
    float (*integrate)(const bp_step_params *P, const bp_block_arrays *A, bp_u32 *cell,
                       bp_u32 i0, bp_u32 i1, float m);
    /* pass 3 (bp_contacts) for balls i0..i1-1 */
    void (*contacts)(const bp_step_params *P, const bp_block_arrays *A, float vmax, bp_u32 i0,
                     bp_u32 i1);
    /* pass 3 for the balls in slots a..b-1 of the grid's order, each pair
     * evaluated once (bp_once_contacts): the same bits */
    void (*contacts_once)(const bp_step_params *P, const bp_block_arrays *A, float vmax,
                          bp_u32 a, bp_u32 b);
    /* pass 4 (bp_resolve) for balls i0..i1-1 */
    void (*resolve)(const bp_step_params *P, const bp_block_arrays *A, bp_u32 i0, bp_u32 i1);
    /* pass 5 (bp_move_static), and split[i] = ncontact[i], for balls i0..i1-1 */
    void (*move)(const bp_step_params *P, const bp_block_arrays *A, bp_u32 i0, bp_u32 i1);
    /* bp_grid_offsets_span_lanes: cells c0..c1-1, run words before c0 (a
     * scan across the lanes at 16, else bp_grid_offsets_span) */
    void (*offsets)(bp_u32 *const *cnt, bp_u32 parts, bp_u32 c0, bp_u32 c1, bp_u32 run);
    /* the grid merge's scan (grid_merge.c) over whole vectors of old
     * slots from k on, k1 the part's end: each slot's ball appended to
     * stay[] (*ns of them) where its new cell (cell[]) is its old one (the
     * cell of its grid position, spos), else to the movers (mov[], keys
     * cell << 32 | ball, and oldc[], *m of them); returns the first slot
     * it left, fewer than BP_LANES before k1 */
    bp_u32 (*merge_scan)(const bp_u32 *sorted, const float *spos, size_t ystride,
                         const bp_u32 *cell, float inv_cell, bp_i32 gw, bp_i32 gh, bp_u32 k,
                         bp_u32 k1, bp_u32 *stay, bp_u32 *ns, uint64_t *mov, bp_u32 *oldc,
                         bp_u32 *m);
    /* balls stay[0..len-1] into slots pos.. of sorted[] and spos (their
     * x and y), whole vectors of them: returns how many it put */
    bp_u32 (*merge_put)(const bp_u32 *stay, bp_u32 len, bp_u32 pos, bp_u32 *sorted,
                        const float *x, const float *y, float *spos, size_t ystride);
    int lanes;
} bp_block_passes;

extern const bp_block_passes bp_blocks4;
#ifdef BP_HAVE_BLOCKS8
extern const bp_block_passes bp_blocks8;
#endif
#ifdef BP_HAVE_BLOCKS16
extern const bp_block_passes bp_blocks16;
#endif
/* The variant of 4, 8 or 16 lanes, or NULL where this processor or build
 * has none of that width. */
const bp_block_passes *bp_blocks_of_width(int lanes);
/* The widest variant this processor runs. */
const bp_block_passes *bp_blocks_best(void);

#endif

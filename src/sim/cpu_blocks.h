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
    /* the grid merge's halves (bp_merge_scan_lanes, bp_merge_place_lanes;
     * src/sim/grid_merge.h) */
    bp_u32 (*merge_scan)(const bp_merge_part *p, float inv_cell, bp_i32 gw, bp_i32 gh,
                         const bp_u32 *sorted, const float *spos, bp_u32 ystride,
                         const bp_u32 *cell, bp_u32 *scratch);
    void (*merge_place)(const bp_merge_part *p, int parts, int u, const bp_u32 *moved,
                        bp_u32 *scratch, bp_u32 *start, bp_u32 *sorted, const float *x,
                        const float *y, float *spos, bp_u32 ystride);
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

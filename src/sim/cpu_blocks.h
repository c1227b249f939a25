/* cpu_blocks.h - private: the CPU engine's passes 3 and 5 on blocks of
 * balls, in full SIMD lanes (cpu_blocks.c).
 *
 * cpu_blocks.c is compiled for 4 lanes (any processor) and, where the
 * compiler can, a second time for 16 lanes with AVX-512 (x86-64-v4);
 * bp_blocks_best picks the widest the processor runs. Every variant gives
 * the bits of the per-ball passes of kernels/bp_physics.h (bp_contacts,
 * bp_move_static), which the OpenCL kernels run.
 */
#ifndef BP_CPU_BLOCKS_H
#define BP_CPU_BLOCKS_H

#include "bp_physics.h"

#include <stdint.h>

/* Balls per block: the unit of work a thread takes. */
#define BP_BLOCK 512u

/* What the passes read and write (the arguments of bp_contacts and
 * bp_move_static). */
typedef struct bp_block_arrays {
    float *x, *y, *vx, *vy;
    const float *r, *m;
    uint8_t *split;          /* the world's contact counts; pass 5 sets them from ncontact */
    const uint32_t *cell_start, *sorted;
    const float *spos;
    int32_t *best;
    uint8_t *ncontact;
    float *nvx, *nvy, *cpx, *cpy; /* pass 3's sums, pass 4's velocity and displacement */
    const float *lx1, *ly1, *lx2, *ly2;
    const uint32_t *seg_start, *seg_list;
} bp_block_arrays;

typedef struct bp_block_passes {
    /* pass 3 (bp_contacts) for balls i0..i1-1, at most BP_BLOCK of them */
    void (*contacts)(const bp_step_params *P, const bp_block_arrays *A, float vmax, uint32_t i0,
                     uint32_t i1);
    /* pass 5 (bp_move_static), and split[i] = ncontact[i], for balls i0..i1-1 */
    void (*move)(const bp_step_params *P, const bp_block_arrays *A, uint32_t i0, uint32_t i1);
    int lanes;
} bp_block_passes;

extern const bp_block_passes bp_blocks4;
#ifdef BP_HAVE_BLOCKS16
extern const bp_block_passes bp_blocks16;
#endif
/* The widest variant this processor runs. */
const bp_block_passes *bp_blocks_best(void);

#endif

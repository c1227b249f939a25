/* contacts_pairs.h - private: the CPU engine's contact pass on a block of
 * balls, their pairs evaluated in full SIMD lanes (contacts_pairs.c).
 *
 * The same file is compiled for 4 lanes (any processor) and, where the
 * compiler can, a second time for 16 lanes with AVX-512 (x86-64-v4);
 * bp_pairs_best picks the widest the processor runs. Every variant gives
 * bp_contacts' bits (kernels/bp_physics.h): the OpenCL kernels' and the
 * ball-at-a-time pass's.
 */
#ifndef BP_CONTACTS_PAIRS_H
#define BP_CONTACTS_PAIRS_H

#include "bp_physics.h"

#include <stdint.h>

/* Balls per block: the unit of work a thread takes. */
#define BP_PAIR_BLOCK 512u

/* What pass 3 reads and writes (the arguments of bp_contacts). */
typedef struct bp_pair_arrays {
    const float *x, *y, *vx, *vy, *r, *m;
    const uint8_t *split;
    const uint32_t *cell_start, *sorted;
    const float *spos;
    int32_t *best;
    uint8_t *ncontact;
    float *sdvx, *sdvy, *spx, *spy;
} bp_pair_arrays;

/* Pass 3 for balls i0..i1-1 (at most BP_PAIR_BLOCK of them). */
typedef void (*bp_pairs_fn)(const bp_step_params *P, const bp_pair_arrays *A, float vmax,
                            uint32_t i0, uint32_t i1);

void bp_contacts_pairs4(const bp_step_params *P, const bp_pair_arrays *A, float vmax,
                        uint32_t i0, uint32_t i1);
#ifdef BP_HAVE_PAIRS16
void bp_contacts_pairs16(const bp_step_params *P, const bp_pair_arrays *A, float vmax,
                         uint32_t i0, uint32_t i1);
#endif
/* The widest variant this processor runs. */
bp_pairs_fn bp_pairs_best(void);

#endif

/* cpu_blocks.c - the CPU engine's block passes (kernels/bp_physics.h,
 * "Passes 3 and 5 on blocks of balls") at one lane width: compiled with
 * BP_LANES 4 for any processor, and a second time with BP_LANES 16 and
 * -march=x86-64-v4 (BP_BLOCKS_WIDE; src/meson.build), where gathers and
 * the compress of the lanes in reach are single AVX-512 instructions.
 */
#include "cpu_blocks.h"

#ifdef BP_BLOCKS_WIDE
const bp_block_passes bp_blocks16 = {bp_block_contacts, bp_block_move, 16};
#else
const bp_block_passes bp_blocks4 = {bp_block_contacts, bp_block_move, 4};

const bp_block_passes *bp_blocks_best(void)
{
#ifdef BP_HAVE_BLOCKS16
    if (__builtin_cpu_supports("x86-64-v4"))
        return &bp_blocks16;
#endif
    return &bp_blocks4;
}
#endif

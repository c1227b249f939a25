/* cpu_blocks.c - the CPU engine's block passes (kernels/bp_physics.h,
 * "Passes 1, 3, 4 and 5 on blocks of balls") at one lane width: compiled with
 * BP_LANES 4 for any processor, and where the compiler can (src/meson.build)
 * again with BP_LANES 8 and -march=x86-64-v3 (AVX2: 8 lanes, permutes
 * across them) and with BP_LANES 16 and -march=x86-64-v4 (AVX-512: gathers
 * and the compress of the lanes in reach in one instruction too).
 */
#include "cpu_blocks.h"

#if BP_LANES == 16
const bp_block_passes bp_blocks16 = {bp_block_integrate, bp_block_contacts, bp_once_contacts,
                                     bp_block_resolve, bp_block_move, bp_grid_offsets_span_lanes,
                                     bp_merge_scan_lanes, bp_merge_place_lanes, 16};
#elif BP_LANES == 8
const bp_block_passes bp_blocks8 = {bp_block_integrate, bp_block_contacts, bp_once_contacts,
                                    bp_block_resolve, bp_block_move, bp_grid_offsets_span_lanes,
                                    bp_merge_scan_lanes, bp_merge_place_lanes, 8};
#else
const bp_block_passes bp_blocks4 = {bp_block_integrate, bp_block_contacts, bp_once_contacts,
                                    bp_block_resolve, bp_block_move, bp_grid_offsets_span_lanes,
                                    bp_merge_scan_lanes, bp_merge_place_lanes, 4};

/* Whether the processor runs code built for x86-64-v3 and -v4: the levels
 * by name, or where the compiler knows only the features' names
 * (src/meson.build), the features the levels add that a compiler may use
 * for this code, one by one. */
#ifdef BP_CPU_FEATURES
#define BP_CPU_V3()                                                                       \
    (__builtin_cpu_supports("avx") && __builtin_cpu_supports("avx2") &&                   \
     __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&                    \
     __builtin_cpu_supports("bmi2"))
#define BP_CPU_V4()                                                                       \
    (BP_CPU_V3() && __builtin_cpu_supports("avx512f") &&                                  \
     __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&          \
     __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
#else
#define BP_CPU_V3() __builtin_cpu_supports("x86-64-v3")
#define BP_CPU_V4() __builtin_cpu_supports("x86-64-v4")
#endif

const bp_block_passes *bp_blocks_of_width(int lanes)
{
    if (lanes == 4)
        return &bp_blocks4;
#ifdef BP_HAVE_BLOCKS8
    if (lanes == 8 && BP_CPU_V3())
        return &bp_blocks8;
#endif
#ifdef BP_HAVE_BLOCKS16
    if (lanes == 16 && BP_CPU_V4())
        return &bp_blocks16;
#endif
    return NULL;
}

const bp_block_passes *bp_blocks_best(void)
{
    const bp_block_passes *b = bp_blocks_of_width(16);
    if (!b)
        b = bp_blocks_of_width(8);
    return b ? b : &bp_blocks4;
}
#endif

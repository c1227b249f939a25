/* cpu_blocks.c - the CPU engine's block passes (kernels/bp_physics.h,
 * "Passes 1, 3, 4 and 5 on blocks of balls") at one lane width: compiled with
 * BP_LANES 4 for any processor, and where the compiler can (src/meson.build)
 * again with BP_LANES 8 and -march=x86-64-v3 (AVX2: 8 lanes, permutes
 * across them) and with BP_LANES 16 and -march=x86-64-v4 (AVX-512: gathers
 * and the compress of the lanes in reach in one instruction too).
 */
#include "cpu_blocks.h"

/* The grid merge's scan in lanes (bp_block_passes.merge_scan). */
static bp_u32 merge_scan(const bp_u32 *sorted, const float *spos, size_t ystride,
                         const bp_u32 *cell, float inv_cell, bp_i32 gw, bp_i32 gh, bp_u32 k,
                         bp_u32 k1, bp_u32 *stay, bp_u32 *ns_, uint64_t *mov, bp_u32 *oldc,
                         bp_u32 *m_)
{
    bp_u32 ns = *ns_, m = *m_;
    for (; k + BP_LANES <= k1; k += BP_LANES) {
        const bp_u32 *J = sorted + k;
        bp_vu q = BP_VLOADU(J), nc = BP_VGATHERU(cell, J);
        bp_vf sx = BP_VLOAD(spos + k), sy = BP_VLOAD(spos + ystride + k);
        bp_vi oc = bp_vgrid_coord(sy, inv_cell, gh) * gw + bp_vgrid_coord(sx, inv_cell, gw);
        bp_vi same = BP_VASI(nc) == oc;
        /* ns is at most k's place in the part: the store's BP_LANES
         * words stay in stay[] */
        BP_VCOMPRESS(stay, ns, same, q);
        for (unsigned mv = BP_VMASK(~same); mv; mv &= mv - 1u) {
            unsigned l = (unsigned)__builtin_ctz(mv);
            oldc[m] = (bp_u32)oc[l];
            mov[m++] = (uint64_t)nc[l] << 32 | q[l];
        }
    }
    *ns_ = ns;
    *m_ = m;
    return k;
}

/* The grid merge's put in lanes (bp_block_passes.merge_put). */
static bp_u32 merge_put(const bp_u32 *stay, bp_u32 len, bp_u32 pos, bp_u32 *sorted,
                        const float *x, const float *y, float *spos, size_t ystride)
{
    bp_u32 t = 0;
    for (; t + BP_LANES <= len; t += BP_LANES) {
        const bp_u32 *J = stay + t;
        bp_vu q = BP_VLOADU(J);
        bp_vf px = BP_VGATHER(x, J), py = BP_VGATHER(y, J);
        BP_VSTORE(q, sorted + pos + t);
        BP_VSTORE(px, spos + pos + t);
        BP_VSTORE(py, spos + ystride + pos + t);
    }
    return t;
}

#if BP_LANES == 16
const bp_block_passes bp_blocks16 = {bp_block_integrate, bp_block_contacts, bp_once_contacts,
                                     bp_block_resolve, bp_block_move, bp_grid_offsets_span_lanes,
                                     merge_scan, merge_put, 16};
#elif BP_LANES == 8
const bp_block_passes bp_blocks8 = {bp_block_integrate, bp_block_contacts, bp_once_contacts,
                                    bp_block_resolve, bp_block_move, bp_grid_offsets_span_lanes,
                                    merge_scan, merge_put, 8};
#else
const bp_block_passes bp_blocks4 = {bp_block_integrate, bp_block_contacts, bp_once_contacts,
                                    bp_block_resolve, bp_block_move, bp_grid_offsets_span_lanes,
                                    merge_scan, merge_put, 4};

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

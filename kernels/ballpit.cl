/* ballpit.cl - the OpenCL engine's kernels (OpenCL C 1.2).
 *
 * The physics is not here: every kernel below is a thin wrapper that calls
 * the very functions of bp_physics.h the CPU engine calls (one source of
 * truth). What is here is the part that differs between a loop on a CPU
 * and work-items on a device: the deterministic grid build and the max
 * speed reduction. One sub-step is, in order (src/sim/engine_ocl.c):
 *
 *   bp_k_integrate    per ball: gravity, speed cap, cell index; counts the
 *                     balls per cell (atomic_inc gives each ball a slot in
 *                     its cell) and the work-group's largest speed^2
 *   bp_k_scan_blocks  per cell block: exclusive prefix sum of the counts
 *                     inside the block, block totals; clears the counts
 *   bp_k_scan_top     one work-group: prefix of the block totals, and the
 *                     largest speed^2 over the work-groups of integrate
 *   bp_k_scatter      per ball: sorted[cell start + slot] = i
 *   bp_k_cell_sort    per cell: final cell_start[], and the cell's short
 *                     list sorted by ball index, because the atomic slots
 *                     come in any order; after it, sorted[] is exactly the
 *                     CPU's counting sort (cells ascending, ties by index)
 *   bp_k_partner      per ball: bp_find_partner
 *   bp_k_respond      per ball: bp_respond
 *   bp_k_move         per ball: bp_move_static
 *
 * All kernels take the global size rounded up to the local size and check
 * their index (an OpenCL 1.2 NDRange must be a multiple of the local size).
 */
#pragma OPENCL FP_CONTRACT OFF

#include "bp_physics.h"

/* Local size of the scan kernels and the cells each of their work-items
 * adds up serially; must match BP_OCL_SCAN_LOCAL / BP_OCL_SCAN_ITEMS in
 * engine_ocl.c (passed with -D). */
#ifndef BP_SCAN_LOCAL
#define BP_SCAN_LOCAL 256
#endif
#ifndef BP_SCAN_ITEMS
#define BP_SCAN_ITEMS 8
#endif
#define BP_SCAN_BLOCK (BP_SCAN_LOCAL * BP_SCAN_ITEMS)

/* Exclusive prefix sum of one value per work-item over the work-group;
 * returns this item's prefix and leaves the group total in *total. Work
 * item 0 adds the BP_SCAN_LOCAL partial sums serially: two barriers
 * instead of the 2 log2(L) of a tree scan, which on PoCL (a CPU, where
 * every barrier is a loop over the work-items) is several times faster,
 * and on a GPU costs a few microseconds per sub-step. */
static uint bp_group_scan(__local uint *tmp, uint v, uint *total)
{
    uint lid = get_local_id(0);
    tmp[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        uint run = 0;
        for (uint k = 0; k < BP_SCAN_LOCAL; k++) {
            uint t = tmp[k];
            tmp[k] = run;
            run += t;
        }
        tmp[BP_SCAN_LOCAL] = run;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *total = tmp[BP_SCAN_LOCAL];
    return tmp[lid];
}

/* Pass 1 (+ counting for pass 2). wg_v2max gets one value per work-group;
 * bp_k_scan_top reduces them, so no float atomics are needed. */
__kernel void bp_k_integrate(const bp_step_params P, __global const float *x,
                             __global const float *y, __global float *vx, __global float *vy,
                             __global uint *cell, __global uint *slot,
                             __global uint *cell_count, __global float *wg_v2max,
                             __local float *red)
{
    uint i = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    float v2 = 0.0f;
    if (i < P.n) {
        v2 = bp_integrate(i, &P, vx, vy);
        uint c = bp_cell_of(&P, x[i], y[i]);
        cell[i] = c;
        slot[i] = atomic_inc(&cell_count[c]);
    }
    red[lid] = v2;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* One work-item takes the maximum serially: one barrier instead of a
     * tree's log2(L) (see bp_group_scan for why). */
    if (lid == 0) {
        float m = red[0];
        for (uint k = 1; k < ls; k++)
            m = fmax(m, red[k]);
        wg_v2max[get_group_id(0)] = m;
    }
}

/* Pass 2a: within block b (BP_SCAN_BLOCK cells) the exclusive prefix of
 * the counts into cell_local[]; the block's total into block_sum[b]. The
 * counts are cleared for the next sub-step's bp_k_integrate. */
__kernel void bp_k_scan_blocks(const uint ncells, __global uint *cell_count,
                               __global uint *cell_local, __global uint *block_sum)
{
    __local uint tmp[BP_SCAN_LOCAL + 1];
    uint lid = get_local_id(0);
    uint base = get_group_id(0) * BP_SCAN_BLOCK + lid * BP_SCAN_ITEMS;
    uint v[BP_SCAN_ITEMS];
    uint sum = 0;
    for (uint k = 0; k < BP_SCAN_ITEMS; k++) {
        uint c = base + k;
        v[k] = 0u;
        if (c < ncells) {
            v[k] = cell_count[c];
            cell_count[c] = 0u;
        }
        sum += v[k];
    }
    uint total;
    uint run = bp_group_scan(tmp, sum, &total);
    for (uint k = 0; k < BP_SCAN_ITEMS; k++) {
        uint c = base + k;
        if (c < ncells)
            cell_local[c] = run;
        run += v[k];
    }
    if (lid == 0)
        block_sum[get_group_id(0)] = total;
}

/* Pass 2b, one work-group of BP_SCAN_LOCAL: block_sum[] becomes its own
 * exclusive prefix; wg_v2max[0..nwg) is reduced into v2max[0]. */
__kernel void bp_k_scan_top(const uint nblocks, __global uint *block_sum, const uint nwg,
                            __global const float *wg_v2max, __global float *v2max)
{
    __local uint tmp[BP_SCAN_LOCAL + 1];
    __local float red[BP_SCAN_LOCAL];
    uint lid = get_local_id(0);
    uint per = (nblocks + BP_SCAN_LOCAL - 1) / BP_SCAN_LOCAL;
    uint b0 = lid * per;
    uint sum = 0;
    for (uint k = 0; k < per; k++)
        if (b0 + k < nblocks)
            sum += block_sum[b0 + k];
    uint total;
    uint run = bp_group_scan(tmp, sum, &total);
    for (uint k = 0; k < per; k++)
        if (b0 + k < nblocks) {
            uint s = block_sum[b0 + k];
            block_sum[b0 + k] = run;
            run += s;
        }
    float m = 0.0f;
    for (uint k = lid; k < nwg; k += BP_SCAN_LOCAL)
        m = fmax(m, wg_v2max[k]);
    red[lid] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) {
        for (uint k = 1; k < BP_SCAN_LOCAL; k++)
            m = fmax(m, red[k]);
        v2max[0] = m;
    }
}

/* Where cell c starts in sorted[], from the two scan levels. */
static uint bp_cell_begin(uint c, __global const uint *cell_local,
                          __global const uint *block_prefix)
{
    return cell_local[c] + block_prefix[c / BP_SCAN_BLOCK];
}

/* Pass 2c: every ball into its cell's run at the slot atomic_inc gave it. */
__kernel void bp_k_scatter(const uint n, __global const uint *cell, __global const uint *slot,
                           __global const uint *cell_local, __global const uint *block_prefix,
                           __global uint *sorted)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    uint c = cell[i];
    sorted[bp_cell_begin(c, cell_local, block_prefix) + slot[i]] = i;
}

/* Pass 2d: cell_start[c] for the passes of bp_physics.h, and the cell's run
 * put in ascending ball order (insertion sort: runs are a few balls long). */
__kernel void bp_k_cell_sort(const uint ncells, const uint n, __global const uint *cell_local,
                             __global const uint *block_prefix, __global uint *cell_start,
                             __global uint *sorted)
{
    uint c = get_global_id(0);
    if (c >= ncells)
        return;
    uint b = bp_cell_begin(c, cell_local, block_prefix);
    uint e = c + 1u < ncells ? bp_cell_begin(c + 1u, cell_local, block_prefix) : n;
    cell_start[c] = b;
    if (c + 1u == ncells)
        cell_start[ncells] = n;
    for (uint k = b + 1u; k < e; k++) {
        uint v = sorted[k];
        uint j = k;
        while (j > b && sorted[j - 1u] > v) {
            sorted[j] = sorted[j - 1u];
            j--;
        }
        sorted[j] = v;
    }
}

/* The neighbour search reach of this sub-step, as the CPU engine computes
 * it: from the square root of the largest speed^2 after integration. */
static bp_i32 bp_reach_now(const bp_step_params *P, __global const float *v2max)
{
    return bp_reach(P, sqrt(v2max[0]));
}

/* Pass 3. */
__kernel void bp_k_partner(const bp_step_params P, __global const float *v2max,
                           __global const float *x, __global const float *y,
                           __global const float *vx, __global const float *vy,
                           __global const float *r, __global const uint *cell_start,
                           __global const uint *sorted, __global int *best)
{
    uint i = get_global_id(0);
    if (i >= P.n)
        return;
    best[i] = bp_find_partner(i, &P, bp_reach_now(&P, v2max), x, y, vx, vy, r, cell_start,
                              sorted);
}

/* Pass 4. */
__kernel void bp_k_respond(const bp_step_params P, __global const float *v2max,
                           __global const float *x, __global const float *y,
                           __global const float *vx, __global const float *vy,
                           __global const float *r, __global const float *m,
                           __global const uint *cell_start, __global const uint *sorted,
                           __global const int *best, __global float *nvx, __global float *nvy,
                           __global float *cpx, __global float *cpy)
{
    uint i = get_global_id(0);
    if (i >= P.n)
        return;
    bp_respond(i, &P, bp_reach_now(&P, v2max), x, y, vx, vy, r, m, cell_start, sorted, best,
               nvx, nvy, cpx, cpy);
}

/* Pass 5. */
__kernel void bp_k_move(const bp_step_params P, __global float *x, __global float *y,
                        __global float *vx, __global float *vy, __global const float *nvx,
                        __global const float *nvy, __global const float *cpx,
                        __global const float *cpy, __global const float *r,
                        __global const float *lx1, __global const float *ly1,
                        __global const float *lx2, __global const float *ly2,
                        __global const uint *seg_start, __global const uint *seg_list)
{
    uint i = get_global_id(0);
    if (i >= P.n)
        return;
    bp_move_static(i, &P, x, y, vx, vy, nvx, nvy, cpx, cpy, r, lx1, ly1, lx2, ly2, seg_start,
                   seg_list);
}

/* ballpit.cl - the OpenCL engine's kernels (OpenCL C 1.2).
 *
 * The physics is not here: every kernel below is a thin wrapper that calls
 * the very functions of bp_physics.h the CPU engine calls (one source of
 * truth). What is here is the part that differs between a loop on a CPU
 * and work-items on a device: the deterministic grid build and the max
 * speed reduction. Before a step's sub-steps bp_k_copy_state copies x, y,
 * vx and vy to the backup (the last good state, should a kernel fail);
 * bp_k_steps does that copy itself, in its pass 0.
 * One sub-step is, in order (src/sim/engine_ocl.c):
 *
 *   bp_k_integrate    per ball: gravity, speed cap, cell index, speed^2;
 *                     on GPUs also counts the balls per cell (atomic_inc
 *                     gives each ball a slot in its cell); only in the
 *                     first sub-step of a step: later ones do this at the
 *                     end of bp_k_move
 *   grid build, on CPU devices (PoCL):
 *     bp_k_grid_serial  one work-item: the CPU engine's counting sort and
 *                       the largest speed^2
 *   grid build, on GPUs:
 *     bp_k_scan_blocks  per cell block: exclusive prefix sum of the counts
 *                       inside the block, block totals; clears the counts;
 *                       the largest speed^2 of a share of the balls
 *     bp_k_scan_top     one work-group: prefix of the block totals, and
 *                       the largest speed^2 over the blocks
 *     bp_k_scatter      per ball: tmp[cell start + slot] = i (best[] is
 *                       free until pass 3)
 *     bp_k_rank         per ball: its rank by index in its cell's run
 *                       (the atomic slots come in any order) into sorted[]
 *                       and spos[]; per cell: the final cell_start[]
 *   either way sorted[] is then exactly the CPU's counting sort (cells
 *   ascending, ties by ball index)
 *   bp_k_contacts     per ball: bp_contacts (the walk over the neighbours)
 *   bp_k_resolve      per ball: bp_resolve (the partner's term)
 *   bp_k_move         per ball: bp_move_static, then pass 1 of the next
 *                     sub-step
 *
 * On CPU devices bp_k_steps (at the end) runs all the sub-steps of a step
 * in one launch, the same passes in the same order.
 *
 * The re-sort by place (every 128 or 1,024 sub-steps, src/sim/order.h):
 *   bp_k_order_cell   per ball, GPUs: its cell of the re-sort's grid and a
 *                     slot in it; the grid build's kernels above then sort
 *                     by it, so sorted[] is the order
 *   bp_k_order_serial one work-item, CPU devices: the same order by the
 *                     serial counting sort
 *   bp_k_gather       per ball: every array moved by that order into
 *                     scratch arrays
 *   bp_k_copy_state   per ball: the scratch arrays copied back
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
#define BP_SCAN_ITEMS 16
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

/* Pass 1 for ball i (+ counting for pass 2): gravity and the speed cap,
 * the ball's cell, its slot among the balls of that cell (atomic_inc),
 * and its speed^2 into v2[i]; bp_k_scan_blocks reduces v2[] to the
 * maximum, alongside its own work, so no kernel needs an atomic_max or a
 * barrier of its own for it. */
static void bp_integrate_one(uint i, const bp_step_params *P, __global const float *x,
                             __global const float *y, __global float *vx, __global float *vy,
                             __global uint *cell, const uint count, __global uint *slot,
                             __global uint *cell_count, __global float *v2)
{
    v2[i] = bp_integrate(i, P, vx, vy);
    uint c = bp_cell_of(P, x[i], y[i]);
    cell[i] = c;
    if (count)
        slot[i] = atomic_inc(&cell_count[c]);
}

/* Pass 1 of the first sub-step of a step (later sub-steps integrate at
 * the end of bp_k_move). */
__kernel void bp_k_integrate(const bp_step_params P, __global const float *x,
                             __global const float *y, __global float *vx, __global float *vy,
                             __global uint *cell, const uint count, __global uint *slot,
                             __global uint *cell_count, __global float *v2)
{
    uint i = get_global_id(0);
    if (i < P.n)
        bp_integrate_one(i, &P, x, y, vx, vy, cell, count, slot, cell_count, v2);
}

/* Pass 2a: within block b (BP_SCAN_BLOCK cells) the exclusive prefix of
 * the counts into cell_local[]; the block's total into block_sum[b]. The
 * counts are cleared for the next sub-step's pass 1. Also, work-group b
 * takes the maximum of its share of v2[] (n balls split evenly over the
 * blocks) into block_v2max[b]. One barrier: work-item 0 does the serial
 * parts (see bp_group_scan). */
__kernel void bp_k_scan_blocks(const uint ncells, __global uint *cell_count,
                               __global uint *cell_local, __global uint *block_sum,
                               const uint n, __global const float *v2,
                               __global float *block_v2max)
{
    __local uint tmp[BP_SCAN_LOCAL + 1];
    __local float red[BP_SCAN_LOCAL];
    uint lid = get_local_id(0), g = get_group_id(0);
    uint base = g * BP_SCAN_BLOCK + lid * BP_SCAN_ITEMS;
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
    uint share = (n + get_num_groups(0) - 1) / get_num_groups(0);
    uint b0 = g * share, b1 = min(n, b0 + share);
    float m = 0.0f;
    for (uint k = b0 + lid; k < b1; k += BP_SCAN_LOCAL)
        m = fmax(m, v2[k]);
    red[lid] = m;
    uint total;
    uint run = bp_group_scan(tmp, sum, &total);
    for (uint k = 0; k < BP_SCAN_ITEMS; k++) {
        uint c = base + k;
        if (c < ncells)
            cell_local[c] = run;
        run += v[k];
    }
    if (lid == 0) {
        block_sum[g] = total;
        /* red[] was written before bp_group_scan's first barrier */
        for (uint k = 1; k < BP_SCAN_LOCAL; k++)
            m = fmax(m, red[k]);
        block_v2max[g] = m;
    }
}

/* Pass 2b, one work-group of BP_SCAN_LOCAL: block_sum[] becomes its own
 * exclusive prefix; the block maxima of speed^2 are reduced into v2max[0]. */
__kernel void bp_k_scan_top(const uint nblocks, __global uint *block_sum,
                            __global const float *block_v2max, __global float *v2max)
{
    __local uint tmp[BP_SCAN_LOCAL + 1];
    __local float red[BP_SCAN_LOCAL];
    uint lid = get_local_id(0);
    uint per = (nblocks + BP_SCAN_LOCAL - 1) / BP_SCAN_LOCAL;
    uint b0 = lid * per;
    uint sum = 0;
    float m = 0.0f;
    for (uint k = 0; k < per; k++)
        if (b0 + k < nblocks) {
            sum += block_sum[b0 + k];
            m = fmax(m, block_v2max[b0 + k]);
        }
    red[lid] = m;
    uint total;
    uint run = bp_group_scan(tmp, sum, &total);
    for (uint k = 0; k < per; k++)
        if (b0 + k < nblocks) {
            uint s = block_sum[b0 + k];
            block_sum[b0 + k] = run;
            run += s;
        }
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

/* Pass 2c: every ball into its cell's run in tmp at the slot atomic_inc
 * gave it (runs in any order; bp_k_rank orders them). */
__kernel void bp_k_scatter(const uint n, __global const uint *cell, __global const uint *slot,
                           __global const uint *cell_local, __global const uint *block_prefix,
                           __global uint *tmp)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    uint c = cell[i];
    tmp[bp_cell_begin(c, cell_local, block_prefix) + slot[i]] = i;
}

/* Pass 2d: work-item g writes cell_start[g] for g <= ncells, and puts
 * ball g (g < n) at its place in its cell's run: the cell's start plus
 * the number of balls of the cell with a lower index, counted in the run
 * bp_k_scatter wrote into tmp in atomic_inc's order. So each run is in
 * ascending ball order, as the CPU's counting sort leaves it, and the
 * ball's position goes into spos. (A loop per cell that sorted its run
 * in place took 3x as long on an H100: docs/benchmarks.md.) */
__kernel void bp_k_rank(const uint ncells, const uint n, __global const uint *cell,
                        __global const uint *cell_local, __global const uint *block_prefix,
                        __global const uint *tmp, __global uint *cell_start,
                        __global uint *sorted, __global const float *x,
                        __global const float *y, __global float *spos, const uint ystride)
{
    uint g = get_global_id(0);
    if (g < ncells)
        cell_start[g] = bp_cell_begin(g, cell_local, block_prefix);
    else if (g == ncells)
        cell_start[ncells] = n;
    if (g >= n)
        return;
    uint c = cell[g];
    uint b = bp_cell_begin(c, cell_local, block_prefix);
    uint e = c + 1u < ncells ? bp_cell_begin(c + 1u, cell_local, block_prefix) : n;
    uint k = b;
    for (uint q = b; q < e; q++)
        k += tmp[q] < g;
    sorted[k] = g;
    spos[k] = x[g];
    spos[ystride + k] = y[g];
}

/* The re-sort's order on the device (a GPU's; src/sim/order.h): ball i's
 * cell of the order's grid (gw x gh cells of 1 / inv_cell, row by row, a
 * row a column of the world: bp_grid_cell) and
 * its slot among that cell's balls, counted as pass 1 counts for the
 * grid; bp_k_scan_blocks, bp_k_scan_top, bp_k_scatter and bp_k_rank then
 * sort as they sort the grid, ties in ball order, so sorted[] is the
 * host's from[] (bp_order_from: the same cells by bp_grid_cell). */
__kernel void bp_k_order_cell(const uint n, __global const float *x, __global const float *y,
                              const float inv_cell, const int gw, const int gh,
                              __global uint *cell, __global uint *slot,
                              __global uint *cell_count)
{
    uint i = get_global_id(0);
    if (i >= n)
        return;
    uint c = bp_grid_cell(x[i], y[i], inv_cell, gw, gh);
    cell[i] = c;
    slot[i] = atomic_inc(&cell_count[c]);
}

/* The re-sort by place (src/sim/order.h) on the device: ball k of the new
 * order is ball from[k] of the old, for every array the balls keep from
 * one step to the next; into the scratch arrays t* (r and m into one, m
 * after the n of r), which the host copies back. */
__kernel void bp_k_gather(const uint n, __global const uint *from, __global const float *x,
                          __global const float *y, __global const float *vx,
                          __global const float *vy, __global const float *r,
                          __global const float *m, __global const uchar *split,
                          __global float *tx, __global float *ty, __global float *tvx,
                          __global float *tvy, __global float *trm, __global uchar *tsplit)
{
    uint k = get_global_id(0);
    if (k >= n)
        return;
    uint j = from[k];
    tx[k] = x[j];
    ty[k] = y[j];
    tvx[k] = vx[j];
    tvy[k] = vy[j];
    trm[k] = r[j];
    trm[n + k] = m[j];
    tsplit[k] = split[j];
}

/* Ball k's state copied from the t* arrays to the others: x, y, vx and
 * vy, and where `all` is set r, m (from trm, m after the n of r) and the
 * contact counts as well. Two kernel objects take it (engine_ocl.c): the
 * backup of x, y, vx, vy before a step's sub-steps (the last good state,
 * should a kernel fail), and the copy back of bp_k_gather's scratch
 * arrays at a re-sort; one launch each where clEnqueueCopyBuffer took
 * four and seven commands (on PoCL each a wake of its threads:
 * docs/benchmarks.md, seventieth session). */
__kernel void bp_k_copy_state(const uint n, const uint all, __global const float *tx,
                              __global const float *ty, __global const float *tvx,
                              __global const float *tvy, __global const float *trm,
                              __global const uchar *tsplit, __global float *x,
                              __global float *y, __global float *vx, __global float *vy,
                              __global float *r, __global float *m, __global uchar *split)
{
    uint k = get_global_id(0);
    if (k >= n)
        return;
    x[k] = tx[k];
    y[k] = ty[k];
    vx[k] = tvx[k];
    vy[k] = tvy[k];
    if (all) {
        r[k] = trm[k];
        m[k] = trm[n + k];
        split[k] = tsplit[k];
    }
}

/* The re-sort's order on a CPU device, in one work-item: bp_order_sort,
 * as the host's bp_order_from (cells of the re-sort's grid ascending,
 * ties by index). The host had read the positions back, sorted and
 * written the order over, each a wake of PoCL's threads, while the device
 * waited. */
__kernel void bp_k_order_serial(const uint n, __global const float *x, __global const float *y,
                                const float inv_cell, const int gw, const int gh,
                                const uint ncells, __global uint *cell, __global uint *start,
                                __global uint *from)
{
    if (get_global_id(0) == 0)
        bp_order_sort(n, x, y, inv_cell, gw, gh, ncells, cell, start, from);
}

/* Pass 2 on a CPU device, all of it in one work-item: the CPU engine's
 * serial counting sort (bp_grid_build: ties in ball-index order without
 * any sorting) and the largest speed^2.
 * On PoCL the parallel path above costs more than this: its atomics drain
 * the store buffer, and its per-cell kernels keep per-work-item state
 * across barriers in memory. On a GPU one work-item would be far too slow,
 * so engine_ocl.c picks by device type (BALLPIT_OCL_GRID overrides). */
__kernel void bp_k_grid_serial(const uint n, const uint ncells, __global const uint *cell,
                               __global const float *x, __global const float *y,
                               __global uint *cell_start, __global uint *sorted,
                               __global float *spos, __global const float *v2,
                               __global float *v2max, const uint ystride)
{
    if (get_global_id(0) != 0)
        return;
    bp_grid_build(n, ncells, cell, cell_start, sorted);
    for (uint k = 0u; k < n; k++)
        bp_grid_position(k, sorted, x, y, spos, ystride);
    /* The largest speed^2 in four running maxima, each a compare and a
     * pick: one fmax after another (which also sorts out NaN, never
     * present here: bp_cap_speed zeroes it) would wait on each in turn. */
    float m0 = 0.0f, m1 = 0.0f, m2 = 0.0f, m3 = 0.0f;
    uint i = 0u;
    for (; i + 4u <= n; i += 4u) {
        float a = v2[i], b = v2[i + 1u], c = v2[i + 2u], d = v2[i + 3u];
        m0 = a > m0 ? a : m0;
        m1 = b > m1 ? b : m1;
        m2 = c > m2 ? c : m2;
        m3 = d > m3 ? d : m3;
    }
    for (; i < n; i++)
        m0 = v2[i] > m0 ? v2[i] : m0;
    m0 = m1 > m0 ? m1 : m0;
    m2 = m3 > m2 ? m3 : m2;
    v2max[0] = m2 > m0 ? m2 : m0;
}

/* The fastest ball's speed in this sub-step, as the CPU engine computes
 * it: the square root of the largest speed^2 after integration. */
static float bp_vmax_now(__global const float *v2max)
{
    return sqrt(v2max[0]);
}

/* Pass 3. */
__kernel void bp_k_contacts(const bp_step_params P, __global const float *v2max,
                            __global const float *x, __global const float *y,
                            __global const float *vx, __global const float *vy,
                            __global const float *r, __global const float *m,
                            __global const uchar *split, __global const uint *cell_start,
                            __global const uint *sorted, __global const float *spos,
                            __global uchar *ncontact,
                            __global int *best, __global float *sum)
{
    uint i = get_global_id(0);
    if (i >= P.n)
        return;
    bp_contacts(i, &P, bp_vmax_now(v2max), x, y, vx, vy, r, m, split, cell_start, sorted, spos,
                ncontact, best, sum);
}

/* Pass 4. */
__kernel void bp_k_resolve(const bp_step_params P, __global const float *x,
                           __global const float *y, __global const float *vx,
                           __global const float *vy, __global const float *r,
                           __global const float *m, __global const uchar *split,
                           __global const int *best, __global float *sum)
{
    uint i = get_global_id(0);
    if (i >= P.n)
        return;
    bp_resolve(i, &P, x, y, vx, vy, r, m, split, best, sum);
}

/* Pass 5, and pass 1 of the next sub-step when integrate_next is set
 * (all but the last sub-step of a step): ball i's own data is in
 * registers and cache already, and a launch is saved. */
__kernel void bp_k_move(const bp_step_params P, __global float *x, __global float *y,
                        __global float *vx, __global float *vy, __global const float *sum,
                        __global const float *r,
                        __global const float *lx1, __global const float *ly1,
                        __global const float *lx2, __global const float *ly2,
                        __global const uint *seg_start, __global const uint *seg_list,
                        const uint integrate_next, __global uint *cell, const uint count,
                        __global uint *slot, __global uint *cell_count, __global float *v2,
                        __global const uchar *ncontact, __global uchar *split)
{
    uint i = get_global_id(0);
    if (i >= P.n)
        return;
    bp_move_static(i, &P, x, y, vx, vy, sum, r, lx1, ly1, lx2, ly2, seg_start, seg_list);
    split[i] = ncontact[i]; /* this sub-step's contact count, for the next */
    if (integrate_next)
        bp_integrate_one(i, &P, x, y, vx, vy, cell, count, slot, cell_count, v2);
}

/* ---- A whole step in one launch, on CPU devices ------------------------ */

/* On PoCL every kernel boundary puts the worker threads to sleep and wakes
 * them for the next kernel, 4 times a sub-step (docs/opencl.md, "Speed on
 * PoCL"). bp_k_steps runs the passes of a whole step in one launch of G
 * work-groups of one work-item each, G the device's compute units, and
 * the groups wait for each other between passes by spinning on counters
 * in sync[], as the CPU engine's OpenMP threads do. The passes and their
 * order are those of the separate kernels, so the bits are the same.
 *
 * The passes of a step are numbered: 0 takes the step's backup (x, y,
 * vx, vy: bp_team_backup) and integrates the first sub-step,
 * then BP_TEAM_PASSES per sub-step s (1 + BP_TEAM_PASSES s + p): p = 0
 * counts the balls by cell, 1 the cells' offsets (a span of cells a
 * group, or group 0: bp_team_span_offsets), 2 puts the
 * balls into the grid with their positions in grid order (the grid built
 * in `parts` parts of the balls, bp_grid_count .. bp_grid_place), 3 the
 * contacts, 4 resolve, 5 move and the next sub-step's integration. A
 * launch runs passes first .. end - 1 of a step of nsub sub-steps.
 *
 * In worlds of up to BP_TEAM_MERGE_MAX balls, every sub-step's grid but
 * the step's first is merged from the last one's, as the CPU engine's
 * (kernels/bp_physics.h, "Pass 2 merged from the last sub-step's grid"):
 * pass 0 scans the parts (cut where pass 3's ranges begin, where there is
 * a part per group), pass 1 places them and has no barrier after it,
 * pass 2 is empty. Where the movers do not fit, group 0 counts every part
 * and works out the offsets in pass 1, and pass 2 places as usual. The
 * same grid either way.
 *
 * Waiting is bounded, as OpenMP's spinning is before its threads sleep:
 *  - OpenCL does not promise that all G groups run at once. The groups
 *    check in first (sync[0]); one that has waited BP_SYNC_PATIENCE turns
 *    calls the launch off by adding BP_SYNC_OFF, and every group that sees
 *    it returns before touching the state. The host then runs the rest of
 *    the sub-step with one group, which waits for no one, and tries all
 *    groups again for the next.
 *  - A group that has waited BP_SYNC_BAR_PATIENCE turns (by default as
 *    many) at a barrier (another group's thread was descheduled) ends the
 *    launch there: it sets BP_SYNC_STOP in the barrier's count (only while the
 *    barrier is not complete, by compare-and-swap) and writes the pass
 *    into sync[3]; every group that sees the flag returns. All passes up
 *    to that one are done, none after it has begun, and the host launches
 *    the rest. Its threads sleep in between, as with separate kernels.
 *
 * sync[0]: check-ins; sync[1]: arrivals at barriers; sync[2]: chunk
 * tickets; sync[3]: the pass where a launch stopped; sync[4 + g], g <
 * slots: group g's largest speed^2 (float bits); sync[4 + slots + g], g
 * <= slots: where group g's range of slots in pass 3 begins (the host
 * sets them evenly at attach); sync[5 + 2 slots + g]: the time group g
 * took for it in the last sub-step; sync[5 + 3 slots + g], g <= slots:
 * where group g's range of balls in passes 4 and 5 begins (the host sets
 * them evenly too); sync[6 + 4 slots + g]: the time group g took for pass
 * 5; sync[7 + 5 slots + g], g <= slots: where part g of the grid's
 * count and place begins (where there are as many parts as groups; the
 * host sets them evenly too); sync[8 + 6 slots + g]: the time group g
 * took for its part's count and place; sync[7 + 7 slots + u], u < parts:
 * the movers of part u of the grid's merge, and from sync[7 + 7 slots +
 * BP_TEAM_PARTS_MAX + 4 u] its cells and old slots (bp_merge_part);
 * sync[7 + 7 slots + 5 BP_TEAM_PARTS_MAX + g], g < G: the processor group
 * g runs on (bp_team_start); the next BP_TEAM_PHASES words: the time
 * stamp counter's ticks / 64 that group 0 spent in the step's phases
 * (bp_team_phase), then in the integrations that the moves carry (group
 * 0 clears them in a step's first launch). The host zeroes sync[0..3]
 * at attach and after each launch's read of them, so they are 0 when a
 * launch begins. */
/* Passes per sub-step, and the most parts the grid is built in (the host
 * passes both; engine_ocl.c). */
#ifndef BP_TEAM_PASSES
#define BP_TEAM_PASSES 6u
#endif
#ifndef BP_TEAM_PARTS_MAX
#define BP_TEAM_PARTS_MAX 4u
#endif
#ifndef BP_TEAM_MERGE_MAX
#define BP_TEAM_MERGE_MAX 0u
#endif
enum { BP_TP_COUNT, BP_TP_OFFSETS, BP_TP_PLACE, BP_TP_CONTACTS, BP_TP_RESOLVE, BP_TP_MOVE };
#ifndef BP_SYNC_OFF
#define BP_SYNC_OFF 0x40000000u
#endif
#ifndef BP_SYNC_STOP
#define BP_SYNC_STOP 0x80000000u
#endif
#ifndef BP_SYNC_PATIENCE
#define BP_SYNC_PATIENCE (1u << 19)
#endif
#ifndef BP_SYNC_BAR_PATIENCE
#define BP_SYNC_BAR_PATIENCE BP_SYNC_PATIENCE
#endif
#ifndef BP_SYNC_LAG
#define BP_SYNC_LAG 0u
#endif
#ifndef BP_TEAM_OWN
#define BP_TEAM_OWN 0
#endif
/* The time stamp counter where the device is an x86 CPU (PoCL): pass 3's
 * ranges of slots are cut by the groups' times. Elsewhere the cuts stay
 * even. */
#if defined(BP_OCL_AVX2) && __has_builtin(__builtin_ia32_rdtsc)
#ifdef BP_INJECTED_CLOCK_BACK
/* BALLPIT_OCL_FAIL=clock (tests): the counter runs backwards, so every
 * difference wraps */
#define BP_TEAM_CLOCK() (~(ulong)__builtin_ia32_rdtsc())
#else
#define BP_TEAM_CLOCK() ((ulong)__builtin_ia32_rdtsc())
#endif
/* The ticks from t0 to t1: 0 where the difference wrapped (the group's
 * thread moved to a core whose counter is behind), as the CPU engine's */
static ulong bp_team_ticks(ulong t0, ulong t1)
{
    ulong d = t1 - t0;
    return d >> 62 ? 0u : d;
}
#endif
/* The processor a group runs on, where the device is an x86 CPU: rdtscp's
 * TSC_AUX, which Linux sets to each processor's number (and node). With
 * BP_TEAM_ROLES (the host's BALLPIT_OCL_ROLES, on by default) the groups
 * take their parts of every pass by it (bp_team_start). */
#if BP_TEAM_ROLES && defined(BP_OCL_AVX2) && __has_builtin(__builtin_ia32_rdtscp)
#define BP_TEAM_CPU() bp_team_cpu()
static uint bp_team_cpu(void)
{
    uint aux = 0u;
    (void)__builtin_ia32_rdtscp(&aux);
    return aux;
}
#endif

/* The phases of a step whose time group 0 clocks (where there is a clock),
 * as the host reports them (engine_ocl.c): pass 0, the first sub-step's
 * integration; the grid's count, offsets and place; the contacts and
 * resolve; the move, with the next sub-step's integration. A pass's time
 * runs from its start to the next's, its barrier's wait included, as the
 * CPU engine's phases are clocked between its barriers. */
#define BP_TEAM_PHASES 4u
static uint bp_team_phase(uint p)
{
    return p == BP_TEAM_PASSES ? 0u
           : p <= BP_TP_PLACE  ? 1u
           : p <= BP_TP_RESOLVE ? 2u
                                : 3u;
}

typedef struct {
    volatile __global uint *sync;
    uint G, g;
    uint bar;   /* arrivals the next barrier waits for */
    uint taken; /* tickets drawn by the passes so far */
} bp_team;

/* The check-in: 1 when all G groups run, 0 when the launch is called off.
 * Where the groups know their processors (BP_TEAM_CPU), each then takes
 * the part (t->g) of its processor's rank among the G, so a group on the
 * same core does the same ranges of every pass in every launch and finds
 * their balls in that core's caches. PoCL hands a launch's groups to its
 * worker threads (pinned one to a core: POCL_AFFINITY) in no fixed order:
 * on this project's 2-core host the two groups' cores were the other way
 * round from the launch before in 109 of 253 launches of the rain 10k,
 * and such a launch took 1.046x the others' median time (taking parts by
 * processor: PoCL's rain 50k and 200k 2-4% faster, the rest 1-2%;
 * docs/benchmarks.md, fifty-fifth session). cpus[g], g < G: the
 * processor of group g, written before the check-in and read after it,
 * so every group reads the same G numbers and takes the same ranks; where
 * two are the same (threads not pinned, or no TSC_AUX), every group keeps
 * its own index. Any permutation of the parts gives the same bits: every
 * part's data is in the buffers. */
static int bp_team_start(bp_team *t, volatile __global uint *cpus)
{
    volatile __global uint *s = t->sync;
#ifdef BP_TEAM_CPU
    cpus[t->g] = BP_TEAM_CPU();
    mem_fence(CLK_GLOBAL_MEM_FENCE);
#endif
    if (atomic_inc(&s[0]) >= BP_SYNC_OFF)
        return 0;
    for (uint spin = 0u;; spin++) {
        uint v = s[0];
        if (v >= BP_SYNC_OFF)
            return 0;
        if (v >= t->G)
            break;
        if (spin >= BP_SYNC_PATIENCE) {
            if (atomic_cmpxchg(&s[0], v, v + BP_SYNC_OFF) == v)
                return 0;
            spin = 0u; /* someone checked in meanwhile: look again */
        }
    }
    mem_fence(CLK_GLOBAL_MEM_FENCE); /* later loads stay after the wait */
#ifdef BP_TEAM_CPU
    uint rank = 0u, dup = 0u, me = cpus[t->g];
    for (uint k = 0u; k < t->G; k++) {
        uint c = cpus[k];
        rank += c < me ? 1u : 0u;
        for (uint l = k + 1u; l < t->G; l++)
            dup |= c == cpus[l] ? 1u : 0u;
    }
    if (!dup)
        t->g = rank;
#else
    (void)cpus;
#endif
    return 1;
}

/* The barrier after pass q: 1 when all groups are through, 0 when the
 * launch ends here. A group arrives by compare-and-swap, so once the stop
 * flag is set the count stays short and no group passes this barrier. A
 * group that sees its barrier complete goes on even if the flag is set
 * meanwhile: then the stop is at the next barrier, and the next pass needs
 * this group (each group counts and places its parts of the grid and
 * works out its span of the offsets, or group 0 all of them, and each
 * leaves its speed maximum in its slot). */
static int bp_team_barrier(bp_team *t, uint q)
{
    volatile __global uint *s = t->sync;
    t->bar += t->G;
    /* OpenCL 1.2's atomics order nothing else (PoCL's are relaxed): the
     * fences keep this pass's stores before the arrival, and the next
     * pass's loads after the wait. */
    mem_fence(CLK_GLOBAL_MEM_FENCE);
#if BP_SYNC_LAG
    /* Tests (BALLPIT_OCL_LAG): group 0 arrives last, then looks late, as
     * if its thread were descheduled just after its arrival completed the
     * barrier. The others go on through the next pass and end the launch
     * at the barrier after it (when their patience is shorter than the
     * lag): after the move pass, that next pass is the grid count, whose
     * part 0 is group 0's. */
    if (t->g == 0u)
        for (uint v = s[1]; !(v & BP_SYNC_STOP) && v + 1u < t->bar; v = s[1])
            ;
#endif
    for (uint v = s[1];;) {
        if (v & BP_SYNC_STOP)
            return 0;
        uint w = atomic_cmpxchg(&s[1], v, v + 1u);
        if (w == v)
            break;
        v = w;
    }
#if BP_SYNC_LAG
    if (t->g == 0u)
        for (volatile uint k = 0u; k < BP_SYNC_LAG; k++)
            ;
#endif
    for (uint spin = 0u;; spin++) {
        uint v = s[1];
        if ((v & ~BP_SYNC_STOP) >= t->bar)
            break;
        if (v & BP_SYNC_STOP)
            return 0;
        if (spin >= BP_SYNC_BAR_PATIENCE) {
            if (atomic_cmpxchg(&s[1], v, v | BP_SYNC_STOP) == v) {
                s[3] = q;
                return 0;
            }
            spin = 0u;
        }
    }
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    return 1;
}

/* The next chunk of a pass over n items: [*b, *e), or 0 when the pass has
 * none left. Every group draws tickets until one is past the end, so a
 * pass of c chunks draws c + G tickets, and every group knows where the
 * next pass's tickets begin without asking. */
static int bp_team_chunk(bp_team *t, uint n, uint chunk, uint *b, uint *e)
{
    uint nch = (n + chunk - 1u) / chunk;
    uint k = atomic_inc(&t->sync[2]) - t->taken;
    if (k < nch) {
        *b = k * chunk;
        *e = min(n, *b + chunk);
        return 1;
    }
    t->taken += nch + t->G;
    return 0;
}

/* This group's largest speed^2 into its slot; group 0 also clears the
 * slots of groups this launch does not have. */
static void bp_team_put_v2(bp_team *t, uint slots, float v2m)
{
    t->sync[4u + t->g] = as_uint(v2m);
    if (t->g == 0u)
        for (uint k = t->G; k < slots; k++)
            t->sync[4u + k] = 0u;
}

/* The cuts of pass 3's slots (k = 0), of passes 4 and 5's balls (k =
 * 1) or of the grid's parts (k = 2) in the counters: slots + 1 cuts,
 * then each group's time for the passes they cut. */
static volatile __global uint *bp_team_cuts(bp_team *t, uint slots, uint k)
{
    return t->sync + 4u + slots + k * (2u * slots + 1u);
}

/* Group u's range of the n items by the cuts of a team of `slots` groups.
 * The cuts rise (bp_team_rebalance); every group clamps them alike. */
static void bp_team_cut_range(volatile __global uint *cut, uint slots, uint n, uint u, uint *b,
                              uint *e)
{
    *b = u == 0u ? 0u : min(cut[u], n);
    *e = u + 1u == slots ? n : min(cut[u + 1u], n);
}

/* Pass 3 (bp_once_contacts) takes one range of slots per group, as the
 * CPU engine's threads do: a range walks its ghosts too (the balls of the
 * rows before it), and more ranges cost more than the balance they give.
 * This group's range by the cuts at cut when the launch has all the
 * groups (returns 1), else (one group) all the items (returns 0). */
static int bp_team_range(bp_team *t, volatile __global uint *cut, uint slots, uint n, uint *b,
                         uint *e)
{
    if (t->G != slots) {
        *b = t->g == 0u ? 0u : n;
        *e = n;
        return 0;
    }
    bp_team_cut_range(cut, slots, n, t->g, b, e);
    return 1;
}

#ifdef BP_TEAM_CLOCK
/* Items a tick group u got through in the last sub-step, by the cuts at
 * cut (their times follow them: cut[slots + 1 + u]). */
static float bp_team_rate(volatile __global uint *cut, uint slots, uint n, uint u)
{
    uint b, e;
    bp_team_cut_range(cut, slots, n, u, &b, &e);
    uint took = cut[slots + 1u + u];
    return ((float)(e - b) + 1.0f) / (float)max(took, 1u);
}

/* Moves the cuts at cut half way towards those that would have given
 * every group the same time in the last sub-step (once_rebalance in the
 * CPU engine). Group 0, in a pass that reads none of these cuts, after a
 * barrier that follows the pass they cut. Both the old cuts and the aims
 * rise, so the new ones do. Not while a group has no time yet (0: none
 * clocked since the attach, or every one it took wrapped). */
static void bp_team_rebalance(volatile __global uint *cut, uint slots, uint n)
{
    float sum = 0.0f, at = 0.0f;
    for (uint u = 0u; u < slots; u++) {
        if (cut[slots + 1u + u] == 0u)
            return;
        sum += bp_team_rate(cut, slots, n, u);
    }
    uint was = 0u;
    for (uint u = 1u; u < slots; u++) {
        at += bp_team_rate(cut, slots, n, u - 1u) / sum;
        uint aim = min((uint)(at * (float)n + 0.5f), n);
        uint old = min(cut[u], n);
        cut[u] = max(was, (uint)(((ulong)old + aim) / 2u));
        was = cut[u];
    }
}

/* Passes 4 and 5 (and the next sub-step's pass 1) take one range of balls
 * per group too, cut by the groups' times in pass 5, each cut rounded
 * down to a multiple of 64 balls: a group then moves about the balls
 * whose pairs it summed in pass 3, their lines in its core's cache, where
 * chunks handed out in turn bounce them between the cores (the CPU
 * engine's move_range). One group alone takes all the balls. */
static void bp_team_move_range(bp_team *t, uint slots, uint n, uint *b, uint *e)
{
    if (bp_team_range(t, bp_team_cuts(t, slots, 1u), slots, n, b, e)) {
        *b &= ~63u;
        if (t->g + 1u < slots)
            *e &= ~63u;
    }
}

/* This group's time since t0 for the pass the cuts at cut share out,
 * added to its time for the pass before where `more` (the grid's count
 * and place). Where the counter's difference wrapped the time before
 * stands: 0 or the most would give the group all the items or none. */
static void bp_team_took(bp_team *t, volatile __global uint *cut, uint slots, ulong t0,
                         int more)
{
    ulong d = bp_team_ticks(t0, BP_TEAM_CLOCK());
    if (d == 0u) /* wrapped (two reads of the counter are never 0 apart) */
        return;
    ulong took = d + (more ? cut[slots + 1u + t->g] : 0u);
    cut[slots + 1u + t->g] = (uint)min(took, (ulong)UINT_MAX);
}
#endif

/* Where part u of the grid build's `parts` parts of n balls begins: by
 * the cuts at cut where there is a part per group (moved by the groups'
 * times in the count and the place, bp_team_rebalance: a part whose
 * balls crowd a few cells places them in a chain of updates of one
 * count, and costs more), else evenly. Any cuts give the same grid. */
static uint bp_team_part(volatile __global uint *cut, uint slots, uint n, uint parts, uint u)
{
    if (parts == slots)
        return u == 0u ? 0u : u == parts ? n : min(cut[u], n);
    return (uint)((ulong)n * u / parts);
}

/* The grid's parts u0, u0 + du, ... of `parts` counted by cell
 * (bp_grid_count) into their count arrays cnt[u]. */
static void bp_team_count(__global const uint *cell, volatile __global uint *gcut, uint slots,
                          uint n, uint parts, uint u0, uint du, __global uint *const *cnt,
                          uint ncells)
{
    for (uint u = u0; u < parts; u += du)
        bp_grid_count(cell, bp_team_part(gcut, slots, n, parts, u),
                      bp_team_part(gcut, slots, n, parts, u + 1u), cnt[u], ncells);
}

/* The grid's offsets in spans of cells, a span a group, as the CPU
 * engine's threads sum them (engine_cpu.c), where group 0 had summed
 * them all while the others waited (on two groups 1.5-1.9% of PoCL's
 * rain 200k: docs/benchmarks.md, fifty-sixth session). Each span's run
 * comes from the totals of the spans before it, which each part's group
 * sums in the count's pass into tot (the sums' array, dead while the grid
 * is built; bp_grid_span_totals, kernels/bp_physics.h): tot[0] the
 * spans they are for (the count's launch's G, or 0: group 0 sums every
 * cell, where the cells are few or tot has no room), tot[1 + u ns + k]
 * part u's count over span k < ns - 1. A launch that takes the offsets
 * with another G than the count's does as before. */
#define BP_TEAM_SPAN_MIN 256u /* cells a span at least */

static uint bp_team_spans(uint G, uint parts, uint ncells, uint n)
{
    return G > 1u && ncells >= G * BP_TEAM_SPAN_MIN && 1u + parts * G <= 4u * n ? G : 0u;
}

/* This group's parts' totals over the spans (after it counted them). */
static void bp_team_span_totals(const bp_team *t, __global uint *const *cnt, uint parts,
                                uint ncells, uint n, __global uint *tot)
{
    uint ns = bp_team_spans(t->G, parts, ncells, n);
    if (t->g == 0u)
        tot[0] = ns;
    for (uint u = t->g; ns > 0u && u < parts; u += t->G)
        bp_grid_span_totals(cnt[u], ns, bp_grid_span_cells(ncells, ns), ncells,
                            tot + 1u + u * ns);
}

/* The offsets of this group's span from the totals; 0 where the count
 * left none for this launch's G (then group 0 sums them all). */
static int bp_team_span_offsets(const bp_team *t, __global uint *const *cnt, uint parts,
                                uint ncells, uint n, __global const uint *tot)
{
    uint ns = tot[0];
    if (ns != t->G || ns < 2u)
        return 0;
    uint c0, c1;
    bp_grid_span_of(t->g, bp_grid_span_cells(ncells, ns), ncells, &c0, &c1);
    bp_grid_offsets_span_lanes(cnt, parts, c0, c1, bp_grid_span_run(tot + 1u, ns, parts, t->g));
    if (t->g == 0u)
        cnt[0][ncells] = n;
    return 1;
}

/* The parts of the grid's merge (bp_merge_cut) from the old grid:
 * beginning where pass 3's ranges begin (the cuts at cut3) where there is
 * a part per group, else evenly. Every group works them out alike in the
 * scan's pass, and keeps its own in the counters (at keep): the place's
 * pass reads them there, as it may run in the next launch, where a group
 * that began late would find start[] rewritten by another's place. */
static void bp_team_merge_parts(volatile __global uint *cut3, uint slots, uint parts,
                                __global const uint *start, uint ncells, uint n,
                                bp_team *t, volatile __global uint *keep, bp_merge_part *mp)
{
    bp_u32 cut[BP_TEAM_PARTS_MAX];
    for (uint u = 0u; u < parts; u++)
        cut[u] = u == 0u ? 0u : parts == slots ? min(cut3[u], n) : (uint)((ulong)n * u / parts);
    bp_merge_cut(start, ncells, n, (int)parts, cut, mp);
    for (uint u = t->g; u < parts; u += t->G) {
        keep[4u * u] = mp[u].c0;
        keep[4u * u + 1u] = mp[u].c1;
        keep[4u * u + 2u] = mp[u].ob;
        keep[4u * u + 3u] = mp[u].oe;
    }
}

/* The merge's parts as the scan's pass kept them (after a barrier). */
static void bp_team_merge_kept(volatile __global uint *keep, uint parts, bp_merge_part *mp)
{
    for (uint u = 0u; u < parts; u++) {
        mp[u].c0 = keep[4u * u];
        mp[u].c1 = keep[4u * u + 1u];
        mp[u].ob = keep[4u * u + 2u];
        mp[u].oe = keep[4u * u + 3u];
    }
}

/* The step's backup of balls b..e-1 (bp_k_copy_state's), in pass 0
 * before their integration, the first change to them in a step: on PoCL
 * the backup's own kernel had cost a wake of the device's threads and
 * 50-55 us a frame (the rain 10k's 1.2%; docs/benchmarks.md,
 * ninety-third session). In lanes, as LLVM left the plain loop scalar
 * (the rain 50k 1-2% slower than the kernel), and a call: inlined, it
 * moved the code of the passes around it (the pile 50k 1-1.5% slower). */
__attribute__((noinline)) static void bp_team_backup(uint b, uint e, __global const float *x,
                                                     __global const float *y,
                                                     __global const float *vx,
                                                     __global const float *vy,
                                                     __global float *bx, __global float *by,
                                                     __global float *bvx, __global float *bvy)
{
    uint k = b;
    for (; k + BP_LANES <= e; k += BP_LANES) {
        BP_VSTORE(BP_VLOAD(x + k), bx + k);
        BP_VSTORE(BP_VLOAD(y + k), by + k);
        BP_VSTORE(BP_VLOAD(vx + k), bvx + k);
        BP_VSTORE(BP_VLOAD(vy + k), bvy + k);
    }
    for (; k < e; k++) {
        bx[k] = x[k];
        by[k] = y[k];
        bvx[k] = vx[k];
        bvy[k] = vy[k];
    }
}

/* The largest speed^2 over the slots (after a barrier). */
static float bp_team_v2max(bp_team *t, uint slots)
{
    float m = 0.0f;
    for (uint k = 0u; k < slots; k++) {
        float v = as_float(t->sync[4u + k]);
        m = v > m ? v : m;
    }
    return m;
}

__kernel void bp_k_steps(const bp_step_params P, const uint first, const uint end,
                         const uint nsub,
                         const uint ncells, const uint chunk, const uint slots,
                         const uint parts, volatile __global uint *sync, __global float *x,
                         __global float *y,
                         __global float *vx, __global float *vy, __global const float *r,
                         __global const float *m, __global uchar *split,
                         __global uchar *ncontact, __global uint *cell,
                         __global uint *cell_start, __global uint *sorted, __global float *spos,
                         __global int *best, __global float *sum, __global const float *lx1,
                         __global const float *ly1, __global const float *lx2,
                         __global const float *ly2, __global const uint *seg_start,
                         __global const uint *seg_list, __global const uint *seg_gap,
                         __global uint *count, __global float *bx, __global float *by,
                         __global float *bvx, __global float *bvy, const uint own_G,
                         const uint own_g)
{
#if BP_TEAM_OWN
    /* each group a launch of one work-item of its own, by the engine's
     * threads (PoCL's basic device): the team's size and this group's
     * index as arguments. The launch's one group adds 1 - 1 and 0: with
     * no work-item function in the kernel PoCL 3.1 left its body a call
     * of its own, 2% slower on one core (the rain 50k); the index from
     * the global offset instead ran the steps wrong there. */
    bp_team t = {sync, own_G + get_num_groups(0) - 1u, own_g + get_group_id(0), 0u, 0u};
#else
    (void)own_G;
    (void)own_g;
    bp_team t = {sync, get_num_groups(0), get_group_id(0), 0u, 0u};
#endif
    volatile __global uint *cpus = sync + 7u + 7u * slots + 5u * BP_TEAM_PARTS_MAX;
    if (!bp_team_start(&t, cpus))
        return;
#ifdef BP_TEAM_CLOCK
    /* group 0 clocks the phases: ph[k] += ticks / 64 of each pass */
    volatile __global uint *ph = cpus + slots;
    ulong tick = BP_TEAM_CLOCK();
    uint phase = BP_TEAM_PHASES; /* none yet */
    if (t.g == 0u && first == 0u) /* a step's first launch: its ticks from 0 */
        for (uint k = 0u; k <= BP_TEAM_PHASES; k++)
            ph[k] = 0u;
#endif
    /* passes 1, 3, 4 and 5 on blocks of balls in full lanes, as the CPU engine */
    bp_block_arrays A = {x, y, vx, vy, r, m, split, cell_start, sorted, spos, best, ncontact,
                         sum, lx1, ly1, lx2, ly2, seg_start, seg_list, seg_gap};
    /* the grid's count arrays: part 0's is cell_start, the others' follow
     * each other in count */
    __global uint *cnt[BP_TEAM_PARTS_MAX];
    for (uint u = 0u; u < parts; u++)
        cnt[u] = u == 0u ? cell_start : count + (size_t)(u - 1u) * ncells;
    uint b, e;
    /* the grid's parts' cuts, and whether this launch times them */
    volatile __global uint *gcut = bp_team_cuts(&t, slots, 2u);
#ifdef BP_TEAM_CLOCK
    const int gtime = t.G == slots && parts == slots;
#endif
    /* the merge's parts, its movers' counts, and whether this sub-step's
     * grid was merged (pass 1 leaves no barrier then; 0 in a launch that
     * begins at pass 2, which follows pass 1's barrier) */
    bp_merge_part mp[BP_TEAM_PARTS_MAX];
    volatile __global uint *moved = sync + 7u + 7u * slots, *keep = moved + BP_TEAM_PARTS_MAX;
    __global uint *scratch = (__global uint *)sum;
    int merged = 0;
    for (uint q = first; q < end; q++) {
        uint s = (q - 1u) / BP_TEAM_PASSES;
        uint p = q == 0u ? BP_TEAM_PASSES : (q - 1u) % BP_TEAM_PASSES;
#ifdef BP_TEAM_CLOCK
        if (t.g == 0u) {
            ulong now = BP_TEAM_CLOCK();
            if (phase < BP_TEAM_PHASES)
                ph[phase] += (uint)(bp_team_ticks(tick, now) >> 6);
            tick = now;
            phase = bp_team_phase(p);
        }
#endif
        /* this sub-step's grid from the last one's */
        const int merge = s > 0u && P.n <= BP_TEAM_MERGE_MAX;
        if (p == BP_TEAM_PASSES) { /* the backup, pass 1 of the first sub-step */
            float v2m = 0.0f;
            while (bp_team_chunk(&t, P.n, chunk, &b, &e)) {
                bp_team_backup(b, e, x, y, vx, vy, bx, by, bvx, bvy);
                v2m = bp_block_integrate(&P, &A, cell, b, e, v2m);
            }
            bp_team_put_v2(&t, slots, v2m);
        } else if (p == BP_TP_COUNT && merge) {
            bp_team_merge_parts(bp_team_cuts(&t, slots, 0u), slots, parts, cell_start, ncells,
                                P.n, &t, keep, mp);
            for (uint u = t.g; u < parts; u += t.G)
                moved[u] = bp_merge_scan_lanes(&mp[u], P.inv_cell, P.gw, P.gh, sorted, spos,
                                               P.ystride, cell, scratch);
        } else if (p == BP_TP_COUNT) { /* every part by some group, whatever G */
#ifdef BP_TEAM_CLOCK
            ulong t0 = BP_TEAM_CLOCK();
#endif
            bp_team_count(cell, gcut, slots, P.n, parts, t.g, t.G, cnt, ncells);
#ifdef BP_TEAM_CLOCK
            if (gtime)
                bp_team_took(&t, gcut, slots, t0, 0);
#endif
            bp_team_span_totals(&t, cnt, parts, ncells, P.n, scratch);
        } else if (p == BP_TP_OFFSETS) {
            merged = 0;
            if (merge) {
                bp_team_merge_kept(keep, parts, mp);
                merged = bp_merge_fits(mp, (int)parts, (__global const uint *)moved);
            }
            if (merged) {
                for (uint u = t.g; u < parts; u += t.G)
                    bp_merge_place_lanes(mp, (int)parts, (int)u, (__global const uint *)moved,
                                         scratch, cell_start, sorted, x, y, spos, P.ystride);
            } else if (!merge && bp_team_span_offsets(&t, cnt, parts, ncells, P.n, scratch)) {
                /* a span of the offsets each */
            } else if (t.g == 0u) {
                /* where the merge said no, the grid counted anew, by one group */
                if (merge)
                    bp_team_count(cell, gcut, slots, P.n, parts, 0u, 1u, cnt, ncells);
                bp_grid_offsets_lanes(cnt, parts, ncells, P.n);
            }
#ifdef BP_TEAM_CLOCK
            if (t.g == 0u && t.G == slots)
                bp_team_rebalance(bp_team_cuts(&t, slots, 1u), slots, P.n);
#endif
        } else if (p == BP_TP_PLACE && merged) {
            /* placed in pass 1 */
        } else if (p == BP_TP_PLACE) {
#ifdef BP_TEAM_CLOCK
            ulong t0 = BP_TEAM_CLOCK();
#endif
            for (uint u = t.g; u < parts; u += t.G)
                bp_grid_place(cell, bp_team_part(gcut, slots, P.n, parts, u),
                              bp_team_part(gcut, slots, P.n, parts, u + 1u), cnt[u], sorted, x,
                              y, spos, P.ystride);
#ifdef BP_TEAM_CLOCK
            /* a count timed in an earlier launch (one that stopped
             * between the two) is added to as well: it was this
             * sub-step's */
            if (gtime && !merge)
                bp_team_took(&t, gcut, slots, t0, 1);
#endif
        } else if (p == BP_TP_CONTACTS) {
            float vmax = sqrt(bp_team_v2max(&t, slots));
#ifdef BP_OCL_TWICE
            while (bp_team_chunk(&t, P.n, chunk, &b, &e))
                bp_block_contacts(&P, &A, vmax, b, e);
#else
            /* each pair once, in a range of the grid's slots */
            bp_team_range(&t, bp_team_cuts(&t, slots, 0u), slots, P.n, &b, &e);
#ifdef BP_TEAM_CLOCK
            ulong t0 = BP_TEAM_CLOCK();
#endif
            bp_once_contacts(&P, &A, vmax, b, e);
#ifdef BP_TEAM_CLOCK
            bp_team_took(&t, bp_team_cuts(&t, slots, 0u), slots, t0, 0);
#endif
#endif
        } else if (p == BP_TP_RESOLVE) {
#if defined(BP_TEAM_CLOCK) && !defined(BP_OCL_TWICE)
            if (t.g == 0u && t.G == slots)
                bp_team_rebalance(bp_team_cuts(&t, slots, 0u), slots, P.n);
#endif
#ifdef BP_TEAM_CLOCK
            /* the grid's parts by the times of this sub-step's count and
             * place (the next reads of gcut are two barriers on) */
            if (t.g == 0u && gtime && !merge)
                bp_team_rebalance(gcut, slots, P.n);
            bp_team_move_range(&t, slots, P.n, &b, &e);
            for (uint i = b; i < e; i += BP_BLOCK)
                bp_block_resolve(&P, &A, i, min(e, i + BP_BLOCK));
#else
            while (bp_team_chunk(&t, P.n, chunk, &b, &e))
                bp_block_resolve(&P, &A, b, e);
#endif
        } else { /* BP_TP_MOVE */
            float v2m = 0.0f;
#ifdef BP_TEAM_CLOCK
            ulong t0 = BP_TEAM_CLOCK();
            bp_team_move_range(&t, slots, P.n, &b, &e);
            /* group 0 clocks the integrations the moves carry, in every
             * sub-step: one sub-step's times the others' count had made
             * the static phase negative (reported as 0) where that one
             * was slowed (descheduled, its core shared with tests run in
             * parallel), about two reads of the counter a block */
            const int clk = t.g == 0u;
            for (uint i = b; i < e; i += BP_MOVE_SPAN) {
                uint i1 = min(e, i + BP_MOVE_SPAN);
                bp_block_move(&P, &A, i, i1);
                if (s + 1u < nsub) {
                    ulong a = clk ? BP_TEAM_CLOCK() : 0u;
                    v2m = bp_block_integrate(&P, &A, cell, i, i1, v2m);
                    if (clk)
                        ph[BP_TEAM_PHASES] += (uint)(bp_team_ticks(a, BP_TEAM_CLOCK()) >> 6);
                }
            }
            bp_team_took(&t, bp_team_cuts(&t, slots, 1u), slots, t0, 0);
#else
            while (bp_team_chunk(&t, P.n, chunk, &b, &e)) {
                bp_block_move(&P, &A, b, e);
                if (s + 1u < nsub)
                    v2m = bp_block_integrate(&P, &A, cell, b, e, v2m);
            }
#endif
            bp_team_put_v2(&t, slots, v2m);
        }
        if (p == BP_TP_OFFSETS && merged)
            continue; /* the place's barrier is the one after pass 2 */
        if (q + 1u < end && !bp_team_barrier(&t, q))
            break;
    }
#ifdef BP_TEAM_CLOCK
    if (t.g == 0u && phase < BP_TEAM_PHASES)
        ph[phase] += (uint)(bp_team_ticks(tick, BP_TEAM_CLOCK()) >> 6);
#endif
}

/* engine_cpu.c - the plain-C engine: the passes of kernels/bp_physics.h in
 * loops over blocks of balls in SIMD lanes (cpu_blocks.h; or one ball at a
 * time, BALLPIT_CPU_LANES=1), spread over the cores with OpenMP.
 *
 * Every loop writes only its own balls' slots and reads what earlier loops
 * wrote (pass 3 writes the sums of the balls of its thread's range of grid
 * slots: bp_once_contacts), so the answer is the same bits for any thread
 * count, lane width and cut of the ranges. The grid build is a counting
 * sort (ties in ball-index order); the block passes build it in parallel
 * (bp_grid_count, bp_grid_offsets, bp_grid_place), or in worlds of up to
 * MERGE_MAX_BALLS balls, after a call's first sub-step, from the last
 * sub-step's grid (grid_merge.h: the same order); the one-ball-at-a-time
 * path serially (bp_grid_build).
 * The block passes of all the sub-steps of a call run in one OpenMP team.
 */
#include "engine_impl.h"
#include "step.h"
#include "cpu_blocks.h"
#include "grid_merge.h"
#include "order.h"
#include "team_pick.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Teams up to this size balance pass 3's ranges by their times. */
#define ONCE_TEAM 16

typedef struct cpu_engine {
    bp_engine base;
    uint32_t cap;           /* ball slots of the scratch arrays */
    float *scratch;         /* the balls' sums: a record of 4 floats each (bp_f4) */
    uint32_t *cell, *sorted;
    float *spos;            /* x of sorted[k] at k, y at P.ystride + k (the grid's order) */
    int32_t *best;          /* shares cell's block: cell is dead once the grid is built */
    uint8_t *ncontact;      /* this sub-step's contact counts (last one's: w->contacts) */
    uint32_t *cell_start;   /* ncells + 1 */
    uint32_t cell_cap;
    bp_seggrid sg;
    bp_step_params P;       /* set at attach: grid and constants */
    const bp_block_passes *blocks; /* passes 1, 3-5 in blocks (cpu_blocks.c), or NULL */
    int twice;              /* pass 3 by blocks of balls, each pair evaluated for both */
    int gaps;               /* pass 5 reads the segment grid's gaps (BALLPIT_CPU_SEGGAP) */
    double share[ONCE_TEAM + 1]; /* where each thread's range of slots begins, 0..1 */
    double mshare[ONCE_TEAM + 1]; /* where each thread's range of balls begins in pass 5 */
    double gshare[ONCE_TEAM + 1]; /* where each thread's balls begin in the grid build */
    float *v2t;             /* thread u's largest speed squared at v2t[V2T_STRIDE * u] */
    uint32_t merge_max;     /* the most balls whose grid is merged (grid_merge.h) */
    /* how many threads a call of the block passes runs on
     * (BALLPIT_CPU_TEAM): all it was made with (fixed; also whenever the
     * caller asked for a thread count), the faster of all and one by the
     * calls' times (adapt, the default; team_pick.h), or, for tests, all
     * and one in turn (alternate); any thread count gives the same bits */
    bp_team_pick pick;
} cpu_engine;

/* How the block passes build the grid after a call's first sub-step
 * (BALLPIT_CPU_GRID): counted anew, merged from the last sub-step's
 * (grid_merge.h), or merged in worlds of up to MERGE_MAX_BALLS balls.
 * Measured on the 2-core Zen 5 (ab_frames, two threads, the same bits):
 * the merge 0.95-0.99 of the frame time on the piles of 10k and 25k,
 * 0.93-1.0 on the rain 1k, 0.98-1.01 on the rain 10k (the host's slow
 * and fast spells), level on the rain 25k, but 1.03 on the rain 50k,
 * whose merge's gathers of the balls' positions leave the core's cache
 * (docs/benchmarks.md, fiftieth session): the limit was 32,768 until the
 * eighty-fifth session. On the 2-core Zen 3 that has been this project's
 * host since the eightieth, the merge won at every size up to the
 * bench's 200k: ab_frames 0.95 on the pile 50k, 0.97-0.99 on the rain
 * 50k, 0.94 on the rain 100k, 0.93-0.96 on the rain 200k; the bench's
 * rows in turns 0.87, 0.96, 0.98 and 0.94. Worlds of BP_ORDER_LARGE
 * (262,144) balls or more (a GPU's, re-sorted less often: order.h) still
 * count. */
#define MERGE_MAX_BALLS (BP_ORDER_LARGE - 1u)

/* Floats between two threads' v2t slots: a cache line each. */
#define V2T_STRIDE 16

static int cpu_reserve(cpu_engine *c, uint32_t n)
{
    if (n <= c->cap && c->sorted) /* allocated even for no balls: attach clears the slack */
        return 0;
    /* The first world's size exactly; 25% more when a world grows (a
     * sandbox pouring balls does not reallocate every frame). */
    size_t cap = c->sorted ? (size_t)n + n / 4 : n, f = sizeof(float);
    cap = cap < 1024 ? 1024 : cap;
    /* scratch, cell (best), sorted and spos with their pad, ncontact: one
     * block (bp_alloc_big: huge pages for a large world), each array on a
     * cache line; their contents are dead between attaches */
    const size_t size[5] = {4 * cap * f, cap * 4, (cap + BP_SCREEN_PAD) * 4,
                            (cap + BP_SCREEN_PAD) * 2 * f, cap};
    size_t at[5], all = 0;
    for (int k = 0; k < 5; k++) {
        at[k] = all;
        all += (size[k] + 63u) & ~(size_t)63u;
    }
    char *b = bp_alloc_big(all, c->base.huge_pages);
    if (!b)
        return -1;
    free(c->scratch);
    c->scratch = (float *)(b + at[0]);
    c->cell = (uint32_t *)(b + at[1]);
    c->sorted = (uint32_t *)(b + at[2]);
    c->spos = (float *)(b + at[3]);
    c->ncontact = (uint8_t *)(b + at[4]);
    c->best = (int32_t *)c->cell;
    c->cap = (uint32_t)cap;
    return 0;
}

static int cpu_attach(bp_engine *e, bp_world *w, char *err, size_t errlen)
{
    cpu_engine *c = (cpu_engine *)e;
    if (cpu_reserve(c, w->count))
        return bp_fail(err, errlen, "cpu engine: out of memory for %u balls", w->count);
    if (bp_seggrid_build(&c->sg, w))
        return bp_fail(err, errlen, "cpu engine: out of memory for the segment grid");
    bp_step_setup(w, &c->sg, &c->P);
    c->P.ystride = c->cap + BP_SCREEN_PAD; /* spos: the x plane, then the y plane */
    /* What the screening reads past the last ball is masked off, but is
     * defined (valgrind, and no NaN in a lane). */
    memset(c->sorted + w->count, 0, BP_SCREEN_PAD * sizeof *c->sorted);
    memset(c->spos + w->count, 0, BP_SCREEN_PAD * sizeof *c->spos);
    memset(c->spos + c->P.ystride + w->count, 0, BP_SCREEN_PAD * sizeof *c->spos);
    uint32_t ncells = (uint32_t)(c->P.gw * c->P.gh);
    if (ncells + 1 > c->cell_cap) {
        uint32_t *s = realloc(c->cell_start, (ncells + 1) * sizeof *s);
        if (!s)
            return bp_fail(err, errlen, "cpu engine: out of memory for %u grid cells", ncells);
        c->cell_start = s;
        c->cell_cap = ncells + 1;
    }
    /* 4 float arrays, cell (best), ncontact; sorted and spos with their pad */
    c->base.bytes = (size_t)c->cap * (4 * sizeof(float) + 4 + 1) +
                    ((size_t)c->cap + BP_SCREEN_PAD) * (4 + 2 * sizeof(float)) +
                    (size_t)c->cell_cap * 4 + ((size_t)c->sg.cap_cells + c->sg.cap_list) * 4 +
                    (size_t)c->base.threads * V2T_STRIDE * sizeof(float);
    return 0;
}

/* One past the last ball of block b of a world of n balls. */
static inline uint32_t block_end(int b, int n)
{
    uint32_t e = ((uint32_t)b + 1u) * BP_BLOCK;
    return e < (uint32_t)n ? e : (uint32_t)n;
}

/* The parallel grid build (the block passes): the balls in one partition
 * per thread, built as bp_grid_count, bp_grid_offsets and bp_grid_place
 * (kernels/bp_physics.h) describe, so the same sorted[] and cell_start[]
 * for any thread count. */
#define GRID_PARTS 16 /* 13 arrays in the rain's 4 x cap words, 3-4 in a pile's */

/* The count arrays: partition 0's is cell_start itself; the others are
 * carved from the scratch block, which is dead while the grid is built
 * (written in pass 3, last read in pass 5): 4 x cap words, at least 3
 * arrays of the at most 1.2 cells per ball (step.h) of a world of 4,096
 * cells or more. Returns how many partitions can have one. */
static int grid_count_arrays(cpu_engine *c, uint32_t ncells, uint32_t *cnt[GRID_PARTS])
{
    int k = 0;
    cnt[k++] = c->cell_start;
    for (size_t o = 0; o + ncells <= 4 * (size_t)c->cap && k < GRID_PARTS; o += ncells)
        cnt[k++] = (uint32_t *)c->scratch + o;
    return k;
}

/* The offsets are summed in spans of cells, one a thread up to
 * GRID_SPANS, each span's run from the totals of the spans before it,
 * which each partition sums of its counts after counting them (so the
 * threads sum the offsets between the same two barriers as one thread
 * did: on 16 threads a 1M rain's grid 49 ms a frame of 177, the single
 * sum most of it; bp_grid_span_cells .. bp_grid_span_run in
 * kernels/bp_physics.h). */
#define GRID_SPANS 64

/* The balls of partition u of parts, whole blocks of a world of n balls in
 * nb blocks: i0..i1-1. Counting and placing must use the same ones. */
static void grid_partition(int u, int parts, int nb, int n, uint32_t *i0, uint32_t *i1)
{
    *i0 = block_end(nb * u / parts - 1, n);
    *i1 = block_end(nb * (u + 1) / parts - 1, n);
}

/* Where thread u's range of slots begins (bp_once_contacts): share[u]
 * is where it began in the last sub-step, as a fraction of the balls. */
static uint32_t once_cut(const double *share, int u, int n)
{
    uint32_t k = (uint32_t)(share[u] * n + 0.5);
    return k < (uint32_t)n ? k : (uint32_t)n;
}

/* Thread u's range of balls in pass 5: its cut rounded down to a multiple
 * of 64 balls (whole cache lines of every array). */
static void move_range(const double *mshare, int u, int team, int n, uint32_t *i0,
                       uint32_t *i1)
{
    *i0 = once_cut(mshare, u, n) & ~63u;
    *i1 = u + 1 == team ? (uint32_t)n : once_cut(mshare, u + 1, n) & ~63u;
}

/* Partition u of the grid build's parts: by the threads' times (gshare,
 * as pass 5's ranges) where bal, else whole blocks in equal numbers. */
static void grid_range(const double *gshare, int bal, int u, int parts, int nb, int n,
                       uint32_t *i0, uint32_t *i1)
{
    if (bal)
        move_range(gshare, u, parts, n, i0, i1);
    else
        grid_partition(u, parts, nb, n, i0, i1);
}

/* Moves the cuts of the team's ranges half way towards those that would
 * have taken every thread the same time in the last sub-step. */
static void once_rebalance(double *share, const double *took, int team, int n)
{
    double rate[ONCE_TEAM], sum = 0.0;
    for (int u = 0; u < team; u++) {
        uint32_t end = u + 1 == team ? (uint32_t)n : once_cut(share, u + 1, n);
        double len = (double)end - once_cut(share, u, n);
        rate[u] = (len + 1.0) / (took[u] > 1e-7 ? took[u] : 1e-7);
        sum += rate[u];
    }
    double at = 0.0;
    for (int u = 1; u < team; u++) {
        at += rate[u - 1] / sum;
        share[u] = 0.5 * share[u] + 0.5 * at;
    }
}

static int team_size(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

/* This thread's number in its team. */
static int team_thread(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

/* The team's barrier between two passes where there are no more threads
 * than cores: a counter and a generation, spun on. libgomp's barrier
 * makes a futex call every time (to wake sleepers), which on the 2-core
 * virtual machines of this project made it 1.45 us where this one takes
 * 0.23 us (a loop of barriers on two threads), at six barriers a
 * sub-step. A thread that has spun long (its peer descheduled: other
 * processes on the cores) yields its core. The counter's add (acquire
 * and release) and the generation's store and loads order every write
 * before the barrier before every read after it. */
typedef struct spin_barrier {
    _Alignas(64) atomic_uint count;
    _Alignas(64) atomic_uint gen;
} spin_barrier;

/* Spins before a waiting thread yields its core: about 40 us on the
 * 2-core hosts (a pause there is 20 ns), several times a usual wait. Two
 * processes of two threads on two cores (a parallel test run) took 3.1-3.4
 * s for what one took 1.4-1.7 s alone; 3.7-3.9 s after 16,384 spins, 20 s
 * after 65,536, and 12 s with OpenMP's barrier, which spins longer
 * still before it sleeps. */
#define SPIN_YIELD_AFTER 2048u

static void spin_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static void spin_wait(spin_barrier *b, int team)
{
    unsigned g = atomic_load_explicit(&b->gen, memory_order_relaxed);
    if (atomic_fetch_add_explicit(&b->count, 1u, memory_order_acq_rel) + 1u == (unsigned)team) {
        atomic_store_explicit(&b->count, 0u, memory_order_relaxed);
        atomic_store_explicit(&b->gen, g + 1u, memory_order_release);
        return;
    }
    for (unsigned k = 0; atomic_load_explicit(&b->gen, memory_order_acquire) == g; k++) {
        if (k < SPIN_YIELD_AFTER)
            spin_relax();
        else
            sched_yield();
    }
}

/* The barrier after a pass: spin_wait where spin (no more threads than
 * cores), else OpenMP's; none in a team of one. */
static void team_wait(spin_barrier *b, int spin, int team)
{
    if (team == 1)
        return;
    if (spin) {
        spin_wait(b, team);
        return;
    }
#pragma omp barrier
}

/* The largest speed squared of the team's threads' slots, in every
 * thread after the barrier that follows their writes (max is exact: the
 * same float as OpenMP's reduction gave). */
static float team_v2max(const float *v2t, int team)
{
    float v2 = 0.0f;
    for (int u = 0; u < team; u++)
        if (v2t[V2T_STRIDE * u] > v2)
            v2 = v2t[V2T_STRIDE * u];
    return v2;
}

/* The clock of the fused pass 1's blocks: the time stamp counter where
 * there is one (about 25 ticks a read on the Zen 5, against clock_gettime's
 * 65), else bp_now in nanoseconds; its ticks are turned into seconds by
 * the call's wall time (cpu_step). */
static uint64_t fuse_clock(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return (uint64_t)__builtin_ia32_rdtsc();
#else
    return (uint64_t)(bp_now() * 1e9);
#endif
}

/* fuse_clock's ticks since t0: 0 where the difference wrapped (the
 * thread moved to a core whose counter is behind) */
static uint64_t fuse_since(uint64_t t0)
{
    uint64_t d = fuse_clock() - t0;
    return d >> 62 ? 0u : d;
}

/* Pass 1 for balls i0..i1-1 right after their pass 5 (the next
 * sub-step's), its clock's ticks added to *ticks where ticks is not NULL. */
static float fused_integrate(const bp_block_passes *B, const bp_step_params *P,
                             const bp_block_arrays *A, uint32_t *cell, uint32_t i0, uint32_t i1,
                             float v2max, uint64_t *ticks)
{
    if (!ticks)
        return B->integrate(P, A, cell, i0, i1, v2max);
    uint64_t t = fuse_clock();
    v2max = B->integrate(P, A, cell, i0, i1, v2max);
    *ticks += fuse_since(t);
    return v2max;
}

static int cpu_step(bp_engine *e, bp_world *w, uint32_t nsub, char *err, size_t errlen)
{
    cpu_engine *c = (cpu_engine *)e;
    if (w->count != c->P.n || w->nlines != c->P.nlines || w->count > c->cap)
        return bp_fail(err, errlen, "cpu engine: the world changed without bp_engine_attach");
    const bp_step_params P = c->P;
    uint32_t ncells = (uint32_t)(P.gw * P.gh);
    const int n = (int)w->count;
    const int nt = c->blocks ? bp_team_pick_size(&c->pick) : c->base.threads;
    const double wall0 = bp_now();
    const uint64_t tick0 = fuse_clock();
    float *x = w->x, *y = w->y, *vx = w->vx, *vy = w->vy, *r = w->r, *m = w->m;
    const float *lx1 = w->lx1, *ly1 = w->ly1, *lx2 = w->lx2, *ly2 = w->ly2;
    const uint32_t *seg_start = c->sg.start, *seg_list = c->sg.list;
    bp_phase_times T = {0};
    uint64_t tint = 0; /* thread 0's fused pass 1, in fuse_clock's ticks */
    (void)nt;
    const bp_block_passes *B = c->blocks;
    bp_block_arrays A = {x, y, vx, vy, r, m, w->contacts, c->cell_start, c->sorted, c->spos,
                         c->best, c->ncontact, c->scratch, lx1, ly1, lx2, ly2, seg_start,
                         seg_list, c->gaps ? c->sg.gap : NULL};
    const int nb = (n + (int)BP_BLOCK - 1) / (int)BP_BLOCK;
    const int merge = (uint32_t)n <= c->merge_max;
    if (B) {
        /* One team for all the sub-steps: each pass a worksharing loop
         * (its end the barrier the next pass needs), the grid's offsets
         * one thread's, so the threads are started once per call, not
         * five times per sub-step. */
        uint32_t *cnt[GRID_PARTS];
        const int parts = grid_count_arrays(c, ncells, cnt);
        float *v2t = c->v2t;
        spin_barrier bar;
        atomic_init(&bar.count, 0u);
        atomic_init(&bar.gen, 0u);
#ifdef _OPENMP
        const int spin = nt <= omp_get_num_procs();
#else
        const int spin = 1;
#endif
        double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
        double took[ONCE_TEAM], mtook[ONCE_TEAM], gtook[ONCE_TEAM]; /* pass 3, 5, the grid */
        uint32_t span_tot[GRID_PARTS][GRID_SPANS]; /* each partition's counts by span */
        uint32_t moved[BP_MERGE_MAX_PARTS];        /* each merge part's movers */
#pragma omp parallel num_threads(nt)
        {
        /* the loops end without OpenMP's barrier (nowait): team_wait
         * after each, where the next pass reads what another thread
         * wrote; each thread's largest v^2 of pass 1 in its slot of v2t,
         * read after such a barrier (the loops' max reductions until the
         * forty-eighth session) */
        const int me = team_thread();
        /* the grid built in gp partitions: one a thread where each has
         * a count array, else as many as there are arrays (a team of more
         * than the 4-16 the scratch holds: the serial build had made the
         * grid 9.77 of a 100k rain's 22.94 ms on 16 threads) */
        const int team = team_size(), gp = team < parts ? team : parts;
        const int ns = team < GRID_SPANS ? team : GRID_SPANS;
        /* the grid's parts cut by the threads' times in the last
         * sub-step's count and place, where each thread has one: a
         * part's place costs more where its balls crowd a few cells (a
         * chain of updates of one count) or have left grid order */
        const int gbal = team > 1 && team <= ONCE_TEAM && gp == team;
        const uint32_t span = bp_grid_span_cells(ncells, (uint32_t)ns);
        /* where passes 3 and 5 hand out blocks (pass 3 evaluating each
         * pair twice, teams over ONCE_TEAM), runs of them, about four per thread
         * and at most four blocks (1,024 balls, as PoCL's chunks): fewer
         * draws on the shared counter, and a thread's blocks adjacent;
         * 0.94-0.96 of the frame time against one block at a time */
        int ch = nb / (4 * team);
        ch = ch < 1 ? 1 : ch > 4 ? 4 : ch;
        /* Barriers (team_wait, and the single below) only where a pass
         * reads what another thread wrote: the clock's singles wait for
         * no one, and the last single of a sub-step starts the next
         * one's clock. */
#pragma omp single
        t0 = bp_now();
        for (uint32_t s = 0; s < nsub; s++) {
            if (s == 0) {
                /* pass 1 of the first sub-step; the others' is fused
                 * into the last sub-step's pass 5, below */
                float v2me = 0.0f;
#pragma omp for schedule(static) nowait
                for (int bk = 0; bk < nb; bk++)
                    v2me = B->integrate(&P, &A, c->cell, (uint32_t)bk * BP_BLOCK,
                                        block_end(bk, n), v2me);
                v2t[V2T_STRIDE * me] = v2me;
                team_wait(&bar, spin, team);
                /* the later sub-steps' t1 is the last one's end: their
                 * pass 1 ran fused into that one's pass 5 */
#pragma omp single nowait
                t1 = bp_now();
            }
            int merged = 0;
            if (merge && s > 0 && team <= BP_MERGE_MAX_PARTS) {
                /* the last sub-step's grid in parts of whole cells, cut
                 * where pass 3's ranges of slots began */
                bp_merge_part mp[BP_MERGE_MAX_PARTS];
                uint32_t cut[BP_MERGE_MAX_PARTS];
                for (int u = 0; u < team; u++)
                    cut[u] = u ? once_cut(c->share, u, n) : 0u;
                bp_merge_cut(c->cell_start, ncells, (uint32_t)n, team, cut, mp);
                moved[me] = bp_merge_scan(B, &mp[me], P.inv_cell, P.gw, P.gh, c->sorted, c->spos,
                                          P.ystride, c->cell, (uint32_t *)c->scratch);
                team_wait(&bar, spin, team);
                if (bp_merge_fits(mp, team, moved)) {
                    bp_merge_place(B, mp, team, me, moved, (uint32_t *)c->scratch, c->cell_start,
                                   c->sorted, x, y, c->spos, P.ystride);
                    merged = 1;
                }
            }
            if (!merged) {
            /* a partition per thread where each has a count array (the
             * same thread in the count's and the place's loops: static
             * loops of one length), else as many as there are arrays */
#pragma omp for schedule(static) nowait
            for (int u = 0; u < gp; u++) {
                double ts = bp_now();
                uint32_t i0, i1;
                grid_range(c->gshare, gbal, u, gp, nb, n, &i0, &i1);
                bp_grid_count(c->cell, i0, i1, cnt[u], ncells);
                bp_grid_span_totals(cnt[u], (uint32_t)ns, span, ncells, span_tot[u]);
                gtook[u] = bp_now() - ts;
            }
            team_wait(&bar, spin, team);
#pragma omp for schedule(static) nowait
            for (int k = 0; k < ns; k++) {
                uint32_t c0, c1;
                uint32_t run = bp_grid_span_run(span_tot[0], GRID_SPANS, (uint32_t)gp, (uint32_t)k);
                bp_grid_span_of((uint32_t)k, span, ncells, &c0, &c1);
                B->offsets(cnt, (uint32_t)gp, c0, c1, run);
                if (k == 0)
                    cnt[0][ncells] = (uint32_t)n;
            }
            team_wait(&bar, spin, team);
#pragma omp for schedule(static) nowait
            for (int u = 0; u < gp; u++) {
                double ts = bp_now();
                uint32_t i0, i1;
                grid_range(c->gshare, gbal, u, gp, nb, n, &i0, &i1);
                bp_grid_place(c->cell, i0, i1, cnt[u], c->sorted, x, y, c->spos, P.ystride);
                gtook[u] += bp_now() - ts;
            }
            }
            team_wait(&bar, spin, team);
            if (gbal && !merged) {
#pragma omp single nowait
                once_rebalance(c->gshare, gtook, team, n);
            }
            float vmax = sqrtf(team_v2max(v2t, team));
#pragma omp single nowait
            t2 = bp_now();
            /* the cut of pass 3's slots moved by its times (below) */
            const int cut = !c->twice && team > 1 && team <= ONCE_TEAM;
            if (c->twice) {
#pragma omp for schedule(dynamic, ch) nowait
                for (int b = 0; b < nb; b++)
                    B->contacts(&P, &A, vmax, (uint32_t)b * BP_BLOCK, block_end(b, n));
            } else if (!cut) {
                /* one range of slots per thread (each walks its ghosts too,
                 * a row or two of balls: more ranges cost more than the
                 * balance they give) */
#pragma omp for schedule(static) nowait
                for (int u = 0; u < team; u++)
                    B->contacts_once(&P, &A, vmax, (uint32_t)((int64_t)n * u / team),
                                     (uint32_t)((int64_t)n * (u + 1) / team));
            } else {
                /* the same, each thread's share of the slots moved towards
                 * what it got through in the last sub-step (a core that
                 * the host slows, a range with more pairs) */
#pragma omp for schedule(static) nowait
                for (int u = 0; u < team; u++) {
                    double ts = bp_now();
                    uint32_t end = u + 1 == team ? (uint32_t)n : once_cut(c->share, u + 1, n);
                    B->contacts_once(&P, &A, vmax, once_cut(c->share, u, n), end);
                    took[u] = bp_now() - ts;
                }
            }
            team_wait(&bar, spin, team);
            if (cut) {
#pragma omp single nowait
                once_rebalance(c->share, took, team, n);
            }
#pragma omp for schedule(static) nowait
            for (int b = 0; b < nb; b++)
                B->resolve(&P, &A, (uint32_t)b * BP_BLOCK, block_end(b, n));
            team_wait(&bar, spin, team);
#pragma omp single nowait
            t3 = bp_now();
            /* pass 1 of the next sub-step run by run (BP_MOVE_SPAN) after pass 5,
             * as PoCL's one-launch step does: a ball's data in the core's
             * cache, and one barrier fewer (the grid is counted after
             * pass 5's barrier: the count arrays are in the scratch,
             * which pass 5 reads) */
            const int next = s + 1 < nsub;
            /* thread 0 clocks its blocks' pass 1 in every sub-step, the
             * phase times' pass 1 (PoCL's group 0 does the same): until
             * the fifty-seventh session the first sub-step's time counted
             * for all, and one slowed block there could take the whole
             * static phase; two counter reads a block, about 0.3% of the
             * rain 10k's sub-step */
            const int clock = next && me == 0;
            /* every thread read v2t after pass 2's barrier, and this pass
             * begins after pass 4's */
            float v2me = 0.0f;
            if (team == 1 || team > ONCE_TEAM) {
                /* runs of ch blocks (pass 3's draws) in one call each */
                const int nrun = (nb + ch - 1) / ch;
#pragma omp for schedule(dynamic, 1) nowait
                for (int k = 0; k < nrun; k++) {
                    uint32_t i0 = (uint32_t)(k * ch) * BP_BLOCK;
                    uint32_t i1 = block_end(k * ch + ch - 1, n); /* n at most */
                    B->move(&P, &A, i0, i1);
                    if (next)
                        v2me = fused_integrate(B, &P, &A, c->cell, i0, i1, v2me,
                                               clock ? &tint : NULL);
                }
            } else {
                /* one range of balls per thread, cut by the threads' times
                 * as pass 3's: a thread moves about the balls whose pairs
                 * it summed, their lines in its cache, where blocks handed
                 * out in turn bounce them between the cores (0.88-0.97 of
                 * the frame time against runs of four blocks) */
#pragma omp for schedule(static) nowait
                for (int u = 0; u < team; u++) {
                    double ts = bp_now();
                    uint32_t i0, i1;
                    move_range(c->mshare, u, team, n, &i0, &i1);
                    for (uint32_t i = i0; i < i1; i += BP_MOVE_SPAN) {
                        uint32_t e = i1 - i > BP_MOVE_SPAN ? i + BP_MOVE_SPAN : i1;
                        B->move(&P, &A, i, e);
                        if (next)
                            v2me = fused_integrate(B, &P, &A, c->cell, i, e, v2me,
                                                   clock ? &tint : NULL);
                    }
                    mtook[u] = bp_now() - ts;
                }
            }
            v2t[V2T_STRIDE * me] = v2me;
            team_wait(&bar, spin, team);
            if (team > 1 && team <= ONCE_TEAM) {
#pragma omp single nowait
                once_rebalance(c->mshare, mtook, team, n);
            }
            /* no barrier: the next sub-step's loops read only what pass
             * 5's barrier has let through. Nor does the next sub-step
             * clock its start: a thread that skipped this single could
             * write t1 there before this one reads it (until the
             * fifty-eighth session it did, now and then, and the grid's
             * time went to the integration's column); its next clock,
             * t2, comes after a barrier that this single's thread must
             * reach too */
#pragma omp single nowait
            {
                double t4 = bp_now();
                T.integrate += t1 - t0;
                T.grid += t2 - t1;
                T.ball_contacts += t3 - t2;
                T.static_contacts += t4 - t3; /* less the fused pass 1, below */
                t0 = t1 = t4;
            }
        }
        }
    } else {
        /* one ball at a time (BALLPIT_CPU_LANES=1) */
        for (uint32_t s = 0; s < nsub; s++) {
            double t0 = bp_now();
            float v2max = 0.0f;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(max : v2max)
            for (int i = 0; i < n; i++) {
                float v2 = bp_integrate((bp_u32)i, &P, vx, vy);
                if (v2 > v2max)
                    v2max = v2;
                c->cell[i] = bp_cell_of(&P, x[i], y[i]);
            }
            double t1 = bp_now();
            bp_grid_build((uint32_t)n, ncells, c->cell, c->cell_start, c->sorted);
#pragma omp parallel for schedule(static) num_threads(nt)
            for (int k = 0; k < n; k++)
                bp_grid_position((bp_u32)k, c->sorted, x, y, c->spos, P.ystride);
            float vmax = sqrtf(v2max);
            double t2 = bp_now();
#pragma omp parallel for schedule(dynamic, 512) num_threads(nt)
            for (int i = 0; i < n; i++)
                bp_contacts((bp_u32)i, &P, vmax, x, y, vx, vy, r, m, w->contacts,
                            c->cell_start, c->sorted, c->spos, c->ncontact, c->best,
                            c->scratch);
#pragma omp parallel for schedule(static) num_threads(nt)
            for (int i = 0; i < n; i++)
                bp_resolve((bp_u32)i, &P, x, y, vx, vy, r, m, w->contacts, c->best, c->scratch);
            double t3 = bp_now();
#pragma omp parallel for schedule(dynamic, 512) num_threads(nt)
            for (int i = 0; i < n; i++) {
                bp_move_static((bp_u32)i, &P, x, y, vx, vy, c->scratch, r,
                               lx1, ly1, lx2, ly2, seg_start, seg_list);
                w->contacts[i] = c->ncontact[i];
            }
            double t4 = bp_now();
            T.integrate += t1 - t0;
            T.grid += t2 - t1;
            T.ball_contacts += t3 - t2;
            T.static_contacts += t4 - t3;
        }
    }
    if (tint) {
        /* the fused pass 1's ticks (only the lanes' passes fuse it) in
         * seconds by the call's own length, moved from pass 5's phase
         * (where they were clocked) to pass 1's */
        double wall = bp_now() - wall0;
        uint64_t ticks = fuse_since(tick0);
        double fused = ticks ? (double)tint * (wall / (double)ticks) : 0.0;
        fused = fused < T.static_contacts ? fused : T.static_contacts;
        T.integrate += fused;
        T.static_contacts -= fused;
    }
    c->base.times = T;
    if (B)
        bp_team_pick_after(&c->pick, nt, (uint32_t)n, nsub, bp_now() - wall0);
    w->substeps_done += nsub;
    w->frames = w->substeps_done / (uint64_t)w->params.substeps;
    return 0;
}

static int cpu_read(bp_engine *e, bp_world *w, char *err, size_t errlen)
{
    (void)e; (void)w; (void)err; (void)errlen;
    return 0; /* the CPU engine works in the world's own arrays */
}

static void *cpu_scratch(bp_engine *e, size_t *bytes)
{
    cpu_engine *c = (cpu_engine *)e;
    *bytes = c->scratch ? 4 * (size_t)c->cap * sizeof(float) : 0;
    return c->scratch; /* pass 3's sums and pass 5's input: dead between calls */
}

static void cpu_destroy(bp_engine *e)
{
    cpu_engine *c = (cpu_engine *)e;
    free(c->scratch); /* the block of cell, sorted, spos and ncontact too */
    free(c->cell_start);
    free(c->v2t);
    bp_seggrid_free(&c->sg);
    free(c);
}

static const bp_engine_ops cpu_ops = {
    .name = "cpu", .attach = cpu_attach, .step = cpu_step, .read = cpu_read, .destroy = cpu_destroy,
    .scratch = cpu_scratch,
};

bp_engine *bp_cpu_engine_create(const bp_engine_opts *opts, char *err, size_t errlen)
{
    cpu_engine *c = calloc(1, sizeof *c);
    if (!c) {
        bp_fail(err, errlen, "cpu engine: out of memory");
        return NULL;
    }
    c->base.ops = &cpu_ops;
    c->base.kind = BP_BACKEND_CPU;
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    int t = opts && opts->threads > 0 ? opts->threads : cores;
#ifndef _OPENMP
    t = 1; /* built without OpenMP: one thread */
#endif
    c->base.threads = t;
    c->base.host_cores = t;
    if (bp_team_pick_init(&c->pick, t, t > 1, !(opts && opts->threads > 0), "",
                          "BALLPIT_CPU_TEAM", err, errlen)) {
        free(c);
        return NULL;
    }
    for (int u = 0; u <= ONCE_TEAM; u++) /* each thread an equal range to begin with */
        c->share[u] = c->mshare[u] = c->gshare[u] =
            t <= ONCE_TEAM && u <= t ? (double)u / t : 1.0;
    /* Passes 1 and 3-5 in blocks of balls, 16 lanes wide where the
     * processor has AVX-512 (x86-64-v4), 8 with AVX2 (x86-64-v3), else 4
     * (cpu_blocks.h). BALLPIT_CPU_LANES picks: 1 runs them one ball at a
     * time (bp_integrate, bp_contacts, bp_resolve, bp_move_static, as the
     * OpenCL kernels on GPUs do), 4, 8 or 16 those widths: for A/B runs,
     * and for the test that all give the same bits. */
    const char *lanes = getenv("BALLPIT_CPU_LANES");
    c->blocks = bp_blocks_best();
    if (lanes && *lanes) {
        if (strcmp(lanes, "1") == 0) {
            c->blocks = NULL;
        } else if (strcmp(lanes, "4") == 0 || strcmp(lanes, "8") == 0 ||
                   strcmp(lanes, "16") == 0) {
            c->blocks = bp_blocks_of_width(atoi(lanes));
            if (!c->blocks) {
                bp_fail(err, errlen, "BALLPIT_CPU_LANES=%s needs %s, which this processor or "
                                     "build lacks", lanes,
                        strcmp(lanes, "8") == 0 ? "AVX2 (x86-64-v3)" : "AVX-512 (x86-64-v4)");
                free(c);
                return NULL;
            }
        } else {
            bp_fail(err, errlen, "BALLPIT_CPU_LANES=%s is not 1, 4, 8 or 16", lanes);
            free(c);
            return NULL;
        }
    }
    /* BALLPIT_CPU_PAIRS=twice: pass 3 as bp_block_contacts, each pair
     * evaluated for both its balls; BALLPIT_CPU_SEGGAP=0: pass 5 walks the
     * segment cells of every ball's box, not first reading the gap of its
     * cell; BALLPIT_CPU_GRID=count or merge: the grid after a call's
     * first sub-step always counted anew or always merged, auto (the
     * default) merged in worlds of up to MERGE_MAX_BALLS (the same bits
     * either way; for A/B runs) */
    c->gaps = 1;
    c->merge_max = MERGE_MAX_BALLS;
    if (bp_env_merge_max("", "BALLPIT_CPU_GRID", &c->merge_max, err, errlen) ||
        bp_env_choice("", "BALLPIT_CPU_PAIRS", "twice", "once", &c->twice, err, errlen) ||
        bp_env_choice("", "BALLPIT_CPU_SEGGAP", "1", "0", &c->gaps, err, errlen)) {
        free(c);
        return NULL;
    }
    c->v2t = bp_grow_aligned(NULL, 0, (size_t)t * V2T_STRIDE * sizeof(float));
    if (!c->v2t) {
        bp_fail(err, errlen, "cpu engine: out of memory");
        free(c);
        return NULL;
    }
    snprintf(c->base.device, sizeof c->base.device, "%d thread%s, %d lane%s", t,
             t == 1 ? "" : "s", c->blocks ? c->blocks->lanes : 1, c->blocks ? "s" : "");
    return &c->base;
}

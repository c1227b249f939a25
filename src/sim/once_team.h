/* once_team.h - private: pass 3 on a team of threads, each range's ghosts'
 * pairs handed over by the thread before it instead of screened again.
 *
 * bp_once_contacts (kernels/bp_physics.h) gives every range of slots but
 * the first its ghosts: the balls before it whose windows reach into it,
 * screened again so that each ball's sums are added in its neighbour
 * order on any number of threads. The thread before screens those same
 * pairs for their i sides anyway (its pairs with balls at its end or
 * after, flagged BP_ONCE_NOJ). Here it hands them over:
 *
 * 1. Each thread first screens the tail of its range, from its first
 *    ball that can reach the next range (the next range's ghosts: the
 *    region) to its end, and keeps the pairs unevaluated (BP_ONCE_KEEP),
 *    the flagged ones listed again; then tells the next thread they are
 *    there (hand.ready).
 * 2. It evaluates the ghosts' pairs listed by the thread before and folds
 *    their j sides into its range's first balls, waiting for the list if
 *    it is not there yet. While it waits it screens more of its range's
 *    tail, a run at a time from the end back.
 * 3. It walks the rest of its range as bp_once_contacts does.
 * 4. It evaluates and folds the tail's kept pairs, block by block.
 *
 * A ball's sums get the same terms in the same order: those of the balls
 * before its range (the ghosts') first, then those of its range's balls
 * before the tail, in slot order, then the tail's, in slot order too, as
 * the pairs of a ball are folded in the order of their first ball. So the
 * bits are bp_once_contacts', on any number of threads.
 *
 * A cut whose ghosts are not all in the range before it, or reach past
 * the range after it, or a region whose pairs do not fit the room, goes
 * back to the ghosts (bp_once_ghosts): both threads of a cut decide it
 * from the same numbers.
 */
#ifndef BP_ONCE_TEAM_H
#define BP_ONCE_TEAM_H

#include "bp_physics.h"

#include <sched.h>
#include <string.h>
#include <stdatomic.h>

/* One thread's side of the hand-over, a cache line of its own; the room
 * is on the thread's stack (engine_cpu.c). */
typedef struct bp_once_hand {
    _Alignas(64) atomic_uint ready; /* the sub-step (gen) whose region is kept */
    int ok;                         /* the region kept whole (else: the ghosts) */
    bp_once_keep keep;              /* the kept pairs and the ghosts' list */
} bp_once_hand;

/* The team's pass 3: thread u's range is slots cut[u]..cut[u+1]-1. */
typedef struct bp_once_team {
    int team;
    const bp_u32 *cut; /* team + 1 entries, cut[team] = n */
    bp_once_hand *hand;
    unsigned gen; /* this sub-step's number, never 0, never one before */
} bp_once_team;

/* Spins before a waiting thread yields its core (engine_cpu.c's
 * barrier, and bp_once_wait): about 40 us on the 2-core hosts (a pause
 * there is 20 ns), several times a usual wait. Two processes of two
 * threads on two cores (a parallel test run) took 3.1-3.4 s for what one
 * took 1.4-1.7 s alone; 3.7-3.9 s after 16,384 spins, 20 s after 65,536,
 * and 12 s with OpenMP's barrier, which spins longer still before it
 * sleeps. */
#define BP_SPIN_YIELD_AFTER 2048u

static inline void bp_spin_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Spins while *ready is not gen; yields the core after a while (the
 * thread before descheduled). The acquire orders its kept pairs before. */
static inline void bp_once_wait(const atomic_uint *ready, unsigned gen)
{
    for (unsigned k = 0; atomic_load_explicit(ready, memory_order_acquire) != gen; k++) {
        if (k < BP_SPIN_YIELD_AFTER)
            bp_spin_relax();
        else
            sched_yield();
    }
}

/* The cut at slot a (0 < a < n): *g the first slot whose ball may have a
 * pair at a or after (bp_ghost_pick's first: a if none), *e one past the
 * last slot such a pair can reach (the end of the cell wr rows and
 * columns on from a's, bp_ghost_rows). */
static inline void bp_once_cut_reach(const bp_step_params *P, const bp_block_arrays *A,
                                     float vmax, bp_u32 a, bp_u32 *g, bp_u32 *e)
{
    bp_i32 ca;
    float rm;
    bp_u32 gk[BP_BLOCK + BP_LANES];
    bp_u32 s = bp_ghost_first(P, A->cell_start, A->spos, vmax, a, &ca, &rm);
    *g = a;
    while (s < a) {
        if (bp_ghost_pick(P, A->spos, &s, a, ca, rm, gk)) {
            *g = gk[0];
            break;
        }
    }
    bp_i32 wr = bp_ghost_rows(P, bp_reach(P, P->rmax, vmax, vmax));
    int64_t c = (int64_t)ca + (int64_t)wr * P->gw + wr + 1, ncells = (int64_t)P->gw * P->gh;
    *e = A->cell_start[c < ncells ? c : ncells];
}

/* A thread's room for kept words (bp_once_keep), ghosts and their pairs:
 * on its stack, 4 x (BP_ONCE_KEEP_WORDS + BP_ONCE_GHOSTS + 2 x
 * BP_ONCE_GHOST_PAIRS) bytes. */
#define BP_ONCE_KEEP_WORDS 8192u
#define BP_ONCE_GHOSTS 1024u
#define BP_ONCE_GHOST_PAIRS 2048u

/* The runs of slots a thread screens from its range's end back while the
 * region before its range is not there yet: at most BP_ONCE_SEGS of
 * BP_ONCE_RUN slots. */
#define BP_ONCE_RUN 128u
#define BP_ONCE_SEGS 64u

/* Whether thread v's ghosts are handed over by thread v - 1: all of them
 * in v - 1's range, their pairs all in v's, and v - 1's region (*g..) at
 * most a quarter of the kept words' room in slots. *g, *e:
 * bp_once_cut_reach's. */
static inline int bp_once_handed(const bp_step_params *P, const bp_block_arrays *A, float vmax,
                                 const bp_once_team *T, int v, bp_u32 *g, bp_u32 *e)
{
    bp_u32 a = v > 0 && v < T->team ? T->cut[v] : 0u;
    *g = *e = a;
    if (a == 0u || a >= P->n)
        return 0;
    bp_once_cut_reach(P, A, vmax, a, g, e);
    return *g >= T->cut[v - 1] && *e <= T->cut[v + 1] && a - *g <= BP_ONCE_KEEP_WORDS / 4u;
}

/* Screens the balls in slots g0..g1-1 of the range of slots ..b-1, block
 * by block, with all their pairs after them, into K (each block's first
 * slot, end and count of words, then its words): nothing evaluated,
 * nothing folded (BP_ONCE_KEEP). */
static inline void bp_once_keep_blocks(const bp_step_params *P, const bp_block_arrays *A,
                                       float vmax, bp_u32 g0, bp_u32 g1, bp_u32 b,
                                       bp_once_list *L, bp_slot_block *S, bp_once_keep *K)
{
    L->keep = K;
    for (bp_u32 g = g0; g < g1 && !K->full; g += BP_BLOCK) {
        bp_u32 ge = g1 - g > BP_BLOCK ? g + BP_BLOCK : g1, ln = 0u, h = K->n;
        if (K->cap - K->n < 3u) {
            K->full = 1;
            return;
        }
        K->n += 3u;
        bp_slot_block_fill(P, A, vmax, g, ge, S);
        for (bp_u32 k = g; k < ge; k++)
            bp_once_screen(P, A, L, &ln, S, k, k + 1u, P->n, b, BP_ONCE_KEEP);
        bp_once_work_off(L, ln, P, A, S, BP_ONCE_KEEP);
        K->w[h] = g;
        K->w[h + 1u] = ge;
        K->w[h + 2u] = K->n - h - 3u;
    }
}

/* Evaluates and folds the kept words w[0..n-1] (bp_once_keep_blocks), block
 * by block, as bp_once_blocks would have (the sums cleared before). */
static inline void bp_once_kept_blocks(const bp_step_params *P, const bp_block_arrays *A,
                                       float vmax, const bp_u32 *w, bp_u32 n, bp_once_list *L,
                                       bp_slot_block *S)
{
    for (bp_u32 q = 0u; q < n;) {
        bp_u32 g = w[q], ge = w[q + 1u], cnt = w[q + 2u];
        q += 3u;
        bp_slot_block_fill(P, A, vmax, g, ge, S);
        for (bp_u32 p = 0u; p < cnt; p += BP_PAIRS_CAP) {
            bp_u32 m = cnt - p < BP_PAIRS_CAP ? cnt - p : BP_PAIRS_CAP;
            memcpy(L->j, w + q + p, m * sizeof *w);
            bp_once_work_off(L, m, P, A, S, 1);
        }
        q += cnt;
    }
}

/* Evaluates the ghosts' pairs listed in K (bp_once_keep_words) and folds
 * their j sides, as bp_once_ghosts would have: the ghosts filled in
 * BP_BLOCK at a time by their slots. */
static inline void bp_once_kept_ghosts(const bp_step_params *P, const bp_block_arrays *A,
                                       float vmax, const bp_once_keep *K, bp_once_list *L,
                                       bp_slot_block *S)
{
    bp_u32 q = 0u;
    for (bp_u32 c0 = 0u; c0 < K->ns; c0 += BP_BLOCK) {
        bp_u32 c1 = K->ns - c0 > BP_BLOCK ? c0 + BP_BLOCK : K->ns, m = 0u;
        bp_slot_block_fill_at(P, A, vmax, K->gslot + c0, c1 - c0, S);
        for (; q < K->ng && K->gi[q] < c1; q++) {
            L->j[m++] = K->gj[q] | ((K->gi[q] - c0) << BP_ONCE_ISHIFT);
            if (m == BP_PAIRS_CAP) {
                bp_once_work_off(L, m, P, A, S, 0);
                m = 0u;
            }
        }
        bp_once_work_off(L, m, P, A, S, 0);
    }
}

/* Pass 3 for thread u's range of slots, as the head of this file says:
 * bp_once_contacts' bits. */
static inline void bp_once_contacts_team(const bp_step_params *P, const bp_block_arrays *A,
                                         float vmax, const bp_once_team *T, int u)
{
    bp_u32 a = T->cut[u], b = T->cut[u + 1], z = a; /* the sums cleared up to slot z */
    bp_once_list L;
    bp_slot_block S;
    bp_once_hand *me = &T->hand[u];
    bp_once_keep *K = &me->keep;
    bp_u32 ga, ea, gb, eb;
    int mine = bp_once_handed(P, A, vmax, T, u, &ga, &ea);
    int next = bp_once_handed(P, A, vmax, T, u + 1, &gb, &eb);
    /* 1. the tail: the next range's region */
    bp_u32 ts = b;
    bp_u32 seg[BP_ONCE_SEGS + 1u], nseg = 0u; /* where each run of kept words begins */
    K->n = K->ns = K->ng = 0u;
    K->full = 0;
    if (next) {
        bp_once_keep_blocks(P, A, vmax, gb, b, b, &L, &S, K);
        me->ok = !K->full;
        atomic_store_explicit(&me->ready, T->gen, memory_order_release);
        if (K->full) { /* of no use: step 3 walks it */
            K->n = 0u;
            K->full = 0;
        } else {
            ts = gb;
            seg[nseg++] = 0u;
        }
    }
    /* then runs before it, from the last back, while the region before is
     * not there yet (a run that does not fit is walked in step 3) */
    const bp_once_hand *h = mine ? &T->hand[u - 1] : NULL;
    while (h && ts > a && nseg < BP_ONCE_SEGS &&
           atomic_load_explicit(&h->ready, memory_order_acquire) != T->gen) {
        bp_u32 t0 = ts - a > BP_ONCE_RUN ? ts - BP_ONCE_RUN : a, n0 = K->n;
        bp_once_keep_blocks(P, A, vmax, t0, ts, b, &L, &S, K);
        if (K->full) {
            K->n = n0;
            K->full = 0;
            break;
        }
        seg[nseg++] = n0;
        ts = t0;
    }
    seg[nseg] = K->n;
    /* 2. the ghosts' pairs, from the region before */
    if (h)
        bp_once_wait(&h->ready, T->gen);
    if (h && h->ok) {
        bp_once_zero(A, &z, ea);
        bp_once_kept_ghosts(P, A, vmax, &h->keep, &L, &S);
    } else if (a > 0u && a < b) {
        bp_once_ghosts(P, A, vmax, a, b, &z, &L, &S);
    }
    /* 3. the range up to the tail; 4. the tail's runs in slot order (the
     * last kept first) */
    bp_once_blocks(P, A, vmax, a, ts, b, &z, &L, &S);
    bp_once_zero(A, &z, b);
    for (bp_u32 q = nseg; q-- > 0u;)
        bp_once_kept_blocks(P, A, vmax, K->w + seg[q], seg[q + 1u] - seg[q], &L, &S);
}

#endif

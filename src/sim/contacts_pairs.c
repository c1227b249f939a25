/* contacts_pairs.c - the CPU engine's contact pass (pass 3 of
 * kernels/bp_physics.h) on a block of balls, with the pairs in full lanes.
 *
 * bp_contacts takes one ball at a time, so its groups of lanes hold that
 * ball's neighbours only: 1-2 of 4 lanes on the rain. Here the balls of a
 * block are screened as there (the same rows, the same reach), their pairs
 * (i, j) appended to one list, and the list is evaluated BP_LANES pairs at
 * a time whatever ball they belong to (bp_vpair_eval, each lane doing what
 * bp_contacts' lane does); then the pairs are folded into their balls' sums
 * in list order (bp_fold_pair), which is each ball's neighbour order. So
 * the sums are bp_contacts' bits, for any lane count.
 *
 * Compiled twice (src/meson.build): BP_LANES 4 for any processor, and 16
 * with -march=x86-64-v4 (BP_PAIRS_WIDE), where the screening compresses a
 * row's balls in reach into the list with one AVX-512 instruction.
 */
#include "contacts_pairs.h"

#include <string.h>

#ifdef BP_PAIRS_WIDE
#define PAIRS_FN bp_contacts_pairs16
#else
#define PAIRS_FN bp_contacts_pairs4
#endif

#define PAIRS_CAP 256u /* the list is worked off when it holds this many */

typedef struct pair_list {
    bp_u32 i[PAIRS_CAP + BP_LANES], j[PAIRS_CAP + BP_LANES];
    float t[PAIRS_CAP + BP_LANES];
    float dvx[PAIRS_CAP + BP_LANES], dvy[PAIRS_CAP + BP_LANES];
    float px[PAIRS_CAP + BP_LANES], py[PAIRS_CAP + BP_LANES];
    bp_i32 close[PAIRS_CAP + BP_LANES], cand[PAIRS_CAP + BP_LANES];
    bp_i32 soft[PAIRS_CAP + BP_LANES];
    bp_u32 n;
} pair_list;

/* Evaluates the list's pairs and folds them into st (the block's sums,
 * ball i at st[i - i0]); empties the list. */
static void work_off(pair_list *L, const bp_step_params *P, const bp_pair_arrays *A,
                     bp_fold *st, bp_u32 i0)
{
    bp_u32 n = L->n;
    if (n == 0)
        return;
    for (bp_u32 k = n; k % BP_LANES; k++) { /* the last group's unused lanes: its first pair */
        L->i[k] = L->i[n - n % BP_LANES];
        L->j[k] = L->j[n - n % BP_LANES];
    }
    for (bp_u32 p = 0; p < n; p += BP_LANES) {
        const bp_u32 *I = L->i + p, *J = L->j + p;
        bp_vpair v;
        float ni[BP_LANES];
        for (bp_u32 k = 0; k < BP_LANES; k++)
            ni[k] = bp_split_n(A->split[I[k]]);
        v.i = BP_VLOADU(I);
        v.xi = BP_VGATHER(A->x, I);
        v.yi = BP_VGATHER(A->y, I);
        v.ri = BP_VGATHER(A->r, I);
        v.mi = BP_VGATHER(A->m, I);
        v.ni = BP_VLOAD(ni);
        bp_vpair_with_j(&v, BP_VGATHER(A->vx, I), BP_VGATHER(A->vy, I), A->x, A->y, A->r, A->vx,
                        A->vy, J);
        bp_vterms o;
        if (!bp_vpair_eval(P, &v, BP_LANE_IDS < BP_VUSPLAT(n - p), A->m, A->split, J, &o)) {
            bp_vf none = BP_VSPLAT(-1.0f); /* no lane adds anything: the fold skips them */
            bp_vi no = BP_VI0;
            BP_VSTORE(none, L->t + p);
            BP_VSTORE(no, L->close + p);
            continue;
        }
        BP_VSTORE(o.t, L->t + p);
        BP_VSTORE(o.dvx, L->dvx + p);
        BP_VSTORE(o.dvy, L->dvy + p);
        BP_VSTORE(o.px, L->px + p);
        BP_VSTORE(o.py, L->py + p);
        BP_VSTORE(o.close, L->close + p);
        BP_VSTORE(o.cand, L->cand + p);
        BP_VSTORE(o.soft, L->soft + p);
    }
    for (bp_u32 p = 0; p < n; p++) {
        if (!L->close[p] && L->t[p] < 0.0f)
            continue;
        bp_push c;
        c.dvx = L->dvx[p];
        c.dvy = L->dvy[p];
        c.px = L->px[p];
        c.py = L->py[p];
        bp_fold_pair(st + (L->i[p] - i0), (bp_i32)L->j[p], L->t[p], L->close[p], L->cand[p],
                     L->soft[p], c);
    }
    L->n = 0;
}

#if BP_LANES == 4
/* For each mask of 4 lanes: how many are on, and which, first to last. */
static const uint8_t lanes_on[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
static const uint8_t lanes_which[16][4] = {
    {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {2, 0, 0, 0}, {0, 2, 0, 0},
    {1, 2, 0, 0}, {0, 1, 2, 0}, {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
    {2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3}};
#endif

/* Appends the balls of sorted[k ..] in the lanes of `in` to the list, in
 * lane order, as pairs of ball i. */
static inline void append(pair_list *L, bp_u32 i, const bp_u32 *sk, bp_vu jv, bp_vi in)
{
    bp_u32 nn = L->n;
    bp_vu iv = BP_VUSPLAT(i);
    BP_VSTORE(iv, L->i + nn);
#if BP_LANES == 16
    (void)sk;
    __mmask16 mk = _mm512_test_epi32_mask((__m512i)in, (__m512i)in);
    _mm512_mask_compressstoreu_epi32(L->j + nn, mk, (__m512i)jv);
    L->n = nn + (bp_u32)__builtin_popcount(mk);
#else
    (void)jv;
    unsigned mk = BP_VMASK(in);
    L->j[nn] = sk[lanes_which[mk][0]];
    L->j[nn + 1] = sk[lanes_which[mk][1]];
    L->j[nn + 2] = sk[lanes_which[mk][2]];
    L->j[nn + 3] = sk[lanes_which[mk][3]];
    L->n = nn + lanes_on[mk];
#endif
}

/* Where the block's balls look for neighbours: bp_reach squared and
 * bp_search_window, ball i at i - i0. */
typedef struct block_reach {
    float reach2[BP_PAIR_BLOCK];
    bp_i32 x0[BP_PAIR_BLOCK], x1[BP_PAIR_BLOCK], y0[BP_PAIR_BLOCK], y1[BP_PAIR_BLOCK];
} block_reach;

/* bp_grid_coord, lane by lane. */
static inline bp_vi vgrid_coord(bp_vf v, float inv_cell, bp_i32 n)
{
    bp_vf c = v * inv_cell;
    bp_vi t = __builtin_convertvector(c, bp_vi); /* the lanes it is kept in are in range */
    bp_vi top = c >= (float)(n - 1);
    bp_vi below = ~(c >= 0.0f); /* and NaN */
    return ~below & ((top & (n - 1)) | (~top & t));
}

/* bp_clampi, lane by lane. */
static inline bp_vi vclamp(bp_vi v, bp_vi lo, bp_vi hi)
{
    bp_vi under = v < lo, over = v > hi;
    return (under & lo) | (~under & ((over & hi) | (~over & v)));
}

/* bp_reach and bp_search_window of balls i0..i1-1, BP_LANES at a time in
 * SIMD lanes (the same float operations lane by lane, so the same reach and
 * cells), the last few one at a time. */
static void block_windows(const bp_step_params *P, const bp_pair_arrays *A, float vmax,
                          bp_u32 i0, bp_u32 i1, block_reach *W)
{
    bp_u32 i = i0;
    for (; i + BP_LANES <= i1; i += BP_LANES) {
        bp_vf x = BP_VLOAD(A->x + i), y = BP_VLOAD(A->y + i);
        bp_vf vx = BP_VLOAD(A->vx + i), vy = BP_VLOAD(A->vy + i);
        bp_vf rsum = BP_VLOAD(A->r + i) + P->rmax;
        bp_vf close = BP_CLOSE_DIST(P, rsum);
        bp_vf hit = rsum + (BP_VSQRT(vx * vx + vy * vy) + vmax) * P->h;
        bp_vf reach = 1.01f * BP_VMAX(close, hit);
        bp_vf reach2 = reach * reach;
        bp_vi cx = vgrid_coord(x, P->inv_cell, P->gw), cy = vgrid_coord(y, P->inv_cell, P->gh);
        bp_vi x0 = vclamp(vgrid_coord(x - reach, P->inv_cell, P->gw), cx - BP_MAX_REACH, cx);
        bp_vi x1 = vclamp(vgrid_coord(x + reach, P->inv_cell, P->gw), cx, cx + BP_MAX_REACH);
        bp_vi y0 = vclamp(vgrid_coord(y - reach, P->inv_cell, P->gh), cy - BP_MAX_REACH, cy);
        bp_vi y1 = vclamp(vgrid_coord(y + reach, P->inv_cell, P->gh), cy, cy + BP_MAX_REACH);
        BP_VSTORE(reach2, W->reach2 + (i - i0));
        BP_VSTORE(x0, W->x0 + (i - i0));
        BP_VSTORE(x1, W->x1 + (i - i0));
        BP_VSTORE(y0, W->y0 + (i - i0));
        BP_VSTORE(y1, W->y1 + (i - i0));
    }
    for (; i < i1; i++) {
        float vxi = A->vx[i], vyi = A->vy[i];
        float reach = bp_reach(P, A->r[i], sqrtf(vxi * vxi + vyi * vyi), vmax);
        bp_window win = bp_search_window(P, A->x[i], A->y[i], reach);
        W->reach2[i - i0] = reach * reach;
        W->x0[i - i0] = win.x0;
        W->x1[i - i0] = win.x1;
        W->y0[i - i0] = win.y0;
        W->y1[i - i0] = win.y1;
    }
}

void PAIRS_FN(const bp_step_params *P, const bp_pair_arrays *A, float vmax, uint32_t i0,
              uint32_t i1)
{
    pair_list L;
    bp_fold st[BP_PAIR_BLOCK];
    block_reach W;
    L.n = 0;
    const bp_u32 *cell_start = A->cell_start, *sorted = A->sorted;
    const float *spos = A->spos;
    block_windows(P, A, vmax, i0, i1, &W);
    for (bp_u32 i = i0; i < i1; i++) {
        st[i - i0] = bp_fold_start();
        float xi = A->x[i], yi = A->y[i], reach2 = W.reach2[i - i0];
        bp_window win = {W.x0[i - i0], W.x1[i - i0], W.y0[i - i0], W.y1[i - i0]};
        /* bp_contacts' screening: a row's run BP_LANES balls at a time */
        for (bp_i32 gy = win.y0; gy <= win.y1; gy++) {
            bp_u32 row = (bp_u32)(gy * P->gw);
            bp_u32 k0 = cell_start[row + (bp_u32)win.x0];
            bp_u32 k1 = cell_start[row + (bp_u32)win.x1 + 1u];
            for (bp_u32 k = k0; k < k1; k += BP_LANES) {
                if (L.n > PAIRS_CAP - BP_LANES)
                    work_off(&L, P, A, st, i0);
                bp_vf px, py;
                BP_VLOAD_XY(spos + 2u * k, px, py);
                bp_vu jv = BP_VLOADU(sorted + k);
                bp_vf dx = px - xi, dy = py - yi;
                bp_vi in = (dx * dx + dy * dy <= reach2) &
                           (BP_VUSPLAT(k) + BP_LANE_IDS < BP_VUSPLAT(k1)) & (jv != BP_VUSPLAT(i));
                append(&L, i, sorted + k, jv, in);
            }
        }
    }
    work_off(&L, P, A, st, i0);
    for (bp_u32 i = i0; i < i1; i++) {
        const bp_fold *f = st + (i - i0);
        A->best[i] = f->b;
        A->ncontact[i] = (bp_u8)(f->count < 255u ? f->count : 255u);
        A->sdvx[i] = f->acc.dvx;
        A->sdvy[i] = f->acc.dvy;
        A->spx[i] = f->acc.px;
        A->spy[i] = f->acc.py;
    }
}

#ifndef BP_PAIRS_WIDE
bp_pairs_fn bp_pairs_best(void)
{
#ifdef BP_HAVE_PAIRS16
    if (__builtin_cpu_supports("x86-64-v4"))
        return bp_contacts_pairs16;
#endif
    return bp_contacts_pairs4;
}
#endif

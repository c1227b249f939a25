/* cpu_blocks.c - the CPU engine's passes 3 and 5 (kernels/bp_physics.h) on
 * a block of balls, in full SIMD lanes.
 *
 * Pass 3, the contacts: bp_contacts takes one ball at a time, so its groups of lanes hold that
 * ball's neighbours only: 1-2 of 4 lanes on the rain. Here the balls of a
 * block are screened as there (the same rows, the same reach), their pairs
 * (i, j) appended to one list, and the list is evaluated BP_LANES pairs at
 * a time whatever ball they belong to (bp_vpair_eval, each lane doing what
 * bp_contacts' lane does); then the pairs are folded into their balls' sums
 * in list order (bp_fold_pair), which is each ball's neighbour order. So
 * the sums are bp_contacts' bits, for any lane count.
 *
 * Pass 5, the motion against the walls and lines: most balls hit nothing
 * in a sub-step. BP_LANES balls at a time go through the first steps of
 * bp_move_static in lanes (the same float operations), and those that
 * reach no wall and have no line near finish there; the others take
 * bp_move_static itself.
 *
 * Compiled twice (src/meson.build): BP_LANES 4 for any processor, and 16
 * with -march=x86-64-v4 (BP_BLOCKS_WIDE), where the screening compresses a
 * row's balls in reach into the list with one AVX-512 instruction.
 */
#include "cpu_blocks.h"

#include <string.h>

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

#if BP_LANES == 4
/* For each mask of 4 lanes: how many are on, and which, first to last. */
static const uint8_t lanes_on[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
static const uint8_t lanes_which[16][4] = {
    {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {2, 0, 0, 0}, {0, 2, 0, 0},
    {1, 2, 0, 0}, {0, 1, 2, 0}, {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
    {2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3}};
#endif

/* Evaluates the list's pairs and folds them into st (the block's sums,
 * ball i at st[i - i0]); empties the list. */
static void work_off(pair_list *L, const bp_step_params *P, const bp_block_arrays *A,
                     bp_fold *st, bp_u32 i0)
{
    bp_u32 n = L->n;
    if (n == 0)
        return;
    for (bp_u32 k = n; k % BP_LANES; k++) { /* the last group's unused lanes: its first pair */
        L->i[k] = L->i[n - n % BP_LANES];
        L->j[k] = L->j[n - n % BP_LANES];
    }
    bp_u32 live[PAIRS_CAP + BP_LANES], nlive = 0; /* the pairs that add something */
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
        bp_vi lane = BP_LANE_IDS < BP_VUSPLAT(n - p);
        if (!bp_vpair_eval(P, &v, lane, A->m, A->split, J, &o))
            continue; /* no lane adds anything */
        BP_VSTORE(o.t, L->t + p);
        BP_VSTORE(o.dvx, L->dvx + p);
        BP_VSTORE(o.dvy, L->dvy + p);
        BP_VSTORE(o.px, L->px + p);
        BP_VSTORE(o.py, L->py + p);
        BP_VSTORE(o.close, L->close + p);
        BP_VSTORE(o.cand, L->cand + p);
        BP_VSTORE(o.soft, L->soft + p);
        /* the lanes bp_fold_pair would not skip, in order */
        bp_vi adds = (o.close | (o.t >= BP_VSPLAT(0.0f))) & lane;
#if BP_LANES == 16
        __mmask16 mk = _mm512_test_epi32_mask((__m512i)adds, (__m512i)adds);
        _mm512_mask_compressstoreu_epi32(live + nlive, mk,
                                         (__m512i)(BP_LANE_IDS + BP_VUSPLAT(p)));
        nlive += (bp_u32)__builtin_popcount(mk);
#else
        unsigned mk = BP_VMASK(adds);
        for (int l = 0; l < 4; l++)
            live[nlive + (bp_u32)l] = p + lanes_which[mk][l];
        nlive += lanes_on[mk];
#endif
    }
    for (bp_u32 q = 0; q < nlive; q++) {
        bp_u32 p = live[q];
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
    float reach2[BP_BLOCK];
    bp_i32 x0[BP_BLOCK], x1[BP_BLOCK], y0[BP_BLOCK], y1[BP_BLOCK];
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
static void block_windows(const bp_step_params *P, const bp_block_arrays *A, float vmax,
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

static void block_contacts(const bp_step_params *P, const bp_block_arrays *A, float vmax,
                           uint32_t i0, uint32_t i1)
{
    pair_list L;
    bp_fold st[BP_BLOCK];
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
        A->nvx[i] = f->acc.dvx;
        A->nvy[i] = f->acc.dvy;
        A->cpx[i] = f->acc.px;
        A->cpy[i] = f->acc.py;
    }
}


/* ---- Pass 5 ---------------------------------------------------------------- */

/* a[idx] lane by lane (idx within a). */
static inline bp_vu vgather_u32(const bp_u32 *a, bp_vi idx)
{
#if BP_LANES == 16
    return (bp_vu)_mm512_i32gather_epi32((__m512i)idx, (const void *)a, 4);
#else
    bp_i32 k[BP_LANES];
    bp_u32 o[BP_LANES];
    BP_VSTORE(idx, k);
    for (int l = 0; l < BP_LANES; l++)
        o[l] = a[k[l]];
    return BP_VLOADU(o);
#endif
}

/* bp_segments_near, lane by lane: whether the segment grid holds any
 * segment in the cells of each lane's swept box. */
static bp_vi vsegments_near(const bp_step_params *P, const bp_u32 *seg_start, bp_vf px,
                            bp_vf py, bp_vf Dx, bp_vf Dy, bp_vf r)
{
    bp_vi x0 = vgrid_coord(BP_VMIN(px, px + Dx) - r, P->inv_scell, P->sgw);
    bp_vi x1 = vgrid_coord(BP_VMAX(px, px + Dx) + r, P->inv_scell, P->sgw);
    bp_vi y0 = vgrid_coord(BP_VMIN(py, py + Dy) - r, P->inv_scell, P->sgh);
    bp_vi y1 = vgrid_coord(BP_VMAX(py, py + Dy) + r, P->inv_scell, P->sgh);
    bp_i32 ly0[BP_LANES], ly1[BP_LANES];
    BP_VSTORE(y0, ly0);
    BP_VSTORE(y1, ly1);
    bp_i32 top = ly0[0], bottom = ly1[0];
    for (int l = 1; l < BP_LANES; l++) {
        top = ly0[l] < top ? ly0[l] : top;
        bottom = ly1[l] > bottom ? ly1[l] : bottom;
    }
    bp_vi near_ = BP_VI0;
    for (bp_i32 gy = top; gy <= bottom; gy++) {
        bp_vi on = (y0 <= gy) & (y1 >= gy); /* off: cell 0, read and dropped */
        bp_vi row = on & (gy * P->sgw);
        bp_vu a = vgather_u32(seg_start, row + (on & (x1 + 1))), b = vgather_u32(seg_start, row + (on & x0));
        near_ |= on & (bp_vi)(a != b);
    }
    return near_;
}

/* bp_cap_speed, lane by lane. */
static inline void vcap_speed(float cap, bp_vf *vx, bp_vf *vy)
{
    bp_vf s2 = *vx * *vx + *vy * *vy, zero = BP_VSPLAT(0.0f);
    bp_vi bad = ~(s2 == s2) | (s2 == BP_VSPLAT(INFINITY));
    bp_vi over = s2 > cap * cap;
    bp_vf k = cap / BP_VSQRT(s2);
    *vx = BP_VSEL(bad, zero, BP_VSEL(over, *vx * k, *vx));
    *vy = BP_VSEL(bad, zero, BP_VSEL(over, *vy * k, *vy));
}

static void block_move(const bp_step_params *P, const bp_block_arrays *A, uint32_t i0,
                       uint32_t i1)
{
    bp_u32 i = i0;
    const float h = P->h;
    const bp_vf zero = BP_VSPLAT(0.0f);
    for (; i + BP_LANES <= i1; i += BP_LANES) {
        /* bp_move_static up to its first sweep */
        bp_vf ri = BP_VLOAD(A->r + i);
        bp_vf px = BP_VMIN(BP_VMAX(BP_VLOAD(A->x + i), ri), P->width - ri);
        bp_vf py = BP_VMIN(BP_VMAX(BP_VLOAD(A->y + i), ri), P->height - ri);
        bp_vf ux = BP_VLOAD(A->nvx + i), uy = BP_VLOAD(A->nvy + i);
        bp_vf Dx = BP_VLOAD(A->cpx + i) + ux * h, Dy = BP_VLOAD(A->cpy + i) + uy * h;
        bp_vi slow = P->nlines > 0u ? vsegments_near(P, A->seg_start, px, py, Dx, Dy, ri) : BP_VI0;
        /* bp_sweep_box from no hit */
        bp_vf best = BP_VSPLAT(BP_NO_HIT);
        bp_vf t = BP_VSEL(Dx < zero, BP_VMAX(px - ri, zero) / -Dx,
                          BP_VSEL(Dx > zero, BP_VMAX(P->width - ri - px, zero) / Dx, best));
        best = BP_VSEL(t < best, t, best);
        t = BP_VSEL(Dy < zero, BP_VMAX(py - ri, zero) / -Dy,
                    BP_VSEL(Dy > zero, BP_VMAX(P->height - ri - py, zero) / Dy, best));
        best = BP_VSEL(t < best, t, best);
        /* A lane whose sweep hits nothing moves the whole way: the end of
         * bp_move_static. The others take bp_move_static itself. */
        slow |= ~(best > 1.0f);
        px = px + Dx;
        py = py + Dy;
        vcap_speed(P->speed_cap, &ux, &uy);
        px = BP_VMIN(BP_VMAX(px, ri), P->width - ri);
        py = BP_VMIN(BP_VMAX(py, ri), P->height - ri);
        unsigned sm = BP_VMASK(slow);
        if (!sm) {
            BP_VSTORE(px, A->x + i);
            BP_VSTORE(py, A->y + i);
            BP_VSTORE(ux, A->vx + i);
            BP_VSTORE(uy, A->vy + i);
            continue;
        }
        float l[4][BP_LANES];
        BP_VSTORE(px, l[0]);
        BP_VSTORE(py, l[1]);
        BP_VSTORE(ux, l[2]);
        BP_VSTORE(uy, l[3]);
        for (bp_u32 k = 0; k < BP_LANES; k++) {
            if (sm >> k & 1u) {
                bp_move_static(i + k, P, A->x, A->y, A->vx, A->vy, A->nvx, A->nvy, A->cpx,
                               A->cpy, A->r, A->lx1, A->ly1, A->lx2, A->ly2, A->seg_start,
                               A->seg_list);
            } else {
                A->x[i + k] = l[0][k];
                A->y[i + k] = l[1][k];
                A->vx[i + k] = l[2][k];
                A->vy[i + k] = l[3][k];
            }
        }
    }
    for (; i < i1; i++)
        bp_move_static(i, P, A->x, A->y, A->vx, A->vy, A->nvx, A->nvy, A->cpx, A->cpy, A->r,
                       A->lx1, A->ly1, A->lx2, A->ly2, A->seg_start, A->seg_list);
    memcpy(A->split + i0, A->ncontact + i0, i1 - i0);
}

#ifdef BP_BLOCKS_WIDE
const bp_block_passes bp_blocks16 = {block_contacts, block_move, 16};
#else
const bp_block_passes bp_blocks4 = {block_contacts, block_move, 4};

const bp_block_passes *bp_blocks_best(void)
{
#ifdef BP_HAVE_BLOCKS16
    if (__builtin_cpu_supports("x86-64-v4"))
        return &bp_blocks16;
#endif
    return &bp_blocks4;
}
#endif

/* grid_merge.c - the ball grid rebuilt from the last sub-step's
 * (grid_merge.h). */
#include "grid_merge.h"
#include "cpu_blocks.h"

#include <string.h>

/* Shifts an insertion sort may take, a key, before the merge sort takes
 * over (the movers come nearly in order: each part lists them by old
 * cell, and most go to the next cell or the next row's). */
#define INSERTION_SHIFTS 8u

/* Part p's words of scratch, 4 L for its L old slots from word 4 ob: its
 * movers as 64-bit keys (new cell << 32 | ball) in the first 2 L, then
 * the keys that come to it and the sort's buffer; the balls that stayed,
 * in old slot order, in the next L; the movers' old cells, then where
 * each key that comes goes among the balls that stayed, in the last L. */
static uint32_t part_len(const bp_merge_part *p)
{
    return p->oe - p->ob;
}

static uint64_t *part_movers(const bp_merge_part *p, uint32_t *scratch)
{
    return (uint64_t *)(void *)(scratch + 4 * (size_t)p->ob);
}

static uint32_t *part_stayers(const bp_merge_part *p, uint32_t *scratch)
{
    return scratch + 4 * (size_t)p->ob + 2 * (size_t)part_len(p);
}

static uint32_t *part_old_cells(const bp_merge_part *p, uint32_t *scratch)
{
    return scratch + 4 * (size_t)p->ob + 3 * (size_t)part_len(p);
}

void bp_merge_cut(const uint32_t *start, uint32_t ncells, uint32_t n, int parts,
                  const uint32_t *cut, bp_merge_part *p)
{
    for (int u = 0; u < parts; u++) {
        uint32_t c0 = 0;
        if (u > 0) {
            if (cut[u] >= n) {
                c0 = ncells;
            } else {
                /* the last cell whose start is at or before the slot:
                 * the one that holds it (start[0] = 0 <= k < start[ncells] = n) */
                uint32_t lo = 0, hi = ncells; /* start[lo] <= k < start[hi] */
                while (hi - lo > 1) {
                    uint32_t mid = lo + (hi - lo) / 2;
                    if (start[mid] <= cut[u])
                        lo = mid;
                    else
                        hi = mid;
                }
                c0 = lo;
            }
            if (c0 < p[u - 1].c0)
                c0 = p[u - 1].c0;
        }
        p[u].c0 = c0;
        p[u].ob = start[c0];
    }
    for (int u = 0; u < parts; u++) {
        p[u].c1 = u + 1 < parts ? p[u + 1].c0 : ncells;
        p[u].oe = u + 1 < parts ? p[u + 1].ob : n;
    }
}

uint32_t bp_merge_scan(const bp_block_passes *B, const bp_merge_part *p, float inv_cell,
                       int32_t gw, int32_t gh, const uint32_t *sorted, const float *spos,
                       size_t ystride, const uint32_t *cell, uint32_t *scratch)
{
    uint64_t *mov = part_movers(p, scratch);
    uint32_t *stay = part_stayers(p, scratch), *oldc = part_old_cells(p, scratch);
    uint32_t ns = 0, m = 0;
    uint32_t k = B->merge_scan(sorted, spos, ystride, cell, inv_cell, gw, gh, p->ob, p->oe,
                               stay, &ns, mov, oldc, &m);
    /* the last few: the old cell of slot k from the position it was
     * sorted by (bp_cell_of's) */
    for (; k < p->oe; k++) {
        uint32_t q = sorted[k], nc = cell[q];
        uint32_t oc = bp_grid_cell(spos[k], spos[ystride + k], inv_cell, gw, gh);
        if (nc == oc) {
            stay[ns++] = q;
        } else {
            oldc[m] = oc;
            mov[m++] = (uint64_t)nc << 32 | q;
        }
    }
    return m;
}

int bp_merge_fits(const bp_merge_part *p, int parts, const uint32_t *moved)
{
    uint64_t total = 0;
    for (int u = 0; u < parts; u++)
        total += moved[u];
    if (total > (uint64_t)p[parts - 1].oe / 16u + 64u)
        return 0; /* so many movers that counting anew is cheaper */
    for (int u = 0; u < parts; u++) {
        if (p[u].c0 == p[u].c1)
            continue; /* no cells: nothing comes to it */
        /* after its movers, the keys that come (at most all the movers)
         * and the sort's buffer in the first 2 L words; after the movers'
         * old cells, where the keys go in the last L */
        uint64_t len = part_len(&p[u]), m = moved[u];
        if (2u * m + 4u * total > 2u * len || m + total > len)
            return 0;
    }
    return 1;
}

/* Sorts a[0..n-1] ascending: insertion while the keys are nearly in
 * order, else a merge sort through tmp (n keys). */
static void sort_keys(uint64_t *a, uint32_t n, uint64_t *tmp)
{
    uint64_t budget = (uint64_t)INSERTION_SHIFTS * n + 64u, shifts = 0;
    uint32_t i = 1;
    for (; i < n && shifts <= budget; i++) {
        uint64_t v = a[i];
        uint32_t j = i;
        while (j > 0 && a[j - 1] > v) {
            a[j] = a[j - 1];
            j--;
        }
        shifts += i - j;
        a[j] = v;
    }
    if (i >= n)
        return;
    /* bottom-up merge sort, runs of w from a into tmp and back */
    uint64_t *src = a, *dst = tmp;
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t x = lo, y = mid, o = lo;
            while (x < mid && y < hi)
                dst[o++] = src[y] < src[x] ? src[y++] : src[x++];
            while (x < mid)
                dst[o++] = src[x++];
            while (y < hi)
                dst[o++] = src[y++];
        }
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, (size_t)n * sizeof *a);
}

/* Balls stay[0..len-1] into slots pos.. of sorted[] and spos, of room
 * balls that stayed from stay on. Where room allows, whole vectors: the
 * slots past len take the next balls that stayed, which the slots after
 * this run's (the next key's, the next run's) then get again. */
static void put_run(const bp_block_passes *B, const uint32_t *stay, uint32_t len, uint32_t room,
                    uint32_t pos, uint32_t *sorted, const float *x, const float *y,
                    float *spos, size_t ystride)
{
    uint32_t lanes = (uint32_t)B->lanes, whole = (len + lanes - 1u) / lanes * lanes;
    if (len < room && whole <= room) {
        B->merge_put(stay, whole, pos, sorted, x, y, spos, ystride);
        return;
    }
    for (uint32_t t = B->merge_put(stay, len, pos, sorted, x, y, spos, ystride); t < len; t++) {
        uint32_t q = stay[t];
        sorted[pos + t] = q;
        spos[pos + t] = x[q];
        spos[ystride + pos + t] = y[q];
    }
}

void bp_merge_place(const bp_block_passes *B, const bp_merge_part *p, int parts, int u,
                    const uint32_t *moved,
                    uint32_t *scratch, uint32_t *start, uint32_t *sorted, const float *x,
                    const float *y, float *spos, size_t ystride)
{
    const bp_merge_part *me = &p[u];
    const uint32_t m = moved[u], ns = part_len(me) - m;
    const uint32_t *stay = part_stayers(me, scratch), *oldc = part_old_cells(me, scratch);
    uint64_t *in = part_movers(me, scratch) + m;
    uint32_t *at = part_old_cells(me, scratch) + m;
    uint32_t ni = 0, left_before = 0, came_before = 0;
    uint64_t lo = (uint64_t)me->c0 << 32, hi = (uint64_t)me->c1 << 32;
    for (int t = 0; t < parts; t++) {
        const uint64_t *mov = part_movers(&p[t], scratch);
        if (t < u)
            left_before += moved[t];
        for (uint32_t k = 0; k < moved[t]; k++) {
            uint64_t key = mov[k];
            if (key < lo)
                came_before++;
            else if (key < hi)
                in[ni++] = key;
        }
    }
    sort_keys(in, ni, in + ni);
    /* where each key goes among the balls that stayed (before the first
     * of its cell's with a larger index), from the old starts of its cell
     * and the next (this part's words of start[], not yet rewritten) */
    uint32_t jo = 0;
    for (uint32_t j = 0; j < ni; j++) {
        uint32_t nc = (uint32_t)(in[j] >> 32), q = (uint32_t)in[j];
        while (jo < m && oldc[jo] < nc)
            jo++;
        uint32_t jn = jo;
        while (jn < m && oldc[jn] == nc)
            jn++;
        uint32_t idx = start[nc] - me->ob - jo;
        uint32_t end = (nc + 1 < me->c1 ? start[nc + 1] : me->oe) - me->ob - jn;
        while (idx < end && stay[idx] < q)
            idx++;
        at[j] = idx;
    }
    uint32_t pos = me->ob - left_before + came_before, k = 0;
    for (uint32_t j = 0; j < ni; j++) {
        put_run(B, stay + k, at[j] - k, ns - k, pos, sorted, x, y, spos, ystride);
        pos += at[j] - k;
        k = at[j];
        uint32_t q = (uint32_t)in[j];
        sorted[pos] = q;
        spos[pos] = x[q];
        spos[ystride + pos] = y[q];
        pos++;
    }
    put_run(B, stay + k, ns - k, ns - k, pos, sorted, x, y, spos, ystride);
    /* the new starts: the old ones shifted by the movers that left the
     * cells before (-1 each) and came to them (+1 each) */
    uint32_t shift = came_before - left_before, io = 0, ii = 0;
    for (uint32_t c = me->c0; c < me->c1;) {
        while (io < m && oldc[io] < c) {
            shift--;
            io++;
        }
        while (ii < ni && (uint32_t)(in[ii] >> 32) < c) {
            shift++;
            ii++;
        }
        uint32_t next = me->c1;
        if (io < m && oldc[io] + 1u < next)
            next = oldc[io] + 1u;
        if (ii < ni && (uint32_t)(in[ii] >> 32) + 1u < next)
            next = (uint32_t)(in[ii] >> 32) + 1u;
        for (; c < next; c++)
            start[c] += shift;
    }
}

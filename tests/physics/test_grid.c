/* test_grid.c - the CPU engine's grid merged from the last sub-step's
 * (src/sim/grid_merge.h) is the grid counted anew (bp_grid_build), bit
 * for bit: the same start[], sorted[] and grid-order positions, for any
 * number of parts and any cut of them, in every lane width this
 * processor runs; and the merge says no where its movers would not fit.
 *
 * Random worlds: clusters (cells of many balls, so a cell's balls must
 * keep ascending index as movers come in), sparse stretches (empty cells
 * and runs of them), balls that keep their cell, that go to the next
 * cell or row, that jump far, and that leave the box (clamped to the edge
 * cells, as bp_cell_of clamps them). The old grid is built from the old
 * positions by the counting sort, the new cells from the new positions;
 * the merge reads the old grid and writes the new one in place, through
 * a scratch of exactly 4 words a ball, as the engine's.
 */
#include "bp_physics.h"
#include "cpu_blocks.h"
#include "grid_merge.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 97531u;
static float frand(float lo, float hi)
{
    return bp_test_frand(&rng_state, lo, hi);
}

typedef struct world {
    uint32_t n, ncells;
    int32_t gw, gh;
    float inv_cell;
    size_t ystride;
    float *x0, *y0, *x1, *y1;
    uint32_t *cell0, *cell1;
    uint32_t *start, *sorted, *ref_start, *ref_sorted;
    float *spos, *ref_spos;
    uint32_t *scratch;
} world;

static void world_free(world *w)
{
    free(w->x0); free(w->y0); free(w->x1); free(w->y1);
    free(w->cell0); free(w->cell1);
    free(w->start); free(w->sorted); free(w->ref_start); free(w->ref_sorted);
    free(w->spos); free(w->ref_spos); free(w->scratch);
}

/* A world of n balls in a box of gw x gh cells of side `cell`; `moving`
 * of every 100 balls take a step of up to `step` px, a few jump far or
 * out of the box. */
static int world_make(world *w, uint32_t n, int32_t gw, int32_t gh, float cell, int moving,
                      float step)
{
    memset(w, 0, sizeof *w);
    w->n = n;
    w->gw = gw;
    w->gh = gh;
    w->ncells = (uint32_t)(gw * gh);
    w->inv_cell = 1.0f / cell;
    w->ystride = n + 1;
    size_t fb = (n + 1) * sizeof(float), ub = (n + 1) * sizeof(uint32_t);
    w->x0 = malloc(fb); w->y0 = malloc(fb); w->x1 = malloc(fb); w->y1 = malloc(fb);
    w->cell0 = malloc(ub); w->cell1 = malloc(ub);
    w->start = malloc((w->ncells + 1) * sizeof(uint32_t));
    w->ref_start = malloc((w->ncells + 1) * sizeof(uint32_t));
    w->sorted = malloc(ub); w->ref_sorted = malloc(ub);
    w->spos = malloc(2 * fb); w->ref_spos = malloc(2 * fb);
    w->scratch = malloc(4 * (size_t)n * sizeof(uint32_t) + 1); /* exactly 4 words a ball */
    if (!w->x0 || !w->y0 || !w->x1 || !w->y1 || !w->cell0 || !w->cell1 || !w->start ||
        !w->ref_start || !w->sorted || !w->ref_sorted || !w->spos || !w->ref_spos || !w->scratch)
        return -1;
    float W = (float)(gw - 1) * cell, H = (float)(gh - 1) * cell;
    /* a few clusters and an even spread */
    float cx[4], cy[4];
    for (int k = 0; k < 4; k++) {
        cx[k] = frand(0.0f, W);
        cy[k] = frand(0.0f, H);
    }
    for (uint32_t i = 0; i < n; i++) {
        int k = (int)frand(0.0f, 6.0f);
        if (k < 4) {
            w->x0[i] = cx[k] + frand(-1.5f, 1.5f) * cell;
            w->y0[i] = cy[k] + frand(-1.5f, 1.5f) * cell;
        } else {
            w->x0[i] = frand(0.0f, W);
            w->y0[i] = frand(0.0f, H);
        }
        float dx = 0.0f, dy = 0.0f, u = frand(0.0f, 100.0f);
        if (u < (float)moving) {
            dx = frand(-step, step);
            dy = frand(-step, step);
        } else if (u > 99.5f) { /* far, or out of the box */
            dx = frand(-2.0f, 2.0f) * W;
            dy = frand(-2.0f, 2.0f) * H;
        }
        w->x1[i] = w->x0[i] + dx;
        w->y1[i] = w->y0[i] + dy;
        w->cell0[i] = bp_grid_cell(w->x0[i], w->y0[i], w->inv_cell, gw, gh);
        w->cell1[i] = bp_grid_cell(w->x1[i], w->y1[i], w->inv_cell, gw, gh);
    }
    return 0;
}

/* The old grid (start, sorted, spos of the old positions), and the
 * reference new grid counted from the new cells. */
static void grids_build(world *w)
{
    bp_grid_build(w->n, w->ncells, w->cell0, w->start, w->sorted);
    for (uint32_t k = 0; k < w->n; k++)
        bp_grid_position(k, w->sorted, w->x0, w->y0, w->spos, (bp_u32)w->ystride);
    bp_grid_build(w->n, w->ncells, w->cell1, w->ref_start, w->ref_sorted);
    for (uint32_t k = 0; k < w->n; k++)
        bp_grid_position(k, w->ref_sorted, w->x1, w->y1, w->ref_spos, (bp_u32)w->ystride);
}

/* The merge in `parts` parts cut at random slots, as a team would run it
 * (every part's scan, then every part's place). Returns 1 where it
 * merged, 0 where it said no, -1 where the merged grid is not the
 * counted one. */
static int merge_and_compare(world *w, const bp_block_passes *B, int parts)
{
    grids_build(w);
    uint32_t cut[BP_MERGE_MAX_PARTS], moved[BP_MERGE_MAX_PARTS];
    cut[0] = 0;
    for (int u = 1; u < parts; u++) {
        uint32_t c = (uint32_t)frand(0.0f, (float)w->n + 1.0f);
        cut[u] = c > w->n ? w->n : c;
    }
    for (int u = 1; u < parts; u++) /* ascending */
        for (int v = u; v > 1 && cut[v - 1] > cut[v]; v--) {
            uint32_t t = cut[v];
            cut[v] = cut[v - 1];
            cut[v - 1] = t;
        }
    bp_merge_part mp[BP_MERGE_MAX_PARTS];
    bp_merge_cut(w->start, w->ncells, w->n, parts, cut, mp);
    for (int u = 0; u < parts; u++) {
        if (u > 0 && (mp[u].c0 < mp[u - 1].c1 || mp[u].ob != mp[u - 1].oe))
            return -1; /* the parts tile the cells and the slots */
        moved[u] = bp_merge_scan(B, &mp[u], w->inv_cell, w->gw, w->gh, w->sorted, w->spos,
                                 w->ystride, w->cell1, w->scratch);
    }
    if (mp[0].c0 != 0 || mp[parts - 1].c1 != w->ncells || mp[parts - 1].oe != w->n)
        return -1;
    if (!bp_merge_fits(mp, parts, moved))
        return 0;
    for (int u = 0; u < parts; u++)
        bp_merge_place(B, mp, parts, u, moved, w->scratch, w->start, w->sorted, w->x1, w->y1,
                       w->spos, w->ystride);
    if (memcmp(w->start, w->ref_start, w->ncells * sizeof *w->start) != 0 ||
        w->start[w->ncells] != w->n ||
        memcmp(w->sorted, w->ref_sorted, w->n * sizeof *w->sorted) != 0)
        return -1;
    for (uint32_t k = 0; k < w->n; k++)
        if (!bp_test_same_bits(w->spos[k], w->ref_spos[k]) ||
            !bp_test_same_bits(w->spos[w->ystride + k], w->ref_spos[w->ystride + k]))
            return -1;
    return 1;
}

static int merge_is_the_count(void)
{
    static const int part_counts[] = {1, 2, 3, 5, 16};
    static const int widths[] = {4, 8, 16};
    long merged = 0, refused = 0, checked = 0;
    for (int trial = 0; trial < 60; trial++) {
        uint32_t n = trial % 10 == 0 ? (uint32_t)frand(0.0f, 40.0f)
                                     : (uint32_t)frand(200.0f, 6000.0f);
        int32_t gw = (int32_t)frand(3.0f, 70.0f), gh = (int32_t)frand(3.0f, 50.0f);
        float cell = frand(4.0f, 25.0f);
        int moving = (int)frand(0.0f, 10.0f);
        float step = cell * frand(0.2f, 1.5f);
        for (int wi = 0; wi < 3; wi++) {
            const bp_block_passes *B = bp_blocks_of_width(widths[wi]);
            if (!B)
                continue; /* a width this processor lacks */
            for (int pi = 0; pi < 5; pi++) {
                world w;
                rng_state += 7u; /* each set-up its own world, repeatable */
                uint32_t keep = rng_state;
                ENSURE(world_make(&w, n, gw, gh, cell, moving, step) == 0);
                int r = merge_and_compare(&w, B, part_counts[pi]);
                if (r < 0)
                    fprintf(stderr, "trial %d: %u balls, %dx%d cells, %d lanes, %d parts: "
                            "the merged grid differs\n", trial, n, gw, gh, widths[wi],
                            part_counts[pi]);
                ENSURE(r >= 0);
                merged += r == 1;
                refused += r == 0;
                checked++;
                world_free(&w);
                rng_state = keep;
            }
        }
    }
    printf("merge: %ld set-ups, %ld merged as the count, %ld refused\n", checked, merged,
           refused);
    ENSURE(merged > checked / 2);
    return 0;
}

/* Where most balls change cell the merge says no (the engine counts the
 * grid anew), and where none do it merges with no movers. */
static int merge_refuses_a_stampede(void)
{
    const bp_block_passes *B = bp_blocks_of_width(4);
    world w;
    ENSURE(world_make(&w, 4000, 40, 30, 10.0f, 100, 30.0f) == 0);
    ENSURE(merge_and_compare(&w, B, 2) == 0);
    world_free(&w);
    ENSURE(world_make(&w, 4000, 40, 30, 10.0f, 0, 0.0f) == 0);
    for (uint32_t i = 0; i < w.n; i++) { /* no far jumps either */
        w.x1[i] = w.x0[i];
        w.y1[i] = w.y0[i];
        w.cell1[i] = w.cell0[i];
    }
    ENSURE(merge_and_compare(&w, B, 2) == 1);
    world_free(&w);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        {"merge_is_the_count", merge_is_the_count},
        {"merge_refuses_a_stampede", merge_refuses_a_stampede},
    };
    return bp_test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}

/* step.c - host-side set-up shared by the CPU and OpenCL engines. */
#include "step.h"
#include "engine_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(bp_step_params) == 28 * 4, "bp_step_params must stay 4-byte fields only");
_Static_assert(BP_MAX_BALLS <= (1u << BP_ONCE_ISHIFT) && BP_BLOCK <= 256u && BP_PAIRS_CAP <= 256u,
               "bp_once_list's word: ball j below bit BP_ONCE_ISHIFT, i's slot (and the fold's "
               "record index) in 8 bits");

float bp_world_rmax(const bp_world *w)
{
    float rmax = 0.0f;
    for (uint32_t i = 0; i < w->count; i++)
        rmax = fmaxf(rmax, w->r[i]);
    return rmax;
}

float bp_world_speed_hint(const bp_world *w)
{
    /* The faster of the fastest ball now and a free fall across the box. */
    const bp_params *p = &w->params;
    double g = sqrt((double)p->gravity_x * p->gravity_x + (double)p->gravity_y * p->gravity_y);
    double v2 = 2.0 * g * fmax(p->width, p->height);
    for (uint32_t i = 0; i < w->count; i++)
        v2 = fmax(v2, (double)w->vx[i] * w->vx[i] + (double)w->vy[i] * w->vy[i]);
    return (float)fmin(sqrt(v2), p->speed_cap);
}

/* Columns (rows) of the ball grid along a side of the box: one past its
 * edge. */
static int bp_grid_span(float side, double cell)
{
    return (int)ceil(side / cell) + 1;
}

void bp_step_setup(const bp_world *w, const bp_seggrid *sg, bp_step_params *P)
{
    const bp_params *p = &w->params;
    memset(P, 0, sizeof *P);
    P->h = 1.0f / (p->fps * (float)p->substeps);
    P->gx = p->gravity_x;
    P->gy = p->gravity_y;
    P->width = p->width;
    P->height = p->height;
    P->e = p->restitution;
    P->rest_speed = sqrtf(p->gravity_x * p->gravity_x + p->gravity_y * p->gravity_y) * BP_REST_TIME;
    P->speed_cap = p->speed_cap;
    P->beta = BP_BETA;
    /* Soft resting contact: a damped spring whose period is tied to the
     * sub-step (omega*h = BP_SPRING_WH) so the explicit update stays stable
     * with several contacts per ball (docs/physics.md). */
    float om = BP_SPRING_WH / P->h;
    P->k_spring = om * om;
    P->k_damp = 2.0f * BP_SPRING_ZETA * om;
    P->skin = BP_SKIN;
    P->spring_range = BP_SPRING_RANGE;
    P->friction = BP_FRICTION;
    P->rmax = bp_world_rmax(w);
    /* one radius, one mass for every ball (the same floats): the lanes
     * splat them (bp_step_params.r0, m0) */
    P->r0 = w->count > 0 ? w->r[0] : 0.0f;
    P->m0 = w->count > 0 ? w->m[0] : 0.0f;
    for (uint32_t i = 1; i < w->count && (P->r0 > 0.0f || P->m0 > 0.0f); i++) {
        if (w->r[i] != P->r0)
            P->r0 = 0.0f;
        if (w->m[i] != P->m0)
            P->m0 = 0.0f;
    }
    /* Cells of one diameter plus the relative travel of a sub-step at the
     * speed hint, so the usual search is the 3x3 cells around a ball (a
     * faster ball makes bp_reach search further), but no more cells than
     * BP_GRID_CELLS_PER_BALL per ball, or BP_GRID_MIN_CELLS in a small
     * world (issue 6's memory budget; docs/benchmarks.md, "Memory"). */
    double cell = fmax(2.0 * P->rmax + 2.0 * bp_world_speed_hint(w) * P->h, 1.0);
    double most = fmax(BP_GRID_CELLS_PER_BALL * w->count, (double)BP_GRID_MIN_CELLS);
    double area = (double)p->width * p->height;
    if (area / (cell * cell) > most)
        cell = sqrt(area / most);
    /* The grid has a column and a row past the box's edge: grow the cell
     * until those fit in the budget too. */
    while ((double)bp_grid_span(p->width, cell) * bp_grid_span(p->height, cell) > most)
        cell *= 1.01;
    P->cell = (float)cell;
    P->inv_cell = (float)(1.0 / cell);
    /* a grid row runs along the world's height (BP_GX) */
    P->gw = bp_grid_span(BP_GX(p->width, p->height), cell);
    P->gh = bp_grid_span(BP_GY(p->width, p->height), cell);
    P->n = w->count;
    P->nlines = w->nlines;
    P->scell = sg->cell;
    P->inv_scell = 1.0f / sg->cell;
    P->sgw = sg->gw;
    P->sgh = sg->gh;
}

void bp_seggrid_free(bp_seggrid *sg)
{
    free(sg->start);
    free(sg->list);
    free(sg->gap);
    memset(sg, 0, sizeof *sg);
}

/* Calls visit(cell) for every cell of the segment grid that the segment
 * a-b passes through: row by row, the part of the segment inside the row's
 * band gives a range of columns (one cell of slack on each side). */
static void for_segment_cells(const bp_seggrid *sg, float ax, float ay, float bx, float by,
                              void (*visit)(bp_seggrid *, uint32_t, uint32_t), bp_seggrid *mut,
                              uint32_t seg)
{
    float inv = 1.0f / sg->cell;
    int r0 = bp_grid_coord(fminf(ay, by), inv, sg->gh);
    int r1 = bp_grid_coord(fmaxf(ay, by), inv, sg->gh);
    for (int row = r0; row <= r1; row++) {
        float lo = row * sg->cell, hi = lo + sg->cell;
        float xa, xb;
        if (ay == by) {
            xa = ax;
            xb = bx;
        } else { /* x where the segment crosses the band's edges, clamped */
            float t0 = (lo - ay) / (by - ay), t1 = (hi - ay) / (by - ay);
            t0 = fminf(fmaxf(t0, 0.0f), 1.0f);
            t1 = fminf(fmaxf(t1, 0.0f), 1.0f);
            xa = ax + (bx - ax) * t0;
            xb = ax + (bx - ax) * t1;
        }
        int c0 = bp_grid_coord(fminf(xa, xb), inv, sg->gw) - 1;
        int c1 = bp_grid_coord(fmaxf(xa, xb), inv, sg->gw) + 1;
        if (c0 < 0) c0 = 0;
        if (c1 > sg->gw - 1) c1 = sg->gw - 1;
        for (int c = c0; c <= c1; c++)
            visit(mut, (uint32_t)(row * sg->gw + c), seg);
    }
}

static void count_cell(bp_seggrid *sg, uint32_t c, uint32_t seg)
{
    (void)seg;
    sg->start[c + 1]++;
}

static void fill_cell(bp_seggrid *sg, uint32_t c, uint32_t seg)
{
    /* start[c] is used as a moving cursor during the fill */
    sg->list[sg->start[c]++] = seg;
}

static inline uint32_t gap_min(uint32_t a, uint32_t b)
{
    return a < b ? a : b;
}

/* One row of a sweep of seggrid_gaps: first the three cells of the row
 * before (near; NULL in the first row), then the cell before in the row,
 * in the sweep's direction (dir 1: left to right, -1: right to left).
 * Gaps are at most BP_SEG_GAP_MAX, so one more does not wrap. A row has
 * gw >= 2 cells (bp_seggrid_build: the width over the cell, rounded up,
 * plus one). */
static void gaps_row(uint32_t *row, const uint32_t *near, int gw, int dir)
{
    if (near) {
        row[0] = gap_min(row[0], gap_min(near[0], near[1]) + 1u);
        for (int x = 1; x < gw - 1; x++)
            row[x] = gap_min(row[x], gap_min(gap_min(near[x - 1], near[x]), near[x + 1]) + 1u);
        row[gw - 1] = gap_min(row[gw - 1], gap_min(near[gw - 2], near[gw - 1]) + 1u);
    }
    if (dir > 0)
        for (int x = 1; x < gw; x++)
            row[x] = gap_min(row[x], row[x - 1] + 1u);
    else
        for (int x = gw - 2; x >= 0; x--)
            row[x] = gap_min(row[x], row[x + 1] + 1u);
}

/* gap[] from start[]: the chessboard distance transform in two sweeps,
 * each taking the four neighbours it has already visited (the cell to the
 * left and three in the row above, then their mirror images), row by row:
 * the row above's three first, then the one to the left, the same minimum
 * (a huge world's million cells in 4.7 ms, where a division and a
 * remainder by cell took 13 ms at every attach) */
static void seggrid_gaps(bp_seggrid *sg)
{
    const int gw = sg->gw, gh = sg->gh;
    uint32_t *g = sg->gap;
    for (uint32_t c = 0; c < sg->ncells; c++)
        g[c] = sg->start[c + 1] != sg->start[c] ? 0u : BP_SEG_GAP_MAX;
    for (int y = 0; y < gh; y++)
        gaps_row(g + (size_t)y * gw, y > 0 ? g + (size_t)(y - 1) * gw : NULL, gw, 1);
    for (int y = gh - 1; y >= 0; y--)
        gaps_row(g + (size_t)y * gw, y < gh - 1 ? g + (size_t)(y + 1) * gw : NULL, gw, -1);
}

int bp_seggrid_build(bp_seggrid *sg, const bp_world *w)
{
    /* 32 px cells, or fewer cells in a huge world (at most 1 Mi cells). */
    float cell = 32.0f;
    double area = (double)w->params.width * w->params.height;
    if (area / ((double)cell * cell) > 1048576.0)
        cell = (float)sqrt(area / 1048576.0);
    sg->cell = cell;
    sg->gw = (int)ceilf(w->params.width / cell) + 1;
    sg->gh = (int)ceilf(w->params.height / cell) + 1;
    sg->ncells = (uint32_t)(sg->gw * sg->gh);
    if (sg->ncells + 1 > sg->cap_cells) {
        uint32_t *n = realloc(sg->start, (sg->ncells + 1) * sizeof *n);
        if (!n)
            return -1;
        sg->start = n;
        uint32_t *g = realloc(sg->gap, (sg->ncells + 1) * sizeof *g);
        if (!g)
            return -1;
        sg->gap = g;
        sg->cap_cells = sg->ncells + 1;
    }
    memset(sg->start, 0, (sg->ncells + 1) * sizeof *sg->start);
    for (uint32_t s = 0; s < w->nlines; s++)
        for_segment_cells(sg, w->lx1[s], w->ly1[s], w->lx2[s], w->ly2[s], count_cell, sg, s);
    for (uint32_t c = 0; c < sg->ncells; c++)
        sg->start[c + 1] += sg->start[c];
    sg->nlist = sg->start[sg->ncells];
    uint32_t need = sg->nlist ? sg->nlist : 1;
    if (need > sg->cap_list) {
        uint32_t *n = realloc(sg->list, need * sizeof *n);
        if (!n)
            return -1;
        sg->list = n;
        sg->cap_list = need;
    }
    /* Fill with start[] as cursors, then shift back: cursors end where the
     * next cell begins. Segments go in ascending order within each cell. */
    for (uint32_t s = 0; s < w->nlines; s++)
        for_segment_cells(sg, w->lx1[s], w->ly1[s], w->lx2[s], w->ly2[s], fill_cell, sg, s);
    for (uint32_t c = sg->ncells; c > 0; c--)
        sg->start[c] = sg->start[c - 1];
    sg->start[0] = 0;
    seggrid_gaps(sg);
    return 0;
}

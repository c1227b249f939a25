/* settle.c - finding room for newly added balls before they move.
 *
 * A swarm scattered at random in a disc starts with overlapping pairs, and
 * the engine treats an overlap as a compressed resting spring: a swarm of
 * 200 balls of radius 4 spawned at rest burst apart at 495 px/s RMS (1,221
 * at most) within its first frame, energy from nothing. The sandbox's
 * spawns therefore pass through here first. The new balls are taken in id
 * order; one that would overlap a ball already placed (an older ball, or a
 * new one before it) moves to the nearest free spot on rings around where
 * it was drawn. Positions only: the velocities stay, so the swarm falls, or
 * flies, as the clump it was drawn as.
 */
#include "engine_impl.h"
#include "step.h"

#include <math.h>
#include <stdlib.h>

/* The gap kept between two balls, in shares of the smaller radius: just
 * outside the resting spring's skin (BP_SKIN), within which the spring
 * would push them apart. */
#define SETTLE_GAP (BP_SKIN + 0.01)
/* The rings searched around a ball's spot: SETTLE_STEP radii apart, out
 * to SETTLE_RINGS of them (12 radii), about a radius between the points of
 * a ring. */
#define SETTLE_STEP 0.5
#define SETTLE_RINGS 24
/* Balls and spots looked at per new ball, in all: past it the rest of the
 * balls stay where they were drawn, for the engine to push apart. A swarm
 * that fits its disc takes 40-60 a ball (10,000 balls in 12 ms); one that
 * cannot fit stops here, about 0.3 s for 100,000 balls. */
#define SETTLE_CHECKS 150.0

/* The balls placed so far, in cells of a linked list each. */
typedef struct settle_grid {
    double x0, y0, cell;
    int gw, gh;
    int32_t *head;  /* per cell: the slot put in last, or -1 */
    int32_t *next;  /* per slot: the slot put in before it in its cell, or -1 */
    uint32_t *ball; /* per slot */
    uint32_t used;
} settle_grid;

static void settle_cell(const settle_grid *g, double x, double y, int *cx, int *cy)
{
    double fx = floor((x - g->x0) / g->cell), fy = floor((y - g->y0) / g->cell);
    *cx = !(fx > 0.0) ? 0 : fx >= g->gw - 1 ? g->gw - 1 : (int)fx;
    *cy = !(fy > 0.0) ? 0 : fy >= g->gh - 1 ? g->gh - 1 : (int)fy;
}

static void settle_put(settle_grid *g, const bp_world *w, uint32_t i)
{
    int cx, cy;
    settle_cell(g, w->x[i], w->y[i], &cx, &cy);
    int32_t *h = &g->head[(size_t)cy * g->gw + cx];
    g->ball[g->used] = i;
    g->next[g->used] = *h;
    *h = (int32_t)g->used++;
}

/* Whether a ball of radius r at (x, y) keeps its gap to every ball placed;
 * adds the balls looked at to *checks. */
static int settle_free(const settle_grid *g, const bp_world *w, double x, double y, double r,
                       double *checks)
{
    int cx, cy;
    settle_cell(g, x, y, &cx, &cy);
    for (int v = cy - 1; v <= cy + 1; v++) {
        if (v < 0 || v >= g->gh)
            continue;
        for (int u = cx - 1; u <= cx + 1; u++) {
            if (u < 0 || u >= g->gw)
                continue;
            for (int32_t s = g->head[(size_t)v * g->gw + u]; s >= 0; s = g->next[s]) {
                uint32_t j = g->ball[s];
                double want = r + w->r[j] + SETTLE_GAP * fmin(r, w->r[j]);
                double dx = w->x[j] - x, dy = w->y[j] - y;
                *checks += 1.0;
                if (dx * dx + dy * dy < want * want)
                    return 0;
            }
        }
    }
    return 1;
}

/* Points on ring k (about a radius apart). */
static int settle_ring_pts(int k)
{
    return (int)ceil(6.283185307179586 * k * SETTLE_STEP);
}

/* The directions of the rings' points, ring after ring (x, y pairs); each
 * ring starts a golden angle further round than the one before. Returns
 * NULL when out of memory. */
static double *settle_rings(void)
{
    int total = 0;
    for (int k = 1; k <= SETTLE_RINGS; k++)
        total += settle_ring_pts(k);
    double *ring = malloc((size_t)total * 2 * sizeof *ring), *p = ring;
    if (!ring)
        return NULL;
    for (int k = 1; k <= SETTLE_RINGS; k++)
        for (int q = 0; q < settle_ring_pts(k); q++, p += 2) {
            double a = k * 2.399963229728653 + 6.283185307179586 * q / settle_ring_pts(k);
            p[0] = cos(a);
            p[1] = sin(a);
        }
    return ring;
}

/* Moves ball i to the nearest free spot on the rings around it, inside the
 * box; leaves it where it is when there is none. Counts the spots tried in
 * *checks, with the balls looked at. */
static void settle_find(const settle_grid *g, const double *ring, bp_world *w, uint32_t i,
                        double *checks)
{
    double r = w->r[i], x = w->x[i], y = w->y[i];
    double W = w->params.width, H = w->params.height;
    for (int k = 1; k <= SETTLE_RINGS; k++) {
        double rho = k * SETTLE_STEP * r;
        for (int q = 0; q < settle_ring_pts(k); q++, ring += 2) {
            double px = x + rho * ring[0], py = y + rho * ring[1];
            *checks += 1.0;
            if (px < r || px > W - r || py < r || py > H - r)
                continue;
            if (settle_free(g, w, px, py, r, checks)) {
                w->x[i] = (float)px;
                w->y[i] = (float)py;
                return;
            }
        }
    }
}

/* Whether ball i's centre lies in the box (x0, y0)-(x1, y1). */
static int settle_near(const bp_world *w, uint32_t i, double x0, double y0, double x1, double y1)
{
    return w->x[i] >= x0 && w->x[i] <= x1 && w->y[i] >= y0 && w->y[i] <= y1;
}

int bp_world_settle(bp_world *w, uint32_t first, char *err, size_t errlen)
{
    uint32_t n = w->count;
    if (first >= n)
        return 0;
    /* The new balls' box, grown by the farthest ring and a diameter. */
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY, rmax = 0.0;
    for (uint32_t i = first; i < n; i++) {
        x0 = fmin(x0, w->x[i]);
        y0 = fmin(y0, w->y[i]);
        x1 = fmax(x1, w->x[i]);
        y1 = fmax(y1, w->y[i]);
        rmax = fmax(rmax, w->r[i]);
    }
    double reach = (SETTLE_RINGS * SETTLE_STEP + 2.0) * rmax;
    x0 -= reach;
    y0 -= reach;
    x1 += reach;
    y1 += reach;
    uint32_t m = n - first;
    for (uint32_t i = 0; i < first; i++)
        if (settle_near(w, i, x0 - 2.0 * w->r[i], y0 - 2.0 * w->r[i], x1 + 2.0 * w->r[i],
                        y1 + 2.0 * w->r[i])) {
            rmax = fmax(rmax, w->r[i]);
            m++;
        }
    /* Cells of the widest gap, so the balls a spot must keep clear of lie
     * in its cell and the eight around it; no more than about 4 a ball. */
    settle_grid g = {x0 - 2.0 * rmax, y0 - 2.0 * rmax, 2.0 * rmax * (1.0 + SETTLE_GAP), 0, 0,
                     NULL, NULL, NULL, 0};
    double gwid = x1 - x0 + 4.0 * rmax, ghgt = y1 - y0 + 4.0 * rmax, most = 4.0 * m + 1024.0;
    if (gwid * ghgt / (g.cell * g.cell) > most)
        g.cell = sqrt(gwid * ghgt / most);
    g.gw = (int)ceil(gwid / g.cell) + 1;
    g.gh = (int)ceil(ghgt / g.cell) + 1;
    size_t ncell = (size_t)g.gw * (size_t)g.gh;
    g.head = malloc(ncell * sizeof *g.head);
    g.next = malloc((size_t)m * sizeof *g.next);
    g.ball = malloc((size_t)m * sizeof *g.ball);
    double *ring = settle_rings();
    if (!g.head || !g.next || !g.ball || !ring) {
        free(g.head);
        free(g.next);
        free(g.ball);
        free(ring);
        return bp_fail(err, errlen, "out of memory to find room for %u new balls", n - first);
    }
    for (size_t c = 0; c < ncell; c++)
        g.head[c] = -1;
    for (uint32_t i = 0; i < first; i++)
        if (settle_near(w, i, x0 - 2.0 * w->r[i], y0 - 2.0 * w->r[i], x1 + 2.0 * w->r[i],
                        y1 + 2.0 * w->r[i]))
            settle_put(&g, w, i);
    double checks = 0.0, budget = SETTLE_CHECKS * (n - first);
    for (uint32_t i = first; i < n; i++) {
        if (checks < budget && !settle_free(&g, w, w->x[i], w->y[i], w->r[i], &checks))
            settle_find(&g, ring, w, i, &checks);
        settle_put(&g, w, i);
    }
    free(g.head);
    free(g.next);
    free(g.ball);
    free(ring);
    return 0;
}

/* settle.c - finding room for newly added balls before they move.
 *
 * A swarm scattered at random in a disc starts with overlapping pairs, and
 * the engine treats an overlap as a compressed resting spring: a swarm of
 * 200 balls of radius 4 spawned at rest burst apart at 495 px/s RMS (1,221
 * at most) within its first frame, energy from nothing. The sandbox's
 * spawns therefore pass through here first. The new balls are taken in id
 * order; one that would overlap a ball already placed (an older ball, or a
 * new one before it) or a line moves out of any wider ball it lies in,
 * then to the nearest free spot on rings around there; the few with no
 * room near wait for a wider search after all the others. Positions only:
 * the velocities stay, so the swarm falls, or flies, as the clump it was
 * drawn as.
 */
#include "engine_impl.h"
#include "step.h"

#include <math.h>
#include <stdlib.h>

/* The gap kept between two balls, in shares of the smaller radius: just
 * outside the resting spring's skin (BP_SKIN), within which the spring
 * would push them apart. */
#define SETTLE_GAP (BP_SKIN + 0.01)
/* The spots tried around a ball, on rings (in radii of the ball): out to
 * SETTLE_NEAR, rings half a radius apart with a spot about every radius
 * along them, for every ball first; then, for the balls that found no
 * room so near (a swarm drawn over an older one, as when pouring in one
 * place), out to SETTLE_FAR, rings a radius apart with a spot every 1.5
 * radii (a free spot that far is mostly in open space). */
#define SETTLE_NEAR 12.0
#define SETTLE_FAR 64.0
/* Balls and spots looked at, in all: SETTLE_CHECKS a new ball, at least
 * SETTLE_CHECKS_MIN. Past it the rest of the balls stay where they were
 * drawn (those overlapping one already placed have no room: the engine
 * pushes them apart, or they are dropped). A swarm that fits its disc takes
 * 40-60 a ball (10,000 balls in about 20 ms); a swarm of 200 poured onto
 * the one before it up to 4 million (50-75 ms); one that cannot fit stops
 * here, 0.6-0.7 s for 100,000 balls. */
#define SETTLE_CHECKS 300.0
#define SETTLE_CHECKS_MIN 4e6
/* ... and at most SETTLE_CHECKS_MAX (about 2 s): a scene file's swarm of
 * millions of balls loads in seconds, not minutes. */
#define SETTLE_CHECKS_MAX 1e8

/* Balls or lines listed in the cells they reach, a linked list a cell.
 * Before its arrays exist (item NULL) a list only counts the slots that
 * its entries would take. */
typedef struct settle_list {
    int32_t *head;  /* per cell: the slot put in last, or -1 */
    int32_t *next;  /* per slot: the slot put in before it in its cell, or -1 */
    uint32_t *item; /* per slot: the ball or line */
    uint32_t used;
    double count;   /* slots counted while item is NULL */
} settle_list;

/* The balls placed so far and the lines near them, in one grid of cells. */
typedef struct settle_grid {
    double x0, y0, cell;
    int gw, gh;
    settle_list balls, lines;
    /* Where a spot can go: every older ball it could touch is listed. */
    double sx0, sy0, sx1, sy1;
} settle_grid;

/* settle_blocker's answer for a spot too close to a line. */
#define SETTLE_LINE (-2)

static void settle_cell(const settle_grid *g, double x, double y, int *cx, int *cy)
{
    double fx = floor((x - g->x0) / g->cell), fy = floor((y - g->y0) / g->cell);
    *cx = !(fx > 0.0) ? 0 : fx >= g->gw - 1 ? g->gw - 1 : (int)fx;
    *cy = !(fy > 0.0) ? 0 : fy >= g->gh - 1 ? g->gh - 1 : (int)fy;
}

/* The cells within span of ball i's centre (span 0: its own cell). */
static void settle_span(const settle_grid *g, const bp_world *w, uint32_t i, double span, int *u0,
                        int *v0, int *u1, int *v1)
{
    settle_cell(g, w->x[i] - span, w->y[i] - span, u0, v0);
    settle_cell(g, w->x[i] + span, w->y[i] + span, u1, v1);
}

/* Entry k put in L's lists of cells u0..u1 by v0..v1 of g, or only
 * counted there while L has no arrays. */
static void settle_list_add(settle_list *L, const settle_grid *g, int u0, int v0, int u1, int v1,
                            uint32_t k)
{
    if (!L->item) {
        L->count += (double)(u1 - u0 + 1) * (v1 - v0 + 1);
        return;
    }
    for (int v = v0; v <= v1; v++)
        for (int u = u0; u <= u1; u++) {
            int32_t *h = &L->head[(size_t)v * g->gw + u];
            L->item[L->used] = k;
            L->next[L->used] = *h;
            *h = (int32_t)L->used++;
        }
}

/* Arrays for L: head for ncell cells (all empty), slots for what it
 * counted. Returns 0, or -1 when out of memory. */
static int settle_list_alloc(settle_list *L, size_t ncell, double slots)
{
    L->head = malloc(ncell * sizeof *L->head);
    L->next = slots < 2e9 ? malloc(((size_t)slots + 1) * sizeof *L->next) : NULL;
    L->item = slots < 2e9 ? malloc(((size_t)slots + 1) * sizeof *L->item) : NULL;
    if (!L->head || !L->next || !L->item)
        return -1;
    for (size_t c = 0; c < ncell; c++)
        L->head[c] = -1;
    return 0;
}

static void settle_list_free(settle_list *L)
{
    free(L->head);
    free(L->next);
    free(L->item);
}

/* Ball i put in every cell within span of its centre (or counted there):
 * a ball wider than the cells (an older one, larger than the new balls)
 * is found from any spot that must keep clear of it, so the cells can
 * stay as small as the new balls need. */
static void settle_put(settle_grid *g, const bp_world *w, uint32_t i, double span)
{
    int u0, v0, u1, v1;
    settle_span(g, w, i, span, &u0, &v0, &u1, &v1);
    settle_list_add(&g->balls, g, u0, v0, u1, v1, i);
}

/* Line l put in every cell of its box grown by span (a spot closer to it
 * than span lies in one of them), or counted there. Lines whose grown box
 * misses the grid are left out. */
static void settle_put_line(settle_grid *g, const bp_world *w, uint32_t l, double span)
{
    double x0 = fmin(w->lx1[l], w->lx2[l]) - span, y0 = fmin(w->ly1[l], w->ly2[l]) - span;
    double x1 = fmax(w->lx1[l], w->lx2[l]) + span, y1 = fmax(w->ly1[l], w->ly2[l]) + span;
    if (x1 < g->x0 || y1 < g->y0 || x0 > g->x0 + g->gw * g->cell ||
        y0 > g->y0 + g->gh * g->cell)
        return;
    int u0, v0, u1, v1;
    settle_cell(g, x0, y0, &u0, &v0);
    settle_cell(g, x1, y1, &u1, &v1);
    settle_list_add(&g->lines, g, u0, v0, u1, v1, l);
}

/* A ball placed (wider than r only, when `wider`) that a ball of radius r
 * at (x, y) would come closer to than the gap, or SETTLE_LINE for a line
 * it would come closer to (not when `wider`), or -1 when there is none;
 * adds the balls and lines looked at to *checks. */
static int64_t settle_blocker(const settle_grid *g, const bp_world *w, double x, double y,
                              double r, int wider, double *checks)
{
    int cx, cy;
    settle_cell(g, x, y, &cx, &cy);
    if (!wider) {
        float qx, qy, want = (float)(r * (1.0 + SETTLE_GAP));
        const settle_list *L = &g->lines;
        for (int32_t s = L->head[(size_t)cy * g->gw + cx]; s >= 0; s = L->next[s]) {
            uint32_t l = L->item[s];
            *checks += 1.0;
            if (bp_segment_closest((float)x, (float)y, w->lx1[l], w->ly1[l], w->lx2[l],
                                   w->ly2[l], &qx, &qy) < want * want)
                return SETTLE_LINE;
        }
    }
    for (int v = cy - 1; v <= cy + 1; v++) {
        if (v < 0 || v >= g->gh)
            continue;
        for (int u = cx - 1; u <= cx + 1; u++) {
            if (u < 0 || u >= g->gw)
                continue;
            const settle_list *B = &g->balls;
            for (int32_t s = B->head[(size_t)v * g->gw + u]; s >= 0; s = B->next[s]) {
                uint32_t j = B->item[s];
                double want = r + w->r[j] + SETTLE_GAP * fmin(r, w->r[j]);
                double dx = w->x[j] - x, dy = w->y[j] - y;
                *checks += 1.0;
                if (dx * dx + dy * dy < want * want && (!wider || w->r[j] > r))
                    return j;
            }
        }
    }
    return -1;
}

/* Walks the spots on the rings, nearest first, writing (distance in
 * radii, direction x, direction y) for each to out when it is not NULL;
 * each ring starts a golden angle further round than the one before.
 * Returns how many there are; *near_ how many lie within SETTLE_NEAR. */
static int settle_ring_walk(double *out, int *near_)
{
    int count = 0, k = 0;
    for (double rho = 0.5; rho <= SETTLE_FAR; rho += rho < SETTLE_NEAR ? 0.5 : 1.0, k++) {
        int pts = (int)ceil(6.283185307179586 * rho / (rho <= SETTLE_NEAR ? 1.0 : 1.5));
        for (int q = 0; q < pts; q++, count++)
            if (out) {
                double a = (k + 1) * 2.399963229728653 + 6.283185307179586 * q / pts;
                out[3 * count] = rho;
                out[3 * count + 1] = cos(a);
                out[3 * count + 2] = sin(a);
            }
        if (rho <= SETTLE_NEAR)
            *near_ = count;
    }
    return count;
}

/* The ring spots (settle_ring_walk) in a new array, or NULL when out of
 * memory. */
static double *settle_rings(int *near_, int *all)
{
    *all = settle_ring_walk(NULL, near_);
    double *ring = malloc((size_t)*all * 3 * sizeof *ring);
    if (ring)
        settle_ring_walk(ring, near_);
    return ring;
}

/* Whether a spot at (x, y) lies where every older ball it could touch is
 * in the grid: within the new balls' box grown by the farthest ring and
 * by the widest older ball near (a ball moved out of older balls, one
 * after another, could still land beyond). */
static int settle_can_go(const settle_grid *g, double x, double y)
{
    return x >= g->sx0 && x <= g->sx1 && y >= g->sy0 && y <= g->sy1;
}

/* Moves ball i to a free spot near it, inside the box: first out of the
 * wider balls it lies in (to the edge of each, along the line from its
 * centre: a spot deep inside a big ball is far from any free one), then
 * the nearest free one of the first `spots` spots of the rings around
 * there. Returns whether it found one (if not, the ball stays where it
 * is). Counts the spots tried in *checks, with the balls looked at. */
static int settle_find(const settle_grid *g, const double *ring, int spots, bp_world *w,
                       uint32_t i, double *checks)
{
    double r = w->r[i], x = w->x[i], y = w->y[i];
    double W = w->params.width, H = w->params.height;
    for (int hop = 0; hop < 4; hop++) {
        int64_t j = settle_blocker(g, w, x, y, r, 1, checks);
        if (j < 0)
            break;
        double dx = x - w->x[j], dy = y - w->y[j], d = sqrt(dx * dx + dy * dy);
        double want = r + w->r[j] + SETTLE_GAP * r;
        double hx = d > 0.0 ? w->x[j] + dx / d * want : w->x[j] + want;
        double hy = d > 0.0 ? w->y[j] + dy / d * want : w->y[j];
        hx = fmin(fmax(hx, r), W - r);
        hy = fmin(fmax(hy, r), H - r);
        if (!settle_can_go(g, hx, hy))
            break; /* beyond the listed balls: the spots around here instead */
        x = hx;
        y = hy;
    }
    for (int q = -1; q < spots; q++) { /* -1: where the hops left it */
        double px = q < 0 ? x : x + ring[3 * q] * r * ring[3 * q + 1];
        double py = q < 0 ? y : y + ring[3 * q] * r * ring[3 * q + 2];
        *checks += 1.0;
        if (px < r || px > W - r || py < r || py > H - r || !settle_can_go(g, px, py))
            continue;
        if (settle_blocker(g, w, px, py, r, 0, checks) == -1) {
            w->x[i] = (float)px;
            w->y[i] = (float)py;
            return 1;
        }
    }
    return 0;
}

/* Whether older ball i can reach into the box (x0, y0)-(x1, y1): its
 * centre within twice its radius of it. */
static int settle_near(const bp_world *w, uint32_t i, double x0, double y0, double x1, double y1)
{
    double m = 2.0 * w->r[i];
    return w->x[i] >= x0 - m && w->x[i] <= x1 + m && w->y[i] >= y0 - m && w->y[i] <= y1 + m;
}

/* How far from its centre an older ball of radius r is put in cells (see
 * settle_put) when the new balls' largest radius is rn. */
static double settle_reach_of(double r, double rn)
{
    return r > rn ? r + rn * (1.0 + SETTLE_GAP) : 0.0;
}

int64_t bp_world_settle(bp_world *w, uint32_t first, int drop, char *err, size_t errlen)
{
    uint32_t n = w->count;
    if (first >= n)
        return 0;
    /* The new balls' box, grown by the farthest ring and a diameter, and
     * by where a ball moved out of the widest older ball near can land
     * (its centre up to two of its radii out, its far edge a third, and
     * the ball's own width; four of each, to spare). */
    double x0 = INFINITY, y0 = INFINITY, x1 = -INFINITY, y1 = -INFINITY, rn = 0.0;
    for (uint32_t i = first; i < n; i++) {
        x0 = fmin(x0, w->x[i]);
        y0 = fmin(y0, w->y[i]);
        x1 = fmax(x1, w->x[i]);
        y1 = fmax(y1, w->y[i]);
        rn = fmax(rn, w->r[i]);
    }
    double reach = (SETTLE_FAR + 2.0) * rn, rwide = 0.0;
    for (uint32_t i = 0; i < first; i++)
        if (w->r[i] > rn && settle_near(w, i, x0 - reach, y0 - reach, x1 + reach, y1 + reach))
            rwide = fmax(rwide, w->r[i]);
    reach += rwide > 0.0 ? 4.0 * (rwide + rn) : 0.0;
    x0 -= reach;
    y0 -= reach;
    x1 += reach;
    y1 += reach;
    /* The older balls that a spot there can touch (settle_can_go keeps the
     * spots where they are all listed). */
    uint32_t m = n - first;
    double rmax = rn;
    for (uint32_t i = 0; i < first; i++)
        if (settle_near(w, i, x0, y0, x1, y1)) {
            rmax = fmax(rmax, w->r[i]);
            m++;
        }
    /* Cells of the new balls' widest gap, so the balls a spot must keep
     * clear of lie in its cell and the eight around it (wider older balls
     * in every cell they reach), no more than about 4 a ball; cells of the
     * widest older ball instead when that would take too many slots. */
    double gwid = x1 - x0 + 4.0 * rmax, ghgt = y1 - y0 + 4.0 * rmax, most = 4.0 * m + 1024.0;
    settle_grid g = {x0 - 2.0 * rmax, y0 - 2.0 * rmax, 0.0, 0, 0, {0}, {0},
                     x0 + rn, y0 + rn, x1 - rn, y1 - rn};
    for (int coarse = 0; coarse < 2; coarse++) {
        double rc = coarse ? rmax : rn;
        g.cell = 2.0 * rc * (1.0 + SETTLE_GAP);
        if (gwid * ghgt / (g.cell * g.cell) > most)
            g.cell = sqrt(gwid * ghgt / most);
        g.gw = (int)ceil(gwid / g.cell) + 1;
        g.gh = (int)ceil(ghgt / g.cell) + 1;
        g.balls.count = n - first; /* the new balls, a slot each */
        for (uint32_t i = 0; i < first; i++)
            if (settle_near(w, i, x0, y0, x1, y1))
                settle_put(&g, w, i, settle_reach_of(w->r[i], rc));
        if (g.balls.count <= 4.0 * most)
            break;
    }
    double rc = g.cell >= 2.0 * rmax * (1.0 + SETTLE_GAP) ? rmax : rn;
    size_t ncell = (size_t)g.gw * (size_t)g.gh;
    int near_spots = 0, all_spots = 0;
    double *ring = settle_rings(&near_spots, &all_spots);
    /* The balls with no room within SETTLE_NEAR wait (out of the grid)
     * for the wider search, after every other ball is placed. */
    uint32_t *late = malloc((size_t)(n - first) * sizeof *late), nlate = 0;
    /* Per new ball: whether it has room (where it ends up, it keeps the
     * gap from every ball placed and every line). */
    uint8_t *roomy = malloc(n - first);
    /* The lines, listed in the cells within a new ball's gap of them: but
     * for a scene of many long lines (then left out: the engine pushes a
     * ball out of a line). */
    double lspan = rn * (1.0 + SETTLE_GAP);
    for (uint32_t l = 0; l < w->nlines; l++)
        settle_put_line(&g, w, l, lspan);
    int with_lines = g.lines.count <= 4.0 * most;
    if (settle_list_alloc(&g.balls, ncell, g.balls.count) ||
        settle_list_alloc(&g.lines, ncell, with_lines ? g.lines.count : 0.0) || !ring || !late ||
        !roomy) {
        settle_list_free(&g.balls);
        settle_list_free(&g.lines);
        free(ring);
        free(late);
        free(roomy);
        return bp_fail(err, errlen, "out of memory to find room for %u new balls", n - first);
    }
    for (uint32_t l = 0; with_lines && l < w->nlines; l++)
        settle_put_line(&g, w, l, lspan);
    for (uint32_t i = 0; i < first; i++)
        if (settle_near(w, i, x0, y0, x1, y1))
            settle_put(&g, w, i, settle_reach_of(w->r[i], rc));
    /* Past the budget a ball is only checked where it is (a look at its
     * own cells, which the budget does not count). */
    double checks = 0.0, spare = 0.0;
    double budget = fmin(fmax(SETTLE_CHECKS * (n - first), SETTLE_CHECKS_MIN), SETTLE_CHECKS_MAX);
    for (uint32_t i = first; i < n; i++) {
        int free_here = 1;
        if (checks >= budget)
            free_here = settle_blocker(&g, w, w->x[i], w->y[i], w->r[i], 0, &spare) == -1;
        else if (settle_blocker(&g, w, w->x[i], w->y[i], w->r[i], 0, &checks) != -1 &&
                 !settle_find(&g, ring, near_spots, w, i, &checks)) {
            late[nlate++] = i;
            continue;
        }
        roomy[i - first] = (uint8_t)free_here;
        if (free_here || !drop)
            settle_put(&g, w, i, 0.0);
    }
    for (uint32_t k = 0; k < nlate; k++) {
        uint32_t i = late[k];
        roomy[i - first] = (uint8_t)(checks < budget
                                         ? settle_find(&g, ring, all_spots, w, i, &checks)
                                         : settle_blocker(&g, w, w->x[i], w->y[i], w->r[i], 0,
                                                          &spare) == -1);
        if (roomy[i - first] || !drop)
            settle_put(&g, w, i, 0.0);
    }
    /* The balls without room: counted, and when dropping, taken out (the
     * rest keep their order). */
    uint32_t kept = first;
    int64_t crowded = 0;
    for (uint32_t i = first; i < n; i++) {
        if (!roomy[i - first]) {
            crowded++;
            if (drop)
                continue;
        }
        w->x[kept] = w->x[i];
        w->y[kept] = w->y[i];
        w->vx[kept] = w->vx[i];
        w->vy[kept] = w->vy[i];
        w->r[kept] = w->r[i];
        w->m[kept] = w->m[i];
        w->contacts[kept] = w->contacts[i];
        kept++;
    }
    if (kept < n) {
        w->count = kept;
        w->balls_version++;
    }
    free(roomy);
    free(late);
    settle_list_free(&g.balls);
    settle_list_free(&g.lines);
    free(ring);
    return crowded;
}

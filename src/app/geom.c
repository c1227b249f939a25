/* geom.c - freehand simplification and eraser geometry (see geom.h). */
#include "geom.h"

#include <stdlib.h>

float bp_point_seg_dist2(float px, float py, float ax, float ay, float bx,
                         float by)
{
    float dx = bx - ax, dy = by - ay;
    float wx = px - ax, wy = py - ay;
    float dd = dx * dx + dy * dy;
    /* Projection clamped to the segment; a zero-length segment is a point. */
    float t = dd > 0.0f ? (wx * dx + wy * dy) / dd : 0.0f;
    if (t < 0.0f)
        t = 0.0f;
    else if (t > 1.0f)
        t = 1.0f;
    float cx = wx - t * dx, cy = wy - t * dy;
    return cx * cx + cy * cy;
}

static float cross3(float ax, float ay, float bx, float by, float cx, float cy)
{
    return (bx - ax) * (cy - ay) - (by - ay) * (cx - ax);
}

float bp_seg_seg_dist2(float ax, float ay, float bx, float by, float cx,
                       float cy, float dx, float dy)
{
    /* Proper crossing: c and d on opposite sides of ab and vice versa. */
    float d1 = cross3(ax, ay, bx, by, cx, cy);
    float d2 = cross3(ax, ay, bx, by, dx, dy);
    float d3 = cross3(cx, cy, dx, dy, ax, ay);
    float d4 = cross3(cx, cy, dx, dy, bx, by);
    if (((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) &&
        ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0)))
        return 0.0f;
    /* Otherwise the closest pair involves an end point of one of them. */
    float m = bp_point_seg_dist2(ax, ay, cx, cy, dx, dy);
    float t = bp_point_seg_dist2(bx, by, cx, cy, dx, dy);
    if (t < m)
        m = t;
    t = bp_point_seg_dist2(cx, cy, ax, ay, bx, by);
    if (t < m)
        m = t;
    t = bp_point_seg_dist2(dx, dy, ax, ay, bx, by);
    if (t < m)
        m = t;
    return m;
}

uint32_t bp_stroke_simplify(const float *pts, uint32_t n, float epsilon,
                            float min_len, float *out)
{
    if (n == 0)
        return 0;
    if (n == 1) {
        out[0] = pts[0];
        out[1] = pts[1];
        return 1;
    }
    /* Iterative Ramer-Douglas-Peucker (an explicit stack: a long stroke
     * must not recurse thousands deep). keep[] marks surviving points. */
    unsigned char *keep = calloc(n, 1);
    uint32_t *stack = malloc(2 * (size_t)n * sizeof *stack);
    if (!keep || !stack) {
        /* Out of memory: fall back to the two end points. */
        free(keep);
        free(stack);
        out[0] = pts[0];
        out[1] = pts[1];
        out[2] = pts[2 * (n - 1)];
        out[3] = pts[2 * (n - 1) + 1];
        return 2;
    }
    float eps2 = epsilon * epsilon;
    uint32_t sp = 0;
    keep[0] = keep[n - 1] = 1;
    stack[sp++] = 0;
    stack[sp++] = n - 1;
    while (sp) {
        uint32_t hi = stack[--sp], lo = stack[--sp];
        float best = -1.0f;
        uint32_t bi = lo;
        for (uint32_t i = lo + 1; i < hi; i++) {
            float d = bp_point_seg_dist2(pts[2 * i], pts[2 * i + 1],
                                         pts[2 * lo], pts[2 * lo + 1],
                                         pts[2 * hi], pts[2 * hi + 1]);
            if (d > best) {
                best = d;
                bi = i;
            }
        }
        if (best > eps2) {
            keep[bi] = 1;
            stack[sp++] = lo;
            stack[sp++] = bi;
            stack[sp++] = bi;
            stack[sp++] = hi;
        }
    }
    /* Minimum segment length: drop kept points too close to the previous
     * survivor; the last point always survives and replaces a too-close
     * predecessor (unless that predecessor is the first point). */
    float min2 = min_len * min_len;
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!keep[i])
            continue;
        float x = pts[2 * i], y = pts[2 * i + 1];
        if (m > 0) {
            float dx = x - out[2 * (m - 1)], dy = y - out[2 * (m - 1) + 1];
            float d2 = dx * dx + dy * dy;
            if (i != n - 1 && d2 < min2)
                continue;
            if (i == n - 1 && m > 1 && d2 < min2)
                m--; /* replace the previous interior survivor */
        }
        out[2 * m] = x;
        out[2 * m + 1] = y;
        m++;
    }
    free(keep);
    free(stack);
    if (m == 2 && out[0] == out[2] && out[1] == out[3])
        m = 1; /* a closed dot: no length */
    return m;
}

uint32_t bp_eraser_hits(const float *x1, const float *y1, const float *x2,
                        const float *y2, uint32_t nlines, float ex1,
                        float ey1, float ex2, float ey2, float radius,
                        uint32_t *hits, uint32_t max)
{
    float r2 = radius * radius;
    uint32_t k = 0;
    /* Quick box rejection first: most lines are far from the cursor. */
    float bx0 = (ex1 < ex2 ? ex1 : ex2) - radius;
    float bx1 = (ex1 > ex2 ? ex1 : ex2) + radius;
    float by0 = (ey1 < ey2 ? ey1 : ey2) - radius;
    float by1 = (ey1 > ey2 ? ey1 : ey2) + radius;
    for (uint32_t i = 0; i < nlines && k < max; i++) {
        if ((x1[i] < bx0 && x2[i] < bx0) || (x1[i] > bx1 && x2[i] > bx1) ||
            (y1[i] < by0 && y2[i] < by0) || (y1[i] > by1 && y2[i] > by1))
            continue;
        if (bp_seg_seg_dist2(x1[i], y1[i], x2[i], y2[i], ex1, ey1, ex2, ey2) <=
            r2)
            hits[k++] = i;
    }
    return k;
}

/* bp_physics.h - ballpit's contact math and per-ball passes, written once.
 *
 * This header is compiled both as C99 (the CPU engine includes it) and as
 * OpenCL C 1.2 (tools/embed_cl.py inlines it into the kernel program), so it
 * uses only their common subset; the few differences sit behind
 * __OPENCL_VERSION__ below. docs/physics.md derives every formula.
 *
 * One sub-step of length h is five passes over the balls; each pass writes
 * only ball i's own outputs, so any number of threads or work-items give the
 * same bits:
 *   1. bp_integrate      gravity, speed cap; cell index; (max speed reduced)
 *   2. grid build        counting sort by cell, ties in ball-index order
 *   3. bp_find_partner   earliest ball-ball impact of ball i (or -1)
 *   4. bp_respond        impacts with a mutual partner, resting contacts,
 *                        overlap correction -> new velocity + displacement
 *   5. bp_move_static    swept motion against segments, end points and the
 *                        box with time of impact; writes x, y, vx, vy
 */
#ifndef BP_PHYSICS_H
#define BP_PHYSICS_H

#ifdef __OPENCL_VERSION__
#pragma OPENCL FP_CONTRACT OFF
#define BP_GLOBAL __global
#define BP_FN
#define BP_SQRT(x) sqrt(x)
#define BP_FLOOR(x) floor(x)
#define BP_CEIL(x) ceil(x)
#define BP_FMIN(a, b) fmin(a, b)
#define BP_FMAX(a, b) fmax(a, b)
#define BP_ISFINITE(x) isfinite(x)
typedef uint bp_u32;
typedef int bp_i32;
#else
#include <math.h>
#include <stdint.h>
#define BP_GLOBAL
#define BP_FN static inline
#define BP_SQRT(x) sqrtf(x)
#define BP_FLOOR(x) floorf(x)
#define BP_CEIL(x) ceilf(x)
#define BP_FMIN(a, b) bp_fminf(a, b)
#define BP_FMAX(a, b) bp_fmaxf(a, b)
#define BP_ISFINITE(x) isfinite(x)
typedef uint32_t bp_u32;
typedef int32_t bp_i32;
/* fminf/fmaxf without -ffinite-math-only are library calls; these compile to
 * one instruction and, like them, return b when a is NaN (the NaN guards
 * below pass the possibly-NaN value first). */
static inline float bp_fminf(float a, float b) { return a < b ? a : b; }
static inline float bp_fmaxf(float a, float b) { return a > b ? a : b; }
#endif

/* "No hit" marker for times of impact measured as a fraction of a sweep. */
#define BP_NO_HIT 2.0f
/* At most this many bounces off static geometry per ball per sub-step. */
#define BP_MAX_BOUNCES 4
/* Largest neighbour search radius in cells (bounds the work per ball). */
#define BP_MAX_REACH 64

/* Everything a pass needs besides the arrays; 4-byte fields only so the
 * host and OpenCL layouts match (checked by a _Static_assert in step.c). */
typedef struct bp_step_params {
    float h;              /* sub-step length, s */
    float gx, gy;         /* gravity, px/s^2 */
    float width, height;  /* the box */
    float e;              /* restitution */
    float rest_speed;     /* slower approaches are resting contacts (e = 0) */
    float speed_cap;      /* px/s */
    float beta;           /* share of an overlap removed per sub-step (no gravity) */
    float k_spring;       /* resting contact stiffness per reduced mass, 1/s^2 */
    float k_damp;         /* resting contact damping per reduced mass, 1/s */
    float skin;           /* resting spring engages at gap < skin * rmin */
    float spring_range;   /* deepest overlap the spring sees, * rmin */
    float friction;       /* share of the sliding speed a resting contact removes per sub-step */
    float rmax;           /* largest radius */
    float cell, inv_cell; /* ball grid */
    bp_i32 gw, gh;
    float scell, inv_scell; /* segment grid */
    bp_i32 sgw, sgh;
    bp_u32 n;             /* balls */
    bp_u32 nlines;
} bp_step_params;

/* ---- Small helpers -------------------------------------------------------- */

BP_FN bp_i32 bp_clampi(bp_i32 v, bp_i32 lo, bp_i32 hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* Grid coordinate of a position along one axis, clamped into [0, n-1]. */
BP_FN bp_i32 bp_grid_coord(float v, float inv_cell, bp_i32 n)
{
    float c = BP_FLOOR(v * inv_cell);
    if (!(c >= 0.0f))
        return 0;
    if (c >= (float)(n - 1))
        return n - 1;
    return (bp_i32)c;
}

BP_FN bp_u32 bp_cell_of(const bp_step_params *P, float x, float y)
{
    return (bp_u32)(bp_grid_coord(y, P->inv_cell, P->gh) * P->gw +
                    bp_grid_coord(x, P->inv_cell, P->gw));
}

/* How many cells around its own a ball must search: any partner it can
 * touch in this sub-step is within 2*rmax + h*max(2*vmax, rest_speed). */
BP_FN bp_i32 bp_reach(const bp_step_params *P, float vmax)
{
    float d = 2.0f * P->rmax + P->h * BP_FMAX(2.0f * vmax, P->rest_speed);
    bp_i32 k = (bp_i32)BP_CEIL(d * P->inv_cell);
    return bp_clampi(k, 1, BP_MAX_REACH);
}

/* The block of ball-grid cells within `reach` cells of a position. */
typedef struct bp_window {
    bp_i32 x0, x1, y0, y1;
} bp_window;

BP_FN bp_window bp_search_window(const bp_step_params *P, float x, float y, bp_i32 reach)
{
    bp_i32 cx = bp_grid_coord(x, P->inv_cell, P->gw), cy = bp_grid_coord(y, P->inv_cell, P->gh);
    bp_window w;
    w.x0 = bp_clampi(cx - reach, 0, P->gw - 1);
    w.x1 = bp_clampi(cx + reach, 0, P->gw - 1);
    w.y0 = bp_clampi(cy - reach, 0, P->gh - 1);
    w.y1 = bp_clampi(cy + reach, 0, P->gh - 1);
    return w;
}

/* Scales (vx, vy) down to the speed cap. */
BP_FN void bp_cap_speed(float cap, float *vx, float *vy)
{
    float s2 = *vx * *vx + *vy * *vy;
    if (!(s2 == s2) || !BP_ISFINITE(s2)) { /* never let NaN/inf in */
        *vx = 0.0f;
        *vy = 0.0f;
    } else if (s2 > cap * cap) {
        float k = cap / BP_SQRT(s2);
        *vx *= k;
        *vy *= k;
    }
}

/* ---- Pass 1: integrate ------------------------------------------------- */

/* Gravity and the speed cap for ball i; returns its new speed squared. */
BP_FN float bp_integrate(bp_u32 i, const bp_step_params *P, BP_GLOBAL float *vx,
                         BP_GLOBAL float *vy)
{
    float ux = vx[i] + P->gx * P->h, uy = vy[i] + P->gy * P->h;
    bp_cap_speed(P->speed_cap, &ux, &uy);
    vx[i] = ux;
    vy[i] = uy;
    return ux * ux + uy * uy;
}

/* ---- Ball-ball contacts -------------------------------------------------- */

/* Time of impact of two discs within [0, h]: ball j sits at d = pj - pi
 * relative to ball i, which moves at rv = vi - vj relative to j. Solves
 * |d - rv t| = rsum (seed 002's quadratic, in the form that does not cancel).
 * Returns 0 when they already overlap and approach, -1 when they do not
 * meet within h or move apart. */
BP_FN float bp_pair_toi(float dx, float dy, float rvx, float rvy, float rsum, float h)
{
    float dr = dx * rvx + dy * rvy; /* > 0: approaching */
    if (dr <= 0.0f)
        return -1.0f;
    float c = dx * dx + dy * dy - rsum * rsum;
    if (c <= 0.0f)
        return 0.0f;
    if (c > 2.0f * dr * h) /* the gap cannot close within h */
        return -1.0f;
    float a = rvx * rvx + rvy * rvy;
    float disc = dr * dr - a * c;
    if (disc < 0.0f)
        return -1.0f;
    float t = c / (dr + BP_SQRT(disc));
    return t <= h ? t : -1.0f;
}

/* Pass 3: the ball j that ball i hits first in this sub-step (approach
 * faster than the resting threshold), ties to the lower index; -1 if none.
 * The time of impact is the same float from both sides (every term changes
 * sign twice), so a pair that picks each other does so from both ends. */
BP_FN bp_i32 bp_find_partner(bp_u32 i, const bp_step_params *P, bp_i32 reach,
                             BP_GLOBAL const float *x, BP_GLOBAL const float *y,
                             BP_GLOBAL const float *vx, BP_GLOBAL const float *vy,
                             BP_GLOBAL const float *r, BP_GLOBAL const bp_u32 *cell_start,
                             BP_GLOBAL const bp_u32 *sorted)
{
    float xi = x[i], yi = y[i], vxi = vx[i], vyi = vy[i], ri = r[i];
    bp_window win = bp_search_window(P, xi, yi, reach);
    bp_i32 best = -1;
    float best_t = 3.0e38f;
    for (bp_i32 gy = win.y0; gy <= win.y1; gy++) {
        bp_u32 row = (bp_u32)(gy * P->gw);
        bp_u32 k0 = cell_start[row + (bp_u32)win.x0], k1 = cell_start[row + (bp_u32)win.x1 + 1u];
        /* Cells of a row are contiguous in `sorted`: one run per row. */
        for (bp_u32 k = k0; k < k1; k++) {
            bp_u32 j = sorted[k];
            if (j == i)
                continue;
            float dx = x[j] - xi, dy = y[j] - yi;
            float rvx = vxi - vx[j], rvy = vyi - vy[j];
            float rsum = ri + r[j];
            float t = bp_pair_toi(dx, dy, rvx, rvy, rsum, P->h);
            if (t < 0.0f)
                continue;
            float d2 = dx * dx + dy * dy;
            /* under gravity, balls already in contact are soft contacts */
            if (P->rest_speed > 0.0f && d2 < rsum * rsum)
                continue;
            float dr = dx * rvx + dy * rvy;
            /* approach speed dr/|d| > rest_speed, without a square root */
            if (dr <= 0.0f || dr * dr <= P->rest_speed * P->rest_speed * d2)
                continue;
            if (t < best_t || (t == best_t && (bp_i32)j < best)) {
                best_t = t;
                best = (bp_i32)j;
            }
        }
    }
    return best;
}

/* Pass 4: the velocity change and displacement of ball i from its
 * neighbours (Jacobi: reads the old state of all, writes ball i only).
 *  - impact with a mutual partner: seed 003's normal/tangent formula with
 *    restitution, v1n' = v1n - (1+e) m2/(m1+m2) (v1n - v2n): momentum exact,
 *    energy exact for e = 1 (speculative: applied when the time of impact
 *    falls inside this sub-step, so the pair never passes through).
 *  - resting contact (gravity on, the pair already overlapping): a damped
 *    spring on the overlap (soft contact), so a pile comes to rest with
 *    zero velocity and an overlap of a few thousandths of a pixel per layer.
 *  - any other overlap: pushed apart by displacement only (no energy).
 */
BP_FN void bp_respond(bp_u32 i, const bp_step_params *P, bp_i32 reach,
                      BP_GLOBAL const float *x, BP_GLOBAL const float *y,
                      BP_GLOBAL const float *vx, BP_GLOBAL const float *vy,
                      BP_GLOBAL const float *r, BP_GLOBAL const float *m,
                      BP_GLOBAL const bp_u32 *cell_start, BP_GLOBAL const bp_u32 *sorted,
                      BP_GLOBAL const bp_i32 *best, BP_GLOBAL float *nvx, BP_GLOBAL float *nvy,
                      BP_GLOBAL float *cpx, BP_GLOBAL float *cpy)
{
    float xi = x[i], yi = y[i], vxi = vx[i], vyi = vy[i], ri = r[i], mi = m[i];
    bp_i32 partner = best[i];
    float h = P->h, rest = P->rest_speed;
    float dvx = 0.0f, dvy = 0.0f, px = 0.0f, py = 0.0f;
    bp_window win = bp_search_window(P, xi, yi, reach);
    for (bp_i32 gy = win.y0; gy <= win.y1; gy++) {
        bp_u32 row = (bp_u32)(gy * P->gw);
        bp_u32 k0 = cell_start[row + (bp_u32)win.x0], k1 = cell_start[row + (bp_u32)win.x1 + 1u];
        for (bp_u32 k = k0; k < k1; k++) {
            bp_u32 j = sorted[k];
            if (j == i)
                continue;
            float dx = x[j] - xi, dy = y[j] - yi;
            float rsum = ri + r[j];
            float d2 = dx * dx + dy * dy;
            int impact = (bp_i32)j == partner && best[j] == (bp_i32)i;
            float near_ = rsum * (1.0f + P->skin) + rest * h;
            if (!impact && d2 >= near_ * near_)
                continue;
            float dist = BP_SQRT(d2);
            float nx, ny;
            if (dist > 0.0f) {
                nx = dx / dist;
                ny = dy / dist;
            } else { /* same centre: split them along x, by index order */
                nx = j > i ? 1.0f : -1.0f;
                ny = 0.0f;
            }
            float rvx = vxi - vx[j], rvy = vyi - vy[j];
            float vn = rvx * nx + rvy * ny; /* > 0: approaching */
            float gap = dist - rsum;
            float mu = m[j] / (mi + m[j]);
            if (impact) {
                /* The normal at the moment of contact, not at the start of
                 * the sub-step: the line of centres when they touch. */
                float t = BP_FMAX(bp_pair_toi(dx, dy, rvx, rvy, rsum, h), 0.0f);
                float cx_ = dx - rvx * t, cy_ = dy - rvy * t;
                float cl = BP_SQRT(cx_ * cx_ + cy_ * cy_);
                if (cl > 0.0f) {
                    nx = cx_ / cl;
                    ny = cy_ / cl;
                }
                vn = rvx * nx + rvy * ny;
                float k_ = (1.0f + P->e) * mu * vn;
                dvx -= k_ * nx;
                dvy -= k_ * ny;
                if (gap < 0.0f) {
                    px += mu * P->beta * gap * nx;
                    py += mu * P->beta * gap * ny;
                }
            } else if (rest > 0.0f) {
                /* Soft contact: a damped spring, stiffness and damping per
                 * unit reduced mass, pushing only. It engages a thin skin
                 * before the discs touch, so the small compression a pile
                 * needs to carry its weight happens mostly in the skin; an
                 * overlap deeper than the spring's range is removed by
                 * displacement instead, so deep overlaps never explode. */
                float rmin = BP_FMIN(ri, r[j]);
                float depth = P->skin * rmin - gap;
                /* A fast approach that is not this sub-step's impact pair is
                 * stopped inelastically before it can dig in: it may close
                 * the gap, or approach at rest_speed, no faster. */
                float allowed = BP_FMAX(rest, gap / h);
                float tvx = rvx - vn * nx, tvy = rvy - vn * ny; /* sliding */
                if (vn > allowed) {
                    float k_ = mu * (vn - allowed);
                    dvx -= k_ * nx;
                    dvy -= k_ * ny;
                    vn = allowed;
                }
                if (depth > 0.0f) {
                    float range = P->spring_range * rmin;
                    float f = P->k_spring * BP_FMIN(depth, range) + P->k_damp * vn;
                    if (f > 0.0f) {
                        float k_ = mu * f * h;
                        dvx -= k_ * nx;
                        dvy -= k_ * ny;
                        /* viscous friction: a share of the sliding speed */
                        dvx -= mu * P->friction * tvx;
                        dvy -= mu * P->friction * tvy;
                    }
                    if (depth > range) {
                        px -= mu * P->beta * (depth - range) * nx;
                        py -= mu * P->beta * (depth - range) * ny;
                    }
                }
            } else if (gap < 0.0f) {
                px += mu * P->beta * gap * nx;
                py += mu * P->beta * gap * ny;
            }
        }
    }
    float ux = vxi + dvx, uy = vyi + dvy;
    bp_cap_speed(P->speed_cap, &ux, &uy);
    /* A displacement larger than half the radius is spread over later steps. */
    float p2 = px * px + py * py, lim = 0.5f * ri;
    if (p2 > lim * lim) {
        float k_ = lim / BP_SQRT(p2);
        px *= k_;
        py *= k_;
    }
    nvx[i] = ux;
    nvy[i] = uy;
    cpx[i] = px;
    cpy[i] = py;
}

/* ---- Static geometry: segments, end points, the box ------------------------ */

/* Seed 002, corner: the disc of radius r whose centre moves from c + w by
 * the displacement D (t in [0,1]) first touches the point c at the smaller
 * root of |w + D t| = r. Returns t or BP_NO_HIT; n = unit(w + D t), the
 * normal from the point towards the centre. */
BP_FN float bp_sweep_point(float wx, float wy, float Dx, float Dy, float r, float *nx, float *ny)
{
    float b = wx * Dx + wy * Dy; /* half the linear coefficient */
    if (b >= 0.0f)
        return BP_NO_HIT; /* moving away or sideways */
    float c = wx * wx + wy * wy - r * r;
    float t = 0.0f;
    if (c > 0.0f) {
        float a = Dx * Dx + Dy * Dy;
        float disc = b * b - a * c;
        if (disc < 0.0f)
            return BP_NO_HIT;
        t = c / (BP_SQRT(disc) - b);
        if (t > 1.0f)
            return BP_NO_HIT;
    }
    float hx = wx + Dx * t, hy = wy + Dy * t;
    float l = BP_SQRT(hx * hx + hy * hy);
    if (l > 0.0f) {
        *nx = hx / l;
        *ny = hy / l;
    } else { /* centre exactly on the point: send it back the way it came */
        float dl = BP_SQRT(Dx * Dx + Dy * Dy);
        *nx = -Dx / dl;
        *ny = -Dy / dl;
    }
    return t;
}

/* Swept disc against the segment a-b: the earliest t in [0,1] at which the
 * disc moving by D touches the segment's interior (an offset line, seed 001's
 * projection test at the moment of contact) or an end point (seed 002).
 * A zero-length segment is a point. n is the contact normal towards the ball. */
BP_FN float bp_sweep_segment(float px, float py, float Dx, float Dy, float r, float ax, float ay,
                             float bx, float by, float *nx, float *ny)
{
    float ex = bx - ax, ey = by - ay;
    float L2 = ex * ex + ey * ey;
    if (L2 > 1e-12f) {
        float L = BP_SQRT(L2);
        float ux = ex / L, uy = ey / L;
        float lx = -uy, ly = ux; /* unit normal of the line */
        float s0 = (px - ax) * lx + (py - ay) * ly;
        float dn = Dx * lx + Dy * ly;
        float side = s0 > 0.0f ? 1.0f : (s0 < 0.0f ? -1.0f : (dn > 0.0f ? -1.0f : 1.0f));
        float dist0 = s0 * side, approach = -dn * side;
        if (approach > 0.0f) {
            float t = dist0 > r ? (dist0 - r) / approach : 0.0f;
            if (t <= 1.0f) {
                float u = (px + Dx * t - ax) * ux + (py + Dy * t - ay) * uy;
                if (u >= 0.0f && u <= L) {
                    *nx = lx * side;
                    *ny = ly * side;
                    return t;
                }
            }
        }
    }
    float n1x = 0.0f, n1y = 0.0f, n2x = 0.0f, n2y = 0.0f;
    float t1 = bp_sweep_point(px - ax, py - ay, Dx, Dy, r, &n1x, &n1y);
    float t2 = bp_sweep_point(px - bx, py - by, Dx, Dy, r, &n2x, &n2y);
    if (t2 < t1) {
        *nx = n2x;
        *ny = n2y;
        return t2;
    }
    *nx = n1x;
    *ny = n1y;
    return t1;
}

/* Moves a centre that overlaps the segment a-b out to distance r along the
 * line from the closest point (projection with clamp, seed 001). */
BP_FN void bp_pushout_segment(float *px, float *py, float r, float ax, float ay, float bx,
                              float by)
{
    float ex = bx - ax, ey = by - ay;
    float L2 = ex * ex + ey * ey;
    float t = L2 > 0.0f ? ((*px - ax) * ex + (*py - ay) * ey) / L2 : 0.0f;
    t = BP_FMIN(BP_FMAX(t, 0.0f), 1.0f);
    float qx = ax + ex * t, qy = ay + ey * t;
    float dx = *px - qx, dy = *py - qy;
    float d2 = dx * dx + dy * dy;
    if (d2 >= r * r)
        return;
    float d = BP_SQRT(d2);
    if (d > 1e-6f * r) {
        *px = qx + dx / d * r;
        *py = qy + dy / d * r;
    } else if (L2 > 0.0f) { /* centre on the segment: out along its normal */
        float L = BP_SQRT(L2);
        *px = qx - ey / L * r;
        *py = qy + ex / L * r;
    } else {
        *py = qy - r;
    }
}

/* The box as four walls: earliest t in [0,1] at which the disc moving by D
 * touches one, with its inward normal; improves *best only. */
BP_FN void bp_sweep_box(const bp_step_params *P, float px, float py, float Dx, float Dy, float r,
                        float *best, float *nx, float *ny)
{
    if (Dx < 0.0f) {
        float t = BP_FMAX(px - r, 0.0f) / -Dx;
        if (t < *best) { *best = t; *nx = 1.0f; *ny = 0.0f; }
    } else if (Dx > 0.0f) {
        float t = BP_FMAX(P->width - r - px, 0.0f) / Dx;
        if (t < *best) { *best = t; *nx = -1.0f; *ny = 0.0f; }
    }
    if (Dy < 0.0f) {
        float t = BP_FMAX(py - r, 0.0f) / -Dy;
        if (t < *best) { *best = t; *nx = 0.0f; *ny = 1.0f; }
    } else if (Dy > 0.0f) {
        float t = BP_FMAX(P->height - r - py, 0.0f) / Dy;
        if (t < *best) { *best = t; *nx = 0.0f; *ny = -1.0f; }
    }
}

/* Earliest contact of the disc moving by D with any segment registered in
 * the segment-grid cells its swept box touches; improves *best only. */
BP_FN void bp_sweep_segments(const bp_step_params *P, float px, float py, float Dx, float Dy,
                             float r, BP_GLOBAL const float *lx1, BP_GLOBAL const float *ly1,
                             BP_GLOBAL const float *lx2, BP_GLOBAL const float *ly2,
                             BP_GLOBAL const bp_u32 *seg_start, BP_GLOBAL const bp_u32 *seg_list,
                             float *best, float *nx, float *ny)
{
    bp_i32 x0 = bp_grid_coord(BP_FMIN(px, px + Dx) - r, P->inv_scell, P->sgw);
    bp_i32 x1 = bp_grid_coord(BP_FMAX(px, px + Dx) + r, P->inv_scell, P->sgw);
    bp_i32 y0 = bp_grid_coord(BP_FMIN(py, py + Dy) - r, P->inv_scell, P->sgh);
    bp_i32 y1 = bp_grid_coord(BP_FMAX(py, py + Dy) + r, P->inv_scell, P->sgh);
    for (bp_i32 gy = y0; gy <= y1; gy++) {
        for (bp_i32 gx = x0; gx <= x1; gx++) {
            bp_u32 c = (bp_u32)(gy * P->sgw + gx);
            for (bp_u32 k = seg_start[c]; k < seg_start[c + 1u]; k++) {
                bp_u32 s = seg_list[k];
                float sx = 0.0f, sy = 0.0f;
                float t = bp_sweep_segment(px, py, Dx, Dy, r, lx1[s], ly1[s], lx2[s], ly2[s], &sx, &sy);
                if (t < *best) {
                    *best = t;
                    *nx = sx;
                    *ny = sy;
                }
            }
        }
    }
}

/* Pass 5: ball i moves through the sub-step with its new velocity plus its
 * displacement, bouncing off segments, end points and walls at their time
 * of impact and continuing the rest of the sub-step with the new velocity.
 * Restitution e, or 0 below rest_speed so resting balls do not chatter. */
BP_FN void bp_move_static(bp_u32 i, const bp_step_params *P, BP_GLOBAL float *x,
                          BP_GLOBAL float *y, BP_GLOBAL float *vx, BP_GLOBAL float *vy,
                          BP_GLOBAL const float *nvx, BP_GLOBAL const float *nvy,
                          BP_GLOBAL const float *cpx, BP_GLOBAL const float *cpy,
                          BP_GLOBAL const float *r, BP_GLOBAL const float *lx1,
                          BP_GLOBAL const float *ly1, BP_GLOBAL const float *lx2,
                          BP_GLOBAL const float *ly2, BP_GLOBAL const bp_u32 *seg_start,
                          BP_GLOBAL const bp_u32 *seg_list)
{
    float ri = r[i];
    float px = BP_FMIN(BP_FMAX(x[i], ri), P->width - ri);
    float py = BP_FMIN(BP_FMAX(y[i], ri), P->height - ri);
    float ux = nvx[i], uy = nvy[i];
    float vx0 = vx[i], vy0 = vy[i]; /* before this sub-step's ball contacts */
    if (P->nlines > 0u) { /* first leave any segment the ball overlaps */
        bp_i32 x0 = bp_grid_coord(px - ri, P->inv_scell, P->sgw);
        bp_i32 x1 = bp_grid_coord(px + ri, P->inv_scell, P->sgw);
        bp_i32 y0 = bp_grid_coord(py - ri, P->inv_scell, P->sgh);
        bp_i32 y1 = bp_grid_coord(py + ri, P->inv_scell, P->sgh);
        for (bp_i32 gy = y0; gy <= y1; gy++)
            for (bp_i32 gx = x0; gx <= x1; gx++) {
                bp_u32 c = (bp_u32)(gy * P->sgw + gx);
                for (bp_u32 k = seg_start[c]; k < seg_start[c + 1u]; k++) {
                    bp_u32 s = seg_list[k];
                    bp_pushout_segment(&px, &py, ri, lx1[s], ly1[s], lx2[s], ly2[s]);
                }
            }
        px = BP_FMIN(BP_FMAX(px, ri), P->width - ri);
        py = BP_FMIN(BP_FMAX(py, ri), P->height - ri);
    }
    float Dx = cpx[i] + ux * P->h, Dy = cpy[i] + uy * P->h;
    float left = 1.0f;
    for (int bounce = 0; bounce < BP_MAX_BOUNCES; bounce++) {
        float t = BP_NO_HIT, nx = 0.0f, ny = 0.0f;
        bp_sweep_box(P, px, py, Dx, Dy, ri, &t, &nx, &ny);
        if (P->nlines > 0u)
            bp_sweep_segments(P, px, py, Dx, Dy, ri, lx1, ly1, lx2, ly2, seg_start, seg_list, &t,
                              &nx, &ny);
        if (t > 1.0f) {
            px += Dx;
            py += Dy;
            break;
        }
        px += Dx * t;
        py += Dy * t;
        float vn = ux * nx + uy * ny;
        if (vn < 0.0f) { /* reflect the normal part: v' = v - (1+e)(v.n)n */
            /* Bounce only off an approach the ball brought into this
             * sub-step: a kick from a resting neighbour's spring that
             * sends it into a wall is absorbed, or a ball wedged between
             * a wall and a pile would rattle (under gravity only; without
             * it every wall contact is elastic with e). */
            float brought = -(vx0 * nx + vy0 * ny);
            int bounce_ = -vn > P->rest_speed && (P->rest_speed <= 0.0f || brought > P->rest_speed);
            float k_ = (bounce_ ? 1.0f + P->e : 1.0f) * vn;
            ux -= k_ * nx;
            uy -= k_ * ny;
        }
        left *= 1.0f - t;
        Dx = ux * P->h * left;
        Dy = uy * P->h * left;
    }
    bp_cap_speed(P->speed_cap, &ux, &uy);
    x[i] = BP_FMIN(BP_FMAX(px, ri), P->width - ri);
    y[i] = BP_FMIN(BP_FMAX(py, ri), P->height - ri);
    vx[i] = ux;
    vy[i] = uy;
}

#endif

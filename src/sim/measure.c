/* measure.c - the numbers the stats line and the tests report, and the dump.
 *
 * max_overlap looks at every pair whose discs can touch, found with a
 * uniform grid of cell 2*rmax so the cost stays O(n).
 */
#include "engine_impl.h"
#include "order.h"

#include <math.h>
#include <stdlib.h>

/* Largest relative overlap over all pairs, using a counting-sort grid. */
static double max_overlap(const bp_world *w)
{
    uint32_t n = w->count;
    if (n < 2)
        return 0.0;
    float rmax = 0.0f;
    for (uint32_t i = 0; i < n; i++)
        rmax = fmaxf(rmax, w->r[i]);
    double cell = 2.0 * rmax;
    /* Keep the grid no larger than ~4 cells per ball. */
    double area = (double)w->params.width * w->params.height;
    if (area / (cell * cell) > 4.0 * n + 1024.0)
        cell = sqrt(area / (4.0 * n + 1024.0));
    int gw = (int)ceil(w->params.width / cell) + 1, gh = (int)ceil(w->params.height / cell) + 1;
    size_t ncell = (size_t)gw * gh;
    uint32_t *start = calloc(ncell + 1, sizeof *start), *list = malloc((size_t)n * sizeof *list),
             *cid = malloc((size_t)n * sizeof *cid);
    double worst = 0.0;
    if (!start || !list || !cid)
        goto out;
    for (uint32_t i = 0; i < n; i++) {
        int cx = (int)floor(w->x[i] / cell), cy = (int)floor(w->y[i] / cell);
        cx = cx < 0 ? 0 : cx >= gw ? gw - 1 : cx;
        cy = cy < 0 ? 0 : cy >= gh ? gh - 1 : cy;
        cid[i] = (uint32_t)(cy * gw + cx);
        start[cid[i] + 1]++;
    }
    for (size_t c = 0; c < ncell; c++)
        start[c + 1] += start[c];
    {
        uint32_t *fill = malloc(ncell * sizeof *fill);
        if (!fill)
            goto out;
        for (size_t c = 0; c < ncell; c++)
            fill[c] = start[c];
        for (uint32_t i = 0; i < n; i++)
            list[fill[cid[i]]++] = i;
        free(fill);
    }
    for (uint32_t i = 0; i < n; i++) {
        int cx = (int)(cid[i] % (uint32_t)gw), cy = (int)(cid[i] / (uint32_t)gw);
        for (int y = cy - 1; y <= cy + 1; y++) {
            if (y < 0 || y >= gh)
                continue;
            for (int x = cx - 1; x <= cx + 1; x++) {
                if (x < 0 || x >= gw)
                    continue;
                size_t c = (size_t)y * gw + x;
                for (uint32_t k = start[c]; k < start[c + 1]; k++) {
                    uint32_t j = list[k];
                    if (j <= i)
                        continue;
                    double dx = (double)w->x[j] - w->x[i], dy = (double)w->y[j] - w->y[i];
                    double rs = (double)w->r[i] + w->r[j];
                    double d2 = dx * dx + dy * dy;
                    if (d2 >= rs * rs)
                        continue;
                    double ov = (rs - sqrt(d2)) / fmin(w->r[i], w->r[j]);
                    if (ov > worst)
                        worst = ov;
                }
            }
        }
    }
out:
    free(start);
    free(list);
    free(cid);
    return worst;
}

void bp_world_measure(const bp_world *w, bp_stats *out)
{
    bp_stats s = {0};
    double v2sum = 0.0;
    for (uint32_t i = 0; i < w->count; i++) {
        double x = w->x[i], y = w->y[i], vx = w->vx[i], vy = w->vy[i], m = w->m[i];
        if (!isfinite(x) || !isfinite(y) || !isfinite(vx) || !isfinite(vy) ||
            !isfinite(w->r[i]) || !isfinite(m))
            s.nonfinite++;
        double v2 = vx * vx + vy * vy;
        s.kinetic_energy += 0.5 * m * v2;
        s.momentum_x += m * vx;
        s.momentum_y += m * vy;
        v2sum += v2;
        if (sqrt(v2) > s.max_speed)
            s.max_speed = sqrt(v2);
        if (!(x >= 0.0 && x <= w->params.width && y >= 0.0 && y <= w->params.height))
            s.escaped++;
    }
    s.rms_speed = w->count ? sqrt(v2sum / w->count) : 0.0;
    s.max_overlap = max_overlap(w);
    *out = s;
}

int bp_world_write_csv(const bp_world *w, FILE *f)
{
    /* by id, wherever the engine has moved the balls (order.h) */
    int owned;
    uint32_t *slot = bp_world_slots_by_id(w, &owned);
    if (owned && !slot)
        return -1;
    int rc = fprintf(f, "id,x,y,vx,vy,r,m\n") < 0 ? -1 : 0;
    for (uint32_t k = 0; k < w->count && rc == 0; k++) {
        uint32_t i = slot ? slot[k] : k;
        if (fprintf(f, "%u,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", k, (double)w->x[i], (double)w->y[i],
                    (double)w->vx[i], (double)w->vy[i], (double)w->r[i], (double)w->m[i]) < 0)
            rc = -1;
    }
    free(slot);
    return rc || ferror(f) ? -1 : 0;
}

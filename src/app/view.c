/* view.c - letterboxed world-to-screen mapping (see view.h). */
#include "view.h"

void bp_view_fit(bp_view *v, int win_w, int win_h, float world_w,
                 float world_h)
{
    v->win_w = win_w;
    v->win_h = win_h;
    v->world_w = world_w;
    v->world_h = world_h;
    if (win_w <= 0 || win_h <= 0 || !(world_w > 0.0f) || !(world_h > 0.0f)) {
        v->scale = 1.0f;
        v->ox = v->oy = 0.0f;
        return;
    }
    float sx = (float)win_w / world_w, sy = (float)win_h / world_h;
    v->scale = sx < sy ? sx : sy;
    v->ox = ((float)win_w - world_w * v->scale) * 0.5f;
    v->oy = ((float)win_h - world_h * v->scale) * 0.5f;
}

void bp_view_to_world(const bp_view *v, float sx, float sy, float *wx,
                      float *wy)
{
    *wx = (sx - v->ox) / v->scale;
    *wy = (sy - v->oy) / v->scale;
}

void bp_view_to_screen(const bp_view *v, float wx, float wy, float *sx,
                       float *sy)
{
    *sx = v->ox + wx * v->scale;
    *sy = v->oy + wy * v->scale;
}

void bp_view_clamp(const bp_view *v, float *wx, float *wy)
{
    if (!(*wx > 0.0f))
        *wx = 0.0f;
    else if (*wx > v->world_w)
        *wx = v->world_w;
    if (!(*wy > 0.0f))
        *wy = 0.0f;
    else if (*wy > v->world_h)
        *wy = v->world_h;
}

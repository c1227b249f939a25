/* splat.c - anti-aliased discs into a pixel buffer (see splat.h). */
#include "splat.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void bp_splat_clear(uint32_t *buf, int w, int h, int stride, uint32_t bg)
{
    for (int y = 0; y < h; y++) {
        uint32_t *row = buf + (size_t)y * (size_t)stride;
        for (int x = 0; x < w; x++)
            row[x] = bg;
    }
}

/* dst*(256-a)/256 + src*a/256 per channel, alpha forced opaque. */
static uint32_t blend(uint32_t dst, uint32_t src, uint32_t a)
{
    uint32_t na = 256 - a;
    uint32_t rb = ((dst & 0xff00ffu) * na + (src & 0xff00ffu) * a) >> 8;
    uint32_t g = ((dst & 0x00ff00u) * na + (src & 0x00ff00u) * a) >> 8;
    return 0xff000000u | (rb & 0xff00ffu) | (g & 0x00ff00u);
}

void bp_splat_disc(uint32_t *buf, int w, int h, int stride, float cx,
                   float cy, float r, uint32_t rgb)
{
    if (!(r >= 0.75f))
        r = 0.75f; /* also NaN */
    if (!(cx > -r - 1.0f && cx < (float)w + r + 1.0f && cy > -r - 1.0f &&
          cy < (float)h + r + 1.0f))
        return; /* off the buffer (or NaN) */
    int x0 = (int)floorf(cx - r - 0.5f), x1 = (int)ceilf(cx + r + 0.5f);
    int y0 = (int)floorf(cy - r - 0.5f), y1 = (int)ceilf(cy + r + 0.5f);
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > w ? w : x1;
    y1 = y1 > h ? h : y1;
    /* Coverage = r + 0.5 - distance, clamped to [0,1]: fully inside below
     * (r-0.5)^2, empty beyond (r+0.5)^2, one sqrt only on the rim. */
    float rin = r - 0.5f;
    float rin2 = rin > 0.0f ? rin * rin : -1.0f;
    float rout = r + 0.5f, rout2 = rout * rout;
    uint32_t src = rgb & 0xffffffu;
    for (int y = y0; y < y1; y++) {
        float dy = (float)y + 0.5f - cy, dy2 = dy * dy;
        uint32_t *row = buf + (size_t)y * (size_t)stride;
        for (int x = x0; x < x1; x++) {
            float dx = (float)x + 0.5f - cx;
            float d2 = dx * dx + dy2;
            if (d2 >= rout2)
                continue;
            if (d2 <= rin2) {
                row[x] = 0xff000000u | src;
                continue;
            }
            float cov = rout - sqrtf(d2);
            uint32_t a = (uint32_t)(cov * 256.0f);
            if (a > 256)
                a = 256;
            if (a)
                row[x] = blend(row[x], src, a);
        }
    }
}

void bp_splatter_init(bp_splatter *s)
{
    memset(s, 0, sizeof *s);
}

void bp_splatter_free(bp_splatter *s)
{
    for (int i = 0; i <= BP_SPLAT_RSTEPS; i++)
        free(s->mask[i]);
    memset(s, 0, sizeof *s);
}

/* Builds the 16 masks of radius step k (r = k/8 px): mask (sx, sy) holds
 * the coverage (0..256, stored /1 as 0..255 with 255 meaning full) of a
 * disc whose centre sits at (c + sx/4, c + sy/4) in the mask's frame. */
static uint8_t *build(bp_splatter *s, int k)
{
    float r = (float)k / 8.0f;
    int size = (int)ceilf(2.0f * r + 2.0f) + 1;
    uint8_t *m = malloc((size_t)BP_SPLAT_SUB * BP_SPLAT_SUB * (size_t)size *
                        (size_t)size);
    if (!m)
        return NULL;
    float c0 = floorf((float)size * 0.5f);
    float rout = r + 0.5f;
    for (int sy = 0; sy < BP_SPLAT_SUB; sy++)
        for (int sx = 0; sx < BP_SPLAT_SUB; sx++) {
            uint8_t *p = m + ((size_t)(sy * BP_SPLAT_SUB + sx)) * (size_t)size *
                                 (size_t)size;
            float cx = c0 + ((float)sx + 0.5f) / BP_SPLAT_SUB;
            float cy = c0 + ((float)sy + 0.5f) / BP_SPLAT_SUB;
            for (int y = 0; y < size; y++)
                for (int x = 0; x < size; x++) {
                    float dx = (float)x + 0.5f - cx, dy = (float)y + 0.5f - cy;
                    float cov = rout - sqrtf(dx * dx + dy * dy);
                    cov = cov < 0.0f ? 0.0f : cov > 1.0f ? 1.0f : cov;
                    p[y * size + x] = (uint8_t)(cov * 255.0f + 0.5f);
                }
        }
    s->size[k] = size;
    s->mask[k] = m;
    return m;
}

void bp_splatter_disc(bp_splatter *s, uint32_t *buf, int w, int h,
                      int stride, float cx, float cy, float r, uint32_t rgb)
{
    if (!(r >= 0.75f))
        r = 0.75f;
    if (r >= BP_SPLAT_SPRITE_MAX_R ||
        !(cx > -r - 2.0f && cx < (float)w + r + 2.0f && cy > -r - 2.0f &&
          cy < (float)h + r + 2.0f)) {
        bp_splat_disc(buf, w, h, stride, cx, cy, r, rgb);
        return;
    }
    int k = (int)(r * 8.0f + 0.5f);
    uint8_t *m = s->mask[k] ? s->mask[k] : build(s, k);
    if (!m) {
        bp_splat_disc(buf, w, h, stride, cx, cy, r, rgb);
        return;
    }
    int size = s->size[k];
    /* Integer pixel of the centre and its quarter-pixel position. */
    float fx = floorf(cx), fy = floorf(cy);
    int sx = (int)((cx - fx) * BP_SPLAT_SUB), sy = (int)((cy - fy) * BP_SPLAT_SUB);
    sx = sx > BP_SPLAT_SUB - 1 ? BP_SPLAT_SUB - 1 : sx;
    sy = sy > BP_SPLAT_SUB - 1 ? BP_SPLAT_SUB - 1 : sy;
    int c0 = size / 2;
    int ox = (int)fx - c0, oy = (int)fy - c0;
    const uint8_t *p = m + ((size_t)(sy * BP_SPLAT_SUB + sx)) * (size_t)size *
                               (size_t)size;
    int y0 = oy < 0 ? -oy : 0, y1 = oy + size > h ? h - oy : size;
    int x0 = ox < 0 ? -ox : 0, x1 = ox + size > w ? w - ox : size;
    uint32_t src = rgb & 0xffffffu;
    for (int y = y0; y < y1; y++) {
        uint32_t *row = buf + (size_t)(oy + y) * (size_t)stride + ox;
        const uint8_t *mr = p + y * size;
        for (int x = x0; x < x1; x++) {
            uint32_t a = mr[x];
            if (a == 0)
                continue;
            if (a == 255)
                row[x] = 0xff000000u | src;
            else
                row[x] = blend(row[x], src, a + (a >> 7));
        }
    }
}

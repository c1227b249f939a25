/* colormap.h - ball colour by speed.
 *
 * Slow balls are deep blue, then cyan, green, yellow, orange and red, and
 * the fastest glow pale yellow-white. The scale is sqrt-shaped so that the
 * common range (0..1500 px/s) spreads over most of the palette. A 256-entry
 * table keeps the per-ball cost at a square root and one lookup.
 */
#ifndef BP_COLORMAP_H
#define BP_COLORMAP_H

#include <math.h>
#include <stdint.h>

/// Speed (px/s) that maps to the last palette entry.
#define BP_SPEED_FULL 3000.0f

typedef struct bp_rgb {
    uint8_t r, g, b;
} bp_rgb;

/// Fills pal[0..256) with the speed palette (index 0 = at rest).
void bp_palette_fill(bp_rgb pal[256]);
/// Palette index of a speed in px/s (negative or NaN -> 0, huge -> 255).
/// Inline: the renderer calls it for every ball of every frame.
static inline int bp_speed_index(float speed)
{
    if (!(speed > 0.0f))
        return 0; /* also NaN */
    float t = sqrtf(speed / BP_SPEED_FULL);
    if (!(t < 1.0f))
        return 255;
    return (int)(t * 255.0f);
}

#endif

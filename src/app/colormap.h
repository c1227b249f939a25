/* colormap.h - ball colour by speed.
 *
 * Slow balls are deep blue, then cyan, green, yellow, orange and red, and
 * the fastest glow pale yellow-white. The scale is sqrt-shaped so that the
 * common range (0..1500 px/s) spreads over most of the palette. A 256-entry
 * table keeps the per-ball cost at one multiply and one lookup.
 */
#ifndef BP_COLORMAP_H
#define BP_COLORMAP_H

#include <stdint.h>

/// Speed (px/s) that maps to the last palette entry.
#define BP_SPEED_FULL 3000.0f

typedef struct bp_rgb {
    uint8_t r, g, b;
} bp_rgb;

/// Fills pal[0..256) with the speed palette (index 0 = at rest).
void bp_palette_fill(bp_rgb pal[256]);
/// Palette index of a speed in px/s (negative or NaN -> 0, huge -> 255).
int bp_speed_index(float speed);

#endif

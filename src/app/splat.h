/* splat.h - anti-aliased discs drawn straight into a 32-bit pixel buffer.
 *
 * The second way the sandbox draws balls: when the renderer rasterises in
 * software (SDL's software renderer, Mesa llvmpipe under Xvfb), pushing
 * 100,000 textured quads through it costs ~100 ms a frame, while writing
 * the few pixels of each small ball here and uploading one streaming
 * texture costs a few ms. No SDL types: tests/unit checks the coverage.
 * Pixels are 0xAARRGGBB in native byte order (SDL_PIXELFORMAT_ARGB8888).
 */
#ifndef BP_SPLAT_H
#define BP_SPLAT_H

#include <stdint.h>

/// Fills a w x h buffer (rows `stride` pixels apart) with colour bg.
void bp_splat_clear(uint32_t *buf, int w, int h, int stride, uint32_t bg);
/// Draws a disc centred at (cx, cy) (px, pixel centres at +0.5) of radius
/// r px (at least 0.75 so tiny balls never vanish) in colour rgb
/// (0xRRGGBB), blending the one-pixel soft edge over what is there.
/// Parts outside the buffer are clipped.
void bp_splat_disc(uint32_t *buf, int w, int h, int stride, float cx,
                   float cy, float r, uint32_t rgb);
/// bp_splat_disc's pixels in the rows ya..yb-1 only (0 <= ya <= yb <= h):
/// the buffer drawn in bands, each by its own thread, is the same picture.
void bp_splat_disc_rows(uint32_t *buf, int w, int h, int stride, int ya, int yb,
                        float cx, float cy, float r, uint32_t rgb);

/// Sprite cache for small discs: coverage masks precomputed for radii in
/// 1/8 px steps below BP_SPLAT_SPRITE_MAX_R and centres in 1/4 px steps,
/// so a small ball costs table lookups instead of a square root per pixel.
#define BP_SPLAT_SPRITE_MAX_R 8.0f
#define BP_SPLAT_RSTEPS 64   /* 8 px * 8 steps per px */
#define BP_SPLAT_SUB 4       /* sub-pixel positions per axis */
#define BP_SPLAT_AW(size) ((((size) + 3) & ~3) + 4) /* a mask row: 4-px steps from any column */

typedef struct bp_splatter {
    /// per radius step, 16 masks: the blend weights (0..256) of the
    /// mask's pixels, rows BP_SPLAT_AW(size) apart, zero past the mask
    uint16_t *weight[BP_SPLAT_RSTEPS + 1];
    /// per radius step, mask and row: the columns [a, b) of the row's
    /// covered pixels and [f, g) of its fully covered ones, as a f g b
    uint8_t *span[BP_SPLAT_RSTEPS + 1];
    int size[BP_SPLAT_RSTEPS + 1];      ///< mask side, px
} bp_splatter;

/// Zeroes the cache (masks are built on first use).
void bp_splatter_init(bp_splatter *s);
/// Frees the cached masks.
void bp_splatter_free(bp_splatter *s);
/// Same picture as bp_splat_disc within the quantisation (centre 1/8 px,
/// radius 1/16 px); radii >= BP_SPLAT_SPRITE_MAX_R use bp_splat_disc.
void bp_splatter_disc(bp_splatter *s, uint32_t *buf, int w, int h,
                      int stride, float cx, float cy, float r, uint32_t rgb);
/// bp_splatter_disc's pixels in the rows ya..yb-1 only (0 <= ya <= yb <= h).
/// It builds a missing mask, so threads sharing s call bp_splatter_prepare
/// first.
void bp_splatter_disc_rows(bp_splatter *s, uint32_t *buf, int w, int h, int stride, int ya,
                           int yb, float cx, float cy, float r, uint32_t rgb);
/// Builds every mask now (about 1 MB): then bp_splatter_disc(_rows) only
/// read s. 0, or -1 when out of memory (the masks built so far are kept).
int bp_splatter_prepare(bp_splatter *s);

#endif

/* view.h - the world box drawn scaled to fit the window, letterboxed.
 *
 * The world keeps its aspect ratio; bars fill the rest of the window.
 * Mouse positions map back to world px with bp_view_to_world.
 */
#ifndef BP_VIEW_H
#define BP_VIEW_H

typedef struct bp_view {
    float scale;        ///< screen px per world px
    float ox, oy;       ///< screen position of world (0,0)
    float world_w, world_h;
    int win_w, win_h;   ///< output size in px
} bp_view;

/// Fits a world_w x world_h box into a win_w x win_h output, centred.
/// Degenerate sizes (<= 0) give scale 1 and no offset.
void bp_view_fit(bp_view *v, int win_w, int win_h, float world_w,
                 float world_h);
/// Screen px -> world px (not clamped).
void bp_view_to_world(const bp_view *v, float sx, float sy, float *wx,
                      float *wy);
/// World px -> screen px.
void bp_view_to_screen(const bp_view *v, float wx, float wy, float *sx,
                       float *sy);
/// Clamps a world point into the world box.
void bp_view_clamp(const bp_view *v, float *wx, float *wy);

#endif

/* render.h - draws a snapshot: world box, lines, balls, tool previews.
 *
 * Balls go out in ONE SDL_RenderGeometryRaw call: a quad per ball textured
 * with a pre-rendered anti-aliased circle (one of several sizes, picked to
 * match the balls' size on screen so the edge stays one pixel soft), tinted
 * by the speed palette. The index and texture-coordinate arrays never
 * change and are filled once when the buffers grow; per frame only the
 * positions and colours are rewritten. Lines are thin textured quads in a
 * second call, so they get soft edges too.
 *
 * When the renderer rasterises in software (SDL's software renderer, or
 * OpenGL on Mesa llvmpipe/softpipe as under Xvfb), the balls are instead
 * splatted into a pixel buffer (splat.c) that is uploaded as one streaming
 * texture and drawn with one copy: same picture, ~15x cheaper there.
 * BALLPIT_DRAW=geometry or BALLPIT_DRAW=pixels forces either way.
 */
#ifndef BP_RENDER_H
#define BP_RENDER_H

#include <SDL.h>

#include "colormap.h"
#include "splat.h"
#include "snapshot.h"
#include "view.h"

#define BP_CIRCLE_LEVELS 6

/* What a ball texture or batch holds: the balls of a snapshot's picture
 * (bp_snap.picture; 0 = nothing, or a picture drawn every time) at this
 * scale and offset. */
typedef struct bp_drawn {
    uint64_t picture;
    float sc, ox, oy;
} bp_drawn;

typedef struct bp_render {
    SDL_Renderer *r;
    SDL_Texture *circle[BP_CIRCLE_LEVELS]; ///< 8, 16, ... 256 px
    SDL_Texture *line;                     ///< cross-section profile
    bp_rgb pal[256];
    /* ball batch, reused */
    float *xy, *uv;
    SDL_Color *col;
    int *idx;
    uint32_t cap;
    bp_drawn geo;       ///< what the ball batch holds
    /* line batch, reused */
    float *lxy, *luv;
    SDL_Color *lcol;
    int *lidx;
    uint32_t lcap;
    double draw_ms;     ///< building + submitting the ball batch, last frame
    /* pixel-buffer path */
    int pixels;         ///< 1: balls are splatted into px_tex
    SDL_Texture *px_tex;
    bp_splatter splatter;
    int px_w, px_h;
    bp_drawn px;        ///< what px_tex holds
    /* the splat in bands of rows (the geometry mode's vertices in shares)
     * from band_min balls, on the threads bp_render_threads gives: threads
     * (BALLPIT_DRAW_THREADS) if set, else from the host's cores and the
     * engine's; prepared: the masks all built (1), failed (-1) */
    int threads, cores, prepared;
    uint32_t band_min;
    char mode[16];      ///< "geometry" or "pixels", for the HUD
    char raster[16];    ///< CPU rasteriser found ("llvmpipe") or ""
} bp_render;

/// The drawing's threads: `fixed` when above 0, else the cores the engine
/// leaves (cores - engine_cores, bp_engine_host_cores), 1 to 8: a thread
/// more than the engine leaves would take a core from its team, whose
/// threads then wait for each other (the 2-core machine's 100k rain under
/// the CPU engine took 1.4-2.1x as long a frame with 2 or 3).
int bp_render_threads(int cores, int engine_cores, int fixed);
/// Creates the textures. Returns 0 or -1 with a reason.
int bp_render_init(bp_render *R, SDL_Renderer *r, char *err, size_t errlen);
/// Frees the textures and the reused batches.
void bp_render_free(bp_render *R);
/// Clears the window: letterbox bars and the world box.
void bp_render_background(bp_render *R, const bp_view *v);
/// Draws the lines and balls of s (balls in one batched call).
/// Returns 0, or -1 with SDL's reason in err.
int bp_render_snapshot(bp_render *R, const bp_view *v, const bp_snap *s,
                       char *err, size_t errlen);
/// A polyline preview (world px), w px wide on screen, in colour c.
void bp_render_polyline(bp_render *R, const bp_view *v, const float *pts,
                        uint32_t n, float width, SDL_Color c);
/// A circle outline (world centre and radius) for eraser / spawn previews.
void bp_render_ring(bp_render *R, const bp_view *v, float x, float y,
                    float radius, SDL_Color c);

#endif

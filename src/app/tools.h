/* tools.h - mouse tools as a state machine that emits bp_cmd edits.
 *
 *   left-drag           straight line (live preview while dragging)
 *   Ctrl+left-drag      freehand polyline, simplified on release
 *   middle-drag         eraser (also left-drag while eraser mode is on)
 *   right-click         swarm at the cursor; right-drag throws it with the
 *                       drag's velocity; holding keeps pouring
 *   wheel / Shift+wheel swarm size / ball radius
 *
 * Positions are world px (the app maps the mouse through bp_view) and
 * times are seconds. No SDL types, so tests/unit drives it with made-up
 * events and checks the commands it emits.
 */
#ifndef BP_TOOLS_H
#define BP_TOOLS_H

#include <stdint.h>

#include "cmdq.h"

enum { BP_BTN_LEFT = 1, BP_BTN_MIDDLE = 2, BP_BTN_RIGHT = 3 };

typedef enum bp_drag {
    BP_DRAG_NONE = 0,
    BP_DRAG_LINE,
    BP_DRAG_FREEHAND,
    BP_DRAG_ERASE,
    BP_DRAG_SPAWN,
} bp_drag;

/// Receives each command; returns 0 when it took ownership of *c, -1 when
/// it refused (the tools then free the payload).
typedef int (*bp_emit_fn)(void *ctx, bp_cmd *c);

/// Right-button hold time (s) after which a swarm starts pouring.
#define BP_POUR_DELAY 0.25
/// Mouse history window (s) for the throw velocity.
#define BP_THROW_WINDOW 0.10
/// Fastest throw, world px/s.
#define BP_THROW_MAX 4000.0f

typedef struct bp_tools {
    /* settings, shown in the HUD */
    uint32_t swarm_size;  ///< balls per swarm, default 200
    float radius;         ///< ball radius for swarms, world px, default 4
    int eraser_mode;      ///< E: the left button erases
    float px;             ///< world px per screen px (set by the app)
    float world_w, world_h; ///< points are clamped into the box

    /* the drag in progress */
    bp_drag drag;
    int button;
    float x0, y0;         ///< where it started
    float x, y;           ///< where the mouse is now
    float *pts;           ///< freehand raw points
    uint32_t npts, cap;
    uint32_t stroke_id;   ///< eraser drag id (undo groups)
    double press_t, last_t;
    int pouring;
    double pour_acc;
    struct { double t; float x, y; } hist[32];
    uint32_t hist_len;

    bp_emit_fn emit;
    void *ctx;
    uint64_t emitted, refused;
} bp_tools;

/// Sets defaults and the command sink.
void bp_tools_init(bp_tools *t, bp_emit_fn emit, void *ctx);
/// Frees the freehand point buffer.
void bp_tools_free(bp_tools *t);
/// Mouse button pressed at (x,y) world px; ctrl = Ctrl held.
void bp_tools_press(bp_tools *t, int button, int ctrl, float x, float y,
                    double now);
/// Mouse moved to (x,y) world px: updates the preview, erases along the
/// path, records the throw history.
void bp_tools_motion(bp_tools *t, float x, float y, double now);
/// Button released: emits the line, polyline or swarm of the drag.
void bp_tools_release(bp_tools *t, int button, float x, float y, double now);
/// Called once per frame: pours while the right button is held.
void bp_tools_tick(bp_tools *t, double now);
/// Wheel: steps > 0 grows, < 0 shrinks; shift picks the radius.
void bp_tools_wheel(bp_tools *t, int steps, int shift);
/// Drops the drag in progress without emitting (focus lost, Escape).
void bp_tools_cancel(bp_tools *t);
/// Eraser radius in world px (8 screen px).
float bp_tools_eraser_radius(const bp_tools *t);
/// Spread (disc radius, world px) used for a swarm of n balls of radius r.
float bp_swarm_spread(uint32_t n, float r);
/// The disc a swarm of n balls spawned at (x, y) takes: its centre
/// (*cx, *cy), moved so the disc lies inside the box, and its radius
/// *spread (bp_swarm_spread, at most what fits the box).
void bp_tools_swarm_disc(const bp_tools *t, uint32_t n, float x, float y, float *cx, float *cy,
                         float *spread);
/// Throw velocity from the recent mouse history (world px/s).
void bp_tools_velocity(const bp_tools *t, double now, float *vx, float *vy);

#endif

/* state.h - the small JSON state file the sandbox writes for tests.
 *
 * With --state-file PATH the app rewrites PATH atomically (temporary file
 * and rename) whenever a value changes, so a test driving the window with
 * xdotool can read the ball count, the engine or the last screenshot path
 * without looking at pixels. One flat JSON object, keys documented in
 * docs/user-guide.md.
 */
#ifndef BP_STATE_H
#define BP_STATE_H

#include <stddef.h>
#include <stdint.h>

typedef struct bp_app_state {
    uint64_t frame;          ///< world frames stepped
    uint64_t rendered;       ///< frames drawn
    uint32_t balls, lines;
    const char *engine;      ///< "cpu" / "opencl"
    const char *device;
    const char *engine_error;///< why the last engine switch failed, or ""
    int starting;            ///< an OpenCL engine is being made meanwhile
    const char *message;     ///< last HUD message
    const char *scene;
    int paused, gravity, slowmo, eraser, help, font;
    uint32_t substeps;       ///< sub-steps per frame
    uint32_t swarm_size;
    float radius;
    int win_w, win_h;        ///< renderer output size, px
    const char *last_screenshot;  ///< path of the last good screenshot
    const char *screenshot_error; ///< reason of the last failed one, or ""
    uint32_t undo, redo;
    double fps;              ///< frames drawn per second (last 0.5 s)
    double draw_ms;          ///< building + submitting the ball batch, mean
    double frame_ms;         ///< whole frame incl. HUD and present, mean
    double step_ms;          ///< simulation wall ms for the last frame
    double rtf;              ///< real-time factor of the simulation
    int draw_every;          ///< every frame drawn (1), or every second (2: pace.h)
} bp_app_state;

/// Formats s as one JSON object (ending in a newline) into buf. Returns
/// the length, or -1 when buf is too small.
int bp_state_format(const bp_app_state *s, char *buf, size_t len);

#endif

/* drawbench.h - how long the sandbox takes to draw N balls: the drawing
 * row of `ballpit --bench` and tests/e2e/draw_bench (issue 6: 100,000
 * balls in at most 10 ms a frame).
 */
#ifndef BP_DRAWBENCH_H
#define BP_DRAWBENCH_H

#include <stddef.h>
#include <stdint.h>

typedef struct bp_draw_result {
    char renderer[64];  ///< SDL's renderer name ("opengl", "software", ...)
    char mode[16];      ///< how the balls went out: "pixels" or "geometry"
    double batch_ms;    ///< median: building and submitting the balls (the HUD's "draw")
    double frame_ms;    ///< median: the whole frame, present and a wait for the GPU
} bp_draw_result;

/// Draws n balls (a jittered lattice over a 1280x720 world in a 1280x720
/// window, speeds across the palette) `frames` times with the sandbox's
/// own renderer, no simulation running. Returns 0, 1 when no window can
/// be opened (no display: err says why), -1 on a failure (err).
int bp_draw_bench(uint32_t n, int frames, bp_draw_result *out, char *err, size_t errlen);

#endif

/* geom.h - tool geometry: freehand simplification, eraser hit tests.
 *
 * Pure functions on float coordinates (world px); no SDL, no world state,
 * so tests/unit checks them on hand-made strokes.
 */
#ifndef BP_GEOM_H
#define BP_GEOM_H

#include <stdint.h>

/// Squared distance from point p to segment ab (a point when a == b).
float bp_point_seg_dist2(float px, float py, float ax, float ay, float bx,
                         float by);
/// Squared distance between segments ab and cd (0 when they cross).
float bp_seg_seg_dist2(float ax, float ay, float bx, float by, float cx,
                       float cy, float dx, float dy);

/// Simplifies a freehand stroke pts[0..n) (x,y pairs) into a polyline:
/// Ramer-Douglas-Peucker with tolerance epsilon (px), then no segment
/// shorter than min_len (px) except where the stroke itself is shorter.
/// The first and last points are always kept. out must hold n points.
/// Returns the number of points written (1 when the stroke has no length,
/// 0 when n == 0).
uint32_t bp_stroke_simplify(const float *pts, uint32_t n, float epsilon,
                            float min_len, float *out);

/// Which of the nlines segments (x1,y1,x2,y2 arrays) come within radius of
/// the eraser's drag segment (ex1,ey1)-(ex2,ey2)? Writes up to max indices,
/// ascending, to hits and returns how many were hit.
uint32_t bp_eraser_hits(const float *x1, const float *y1, const float *x2,
                        const float *y2, uint32_t nlines, float ex1,
                        float ey1, float ex2, float ey2, float radius,
                        uint32_t *hits, uint32_t max);

#endif

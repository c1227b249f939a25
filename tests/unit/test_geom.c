/* test_geom.c - freehand simplification and eraser hit tests
 * (src/app/geom.c) on hand-made strokes with known answers. */
#include <stdlib.h>

#include "app/geom.h"
#include "test.h"

static int point_segment_distance(void)
{
    /* Beside the segment: the perpendicular distance. */
    ENSURE_NEAR(bp_point_seg_dist2(5, 3, 0, 0, 10, 0), 9, 1e-5);
    /* Beyond an end: the distance to that end point (3-4-5). */
    ENSURE_NEAR(bp_point_seg_dist2(13, 4, 0, 0, 10, 0), 25, 1e-4);
    ENSURE_NEAR(bp_point_seg_dist2(-3, -4, 0, 0, 10, 0), 25, 1e-4);
    /* A zero-length segment is a point. */
    ENSURE_NEAR(bp_point_seg_dist2(3, 4, 1, 1, 1, 1), 13, 1e-5);
    return 0;
}

static int segment_segment_distance(void)
{
    /* An X crossing: distance 0. */
    ENSURE_NEAR(bp_seg_seg_dist2(0, 0, 10, 10, 0, 10, 10, 0), 0, 0);
    /* Parallel, 2 apart. */
    ENSURE_NEAR(bp_seg_seg_dist2(0, 0, 10, 0, 0, 2, 10, 2), 4, 1e-5);
    /* T that stops 1 short of the bar. */
    ENSURE_NEAR(bp_seg_seg_dist2(0, 0, 10, 0, 5, 1, 5, 9), 1, 1e-5);
    /* Collinear, gap of 3 between the ends. */
    ENSURE_NEAR(bp_seg_seg_dist2(0, 0, 10, 0, 13, 0, 20, 0), 9, 1e-5);
    return 0;
}

/* Largest distance from any raw point to the simplified polyline. */
static float max_dev(const float *raw, uint32_t n, const float *s, uint32_t m)
{
    float worst = 0.0f;
    for (uint32_t i = 0; i < n; i++) {
        float best = 1e30f;
        for (uint32_t k = 0; k + 1 < m; k++) {
            float d = bp_point_seg_dist2(raw[2 * i], raw[2 * i + 1], s[2 * k],
                                         s[2 * k + 1], s[2 * k + 2],
                                         s[2 * k + 3]);
            if (d < best)
                best = d;
        }
        if (best > worst)
            worst = best;
    }
    return sqrtf(worst);
}

static int straight_wobbly_stroke_becomes_one_segment(void)
{
    enum { N = 400 };
    float raw[2 * N], out[2 * N];
    for (int i = 0; i < N; i++) {
        raw[2 * i] = 100.0f + (float)i;            /* 1 px per sample */
        raw[2 * i + 1] = 50.0f + ((i % 3) - 1) * 0.3f; /* hand jitter */
    }
    uint32_t m = bp_stroke_simplify(raw, N, 1.0f, 6.0f, out);
    ENSURE(m == 2);
    ENSURE_NEAR(out[0], 100, 0);
    ENSURE_NEAR(out[2], 100 + N - 1, 0); /* end points kept exactly */
    return 0;
}

static int corner_is_kept(void)
{
    /* An L: 100 px right, then 100 px down, sampled every px. */
    enum { N = 201 };
    float raw[2 * N], out[2 * N];
    for (int i = 0; i < N; i++) {
        raw[2 * i] = (float)(i < 100 ? i : 100);
        raw[2 * i + 1] = (float)(i < 100 ? 0 : i - 100);
    }
    uint32_t m = bp_stroke_simplify(raw, N, 1.0f, 6.0f, out);
    ENSURE(m == 3);
    ENSURE_NEAR(out[2], 100, 0);
    ENSURE_NEAR(out[3], 0, 0);
    return 0;
}

static int circle_is_short_segments_within_tolerance(void)
{
    /* A freehand circle of radius 100 sampled every ~0.5 px: thousands of
     * points in, a few dozen segments out, none shorter than min_len,
     * all within epsilon of the raw stroke. */
    enum { N = 1257 };
    float *raw = malloc(2 * N * sizeof *raw), *out = malloc(2 * N * sizeof *out);
    ENSURE(raw && out);
    for (int i = 0; i < N; i++) {
        float a = (float)i / (N - 1) * 6.2831853f;
        raw[2 * i] = 300.0f + 100.0f * cosf(a);
        raw[2 * i + 1] = 300.0f + 100.0f * sinf(a);
    }
    const float eps = 1.0f, min_len = 6.0f;
    uint32_t m = bp_stroke_simplify(raw, N, eps, min_len, out);
    ENSURE(m >= 10 && m <= 80);
    for (uint32_t k = 0; k + 1 < m; k++) {
        float dx = out[2 * k + 2] - out[2 * k], dy = out[2 * k + 3] - out[2 * k + 1];
        ENSURE(sqrtf(dx * dx + dy * dy) >= min_len - 1e-3f);
    }
    /* The min-length pass may move a joint by up to min_len along the
     * curve, which stays within a few px of a radius-100 arc. */
    ENSURE(max_dev(raw, N, out, m) <= eps + 0.5f);
    free(raw);
    free(out);
    return 0;
}

static int degenerate_strokes(void)
{
    float out[8];
    ENSURE(bp_stroke_simplify(NULL, 0, 1, 6, out) == 0);
    float one[2] = { 5, 5 };
    ENSURE(bp_stroke_simplify(one, 1, 1, 6, out) == 1);
    float dot[6] = { 5, 5, 5, 5, 5, 5 };
    ENSURE(bp_stroke_simplify(dot, 3, 1, 6, out) == 1); /* no length */
    float tiny[4] = { 0, 0, 2, 0 };
    /* Shorter than min_len in total: still a segment (its real length). */
    ENSURE(bp_stroke_simplify(tiny, 2, 1, 6, out) == 2);
    return 0;
}

static int eraser_hits_only_touched_lines(void)
{
    /* Three horizontal lines at y = 0, 10, 40; a vertical eraser drag at
     * x = 5 from y = -5 to y = 12 with radius 3 crosses the first two. */
    float x1[3] = { 0, 0, 0 }, y1[3] = { 0, 10, 40 };
    float x2[3] = { 10, 10, 10 }, y2[3] = { 0, 10, 40 };
    uint32_t hits[3];
    uint32_t n = bp_eraser_hits(x1, y1, x2, y2, 3, 5, -5, 5, 12, 3, hits, 3);
    ENSURE(n == 2 && hits[0] == 0 && hits[1] == 1);
    /* A click (zero-length drag) 2.5 px from line 2's end: within r=3. */
    n = bp_eraser_hits(x1, y1, x2, y2, 3, 12.5f, 40, 12.5f, 40, 3, hits, 3);
    ENSURE(n == 1 && hits[0] == 2);
    /* 3.5 px away: miss. */
    n = bp_eraser_hits(x1, y1, x2, y2, 3, 13.5f, 40, 13.5f, 40, 3, hits, 3);
    ENSURE(n == 0);
    /* max caps the output. */
    n = bp_eraser_hits(x1, y1, x2, y2, 3, 5, -100, 5, 100, 1, hits, 1);
    ENSURE(n == 1 && hits[0] == 0);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(point_segment_distance),
        BP_TEST(segment_segment_distance),
        BP_TEST(straight_wobbly_stroke_becomes_one_segment),
        BP_TEST(corner_is_kept),
        BP_TEST(circle_is_short_segments_within_tolerance),
        BP_TEST(degenerate_strokes),
        BP_TEST(eraser_hits_only_touched_lines),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

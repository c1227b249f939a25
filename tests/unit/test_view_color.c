/* test_view_color.c - letterboxed view mapping and the speed palette
 * (src/app/view.c, src/app/colormap.c). */
#include "app/colormap.h"
#include "app/view.h"
#include "test.h"

static int letterbox_wide_window(void)
{
    bp_view v;
    /* 1280x720 world in a 1600x720 window: scale 1, bars left and right. */
    bp_view_fit(&v, 1600, 720, 1280, 720);
    ENSURE_NEAR(v.scale, 1, 1e-6);
    ENSURE_NEAR(v.ox, 160, 1e-4);
    ENSURE_NEAR(v.oy, 0, 1e-4);
    float wx, wy;
    bp_view_to_world(&v, 160, 0, &wx, &wy);
    ENSURE_NEAR(wx, 0, 1e-4);
    bp_view_to_world(&v, 1440, 720, &wx, &wy);
    ENSURE_NEAR(wx, 1280, 1e-3);
    ENSURE_NEAR(wy, 720, 1e-3);
    return 0;
}

static int letterbox_tall_window_roundtrip(void)
{
    bp_view v;
    /* 640x800 window: width limits, scale 0.5, bars top and bottom. */
    bp_view_fit(&v, 640, 800, 1280, 720);
    ENSURE_NEAR(v.scale, 0.5, 1e-6);
    ENSURE_NEAR(v.ox, 0, 1e-4);
    ENSURE_NEAR(v.oy, (800 - 360) / 2.0, 1e-4);
    for (int i = 0; i < 20; i++) {
        float wx = 37.0f * (float)i, wy = 19.0f * (float)i, sx, sy, bx, by;
        bp_view_to_screen(&v, wx, wy, &sx, &sy);
        bp_view_to_world(&v, sx, sy, &bx, &by);
        ENSURE_NEAR(bx, wx, 1e-3);
        ENSURE_NEAR(by, wy, 1e-3);
    }
    float cx = -5, cy = 9999;
    bp_view_clamp(&v, &cx, &cy);
    ENSURE(cx == 0.0f && cy == 720.0f);
    /* Degenerate sizes do not divide by zero. */
    bp_view_fit(&v, 0, 0, 1280, 720);
    ENSURE_NEAR(v.scale, 1, 0);
    return 0;
}

static int palette_goes_from_blue_to_hot(void)
{
    bp_rgb pal[256];
    bp_palette_fill(pal);
    ENSURE(pal[0].b > pal[0].r && pal[0].b > pal[0].g); /* at rest: blue */
    ENSURE(pal[200].r > pal[200].b);                    /* fast: warm */
    ENSURE(pal[255].r > 240 && pal[255].g > 200);       /* fastest: pale */
    ENSURE(bp_speed_index(0.0f) == 0);
    ENSURE(bp_speed_index(-5.0f) == 0);
    ENSURE(bp_speed_index(0.0f / 0.0f) == 0); /* NaN must not index out */
    ENSURE(bp_speed_index(1e30f) == 255);
    ENSURE(bp_speed_index(BP_SPEED_FULL) == 255);
    /* Monotonic in speed. */
    int last = 0;
    for (float v = 0.0f; v < 4000.0f; v += 7.0f) {
        int k = bp_speed_index(v);
        ENSURE(k >= last && k <= 255);
        last = k;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(letterbox_wide_window),
        BP_TEST(letterbox_tall_window_roundtrip),
        BP_TEST(palette_goes_from_blue_to_hot),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

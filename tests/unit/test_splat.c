/* test_splat.c - anti-aliased discs in a pixel buffer (src/app/splat.c):
 * the covered area is pi r^2, the sprite cache draws what the exact
 * routine draws, and nothing is written outside the buffer. */
#include <stdlib.h>

#include "app/splat.h"
#include "test.h"

enum { W = 64, H = 48, PAD = 8, STRIDE = W + 2 * PAD };

/* Buffer with a guard frame of PAD pixels around the W x H image. */
static uint32_t *frame_buf(void)
{
    uint32_t *b = malloc(sizeof(uint32_t) * STRIDE * (H + 2 * PAD));
    if (b)
        for (int i = 0; i < STRIDE * (H + 2 * PAD); i++)
            b[i] = 0xdeadbeefu;
    return b;
}

static uint32_t *img(uint32_t *b)
{
    return b + PAD * STRIDE + PAD;
}

/* Drawing white on black: the blue channel is the coverage. */
static double area(uint32_t *b)
{
    double sum = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            sum += (img(b)[y * STRIDE + x] & 0xff) / 255.0;
    return sum;
}

static int guard_intact(uint32_t *b)
{
    for (int y = 0; y < H + 2 * PAD; y++)
        for (int x = 0; x < STRIDE; x++) {
            int inside = y >= PAD && y < PAD + H && x >= PAD && x < PAD + W;
            if (!inside && b[y * STRIDE + x] != 0xdeadbeefu)
                return 0;
        }
    return 1;
}

static int area_is_pi_r_squared(void)
{
    uint32_t *b = frame_buf();
    ENSURE(b);
    bp_splatter sp;
    bp_splatter_init(&sp);
    const float radii[] = { 1.0f, 1.5f, 2.25f, 4.0f, 7.5f, 12.0f };
    for (int k = 0; k < 6; k++) {
        for (int sprite = 0; sprite < 2; sprite++) {
            float r = radii[k];
            bp_splat_clear(img(b), W, H, STRIDE, 0xff000000u);
            if (sprite)
                bp_splatter_disc(&sp, img(b), W, H, STRIDE, 30.3f, 20.6f, r,
                                 0xffffff);
            else
                bp_splat_disc(img(b), W, H, STRIDE, 30.3f, 20.6f, r, 0xffffff);
            double want = 3.14159265 * r * r;
            /* Edge approximation: within ~4% plus a pixel's worth. */
            ENSURE_NEAR(area(b), want, 0.04 * want + 1.0);
        }
    }
    ENSURE(guard_intact(b));
    bp_splatter_free(&sp);
    free(b);
    return 0;
}

static int sprite_matches_exact(void)
{
    uint32_t *a = frame_buf(), *c = frame_buf();
    ENSURE(a && c);
    bp_splatter sp;
    bp_splatter_init(&sp);
    for (int t = 0; t < 40; t++) {
        float cx = 10.0f + (float)t * 1.13f, cy = 8.0f + (float)(t % 7) * 4.37f;
        float r = 0.75f + (float)(t % 10) * 0.7f;
        bp_splat_clear(img(a), W, H, STRIDE, 0xff000000u);
        bp_splat_clear(img(c), W, H, STRIDE, 0xff000000u);
        bp_splat_disc(img(a), W, H, STRIDE, cx, cy, r, 0xffffff);
        bp_splatter_disc(&sp, img(c), W, H, STRIDE, cx, cy, r, 0xffffff);
        int worst = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int d = (int)(img(a)[y * STRIDE + x] & 0xff) -
                        (int)(img(c)[y * STRIDE + x] & 0xff);
                d = d < 0 ? -d : d;
                worst = d > worst ? d : worst;
            }
        /* Centre quantised to 1/8 px, radius to 1/16 px: an edge pixel
         * may differ by about a fifth of full coverage. */
        ENSURE(worst <= 64);
    }
    bp_splatter_free(&sp);
    free(a);
    free(c);
    return 0;
}

static int clipped_at_every_edge(void)
{
    uint32_t *b = frame_buf();
    ENSURE(b);
    bp_splatter sp;
    bp_splatter_init(&sp);
    bp_splat_clear(img(b), W, H, STRIDE, 0xff000000u);
    const float pts[][2] = { { 0, 0 }, { W, 0 }, { 0, H }, { W, H },
                             { -3, 20 }, { W + 3, 20 }, { 30, -3 }, { 30, H + 3 },
                             { -500, -500 }, { 1e9f, 5 } };
    for (int i = 0; i < 10; i++) {
        bp_splatter_disc(&sp, img(b), W, H, STRIDE, pts[i][0], pts[i][1], 5,
                         0xffffff);
        bp_splat_disc(img(b), W, H, STRIDE, pts[i][0], pts[i][1], 20, 0xffffff);
    }
    float nan = 0.0f / 0.0f;
    bp_splatter_disc(&sp, img(b), W, H, STRIDE, nan, 5, 3, 0xffffff);
    bp_splat_disc(img(b), W, H, STRIDE, 5, 5, nan, 0xffffff);
    ENSURE(guard_intact(b));
    ENSURE((img(b)[0] & 0xff) == 255); /* the corner disc is there */
    bp_splatter_free(&sp);
    free(b);
    return 0;
}

/* A background whose colour repeats every 8 columns, varied in every
 * channel, so a disc shifted by a multiple of 8 px lands on the same
 * colours. */
static uint32_t stripe_at(int x, int y)
{
    return 0xff000000u | (uint32_t)(31 * (x % 8) + 7 * y) % 256u << 16 |
           (uint32_t)(255 - 29 * (x % 8)) << 8 | (uint32_t)(3 * y + 40 * (x % 8)) % 256u;
}

static void stripes(uint32_t *b)
{
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            img(b)[y * STRIDE + x] = stripe_at(x, y);
}

/* The sprite cache draws a disc wholly inside the buffer a row's covered
 * run at a time (4 pixels at once where the processor has SSE2) and one
 * cut by the buffer's edge pixel by pixel: both give the same pixels. */
static int sprite_paths_agree(void)
{
    uint32_t *a = frame_buf(), *c = frame_buf();
    ENSURE(a && c);
    bp_splatter sp;
    bp_splatter_init(&sp);
    for (int k = 6; k < 64; k += 3)
        for (int q = 0; q < 16; q++) {
            float r = (float)k / 8.0f, fx = (float)(q % 4) * 0.25f + 0.1f;
            float fy = (float)(q / 4) * 0.25f + 0.1f;
            uint32_t rgb = (0x10e0a0u ^ (uint32_t)(k * 0x010203 + q * 0x0b0705)) & 0xffffffu;
            stripes(a);
            stripes(c);
            /* inside at x 20; at x 60 cut by the right edge (W = 64) */
            bp_splatter_disc(&sp, img(a), W, H, STRIDE, 20.0f + fx, 24.0f + fy, r, rgb);
            bp_splatter_disc(&sp, img(c), W, H, STRIDE, 60.0f + fx, 24.0f + fy, r, rgb);
            int drawn = 0;
            for (int y = 0; y < H; y++)
                for (int x = 40; x < W; x++) {
                    uint32_t pa = img(a)[y * STRIDE + x - 40], pc = img(c)[y * STRIDE + x];
                    ENSURE(pa == pc);
                    drawn += pa != stripe_at(x - 40, y);
                }
            /* the half of the disc left of centre at least was drawn */
            ENSURE(drawn >= (int)(1.5f * r * r));
            ENSURE(guard_intact(a) && guard_intact(c));
        }
    bp_splatter_free(&sp);
    free(a);
    free(c);
    return 0;
}

/* The buffer drawn in bands of rows (bp_splatter_disc_rows, each band
 * all the discs in order: what each render thread does) is the picture
 * drawn whole, pixel for pixel: discs of every size, overlapping, cut by
 * every edge and by the bands' edges, some off the buffer; bands of one
 * row, uneven and empty ones included. */
static int bands_draw_the_same_picture(void)
{
    uint32_t *a = frame_buf(), *c = frame_buf();
    ENSURE(a && c);
    bp_splatter sp;
    bp_splatter_init(&sp);
    ENSURE(bp_splatter_prepare(&sp) == 0);
    enum { N = 400 };
    static float cx[N], cy[N], rr[N];
    static uint32_t rgb[N];
    uint64_t z = 99;
    for (int i = 0; i < N; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        cx[i] = -12.0f + (float)((z >> 33) % 8800) / 100.0f;      /* -12 .. 76 */
        cy[i] = -12.0f + (float)((z >> 17) % 7200) / 100.0f;      /* -12 .. 60 */
        rr[i] = 0.5f + (float)((z >> 45) % 1150) / 100.0f;        /* 0.5 .. 12 */
        rgb[i] = (uint32_t)(z >> 8) & 0xffffffu;
    }
    const int cuts[][6] = {{0, 48, 48, 48, 48, 48}, {0, 16, 32, 48, 48, 48},
                           {0, 1, 2, 23, 47, 48}, {0, 0, 5, 5, 30, 48}};
    for (int exact = 0; exact < 2; exact++)
        for (size_t u = 0; u < sizeof cuts / sizeof cuts[0]; u++) {
            stripes(a);
            stripes(c);
            for (int i = 0; i < N; i++) {
                if (exact)
                    bp_splat_disc(img(a), W, H, STRIDE, cx[i], cy[i], rr[i], rgb[i]);
                else
                    bp_splatter_disc(&sp, img(a), W, H, STRIDE, cx[i], cy[i], rr[i], rgb[i]);
            }
            for (int band = 0; band < 5; band++)
                for (int i = 0; i < N; i++) {
                    int ya = cuts[u][band], yb = cuts[u][band + 1];
                    if (exact)
                        bp_splat_disc_rows(img(c), W, H, STRIDE, ya, yb, cx[i], cy[i], rr[i],
                                           rgb[i]);
                    else
                        bp_splatter_disc_rows(&sp, img(c), W, H, STRIDE, ya, yb, cx[i], cy[i],
                                              rr[i], rgb[i]);
                }
            int differ = 0, drawn = 0;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    differ += img(a)[y * STRIDE + x] != img(c)[y * STRIDE + x];
                    drawn += img(a)[y * STRIDE + x] != stripe_at(x, y);
                }
            ENSURE(differ == 0);
            ENSURE(drawn > W * H / 2);
            ENSURE(guard_intact(a) && guard_intact(c));
        }
    bp_splatter_free(&sp);
    free(a);
    free(c);
    return 0;
}

static int blends_over_background(void)
{
    uint32_t *b = frame_buf();
    ENSURE(b);
    bp_splat_clear(img(b), W, H, STRIDE, 0xff204060u);
    bp_splat_disc(img(b), W, H, STRIDE, 32.3f, 24.5f, 6, 0xff0000);
    uint32_t centre = img(b)[24 * STRIDE + 32];
    ENSURE(centre == 0xffff0000u);
    uint32_t far = img(b)[2 * STRIDE + 2];
    ENSURE(far == 0xff204060u);
    /* A rim pixel lies between the two colours in every channel. */
    uint32_t rim = img(b)[24 * STRIDE + 38];
    ENSURE(((rim >> 16) & 0xff) > 0x20 && ((rim >> 16) & 0xff) < 0xff);
    ENSURE((rim & 0xff) < 0x60);
    free(b);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(area_is_pi_r_squared),
        BP_TEST(sprite_matches_exact),
        BP_TEST(clipped_at_every_edge),
        BP_TEST(sprite_paths_agree),
        BP_TEST(blends_over_background),
        BP_TEST(bands_draw_the_same_picture),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

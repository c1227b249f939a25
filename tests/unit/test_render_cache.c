/* test_render_cache.c - the sandbox's ball texture (src/app/render.c,
 * pixels mode) is splatted again, and the geometry mode's batch built
 * again, only when there is something new to draw: a snapshot the
 * renderer has not drawn (another picture number), another view, or a
 * snapshot of picture 0 (not the logic thread's: the draw bench's).
 * Handed the same picture again, which happens every frame while the
 * engine is slower than 33 fps or the world is paused, it reuses what it
 * has. Each picture is checked against a
 * fresh renderer's picture of the same snapshot and view. SDL's software
 * renderer on a surface: no display.
 */
#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/render.h"
#include "app/snapshot.h"
#include "app/view.h"
#include "test.h"

#define W 320
#define H 200

typedef struct canvas {
    SDL_Surface *surf;
    SDL_Renderer *r;
    bp_render R;
} canvas;

static int canvas_open(canvas *c)
{
    char err[256];
    memset(c, 0, sizeof *c);
    c->surf = SDL_CreateRGBSurfaceWithFormat(0, W, H, 32, SDL_PIXELFORMAT_ARGB8888);
    c->r = c->surf ? SDL_CreateSoftwareRenderer(c->surf) : NULL;
    if (!c->r) {
        fprintf(stderr, "software renderer: %s\n", SDL_GetError());
        return -1;
    }
    if (bp_render_init(&c->R, c->r, err, sizeof err) != 0) {
        fprintf(stderr, "bp_render_init: %s\n", err);
        return -1;
    }
    return 0;
}

static void canvas_close(canvas *c)
{
    if (c->r) {
        bp_render_free(&c->R);
        SDL_DestroyRenderer(c->r);
    }
    SDL_FreeSurface(c->surf);
}

/* One frame of s in view v; the picture into px (W x H words). */
static int draw(canvas *c, const bp_view *v, const bp_snap *s, uint32_t *px)
{
    char err[256];
    bp_render_background(&c->R, v);
    if (bp_render_snapshot(&c->R, v, s, err, sizeof err) != 0) {
        fprintf(stderr, "bp_render_snapshot: %s\n", err);
        return -1;
    }
    SDL_RenderPresent(c->r);
    for (int y = 0; y < H; y++)
        memcpy(px + (size_t)y * W, (const uint8_t *)c->surf->pixels + (size_t)y * c->surf->pitch,
               W * sizeof *px);
    return 0;
}

/* What a renderer that has drawn nothing before makes of s in view v, on
 * one thread. */
static int fresh_picture(const bp_view *v, const bp_snap *s, uint32_t *px)
{
    canvas c;
    int rc = canvas_open(&c);
    c.R.threads = 1;
    rc = rc || draw(&c, v, s, px);
    canvas_close(&c);
    return rc;
}

/* A snapshot of n balls over the caller's arrays, in a 640 x 400 world. */
static bp_snap snap_over(uint32_t n, float *x, float *y, float *r, float *speed)
{
    bp_snap s = {0};
    s.count = s.capacity = n;
    s.x = x;
    s.y = y;
    s.r = r;
    s.speed = speed;
    s.world_w = 640;
    s.world_h = 400;
    return s;
}

static void place(bp_snap *s, float dx)
{
    for (uint32_t i = 0; i < s->count; i++) {
        s->x[i] = 20.0f + (float)(i % 12) * 50.0f + dx;
        s->y[i] = 30.0f + (float)(i / 12) * 60.0f;
        s->r[i] = 6.0f + (float)(i % 4);
        s->speed[i] = (float)(i * 40);
    }
}

static int same(const uint32_t *a, const uint32_t *b)
{
    return memcmp(a, b, (size_t)W * H * sizeof *a) == 0;
}

/* The checks in one drawing mode (BALLPIT_DRAW, read by bp_render_init). */
static int reused_only_for_the_same_snapshot(const char *mode)
{
    SDL_setenv("BALLPIT_DRAW", mode, 1);
    static uint32_t pic[W * H], ref[W * H], first[W * H];
    static float xs[48], ys[48], rs[48], sp[48];
    bp_snap s = snap_over(48, xs, ys, rs, sp);
    s.picture = 7;
    place(&s, 0.0f);
    bp_view v, v2;
    bp_view_fit(&v, W, H, s.world_w, s.world_h);
    bp_view_fit(&v2, W, H - 40, s.world_w, s.world_h);
    canvas c;
    ENSURE(canvas_open(&c) == 0);
    ENSURE(strcmp(c.R.mode, mode) == 0);

    ENSURE(draw(&c, &v, &s, first) == 0);
    ENSURE(fresh_picture(&v, &s, ref) == 0 && same(first, ref));

    /* the same picture again (its balls changed behind the renderer's
     * back, which the logic thread never does without a new number): what
     * was drawn before */
    place(&s, 25.0f);
    ENSURE(draw(&c, &v, &s, pic) == 0);
    ENSURE(same(pic, first));

    /* a new picture: drawn again, as a fresh renderer draws it */
    s.picture = 8;
    ENSURE(draw(&c, &v, &s, pic) == 0);
    ENSURE(fresh_picture(&v, &s, ref) == 0 && same(pic, ref));
    ENSURE(!same(pic, first));

    /* the same snapshot in another view: a resized window (another
     * texture size), a scale a hair smaller (the same size), then at that
     * scale offsets of a fraction of a pixel across and down (the same
     * size again): drawn again each time */
    bp_view v3 = v, v4, v5;
    v3.scale *= 0.999f;
    v4 = v3;
    v4.ox += 0.25f;
    v5 = v3;
    v5.oy += 0.1f;
    const bp_view *views[] = {&v2, &v, &v3, &v4, &v3, &v5, &v};
    for (size_t k = 0; k < sizeof views / sizeof views[0]; k++) {
        ENSURE(draw(&c, views[k], &s, pic) == 0);
        ENSURE(fresh_picture(views[k], &s, ref) == 0 && same(pic, ref));
    }

    /* picture 0, not the logic thread's (the draw bench's): every frame */
    s.picture = 0;
    ENSURE(draw(&c, &v, &s, pic) == 0);
    place(&s, -15.0f);
    ENSURE(draw(&c, &v, &s, pic) == 0);
    ENSURE(fresh_picture(&v, &s, ref) == 0 && same(pic, ref));

    /* after the renderer's targets were reset, which may lose a texture's
     * pixels (app.c sets px.picture to 0; the geometry batch is host memory) */
    if (!strcmp(mode, "pixels")) {
        s.picture = 9;
        ENSURE(draw(&c, &v, &s, pic) == 0);
        place(&s, 5.0f);
        c.R.px.picture = 0;
        ENSURE(draw(&c, &v, &s, pic) == 0);
        ENSURE(fresh_picture(&v, &s, ref) == 0 && same(pic, ref));
    }
    canvas_close(&c);
    return 0;
}

/* The splat in bands of rows on several threads (from band_min balls),
 * and the geometry batch built in shares, give the one-thread picture:
 * balls of many sizes across the bands' edges, some off the world, 2 to 7
 * threads, and fewer balls than band_min. */
static int threads_same_picture(const char *mode)
{
    SDL_setenv("BALLPIT_DRAW", mode, 1);
    enum { N = 3000 };
    static uint32_t pic[W * H], ref[W * H];
    static float xs[N], ys[N], rs[N], sp[N];
    bp_snap s = snap_over(N, xs, ys, rs, sp);
    uint64_t z = 5;
    for (uint32_t i = 0; i < N; i++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        xs[i] = -20.0f + (float)((z >> 33) % 68000) / 100.0f;
        ys[i] = -20.0f + (float)((z >> 13) % 44000) / 100.0f;
        rs[i] = 0.5f + (float)((z >> 50) % 2400) / 100.0f; /* 0.5 .. 24.5 px */
        sp[i] = (float)((z >> 20) % 3000);
    }
    bp_view v;
    bp_view_fit(&v, W, H, s.world_w, s.world_h);
    for (int t = 2; t <= 7; t++) {
        canvas c;
        ENSURE(canvas_open(&c) == 0);
        c.R.threads = t;
        c.R.band_min = 100;
        s.picture = (uint64_t)t;
        ENSURE(draw(&c, &v, &s, pic) == 0);
        ENSURE(c.R.prepared == (strcmp(mode, "pixels") == 0));
        ENSURE(fresh_picture(&v, &s, ref) == 0 && same(pic, ref));
        s.count = 99; /* below band_min: one thread */
        s.picture += 100;
        ENSURE(draw(&c, &v, &s, pic) == 0);
        ENSURE(fresh_picture(&v, &s, ref) == 0 && same(pic, ref));
        s.count = N;
        canvas_close(&c);
    }
    return 0;
}

static int pixels_in_bands_same_picture(void)
{
    return threads_same_picture("pixels");
}

static int geometry_in_shares_same_picture(void)
{
    return threads_same_picture("geometry");
}

/* The drawing takes the cores the engine leaves, 1 to 8, unless fixed. */
static int threads_follow_the_engine(void)
{
    ENSURE(bp_render_threads(2, 2, 0) == 1);   /* the CPU engine on 2 cores */
    ENSURE(bp_render_threads(4, 4, 0) == 1);
    ENSURE(bp_render_threads(2, 0, 0) == 2);   /* OpenCL on a GPU */
    ENSURE(bp_render_threads(16, 0, 0) == 8);
    ENSURE(bp_render_threads(16, 4, 0) == 8);  /* --threads 4 */
    ENSURE(bp_render_threads(8, 2, 0) == 6);
    ENSURE(bp_render_threads(1, 0, 0) == 1);
    ENSURE(bp_render_threads(2, 5, 0) == 1);   /* more engine threads than cores */
    ENSURE(bp_render_threads(2, 2, 3) == 3);   /* BALLPIT_DRAW_THREADS */
    return 0;
}

static int pixels_texture_reused(void)
{
    return reused_only_for_the_same_snapshot("pixels");
}

static int geometry_batch_reused(void)
{
    return reused_only_for_the_same_snapshot("geometry");
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(threads_follow_the_engine),
        BP_TEST(pixels_texture_reused),
        BP_TEST(geometry_batch_reused),
        BP_TEST(pixels_in_bands_same_picture),
        BP_TEST(geometry_in_shares_same_picture),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

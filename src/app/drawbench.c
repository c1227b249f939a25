/* drawbench.c - the sandbox's renderer timed on a synthetic snapshot (see
 * drawbench.h). */
#include "drawbench.h"

#include <SDL.h>
#include <stdio.h>
#include <stdlib.h>

#include "bp_util.h"
#include "render.h"
#include "snapshot.h"
#include "view.h"

static double now_ms(void)
{
    return (double)SDL_GetPerformanceCounter() * 1000.0 /
           (double)SDL_GetPerformanceFrequency();
}

/* n balls on a lattice covering the 1280x720 box, 16:9 cells: the scale
 * of a real 100k-ball scene on screen. */
static int fill_snapshot(bp_snap *s, uint32_t n)
{
    s->count = s->capacity = n;
    s->x = malloc((size_t)n * sizeof *s->x);
    s->y = malloc((size_t)n * sizeof *s->y);
    s->r = malloc((size_t)n * sizeof *s->r);
    s->speed = malloc((size_t)n * sizeof *s->speed);
    if (!s->x || !s->y || !s->r || !s->speed)
        return -1;
    s->world_w = 1280;
    s->world_h = 720;
    /* drawn as beside the CPU engine on every core (one thread, as every
     * earlier drawing row; BALLPIT_DRAW_THREADS sets others) */
    s->engine_cores = SDL_GetCPUCount();
    long cols = 1;
    while (cols * cols * 9 < (long)n * 16)
        cols++;
    long rows = ((long)n + cols - 1) / cols;
    for (uint32_t i = 0; i < n; i++) {
        float fx = (float)(i % cols) + 0.5f, fy = (float)(i / cols) + 0.5f;
        s->x[i] = fx * 1280.0f / (float)cols;
        s->y[i] = fy * 720.0f / (float)rows;
        s->r[i] = 1.5f;
        s->speed[i] = (float)(i % 3000);
    }
    return 0;
}

/* Times the frames; 0 or -1 with a reason. */
static int run_frames(SDL_Renderer *r, bp_render *R, const bp_snap *s, int frames,
                      double *batch, double *whole, char *err, size_t errlen)
{
    bp_view v;
    bp_view_fit(&v, 1280, 720, 1280, 720);
    for (int f = 0; f < frames; f++) {
        SDL_Event e;
        while (SDL_PollEvent(&e)) {
        }
        double t0 = now_ms();
        bp_render_background(R, &v);
        if (bp_render_snapshot(R, &v, s, err, errlen) != 0)
            return -1;
        SDL_RenderPresent(r);
        Uint32 px;
        SDL_Rect one = { 0, 0, 1, 1 };
        SDL_RenderReadPixels(r, &one, SDL_PIXELFORMAT_RGBA32, &px, 4); /* waits */
        whole[f] = now_ms() - t0;
        batch[f] = R->draw_ms;
    }
    return 0;
}

int bp_draw_bench(uint32_t n, int frames, bp_draw_result *out, char *err, size_t errlen)
{
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        snprintf(err, errlen, "no display: %s", SDL_GetError());
        return 1;
    }
    int rc = -1;
    SDL_Window *win = SDL_CreateWindow("ballpit draw bench", 0, 0, 1280, 720, 0);
    SDL_Renderer *r = win ? SDL_CreateRenderer(win, -1, SDL_RENDERER_ACCELERATED) : NULL;
    if (win && !r)
        r = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
    bp_render R;
    int have_render = 0;
    bp_snap s = { 0 };
    double *batch = malloc((size_t)frames * sizeof *batch);
    double *whole = malloc((size_t)frames * sizeof *whole);
    if (!r) {
        snprintf(err, errlen, "no window or renderer: %s", SDL_GetError());
        rc = 1;
        goto out;
    }
    if (!batch || !whole || fill_snapshot(&s, n) != 0) {
        snprintf(err, errlen, "out of memory for %u balls", n);
        goto out;
    }
    if (bp_render_init(&R, r, err, errlen) != 0)
        goto out;
    have_render = 1;
    if (run_frames(r, &R, &s, frames, batch, whole, err, errlen) != 0)
        goto out;
    qsort(batch, (size_t)frames, sizeof *batch, bp_cmp_double);
    qsort(whole, (size_t)frames, sizeof *whole, bp_cmp_double);
    SDL_RendererInfo info;
    SDL_GetRendererInfo(r, &info);
    snprintf(out->renderer, sizeof out->renderer, "%s", info.name);
    snprintf(out->mode, sizeof out->mode, "%s", R.mode);
    out->batch_ms = batch[frames / 2];
    out->frame_ms = whole[frames / 2];
    rc = 0;
out:
    if (have_render)
        bp_render_free(&R);
    bp_snap_free(&s);
    free(batch);
    free(whole);
    if (r)
        SDL_DestroyRenderer(r);
    if (win)
        SDL_DestroyWindow(win);
    SDL_Quit();
    return rc;
}

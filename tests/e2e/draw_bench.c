/* draw_bench.c - how long the sandbox takes to draw N balls (issue 6:
 * 100,000 balls in at most 10 ms per frame).
 *
 * Uses the sandbox's own renderer (src/app/render.c) on a synthetic
 * snapshot (balls on a jittered lattice, speeds across the palette), with
 * no simulation running, so the figure is the drawing alone. Reports per
 * frame: "batch" = building the vertex arrays and submitting the one
 * SDL_RenderGeometryRaw call, "frame" = the whole frame including
 * SDL_RenderPresent and a 1-pixel read-back that waits for the GPU (or
 * llvmpipe) to finish. Medians over the frames.
 *
 * usage: draw_bench [BALLS] [FRAMES] [MAX_BATCH_MS]   (needs a display)
 * Exit 0, 1 when the median batch time is over MAX_BATCH_MS, 77 when no
 * window can be opened.
 */
#include <SDL.h>

#include <stdio.h>
#include <stdlib.h>

#include "app/render.h"
#include "app/snapshot.h"
#include "app/view.h"

static double now_ms(void)
{
    return (double)SDL_GetPerformanceCounter() * 1000.0 /
           (double)SDL_GetPerformanceFrequency();
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
    int frames = argc > 2 ? atoi(argv[2]) : 60;
    double limit = argc > 3 ? atof(argv[3]) : 0.0;
    if (n < 1 || n > 4000000 || frames < 1 || frames > 100000) {
        fprintf(stderr, "draw_bench: usage: draw_bench [BALLS] [FRAMES] [MAX_MS]\n");
        return 2;
    }
    if (SDL_Init(SDL_INIT_VIDEO) != 0) {
        printf("SKIP: no display: %s\n", SDL_GetError());
        return 77;
    }
    SDL_Window *win = SDL_CreateWindow("ballpit draw bench", 0, 0, 1280, 720, 0);
    SDL_Renderer *r = win ? SDL_CreateRenderer(win, -1, SDL_RENDERER_ACCELERATED) : NULL;
    if (win && !r)
        r = SDL_CreateRenderer(win, -1, SDL_RENDERER_SOFTWARE);
    if (!r) {
        printf("SKIP: no window/renderer: %s\n", SDL_GetError());
        SDL_Quit();
        return 77;
    }
    SDL_RendererInfo info;
    SDL_GetRendererInfo(r, &info);
    bp_render R;
    char err[256];
    if (bp_render_init(&R, r, err, sizeof err) != 0) {
        fprintf(stderr, "draw_bench: %s\n", err);
        return 1;
    }
    bp_snap s = { 0 };
    s.count = s.capacity = (uint32_t)n;
    s.x = malloc((size_t)n * sizeof *s.x);
    s.y = malloc((size_t)n * sizeof *s.y);
    s.r = malloc((size_t)n * sizeof *s.r);
    s.speed = malloc((size_t)n * sizeof *s.speed);
    if (!s.x || !s.y || !s.r || !s.speed) {
        fprintf(stderr, "draw_bench: out of memory\n");
        return 1;
    }
    s.world_w = 1280;
    s.world_h = 720;
    /* Lattice covering the box: the scale of a real 100k-ball scene. */
    long cols = 1;
    while (cols * cols * 9 < n * 16)
        cols++;
    for (long i = 0; i < n; i++) {
        float fx = (float)(i % cols) + 0.5f, fy = (float)(i / cols) + 0.5f;
        long rows = (n + cols - 1) / cols;
        s.x[i] = fx * 1280.0f / (float)cols;
        s.y[i] = fy * 720.0f / (float)rows;
        s.r[i] = 1.5f;
        s.speed[i] = (float)(i % 3000);
    }
    bp_view v;
    bp_view_fit(&v, 1280, 720, 1280, 720);
    double *batch = malloc((size_t)frames * sizeof *batch);
    double *whole = malloc((size_t)frames * sizeof *whole);
    if (!batch || !whole)
        return 1;
    for (int f = 0; f < frames; f++) {
        SDL_Event e;
        while (SDL_PollEvent(&e)) {
        }
        double t0 = now_ms();
        bp_render_background(&R, &v);
        if (bp_render_snapshot(&R, &v, &s, err, sizeof err) != 0) {
            fprintf(stderr, "draw_bench: %s\n", err);
            return 1;
        }
        SDL_RenderPresent(r);
        Uint32 px;
        SDL_Rect one = { 0, 0, 1, 1 };
        SDL_RenderReadPixels(r, &one, SDL_PIXELFORMAT_RGBA32, &px, 4);
        whole[f] = now_ms() - t0;
        batch[f] = R.draw_ms;
    }
    qsort(batch, (size_t)frames, sizeof *batch, cmp);
    qsort(whole, (size_t)frames, sizeof *whole, cmp);
    double mb = batch[frames / 2], mw = whole[frames / 2];
    printf("draw_bench: %ld balls, %d frames, renderer %s: batch %.2f ms, "
           "whole frame %.2f ms (medians)\n", n, frames, info.name, mb, mw);
    bp_render_free(&R);
    bp_snap_free(&s);
    free(batch);
    free(whole);
    SDL_DestroyRenderer(r);
    SDL_DestroyWindow(win);
    SDL_Quit();
    if (limit > 0.0 && mb > limit) {
        printf("FAIL: batch %.2f ms is over %.2f ms\n", mb, limit);
        return 1;
    }
    return 0;
}

/* draw_bench.c - how long the sandbox takes to draw N balls (issue 6:
 * 100,000 balls in at most 10 ms per frame), as `ballpit --bench` times it
 * (src/app/drawbench.c): the sandbox's own renderer on a synthetic
 * snapshot, no simulation running. "batch" = building and submitting the
 * balls, "frame" = the whole frame including SDL_RenderPresent and a
 * 1-pixel read-back that waits for the GPU (or llvmpipe). Medians.
 *
 * usage: draw_bench [BALLS] [FRAMES] [MAX_BATCH_MS]   (needs a display)
 * Exit 0, 1 when the median batch time is over MAX_BATCH_MS, 77 when no
 * window can be opened.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app/drawbench.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100000;
    int frames = argc > 2 ? atoi(argv[2]) : 60;
    double limit = argc > 3 ? atof(argv[3]) : 0.0;
    if (n < 1 || n > 4000000 || frames < 1 || frames > 100000) {
        fprintf(stderr, "draw_bench: usage: draw_bench [BALLS] [FRAMES] [MAX_MS]\n");
        return 2;
    }
    bp_draw_result res;
    char err[256] = "";
    int rc = bp_draw_bench((uint32_t)n, frames, &res, err, sizeof err);
    if (rc == 1) {
        printf("SKIP: %s\n", err);
        return 77;
    }
    if (rc != 0) {
        fprintf(stderr, "draw_bench: %s\n", err);
        return 1;
    }
    printf("draw_bench: %ld balls, %d frames, renderer %s (%s): batch %.2f ms, "
           "whole frame %.2f ms (medians)\n",
           n, frames, res.renderer, res.mode, res.batch_ms, res.frame_ms);
    if (limit > 0.0 && res.batch_ms > limit) {
        printf("FAIL: batch %.2f ms is over %.2f ms\n", res.batch_ms, limit);
        return 1;
    }
    return 0;
}

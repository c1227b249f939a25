/* colormap.c - speed palette (see colormap.h). */
#include "colormap.h"

#include <math.h>

/* Control points of the ramp, evenly spaced over [0,1]. */
static const float ramp[][3] = {
    { 40, 80, 200 },   /* at rest: deep blue */
    { 40, 170, 230 },  /* cyan */
    { 60, 210, 120 },  /* green */
    { 240, 220, 60 },  /* yellow */
    { 250, 140, 40 },  /* orange */
    { 235, 60, 50 },   /* red */
    { 255, 235, 200 }, /* very fast: hot white */
};

void bp_palette_fill(bp_rgb pal[256])
{
    const int nseg = (int)(sizeof ramp / sizeof ramp[0]) - 1;
    for (int i = 0; i < 256; i++) {
        float t = (float)i / 255.0f * (float)nseg;
        int k = (int)t;
        if (k >= nseg)
            k = nseg - 1;
        float f = t - (float)k;
        pal[i].r = (uint8_t)(ramp[k][0] + f * (ramp[k + 1][0] - ramp[k][0]) + 0.5f);
        pal[i].g = (uint8_t)(ramp[k][1] + f * (ramp[k + 1][1] - ramp[k][1]) + 0.5f);
        pal[i].b = (uint8_t)(ramp[k][2] + f * (ramp[k + 1][2] - ramp[k][2]) + 0.5f);
    }
}

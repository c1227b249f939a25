/* splat.c - anti-aliased discs into a pixel buffer (see splat.h). */
#include "splat.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

void bp_splat_clear(uint32_t *buf, int w, int h, int stride, uint32_t bg)
{
    for (int y = 0; y < h; y++) {
        uint32_t *row = buf + (size_t)y * (size_t)stride;
        for (int x = 0; x < w; x++)
            row[x] = bg;
    }
}

/* dst*(256-a)/256 + src*a/256 per channel, alpha forced opaque. */
static uint32_t blend(uint32_t dst, uint32_t src, uint32_t a)
{
    uint32_t na = 256 - a;
    uint32_t rb = ((dst & 0xff00ffu) * na + (src & 0xff00ffu) * a) >> 8;
    uint32_t g = ((dst & 0x00ff00u) * na + (src & 0x00ff00u) * a) >> 8;
    return 0xff000000u | (rb & 0xff00ffu) | (g & 0x00ff00u);
}

void bp_splat_disc(uint32_t *buf, int w, int h, int stride, float cx,
                   float cy, float r, uint32_t rgb)
{
    bp_splat_disc_rows(buf, w, h, stride, 0, h, cx, cy, r, rgb);
}

void bp_splat_disc_rows(uint32_t *buf, int w, int h, int stride, int ya, int yb,
                        float cx, float cy, float r, uint32_t rgb)
{
    if (!(r >= 0.75f))
        r = 0.75f; /* also NaN */
    if (!(cx > -r - 1.0f && cx < (float)w + r + 1.0f && cy > -r - 1.0f &&
          cy < (float)h + r + 1.0f))
        return; /* off the buffer (or NaN) */
    int x0 = (int)floorf(cx - r - 0.5f), x1 = (int)ceilf(cx + r + 0.5f);
    int y0 = (int)floorf(cy - r - 0.5f), y1 = (int)ceilf(cy + r + 0.5f);
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < ya ? ya : y0;
    x1 = x1 > w ? w : x1;
    y1 = y1 > yb ? yb : y1;
    /* Coverage = r + 0.5 - distance, clamped to [0,1]: fully inside below
     * (r-0.5)^2, empty beyond (r+0.5)^2, one sqrt only on the rim. */
    float rin = r - 0.5f;
    float rin2 = rin > 0.0f ? rin * rin : -1.0f;
    float rout = r + 0.5f, rout2 = rout * rout;
    uint32_t src = rgb & 0xffffffu;
    for (int y = y0; y < y1; y++) {
        float dy = (float)y + 0.5f - cy, dy2 = dy * dy;
        uint32_t *row = buf + (size_t)y * (size_t)stride;
        for (int x = x0; x < x1; x++) {
            float dx = (float)x + 0.5f - cx;
            float d2 = dx * dx + dy2;
            if (d2 >= rout2)
                continue;
            if (d2 <= rin2) {
                row[x] = 0xff000000u | src;
                continue;
            }
            float cov = rout - sqrtf(d2);
            uint32_t a = (uint32_t)(cov * 256.0f);
            if (a > 256)
                a = 256;
            if (a)
                row[x] = blend(row[x], src, a);
        }
    }
}

void bp_splatter_init(bp_splatter *s)
{
    memset(s, 0, sizeof *s);
}

void bp_splatter_free(bp_splatter *s)
{
    for (int i = 0; i <= BP_SPLAT_RSTEPS; i++) {
        free(s->span[i]);
        free(s->weight[i]);
    }
    memset(s, 0, sizeof *s);
}

/* Builds the 16 masks of radius step k (r = k/8 px): mask (sx, sy) holds
 * the blend weights (0..256: the coverage rounded to 0..255, 255 taken
 * as 256) of a disc whose centre sits at (c + sx/4, c + sy/4) in the
 * mask's frame, rows BP_SPLAT_AW(size) apart, and each row's runs. */
static uint16_t *build(bp_splatter *s, int k)
{
    float r = (float)k / 8.0f;
    int size = (int)ceilf(2.0f * r + 2.0f) + 1;
    size_t aw = BP_SPLAT_AW(size), amask = (size_t)size * aw;
    uint8_t *sp = malloc((size_t)BP_SPLAT_SUB * BP_SPLAT_SUB * (size_t)size * 4);
    uint16_t *wt = calloc((size_t)BP_SPLAT_SUB * BP_SPLAT_SUB * amask, sizeof *wt);
    if (!sp || !wt) {
        free(sp);
        free(wt);
        return NULL;
    }
    float c0 = floorf((float)size * 0.5f);
    float rout = r + 0.5f;
    for (int sy = 0; sy < BP_SPLAT_SUB; sy++)
        for (int sx = 0; sx < BP_SPLAT_SUB; sx++) {
            uint16_t *p = wt + (size_t)(sy * BP_SPLAT_SUB + sx) * amask;
            float cx = c0 + ((float)sx + 0.5f) / BP_SPLAT_SUB;
            float cy = c0 + ((float)sy + 0.5f) / BP_SPLAT_SUB;
            for (int y = 0; y < size; y++)
                for (int x = 0; x < size; x++) {
                    float dx = (float)x + 0.5f - cx, dy = (float)y + 0.5f - cy;
                    float cov = rout - sqrtf(dx * dx + dy * dy);
                    cov = cov < 0.0f ? 0.0f : cov > 1.0f ? 1.0f : cov;
                    unsigned a = (unsigned)(cov * 255.0f + 0.5f);
                    p[(size_t)y * aw + (size_t)x] = (uint16_t)(a + (a >> 7));
                }
            /* The coverage along a row rises and falls once (it is a
             * concave function of x, rounded monotonically), so its
             * covered and its full pixels are each one run. */
            uint8_t *q = sp + ((size_t)(sy * BP_SPLAT_SUB + sx)) * (size_t)size * 4;
            for (int y = 0; y < size; y++) {
                const uint16_t *row = p + (size_t)y * aw;
                int a = 0, b = size, f, g;
                while (a < size && row[a] == 0)
                    a++;
                while (b > a && row[b - 1] == 0)
                    b--;
                for (f = a; f < b && row[f] != 256; f++)
                    ;
                for (g = f; g < b && row[g] == 256; g++)
                    ;
                if (f == b)
                    g = f = b; /* no full pixel: all of [a, b) is rim */
                q[4 * y] = (uint8_t)a;
                q[4 * y + 1] = (uint8_t)f;
                q[4 * y + 2] = (uint8_t)g;
                q[4 * y + 3] = (uint8_t)b;
            }
        }
    s->size[k] = size;
    s->span[k] = sp;
    s->weight[k] = wt;
    return wt;
}

int bp_splatter_prepare(bp_splatter *s)
{
    for (int k = (int)(0.75f * 8.0f + 0.5f); k <= BP_SPLAT_RSTEPS; k++)
        if (!s->weight[k] && !build(s, k))
            return -1;
    return 0;
}

void bp_splatter_disc(bp_splatter *s, uint32_t *buf, int w, int h,
                      int stride, float cx, float cy, float r, uint32_t rgb)
{
    bp_splatter_disc_rows(s, buf, w, h, stride, 0, h, cx, cy, r, rgb);
}

void bp_splatter_disc_rows(bp_splatter *s, uint32_t *buf, int w, int h, int stride, int ya,
                           int yb, float cx, float cy, float r, uint32_t rgb)
{
    if (!(r >= 0.75f))
        r = 0.75f;
    if (r >= BP_SPLAT_SPRITE_MAX_R ||
        !(cx > -r - 2.0f && cx < (float)w + r + 2.0f && cy > -r - 2.0f &&
          cy < (float)h + r + 2.0f)) {
        bp_splat_disc_rows(buf, w, h, stride, ya, yb, cx, cy, r, rgb);
        return;
    }
    int k = (int)(r * 8.0f + 0.5f);
    const uint16_t *m = s->weight[k] ? s->weight[k] : build(s, k);
    if (!m) {
        bp_splat_disc_rows(buf, w, h, stride, ya, yb, cx, cy, r, rgb);
        return;
    }
    int size = s->size[k];
    /* Integer pixel of the centre and its quarter-pixel position. */
    float fx = floorf(cx), fy = floorf(cy);
    int sx = (int)((cx - fx) * BP_SPLAT_SUB), sy = (int)((cy - fy) * BP_SPLAT_SUB);
    sx = sx > BP_SPLAT_SUB - 1 ? BP_SPLAT_SUB - 1 : sx;
    sy = sy > BP_SPLAT_SUB - 1 ? BP_SPLAT_SUB - 1 : sy;
    int c0 = size / 2;
    int ox = (int)fx - c0, oy = (int)fy - c0;
    size_t aw = BP_SPLAT_AW(size);
    const uint16_t *p = m + (size_t)(sy * BP_SPLAT_SUB + sx) * (size_t)size * aw;
    const uint8_t *q = s->span[k] + ((size_t)(sy * BP_SPLAT_SUB + sx)) * (size_t)size * 4;
    uint32_t src = rgb & 0xffffffu, solid = 0xff000000u | src;
#ifdef __SSE2__
    if (ox >= 0 && oy >= ya && ox + BP_SPLAT_AW(size) <= w && oy + size <= yb) {
        /* Wholly inside, with room for 4-pixel steps past the disc's right
         * edge: each row's covered run 4 pixels at a time, in 16-bit
         * lanes, the same sums as blend() (a weight of 256 gives src, 0
         * gives dst back); the buffer is opaque, as blend() leaves it. */
        const __m128i zero = _mm_setzero_si128(), opaque = _mm_set1_epi32((int)0xff000000u);
        const __m128i full = _mm_set1_epi16(256);
        const __m128i s16 = _mm_unpacklo_epi8(_mm_set1_epi32((int)src), zero);
        for (int y = 0; y < size; y++) {
            uint32_t *row = buf + (size_t)(oy + y) * (size_t)stride + ox;
            const uint16_t *ar = p + (size_t)y * aw;
            for (int x = q[4 * y], b = q[4 * y + 3]; x < b; x += 4) {
                __m128i d = _mm_loadu_si128((const __m128i *)(row + x));
                __m128i a4 = _mm_loadl_epi64((const __m128i *)(ar + x));
                __m128i a2 = _mm_unpacklo_epi16(a4, a4);
                __m128i alo = _mm_unpacklo_epi32(a2, a2), ahi = _mm_unpackhi_epi32(a2, a2);
                __m128i dlo = _mm_unpacklo_epi8(d, zero), dhi = _mm_unpackhi_epi8(d, zero);
                dlo = _mm_add_epi16(_mm_mullo_epi16(dlo, _mm_sub_epi16(full, alo)),
                                    _mm_mullo_epi16(s16, alo));
                dhi = _mm_add_epi16(_mm_mullo_epi16(dhi, _mm_sub_epi16(full, ahi)),
                                    _mm_mullo_epi16(s16, ahi));
                d = _mm_packus_epi16(_mm_srli_epi16(dlo, 8), _mm_srli_epi16(dhi, 8));
                _mm_storeu_si128((__m128i *)(row + x), _mm_or_si128(d, opaque));
            }
        }
        return;
    }
#endif
    int y0 = oy < ya ? ya - oy : 0, y1 = oy + size > yb ? yb - oy : size;
    int x0 = ox < 0 ? -ox : 0, x1 = ox + size > w ? w - ox : size;
    for (int y = y0; y < y1; y++) {
        uint32_t *row = buf + (size_t)(oy + y) * (size_t)stride + ox;
        const uint16_t *ar = p + (size_t)y * aw;
        const uint8_t *sp = q + 4 * y;
        /* the row's runs, clipped: rim [a, f), full [f, g), rim [g, b) */
        int a = sp[0] > x0 ? sp[0] : x0, b = sp[3] < x1 ? sp[3] : x1;
        int f = sp[1] < a ? a : sp[1] > b ? b : sp[1];
        int g = sp[2] < f ? f : sp[2] > b ? b : sp[2];
        for (int x = a; x < f; x++)
            row[x] = blend(row[x], src, ar[x]);
        for (int x = f; x < g; x++)
            row[x] = solid;
        for (int x = g; x < b; x++)
            row[x] = blend(row[x], src, ar[x]);
    }
}

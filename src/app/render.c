/* render.c - batched drawing of balls and lines (see render.h). */
#include "render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "splat.h"

static const SDL_Color bar_col = { 8, 10, 14, 255 };
static const SDL_Color world_col = { 19, 23, 32, 255 };
static const SDL_Color frame_col = { 52, 60, 78, 255 };
static const SDL_Color line_col = { 226, 230, 240, 255 };

/* Circle texture of size s: white, alpha = coverage with a one-texel soft
 * edge, and a faint highlight up-left so balls read as balls when large. */
static SDL_Texture *make_circle(SDL_Renderer *r, int s, char *err,
                                size_t errlen)
{
    SDL_Surface *surf =
        SDL_CreateRGBSurfaceWithFormat(0, s, s, 32, SDL_PIXELFORMAT_RGBA32);
    if (!surf) {
        snprintf(err, errlen, "circle texture: %s", SDL_GetError());
        return NULL;
    }
    float c = (float)s * 0.5f, R = c - 0.5f;
    for (int y = 0; y < s; y++) {
        Uint8 *row = (Uint8 *)surf->pixels + (size_t)y * (size_t)surf->pitch;
        for (int x = 0; x < s; x++) {
            float dx = (float)x + 0.5f - c, dy = (float)y + 0.5f - c;
            float d = sqrtf(dx * dx + dy * dy);
            float a = R - d + 0.5f;
            a = a < 0.0f ? 0.0f : a > 1.0f ? 1.0f : a;
            float hx = dx + 0.35f * R, hy = dy + 0.35f * R;
            float h = 1.0f - sqrtf(hx * hx + hy * hy) / (1.3f * R);
            h = h < 0.0f ? 0.0f : h;
            float lum = 0.78f + 0.22f * h;
            Uint8 v = (Uint8)(255.0f * lum + 0.5f);
            row[4 * x + 0] = v;
            row[4 * x + 1] = v;
            row[4 * x + 2] = v;
            row[4 * x + 3] = (Uint8)(255.0f * a + 0.5f);
        }
    }
    SDL_Texture *t = SDL_CreateTextureFromSurface(r, surf);
    SDL_FreeSurface(surf);
    if (!t) {
        snprintf(err, errlen, "circle texture: %s", SDL_GetError());
        return NULL;
    }
    SDL_SetTextureBlendMode(t, SDL_BLENDMODE_BLEND);
    SDL_SetTextureScaleMode(t, SDL_ScaleModeLinear);
    return t;
}

/* Line cross-section: 16 texels across a quad 2 px wider than the line;
 * full alpha in the core, fading over one pixel on each side. */
static SDL_Texture *make_line(SDL_Renderer *r, char *err, size_t errlen)
{
    enum { N = 16 };
    SDL_Surface *surf =
        SDL_CreateRGBSurfaceWithFormat(0, N, 1, 32, SDL_PIXELFORMAT_RGBA32);
    if (!surf) {
        snprintf(err, errlen, "line texture: %s", SDL_GetError());
        return NULL;
    }
    Uint8 *p = surf->pixels;
    for (int i = 0; i < N; i++) {
        /* x in units of the quad half-width (core = 1/2 of it). */
        float x = fabsf(((float)i + 0.5f) / N * 2.0f - 1.0f);
        float a = (1.0f - x) * 2.0f;
        a = a > 1.0f ? 1.0f : a;
        p[4 * i] = p[4 * i + 1] = p[4 * i + 2] = 255;
        p[4 * i + 3] = (Uint8)(255.0f * a + 0.5f);
    }
    SDL_Texture *t = SDL_CreateTextureFromSurface(r, surf);
    SDL_FreeSurface(surf);
    if (!t) {
        snprintf(err, errlen, "line texture: %s", SDL_GetError());
        return NULL;
    }
    SDL_SetTextureBlendMode(t, SDL_BLENDMODE_BLEND);
    SDL_SetTextureScaleMode(t, SDL_ScaleModeLinear);
    return t;
}

/* Does this renderer rasterise on the CPU? SDL's software renderer does;
 * for OpenGL, ask the driver for its name (Mesa's llvmpipe, softpipe and
 * swrast, Google's SwiftShader are CPU rasterisers). */
static const char *software_raster(SDL_Renderer *r)
{
    SDL_RendererInfo info;
    if (SDL_GetRendererInfo(r, &info) != 0)
        return NULL;
    if ((info.flags & SDL_RENDERER_SOFTWARE) || !strcmp(info.name, "software"))
        return "software";
    if (strncmp(info.name, "opengl", 6) != 0)
        return NULL;
    typedef const unsigned char *(*get_string_fn)(unsigned int);
    get_string_fn get = NULL;
    void *fp = SDL_GL_GetProcAddress("glGetString");
    if (!fp || !SDL_GL_GetCurrentContext())
        return NULL;
    memcpy(&get, &fp, sizeof get); /* object -> function pointer, POSIX */
    const char *name = (const char *)get(0x1F01 /* GL_RENDERER */);
    static const char *const cpu[] = { "llvmpipe", "softpipe", "swrast",
                                       "SwiftShader" };
    for (size_t i = 0; name && i < sizeof cpu / sizeof cpu[0]; i++)
        if (strstr(name, cpu[i]))
            return cpu[i];
    return NULL;
}

int bp_render_threads(int cores, int engine_cores, int fixed)
{
    if (fixed > 0)
        return fixed;
    int t = cores - (engine_cores > 0 ? engine_cores : 0);
    return t < 1 ? 1 : t > 8 ? 8 : t;
}

int bp_render_init(bp_render *R, SDL_Renderer *r, char *err, size_t errlen)
{
    memset(R, 0, sizeof *R);
    R->r = r;
    bp_palette_fill(R->pal);
    for (int i = 0; i < BP_CIRCLE_LEVELS; i++) {
        R->circle[i] = make_circle(r, 8 << i, err, errlen);
        if (!R->circle[i]) {
            bp_render_free(R);
            return -1;
        }
    }
    R->line = make_line(r, err, errlen);
    if (!R->line) {
        bp_render_free(R);
        return -1;
    }
    const char *force = SDL_getenv("BALLPIT_DRAW");
    const char *soft = software_raster(r);
    if (force && !strcmp(force, "pixels"))
        R->pixels = 1;
    else if (force && !strcmp(force, "geometry"))
        R->pixels = 0;
    else
        R->pixels = soft != NULL;
    if (force && *force && strcmp(force, "pixels") && strcmp(force, "geometry"))
        fprintf(stderr, "ballpit: BALLPIT_DRAW=%.40s: not pixels or geometry; drawing in the %s "
                        "mode\n", force, R->pixels ? "pixels" : "geometry");
    snprintf(R->raster, sizeof R->raster, "%s", soft ? soft : "");
    /* BALLPIT_DRAW_THREADS (1..64) fixes the drawing's threads; else they
     * follow the engine (bp_render_threads) */
    const char *dt = SDL_getenv("BALLPIT_DRAW_THREADS");
    char *end = NULL;
    long want = dt ? strtol(dt, &end, 10) : 0;
    R->threads = dt && end != dt && *end == '\0' && want >= 1 && want <= 64 ? (int)want : 0;
    if (dt && *dt && !R->threads)
        fprintf(stderr, "ballpit: BALLPIT_DRAW_THREADS=%.40s: not a number from 1 to 64; "
                        "the drawing takes the cores the engine leaves\n", dt);
    R->cores = SDL_GetCPUCount();
    R->band_min = 65536;
    snprintf(R->mode, sizeof R->mode, "%s", R->pixels ? "pixels" : "geometry");
    return 0;
}

void bp_render_free(bp_render *R)
{
    for (int i = 0; i < BP_CIRCLE_LEVELS; i++)
        if (R->circle[i])
            SDL_DestroyTexture(R->circle[i]);
    if (R->line)
        SDL_DestroyTexture(R->line);
    if (R->px_tex)
        SDL_DestroyTexture(R->px_tex);
    bp_splatter_free(&R->splatter);
    free(R->xy);
    free(R->uv);
    free(R->col);
    free(R->idx);
    free(R->lxy);
    free(R->luv);
    free(R->lcol);
    free(R->lidx);
    memset(R, 0, sizeof *R);
}

/* Grows a quad batch to n quads; fills the constant uv and index parts. */
static int grow_batch(float **xy, float **uv, SDL_Color **col, int **idx,
                      uint32_t *cap, uint32_t n)
{
    if (n <= *cap)
        return 0;
    uint32_t c = n + n / 2 + 64;
    if (c > (uint32_t)(INT32_MAX / 8))
        return -1;
    float *a = realloc(*xy, (size_t)c * 8 * sizeof *a);
    if (!a)
        return -1;
    *xy = a;
    float *b = realloc(*uv, (size_t)c * 8 * sizeof *b);
    if (!b)
        return -1;
    *uv = b;
    SDL_Color *d = realloc(*col, (size_t)c * 4 * sizeof *d);
    if (!d)
        return -1;
    *col = d;
    int *e = realloc(*idx, (size_t)c * 6 * sizeof *e);
    if (!e)
        return -1;
    *idx = e;
    for (uint32_t i = 0; i < c; i++) {
        float *u = *uv + 8 * (size_t)i;
        u[0] = 0; u[1] = 0; u[2] = 1; u[3] = 0;
        u[4] = 1; u[5] = 1; u[6] = 0; u[7] = 1;
        int *k = *idx + 6 * (size_t)i;
        int v = (int)(4 * i);
        k[0] = v; k[1] = v + 1; k[2] = v + 2;
        k[3] = v; k[4] = v + 2; k[5] = v + 3;
    }
    *cap = c;
    return 0;
}

static void set_color(SDL_Renderer *r, SDL_Color c)
{
    SDL_SetRenderDrawColor(r, c.r, c.g, c.b, c.a);
}

void bp_render_background(bp_render *R, const bp_view *v)
{
    set_color(R->r, bar_col);
    SDL_RenderClear(R->r);
    SDL_FRect box = { v->ox, v->oy, v->world_w * v->scale,
                      v->world_h * v->scale };
    set_color(R->r, world_col);
    SDL_RenderFillRectF(R->r, &box);
    SDL_FRect edge = { box.x - 1, box.y - 1, box.w + 2, box.h + 2 };
    set_color(R->r, frame_col);
    SDL_RenderDrawRectF(R->r, &edge);
}

/* Writes the quad of segment (a,b) (screen px), width w, at quad i. */
static void line_quad(bp_render *R, uint32_t i, float ax, float ay, float bx,
                      float by, float w, SDL_Color c)
{
    float dx = bx - ax, dy = by - ay;
    float len = sqrtf(dx * dx + dy * dy);
    float ux, uy;
    if (len > 1e-6f) {
        ux = dx / len;
        uy = dy / len;
    } else {
        ux = 1.0f; /* a dot: any direction */
        uy = 0.0f;
    }
    /* Half width of the quad: the line core plus one px of soft edge; the
     * ends are pushed out by the same amount so joints look closed. */
    float h = w * 0.5f + 1.0f;
    float nx = -uy * h, ny = ux * h;
    float ex = ux * h * 0.5f, ey = uy * h * 0.5f;
    float *p = R->lxy + 8 * (size_t)i;
    p[0] = ax - ex + nx; p[1] = ay - ey + ny;
    p[2] = ax - ex - nx; p[3] = ay - ey - ny;
    p[4] = bx + ex - nx; p[5] = by + ey - ny;
    p[6] = bx + ex + nx; p[7] = by + ey + ny;
    SDL_Color *k = R->lcol + 4 * (size_t)i;
    k[0] = k[1] = k[2] = k[3] = c;
}

static int draw_lines(bp_render *R, const bp_view *v, const float *seg,
                      uint32_t n, int polyline, float width, SDL_Color c)
{
    uint32_t nq = polyline ? (n > 1 ? n - 1 : 0) : n;
    if (nq == 0)
        return 0;
    if (grow_batch(&R->lxy, &R->luv, &R->lcol, &R->lidx, &R->lcap, nq))
        return -1;
    for (uint32_t i = 0; i < nq; i++) {
        const float *s = polyline ? seg + 2 * (size_t)i : seg + 4 * (size_t)i;
        float ax, ay, bx, by;
        bp_view_to_screen(v, s[0], s[1], &ax, &ay);
        bp_view_to_screen(v, s[2], s[3], &bx, &by);
        line_quad(R, i, ax, ay, bx, by, width, c);
    }
    /* The line texture is one texel tall: u runs across the line. Corners
     * 0 and 3 lie on one side (u = 0), corners 1 and 2 on the other. */
    for (uint32_t i = 0; i < nq; i++) {
        float *u = R->luv + 8 * (size_t)i;
        u[0] = 0; u[1] = 0.5f; u[2] = 1; u[3] = 0.5f;
        u[4] = 1; u[5] = 0.5f; u[6] = 0; u[7] = 0.5f;
    }
    return SDL_RenderGeometryRaw(R->r, R->line, R->lxy, 2 * sizeof(float),
                                 R->lcol, sizeof(SDL_Color), R->luv,
                                 2 * sizeof(float), (int)(4 * nq), R->lidx,
                                 (int)(6 * nq), sizeof(int));
}

void bp_render_polyline(bp_render *R, const bp_view *v, const float *pts,
                        uint32_t n, float width, SDL_Color c)
{
    draw_lines(R, v, pts, n, 1, width, c);
}

void bp_render_ring(bp_render *R, const bp_view *v, float x, float y,
                    float radius, SDL_Color c)
{
    enum { N = 48 };
    SDL_FPoint p[N + 1];
    float sx, sy;
    bp_view_to_screen(v, x, y, &sx, &sy);
    float sr = radius * v->scale;
    for (int i = 0; i <= N; i++) {
        float a = (float)i * 6.2831853f / N;
        p[i].x = sx + sr * cosf(a);
        p[i].y = sy + sr * sinf(a);
    }
    set_color(R->r, c);
    SDL_SetRenderDrawBlendMode(R->r, SDL_BLENDMODE_BLEND);
    SDL_RenderDrawLinesF(R->r, p, N + 1);
}

/* Picks the circle texture closest to (not below) the typical on-screen
 * diameter, sampled from the balls (cheap, and the mix rarely matters). */
static SDL_Texture *pick_circle(bp_render *R, const bp_snap *s, float scale)
{
    float sum = 0.0f;
    uint32_t step = s->count / 64 + 1, k = 0;
    for (uint32_t i = 0; i < s->count; i += step, k++)
        sum += s->r[i];
    float d = k ? 2.0f * sum / (float)k * scale : 8.0f;
    int lvl = 0;
    while (lvl < BP_CIRCLE_LEVELS - 1 && (float)(8 << lvl) < d)
        lvl++;
    return R->circle[lvl];
}

/* d holds what `want` asks for: the same picture (not 0: drawn every
 * time), scale and offset. */
static int holds(const bp_drawn *d, const bp_drawn *want)
{
    return want->picture != 0 && want->picture == d->picture && want->sc == d->sc &&
           want->ox == d->ox && want->oy == d->oy;
}

/* Balls splatted into a streaming texture covering the world box on
 * screen, then one copy. */
static int draw_pixels(bp_render *R, const bp_view *v, const bp_snap *s,
                       char *err, size_t errlen)
{
    int x0 = (int)floorf(v->ox), y0 = (int)floorf(v->oy);
    int tw = (int)ceilf(v->ox + v->world_w * v->scale) - x0;
    int th = (int)ceilf(v->oy + v->world_h * v->scale) - y0;
    if (tw <= 0 || th <= 0)
        return 0;
    if (!R->px_tex || R->px_w != tw || R->px_h != th) {
        if (R->px_tex)
            SDL_DestroyTexture(R->px_tex);
        R->px_tex = SDL_CreateTexture(R->r, SDL_PIXELFORMAT_ARGB8888,
                                      SDL_TEXTUREACCESS_STREAMING, tw, th);
        if (!R->px_tex) {
            snprintf(err, errlen, "ball texture %dx%d: %s", tw, th,
                     SDL_GetError());
            return -1;
        }
        R->px_w = tw;
        R->px_h = th;
        R->px.picture = 0;
    }
    const float sc = v->scale, ox = v->ox - (float)x0, oy = v->oy - (float)y0;
    /* The balls the texture already holds, drawn the same way (the engine
     * slower than the frames, so the renderer is handed the same snapshot
     * again, or a paused world republished): the texture is copied as it
     * is, and the splatting's milliseconds stay with the engine, whose
     * threads share the cores (docs/benchmarks.md, "Drawing"). The logic
     * thread numbers its pictures from 1; 0 (the draw bench's) is drawn
     * every time. */
    const bp_drawn want = {s->picture, sc, ox, oy};
    if (!holds(&R->px, &want)) {
        void *pixels;
        int pitch;
        if (SDL_LockTexture(R->px_tex, NULL, &pixels, &pitch) != 0) {
            snprintf(err, errlen, "SDL_LockTexture: %s", SDL_GetError());
            return -1;
        }
        uint32_t *buf = pixels;
        int stride = pitch / 4;
        const uint32_t bg = 0xff000000u | (uint32_t)world_col.r << 16 |
                            (uint32_t)world_col.g << 8 | world_col.b;
        int t = bp_render_threads(R->cores, s->engine_cores, R->threads);
        if (t > 1 && s->count >= R->band_min && R->prepared == 0)
            R->prepared = bp_splatter_prepare(&R->splatter) == 0 ? 1 : -1;
        if (s->count < R->band_min || R->prepared < 0 || t > th)
            t = 1;
        /* Bands of rows, one a thread, each drawing every ball that
         * reaches it, in order, clipped to its rows: the picture one
         * thread draws (tests/unit, bands_draw_the_same_picture). The
         * masks are built beforehand, so the threads only read them. */
#ifdef _OPENMP
#pragma omp parallel for num_threads(t) schedule(static, 1) if (t > 1)
#endif
        for (int b = 0; b < t; b++) {
            int ya = (int)((int64_t)th * b / t), yb = (int)((int64_t)th * (b + 1) / t);
            bp_splat_clear(buf + (size_t)ya * (size_t)stride, tw, yb - ya, stride, bg);
            const float lo = (float)ya, hi = (float)yb;
            for (uint32_t i = 0; i < s->count; i++) {
                float cy = oy + s->y[i] * sc, rr = s->r[i] * sc;
                float m = (rr > 0.75f ? rr : 0.75f) + 3.0f; /* past the disc's rows */
                if (t > 1 && (cy + m < lo || cy - m >= hi))
                    continue;
                bp_rgb c = R->pal[bp_speed_index(s->speed[i])];
                bp_splatter_disc_rows(&R->splatter, buf, tw, th, stride, ya, yb,
                                      ox + s->x[i] * sc, cy, rr,
                                      (uint32_t)c.r << 16 | (uint32_t)c.g << 8 | c.b);
            }
        }
        SDL_UnlockTexture(R->px_tex);
        R->px = want;
    }
    SDL_Rect dst = { x0, y0, tw, th };
    if (SDL_RenderCopy(R->r, R->px_tex, NULL, &dst) != 0) {
        snprintf(err, errlen, "drawing balls: %s", SDL_GetError());
        return -1;
    }
    return 0;
}

/* Lines of the snapshot, width scaled with the view but kept visible. */
static int snapshot_lines(bp_render *R, const bp_view *v, const bp_snap *s,
                          char *err, size_t errlen)
{
    float lw = 2.0f * v->scale;
    lw = lw < 1.5f ? 1.5f : lw > 4.0f ? 4.0f : lw;
    if (draw_lines(R, v, s->lines, s->nlines, 0, lw, line_col) != 0) {
        snprintf(err, errlen, "drawing lines: %s", SDL_GetError());
        return -1;
    }
    return 0;
}

static double ms_since(Uint64 t0)
{
    return (double)(SDL_GetPerformanceCounter() - t0) * 1000.0 /
           (double)SDL_GetPerformanceFrequency();
}

int bp_render_snapshot(bp_render *R, const bp_view *v, const bp_snap *s,
                       char *err, size_t errlen)
{
    uint32_t n = s->count;
    Uint64 t0 = SDL_GetPerformanceCounter();
    if (R->pixels) {
        /* The ball texture is opaque over the world box: lines go on top. */
        int rc = n ? draw_pixels(R, v, s, err, errlen) : 0;
        R->draw_ms = ms_since(t0);
        if (rc != 0) {
            /* The streaming texture failed: use geometry from now on. */
            R->pixels = 0;
            snprintf(R->mode, sizeof R->mode, "geometry");
            return -1;
        }
        return snapshot_lines(R, v, s, err, errlen);
    }
    if (snapshot_lines(R, v, s, err, errlen) != 0)
        return -1;
    t0 = SDL_GetPerformanceCounter();
    if (n == 0) {
        R->draw_ms = 0.0;
        return 0;
    }
    if (grow_batch(&R->xy, &R->uv, &R->col, &R->idx, &R->cap, n)) {
        snprintf(err, errlen, "out of memory drawing %u balls", n);
        return -1;
    }
    const float sc = v->scale, ox = v->ox, oy = v->oy;
    /* The batch already built from this picture in this view (holds, as
     * the pixels mode's texture): submitted as it is. */
    const bp_drawn want = {s->picture, sc, ox, oy};
    const int built = holds(&R->geo, &want);
    R->geo = want;
    /* each ball's vertices its own: split between the pixels mode's
     * threads (render.h) where there are as many balls as it splits for */
    const int t = n >= R->band_min ? bp_render_threads(R->cores, s->engine_cores, R->threads) : 1;
    const int64_t from = built ? (int64_t)n : 0;
#ifdef _OPENMP
#pragma omp parallel for num_threads(t) schedule(static) if (t > 1)
#endif
    for (int64_t j = from; j < (int64_t)n; j++) {
        const size_t i = (size_t)j;
        float cx = ox + s->x[i] * sc, cy = oy + s->y[i] * sc;
        /* Never thinner than a pixel, or tiny balls would flicker away. */
        float rr = s->r[i] * sc;
        rr = rr < 0.75f ? 0.75f : rr;
        float *p = R->xy + 8 * i;
        p[0] = cx - rr; p[1] = cy - rr;
        p[2] = cx + rr; p[3] = cy - rr;
        p[4] = cx + rr; p[5] = cy + rr;
        p[6] = cx - rr; p[7] = cy + rr;
        bp_rgb c = R->pal[bp_speed_index(s->speed[i])];
        SDL_Color k = { c.r, c.g, c.b, 255 };
        SDL_Color *q = R->col + 4 * i;
        q[0] = q[1] = q[2] = q[3] = k;
    }
    int rc = SDL_RenderGeometryRaw(R->r, pick_circle(R, s, sc), R->xy,
                                   2 * sizeof(float), R->col,
                                   sizeof(SDL_Color), R->uv, 2 * sizeof(float),
                                   (int)(4 * n), R->idx, (int)(6 * n),
                                   sizeof(int));
    R->draw_ms = ms_since(t0);
    if (rc != 0) {
        snprintf(err, errlen, "drawing balls: %s", SDL_GetError());
        return -1;
    }
    return 0;
}

/* hud.c - cached TTF text, panels and the help overlay (see hud.h). */
#include "hud.h"

#include <stdio.h>
#include <string.h>

#include "help.h"

static const SDL_Color text_col = { 225, 230, 240, 255 };
static const SDL_Color key_col = { 250, 205, 90, 255 };

int bp_hud_init(bp_hud *h, SDL_Renderer *r, const char *path, int px,
                char *err, size_t errlen)
{
    memset(h, 0, sizeof *h);
    h->r = r;
    h->font = TTF_OpenFont(path, px);
    if (!h->font) {
        snprintf(err, errlen, "%s: %s", path, TTF_GetError());
        return -1;
    }
    h->bold = TTF_OpenFont(path, px);
    if (h->bold)
        TTF_SetFontStyle(h->bold, TTF_STYLE_BOLD);
    h->line_h = TTF_FontLineSkip(h->font);
    return 0;
}

void bp_hud_free(bp_hud *h)
{
    for (int i = 0; i < BP_HUD_SLOTS; i++)
        if (h->slot[i].t)
            SDL_DestroyTexture(h->slot[i].t);
    if (h->bold)
        TTF_CloseFont(h->bold);
    if (h->font)
        TTF_CloseFont(h->font);
    memset(h, 0, sizeof *h);
}

int bp_hud_ready(const bp_hud *h)
{
    return h->font != NULL;
}

/* Returns the slot's texture for text s in colour c, re-rendered only when
 * the text changed; NULL for empty text or a rendering failure. */
static bp_text *text(bp_hud *h, int slot, const char *s, SDL_Color c,
                     int bold)
{
    if (slot < 0 || slot >= BP_HUD_SLOTS || !h->font)
        return NULL;
    bp_text *t = &h->slot[slot];
    char key[sizeof t->s];
    /* The colour is part of the cache key. */
    snprintf(key, sizeof key, "%02x%02x%02x%d%s", c.r, c.g, c.b, bold, s);
    if (t->t && strcmp(t->s, key) == 0)
        return t;
    if (t->t)
        SDL_DestroyTexture(t->t);
    t->t = NULL;
    snprintf(t->s, sizeof t->s, "%s", key);
    if (!s[0])
        return NULL;
    TTF_Font *f = bold && h->bold ? h->bold : h->font;
    SDL_Surface *surf = TTF_RenderUTF8_Blended(f, s, c);
    if (!surf)
        return NULL;
    t->t = SDL_CreateTextureFromSurface(h->r, surf);
#if SDL_VERSION_ATLEAST(2, 0, 12)
    if (t->t) /* smooth when the help is scaled down (same pixels at 1:1) */
        SDL_SetTextureScaleMode(t->t, SDL_ScaleModeLinear);
#endif
    t->w = surf->w;
    t->h = surf->h;
    SDL_FreeSurface(surf);
    return t->t ? t : NULL;
}

static void blit(bp_hud *h, bp_text *t, int x, int y)
{
    if (!t)
        return;
    SDL_Rect d = { x, y, t->w, t->h };
    SDL_RenderCopy(h->r, t->t, NULL, &d);
}

static void panel(bp_hud *h, int x, int y, int w, int ht, Uint8 alpha)
{
    SDL_SetRenderDrawBlendMode(h->r, SDL_BLENDMODE_BLEND);
    SDL_SetRenderDrawColor(h->r, 6, 8, 12, alpha);
    SDL_Rect r = { x, y, w, ht };
    SDL_RenderFillRect(h->r, &r);
    SDL_SetRenderDrawColor(h->r, 70, 80, 100, alpha);
    SDL_RenderDrawRect(h->r, &r);
}

/* The scale at which a w x ht box fits in maxw x maxh: 1 when it does
 * already, else smaller, but not below smin. */
static float fit(int w, int ht, int maxw, int maxh, float smin)
{
    if (w <= maxw && ht <= maxh)
        return 1.0f;
    float fw = (float)maxw / (float)w, fh = (float)maxh / (float)ht;
    float s = fw < fh ? fw : fh;
    return s > smin ? s : smin;
}

/* Text drawn at scale s (the renderer's scale in force, times s) from
 * here to unscale, which restores it from *sx, *sy. The panels are
 * drawn at the scale in force, their sizes multiplied by s: a one-pixel
 * border drawn at a fractional scale can fall between pixels. */
static void scale_on(bp_hud *h, float s, float *sx, float *sy)
{
    SDL_RenderGetScale(h->r, sx, sy);
    if (s != 1.0f)
        SDL_RenderSetScale(h->r, *sx * s, *sy * s);
}

static void unscale(bp_hud *h, float s, float sx, float sy)
{
    if (s != 1.0f)
        SDL_RenderSetScale(h->r, sx, sy);
}

static int scaled(int v, float s)
{
    return (int)((float)v * s + 0.5f);
}

int bp_hud_panel(bp_hud *h, int first, const char *const *lines, int n,
                 int x, int y, int win_w, int win_h)
{
    if (!h->font || n <= 0)
        return 0;
    bp_text *t[BP_HUD_SLOTS];
    int w = 0;
    for (int i = 0; i < n && first + i < BP_HUD_SLOTS; i++) {
        t[i] = text(h, first + i, lines[i], text_col, 0);
        if (t[i] && t[i]->w > w)
            w = t[i]->w;
    }
    int pad = 8, ht = n * h->line_h + 2 * pad - 2;
    /* In a small window the panel is scaled down to the window's width
     * and to two fifths of its height (the text no smaller than half
     * size), so it does not hide the scene. */
    float s = fit(w + 2 * pad, ht, win_w - 2 * x, win_h * 2 / 5, 0.5f), sx, sy;
    panel(h, x, y, scaled(w + 2 * pad, s), scaled(ht, s), 170);
    scale_on(h, s, &sx, &sy);
    for (int i = 0; i < n && first + i < BP_HUD_SLOTS; i++)
        blit(h, t[i], (int)((float)x / s) + pad, (int)((float)y / s) + pad + i * h->line_h);
    unscale(h, s, sx, sy);
    return scaled(ht, s);
}

void bp_hud_message(bp_hud *h, int slot, const char *s, int win_w, int win_h,
                    SDL_Color c)
{
    if (!h->font || !s[0])
        return;
    /* A long path or error keeps its start and its end on screen. */
    char cut[200];
    size_t n = strlen(s);
    if (n >= sizeof cut) {
        snprintf(cut, sizeof cut, "%.90s ... %s", s, s + n - 90);
        s = cut;
    }
    bp_text *t = text(h, slot, s, c, 0);
    if (!t)
        return;
    /* As wide as the window at most (the text no smaller than half size). */
    int pad = 8, w = t->w + 2 * pad, ht = t->h + 2 * pad;
    float sc = fit(w, ht, win_w - 20, win_h, 0.5f), sx, sy;
    int x = 10, y = win_h - 10 - scaled(ht, sc);
    panel(h, x, y, scaled(w, sc), scaled(ht, sc), 190);
    scale_on(h, sc, &sx, &sy);
    blit(h, t, (int)((float)x / sc) + pad, (int)((float)y / sc) + pad);
    unscale(h, sc, sx, sy);
}

void bp_hud_help(bp_hud *h, int first, int win_w, int win_h)
{
    if (!h->font)
        return;
    int n = BP_HELP_ROWS;
    if (first + 2 * n + 1 > BP_HUD_SLOTS)
        n = (BP_HUD_SLOTS - first - 1) / 2;
    bp_text *title = text(h, first, "ballpit - mouse and keys", key_col, 1);
    int kw = 0, ww = 0;
    bp_text *k[BP_HELP_ROWS], *d[BP_HELP_ROWS];
    for (int i = 0; i < n; i++) {
        k[i] = text(h, first + 1 + 2 * i, bp_help_rows[i].keys, key_col, 1);
        d[i] = text(h, first + 2 + 2 * i, bp_help_rows[i].what, text_col, 0);
        if (k[i] && k[i]->w > kw)
            kw = k[i]->w;
        if (d[i] && d[i]->w > ww)
            ww = d[i]->w;
    }
    int pad = 18, gap = 24, lh = h->line_h + 2;
    int w = kw + gap + ww + 2 * pad;
    int ht = (n + 1) * lh + 2 * pad + 6;
    /* A window too small for the table gets it scaled down to fit, whole. */
    float s = fit(w, ht, win_w - 8, win_h - 8, 0.2f), sx, sy;
    int x = (win_w - scaled(w, s)) / 2, y = (win_h - scaled(ht, s)) / 2;
    if (x < 0)
        x = 0;
    if (y < 0)
        y = 0;
    panel(h, x, y, scaled(w, s), scaled(ht, s), 225);
    scale_on(h, s, &sx, &sy);
    int tx = (int)((float)x / s) + pad, ty = (int)((float)y / s) + pad;
    blit(h, title, tx, ty);
    for (int i = 0; i < n; i++) {
        int ry = ty + 6 + (i + 1) * lh;
        blit(h, k[i], tx, ry);
        blit(h, d[i], tx + kw + gap, ry);
    }
    unscale(h, s, sx, sy);
}

/* hud.h - text on screen with SDL2_ttf: the status panel, the message
 * line and the help overlay.
 *
 * Each text slot caches its texture and re-renders only when its string
 * changes, so a steady HUD costs a few texture copies per frame. Without
 * a font (none found or --font unusable) every call is a no-op.
 */
#ifndef BP_HUD_H
#define BP_HUD_H

#include <SDL.h>
#include <SDL_ttf.h>

/* Cached text lines: the status panel, the message, the help overlay (a
 * title and two a row). */
#define BP_HUD_SLOTS 64

typedef struct bp_text {
    char s[600];      ///< cache key: colour, style and the text
    SDL_Texture *t;
    int w, h;
} bp_text;

typedef struct bp_hud {
    SDL_Renderer *r;
    TTF_Font *font;
    TTF_Font *bold;
    int line_h;
    bp_text slot[BP_HUD_SLOTS];
} bp_hud;

/// Opens the font at path (px tall). Returns 0, or -1 with a reason (the
/// HUD then stays empty but usable).
int bp_hud_init(bp_hud *h, SDL_Renderer *r, const char *path, int px,
                char *err, size_t errlen);
/// Closes the fonts and frees the cached text textures.
void bp_hud_free(bp_hud *h);
/// 1 when text can be drawn.
int bp_hud_ready(const bp_hud *h);
/// Draws lines[0..n) in a translucent panel at (x,y) using slots
/// [first, first+n), scaled down in a window too small for it. Returns
/// the panel's height on screen.
int bp_hud_panel(bp_hud *h, int first, const char *const *lines, int n,
                 int x, int y, int win_w, int win_h);
/// One line in a panel anchored to the bottom-left corner, using slot
/// `slot`; colour c; scaled down to the window's width when wider.
void bp_hud_message(bp_hud *h, int slot, const char *text, int win_w, int win_h,
                    SDL_Color c);
/// The key reference, centred, using slots from `first` on.
void bp_hud_help(bp_hud *h, int first, int win_w, int win_h);

#endif

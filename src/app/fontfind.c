/* fontfind.c - HUD font search (see fontfind.h). */
#include "fontfind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const candidates[] = {
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/liberation-sans/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/Library/Fonts/Arial.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
};

static int usable(const char *p, const char *skip)
{
    return p[0] && (!skip || strcmp(p, skip) != 0) && access(p, R_OK) == 0;
}

int bp_font_find(const char *skip, char *out, size_t outlen)
{
    /* BALLPIT_FONT_SEARCH=0: only --font counts (tests of the no-font
     * path on machines that do have fonts). */
    const char *search = getenv("BALLPIT_FONT_SEARCH");
    if (search && strcmp(search, "0") == 0)
        return -1;
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        if (usable(candidates[i], skip)) {
            snprintf(out, outlen, "%s", candidates[i]);
            return 0;
        }
    }
    /* fontconfig knows distributions we do not; it may be absent. */
    if (access("/usr/bin/fc-match", X_OK) != 0 &&
        access("/usr/local/bin/fc-match", X_OK) != 0)
        return -1;
    FILE *p = popen("fc-match -f '%{file}' 'sans-serif:style=Regular' "
                    "2>/dev/null", "r");
    if (!p)
        return -1;
    char buf[1024] = "";
    size_t n = fread(buf, 1, sizeof buf - 1, p);
    buf[n] = '\0';
    pclose(p);
    buf[strcspn(buf, "\r\n")] = '\0';
    /* SDL2_ttf reads TrueType/OpenType, not bitmap (.pcf) fonts. */
    size_t l = strlen(buf);
    if (l < 4 || (strcmp(buf + l - 4, ".ttf") && strcmp(buf + l - 4, ".otf") &&
                  strcmp(buf + l - 4, ".ttc")))
        return -1;
    if (!usable(buf, skip))
        return -1;
    snprintf(out, outlen, "%s", buf);
    return 0;
}

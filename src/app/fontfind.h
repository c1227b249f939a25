/* fontfind.h - finds a TrueType font for the HUD at run time.
 *
 * Order: --font PATH; then well-known paths (Debian/Ubuntu fonts-dejavu-core
 * first, then Fedora, Arch, macOS); then `fc-match` when installed. No font
 * is not an error: the sandbox runs without a HUD and says so once.
 * BALLPIT_FONT_SEARCH=0 in the environment turns the search off (tests).
 */
#ifndef BP_FONTFIND_H
#define BP_FONTFIND_H

#include <stddef.h>

/// Writes the path of a readable font file into out and returns 0, or
/// returns -1 when none was found. `skip` (may be NULL) is a path already
/// tried and found unusable.
int bp_font_find(const char *skip, char *out, size_t outlen);

#endif

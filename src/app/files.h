/* files.h - the folders and file names the sandbox writes to.
 *
 * Defaults (documented in docs/user-guide.md):
 *   screenshots: $XDG_PICTURES_DIR/ballpit, else ~/Pictures/ballpit,
 *                else ./screenshots            (--screenshot-dir overrides)
 *   Ctrl+S/O:    $XDG_DATA_HOME/ballpit/saved.scene, else
 *                ~/.local/share/ballpit/saved.scene, else ./ballpit-saved.scene
 *                                              (--save-to overrides)
 * No SDL here; tests/unit checks naming and folder creation.
 */
#ifndef BP_FILES_H
#define BP_FILES_H

#include <stddef.h>
#include <time.h>

/// Creates dir and its missing parents (mode 0755). Returns 0, or -1 with
/// "dir: reason" in err (e.g. a parent is a file, permission denied).
int bp_mkdir_p(const char *dir, char *err, size_t errlen);

/// Picks a new screenshot name in dir for time t:
/// dir/ballpit-YYYYMMDD-HHMMSS.png, or ...-2.png, -3.png when taken. The
/// name is reserved by creating an empty file (O_EXCL), so two shots in the
/// same second never clash; the PNG writer then replaces it. Creates dir
/// when missing. Returns 0, or -1 with a reason.
int bp_shot_reserve(const char *dir, time_t t, char *out, size_t outlen,
                    char *err, size_t errlen);

/// Default screenshot folder (see above) into out.
void bp_default_shot_dir(char *out, size_t outlen);
/// Default save/load path for Ctrl+S / Ctrl+O into out.
void bp_default_save_path(char *out, size_t outlen);
/// The folder part of path ("." when none) into out.
void bp_dirname(const char *path, char *out, size_t outlen);

/// Writes len bytes to path through a temporary file and rename, so a
/// reader sees the old or the new content, never half. Returns 0 or -1.
int bp_write_atomic(const char *path, const void *data, size_t len,
                    char *err, size_t errlen);

#endif

/* scene_io.h - atomic file writing, shared by scene saves, dumps and the
 * bench's JSON output (implemented in scene.c).
 *
 * Why a helper: every file ballpit writes is replaced atomically, so a full
 * disk, a missing folder or a crash in the middle never leaves a truncated
 * file where a good one used to be.
 */
#ifndef BP_SCENE_IO_H
#define BP_SCENE_IO_H

#include <stddef.h>
#include <stdio.h>

/// Fills an open stream; returns 0, or -1 (errno set, or ferror(f) set).
typedef int (*bp_file_filler)(FILE *f, void *ctx);

/// Writes `path` atomically: fill() writes into a temporary file in the same
/// folder, which is flushed, fsync'ed and renamed over `path`. On any
/// failure the temporary file is removed, an old `path` is left untouched,
/// and -1 comes back with "PATH: what failed: why" in err. Returns 0 on
/// success. The new file keeps the old file's permission bits (else 0644).
int bp_file_write_atomic(const char *path, bp_file_filler fill, void *ctx,
                         char *err, size_t errlen);

/// Whether bp_file_write_atomic can write `path` as things stand: a
/// temporary file is created beside it and removed (a pipe or device must
/// be writable). Returns 0, or -1 with the message the write would give, so
/// a long run learns of a bad output path before it starts, not after.
int bp_file_check_writable(const char *path, char *err, size_t errlen);

#endif

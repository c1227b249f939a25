/* undo.h - undo/redo of line edits (draw, erase, clear lines).
 *
 * Each entry remembers the segments an edit added or removed, by their
 * coordinates (indices shift when lines are removed, coordinates do not).
 * Undoing an "added" entry removes those segments from the world again;
 * undoing a "removed" entry puts them back. A new edit drops the redo tail.
 * Entries of one eraser drag share a group id and merge into one undo step.
 * Works on a bp_world, no SDL; the logic thread is its only user.
 */
#ifndef BP_UNDO_H
#define BP_UNDO_H

#include <stdint.h>

#include "ballpit.h"

typedef enum bp_undo_kind {
    BP_UNDO_ADDED = 1,
    BP_UNDO_REMOVED = 2,
} bp_undo_kind;

typedef struct bp_undo_entry {
    bp_undo_kind kind;
    uint32_t group;   ///< nonzero: merge with the previous entry of this group
    uint32_t n;       ///< number of segments
    float *seg;       ///< 4 floats per segment: x1,y1,x2,y2
} bp_undo_entry;

/// Most undo steps kept; the oldest are forgotten beyond it.
#define BP_UNDO_MAX 256u

typedef struct bp_undo {
    bp_undo_entry e[BP_UNDO_MAX];
    uint32_t len;     ///< entries recorded (undo + redo part)
    uint32_t pos;     ///< entries [0,pos) can be undone, [pos,len) redone
} bp_undo;

/// Empty history.
void bp_undo_init(bp_undo *u);
/// Forgets every step (frees their segments).
void bp_undo_free(bp_undo *u);
/// Records an edit of n segments (copied). Drops the redo tail. Returns 0
/// or -1 when out of memory (the history is then cleared, never wrong).
int bp_undo_record(bp_undo *u, bp_undo_kind kind, const float *seg,
                   uint32_t n, uint32_t group);
/// Undoes the newest step on w. Returns 1 when something was undone,
/// 0 when there is nothing to undo, -1 when w refused a line (full).
int bp_undo_undo(bp_undo *u, bp_world *w);
/// Redoes the next step on w; same returns as bp_undo_undo.
int bp_undo_redo(bp_undo *u, bp_world *w);
/// Number of steps that can be undone.
uint32_t bp_undo_depth(const bp_undo *u);
/// Number of steps that can be redone.
uint32_t bp_undo_redo_depth(const bp_undo *u);

/// Removes from w the newest segment equal to (x1,y1,x2,y2) (either
/// direction). Returns 1 when found, 0 when not.
int bp_lines_remove_equal(bp_world *w, float x1, float y1, float x2, float y2);

#endif

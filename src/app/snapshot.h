/* snapshot.h - what the logic thread hands the renderer each frame.
 *
 * A triple buffer: the logic thread fills its private back slot, then
 * publishes it with one atomic exchange; the renderer takes the newest
 * published slot with one atomic exchange. Neither side ever waits for the
 * other (no lock), a slot is never written while it is being drawn, and a
 * renderer that is slower than the simulation simply skips snapshots.
 * No SDL in here (C11 atomics), so tests/unit can hammer it from threads.
 */
#ifndef BP_SNAPSHOT_H
#define BP_SNAPSHOT_H

#include <stdatomic.h>
#include <stdint.h>

#include "ballpit.h"

/// One published frame: ball positions, radii and speeds, the lines, and
/// the logic thread's status for the HUD.
typedef struct bp_snap {
    uint32_t count, capacity;      ///< balls
    float *x, *y, *r, *speed;      ///< px, px, px, px/s
    uint32_t nlines, lines_capacity;
    float *lines;                  ///< x1,y1,x2,y2 per line, px
    float world_w, world_h;        ///< the world box, px
    uint64_t frame;                ///< world frames stepped so far
    uint64_t seq;                  ///< publish counter (1, 2, ...)
    uint64_t picture;              ///< the balls' version (1, 2, ...): the same
                                   ///< in two snapshots, the same balls; 0 = unknown
    double sim_time;               ///< simulated seconds so far
    double step_ms;                ///< wall ms of the last frame's step
    double rtf;                    ///< simulated s per wall s, last second
    int paused, gravity, slowmo;
    uint32_t substeps;             ///< sub-steps per frame (the world's)
    int backend;                   ///< bp_backend of the running engine
    int engine_cores;              ///< host cores its steps keep busy
    int starting;                  ///< an OpenCL engine is being made meanwhile
    char engine[16];               ///< "cpu" / "opencl"
    char device[128];
    char scene[128];               ///< scene name for the window title
    uint64_t msg_seq;              ///< bumped when msg changes
    char msg[320];                 ///< last status/error line from logic
    char engine_error[256];        ///< why the last switch failed, or ""
    uint32_t undo_depth, redo_depth;
} bp_snap;

/// Copies the balls and lines of w into s (growing its arrays) and sets
/// the world fields; the status fields are left to the caller.
/// Returns 0, or -1 when out of memory (s keeps its old contents).
int bp_snap_fill(bp_snap *s, const bp_world *w);
/// Frees the arrays of one snapshot and zeroes it.
void bp_snap_free(bp_snap *s);

/// Triple buffer of snapshots.
typedef struct bp_snapbuf {
    bp_snap slot[3];
    int back;              ///< writer's slot (writer thread only)
    int front;             ///< reader's slot (reader thread only)
    atomic_int middle;     ///< published slot index | BP_SNAP_NEW
    atomic_ullong published; ///< number of publishes so far
} bp_snapbuf;

#define BP_SNAP_NEW 4

/// Sets up three empty slots.
void bp_snapbuf_init(bp_snapbuf *b);
/// Frees the three slots (no thread may use b any more).
void bp_snapbuf_free(bp_snapbuf *b);
/// Writer: the slot to fill next (owned by the writer until publish).
bp_snap *bp_snapbuf_back(bp_snapbuf *b);
/// Writer: publishes the back slot (stamping seq) and takes a fresh one.
void bp_snapbuf_publish(bp_snapbuf *b);
/// Reader: the newest published snapshot (owned by the reader until the
/// next call), or NULL before the first publish. *fresh (may be NULL) is
/// set to 1 when this is a snapshot the reader has not seen before.
const bp_snap *bp_snapbuf_acquire(bp_snapbuf *b, int *fresh);

#endif

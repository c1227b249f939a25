/* cmdq.h - the edit commands the main thread sends to the logic thread.
 *
 * The main thread turns mouse and key input into bp_cmd values and pushes
 * them; the logic thread pops them all between two frames and applies them
 * to the world it owns, so no edit ever lands in the middle of a sub-step.
 * The queue is a fixed ring (no allocation on push) and is NOT thread-safe by
 * itself: the app guards it with one SDL_mutex held only for the push or the
 * drain, never across a simulation step. No SDL in here, so tests/unit can
 * test it without a display.
 */
#ifndef BP_CMDQ_H
#define BP_CMDQ_H

#include <stddef.h>
#include <stdint.h>

typedef enum bp_cmd_kind {
    BP_CMD_NONE = 0,
    BP_CMD_ADD_LINES,     ///< polyline pts[0..npts) (npts >= 2), world px
    BP_CMD_ERASE,         ///< f[0..3] drag segment, f[4] radius; u = stroke id
    BP_CMD_UNDO,
    BP_CMD_REDO,
    BP_CMD_SPAWN,         ///< f = x, y, vx, vy, radius, spread; u = count
    BP_CMD_CLEAR_BALLS,
    BP_CMD_CLEAR_LINES,
    BP_CMD_RESET,         ///< back to the scene as loaded
    BP_CMD_LOAD,          ///< str = scene path
    BP_CMD_SAVE,          ///< str = scene path
    BP_CMD_ENGINE_TOGGLE, ///< CPU <-> OpenCL
    BP_CMD_PAUSE_TOGGLE,
    BP_CMD_STEP_ONE,      ///< one frame while paused
    BP_CMD_GRAVITY_TOGGLE,
    BP_CMD_SLOWMO_TOGGLE,
    BP_CMD_SUBSTEPS,      ///< u = 1: twice the sub-steps per frame, 0: half
} bp_cmd_kind;

/// One edit. pts and str are heap memory owned by the command; bp_cmd_free
/// releases them (the consumer calls it after applying the command).
typedef struct bp_cmd {
    bp_cmd_kind kind;
    float f[6];
    uint32_t u;
    uint32_t npts;  ///< number of (x,y) points in pts
    float *pts;     ///< x0,y0,x1,y1,... or NULL
    char *str;      ///< path or NULL
} bp_cmd;

/// Releases the payload of c (not c itself) and zeroes it.
void bp_cmd_free(bp_cmd *c);
/// Short English name of a kind, e.g. "spawn" (for messages and tests).
const char *bp_cmd_name(bp_cmd_kind k);

/// Default ring size: at 33 fps a person cannot queue more edits per frame.
#define BP_CMDQ_DEFAULT_CAP 1024u

typedef struct bp_cmdq {
    bp_cmd *ring;
    uint32_t cap, head, len;
    uint64_t dropped;   ///< pushes refused because the ring was full
} bp_cmdq;

/// Allocates a ring of cap commands (0 = BP_CMDQ_DEFAULT_CAP). Returns 0 or
/// -1 when out of memory.
int bp_cmdq_init(bp_cmdq *q, uint32_t cap);
/// Frees the ring and the payload of every command still queued.
void bp_cmdq_free(bp_cmdq *q);
/// Moves *c into the queue (payload ownership included) and zeroes *c.
/// Returns 0, or -1 when the ring is full: then *c is left to the caller.
int bp_cmdq_push(bp_cmdq *q, bp_cmd *c);
/// Moves the oldest command into *out. Returns 1, or 0 when empty.
int bp_cmdq_pop(bp_cmdq *q, bp_cmd *out);
/// Number of queued commands.
uint32_t bp_cmdq_len(const bp_cmdq *q);

#endif

/* logic.h - the logic thread: owns the world and the engine.
 *
 * The main thread pushes bp_cmd edits (bp_logic_push) and ticks once per
 * rendered frame (bp_logic_tick). The logic thread, between two frames,
 * applies every queued edit (bp_engine_read, edit the world, then one
 * bp_engine_attach), steps one frame (params.substeps sub-steps; a quarter
 * of that in slow motion, none while paused), reads the state back and
 * publishes a snapshot into the triple buffer. Ticks that arrive while a
 * slow step is running coalesce into one: the picture keeps its rate and
 * the simulation runs slower than real time (the snapshot's rtf says how
 * much). The mutex guards only the queue and the tick flag and is never
 * held during a step, so the renderer never waits on the simulation.
 */
#ifndef BP_LOGIC_H
#define BP_LOGIC_H

#include <SDL.h>

#include "ballpit.h"
#include "cmdq.h"
#include "snapshot.h"
#include "undo.h"

typedef struct bp_logic {
    /* shared, guarded by lock */
    SDL_mutex *lock;
    SDL_cond *wake;       ///< tick or quit for the logic thread
    SDL_cond *done;       ///< a snapshot was published (lockstep mode)
    bp_cmdq q;
    int ticks, quit;
    /* shared, lock-free */
    bp_snapbuf snaps;
    SDL_Thread *thread;
    SDL_atomic_t stopping;  ///< set by bp_logic_stop: end a long step early
    int lockstep;           ///< never split a frame (reproducible runs)

    /* owned by the logic thread after start */
    bp_world *w;          ///< the running world
    bp_world *initial;    ///< the scene as loaded (R resets to it)
    bp_engine *e;
    bp_backend want;      ///< backend asked for on the command line
    bp_engine_opts opts;
    bp_undo undo;
    int paused, gravity, slowmo, step_once;
    float gx, gy;         ///< the scene's gravity (restored by V)
    uint64_t seed;
    double sim_time, step_ms, rtf;
    double substep_ms;    ///< measured wall ms per sub-step (0: unknown)
    double rtf_t0, rtf_sim0;
    char scene[128];
    char msg[320];
    uint64_t msg_seq;
    uint64_t picture;   ///< bumped when the balls may differ from the last publish
    char engine_error[256];
    /* G towards OpenCL: the new engine is made on a thread of its own
     * (building the OpenCL program takes seconds on PoCL) while the old
     * one keeps stepping; the logic thread hands the world over between
     * two frames once it is made. */
    SDL_Thread *maker;      ///< making it, or made and not yet joined
    SDL_atomic_t made;      ///< set by the maker when bp_engine_create returned
    bp_engine *fresh;       ///< what it made; NULL: failed, why in fresh_err
    char fresh_err[256];
    int make_delay_ms;      ///< tests: the maker waits this long first
    int lent;               ///< the CPU engine runs on a thread fewer meanwhile
} bp_logic;

/// Starts the logic thread on world w (taken over: the logic thread frees
/// it). backend is the engine to start with (on failure: CPU and a HUD
/// message). lockstep: never split a frame (see bp_logic.lockstep); set
/// here, before the thread starts, because the thread reads it at once.
/// Returns 0, or -1 with a reason (w is then freed too).
int bp_logic_start(bp_logic *L, bp_world *w, const char *scene_name,
                   bp_backend backend, const bp_engine_opts *opts, int lockstep,
                   char *err, size_t errlen);
/// Queues an edit (takes ownership of its payload). Returns 0, or -1 when
/// the queue is full (the payload is then freed).
int bp_logic_push(bp_logic *L, bp_cmd *c);
/// Asks for one more frame.
void bp_logic_tick(bp_logic *L);
/// Waits (at most timeout_ms) until at least `count` snapshots have been
/// published. Only for --screenshot-after, which wants every frame shown.
/// Returns 0, or -1 on timeout.
int bp_logic_wait_published(bp_logic *L, uint64_t count, int timeout_ms);
/// Stops and joins the thread, frees the world, engine and snapshots.
void bp_logic_stop(bp_logic *L);

#endif

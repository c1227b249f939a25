/* ballpit.h - the public engine API of ballpit.
 *
 * ballpit simulates thousands of balls (circles) in a rectangular box with
 * gravity and user-drawn line segments. This header is the only one the SDL
 * sandbox (src/app), the command line (src/main.c) and the tests include;
 * everything else in src/sim is private.
 *
 * Units: pixels and seconds, y grows downward, so gravity is +y.
 * A frame is 1/fps seconds, cut into `substeps` fixed sub-steps.
 *
 * Usage:
 *     bp_world *w = bp_world_create(NULL);                  // defaults
 *     bp_world_add_ball(w, 100, 100, 50, 0, 4, 0, NULL, 0); // m=0: pi*r^2
 *     bp_world_add_line(w, 0, 400, 600, 500, NULL, 0);
 *     char err[256];
 *     bp_engine *e = bp_engine_create(BP_BACKEND_CPU, NULL, err, sizeof err);
 *     bp_engine_attach(e, w, err, sizeof err);  // after every edit of w
 *     bp_engine_step(e, w, 10 * w->params.substeps, err, sizeof err);
 *     bp_engine_read(e, w, err, sizeof err);    // w holds the state
 *     bp_engine_destroy(e); bp_world_destroy(w);
 *
 * Ball ids are array indices in creation order and never change.
 */
#ifndef BALLPIT_H
#define BALLPIT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BP_VERSION "0.1.0"

/* ---- Limits (docs/reliability.md says where each comes from) ---------- */
/// Most balls in one world: 4 Mi balls need ~256 MiB of engine state.
#define BP_MAX_BALLS 4194304u
/// Most line segments in one world.
#define BP_MAX_LINES 65536u
/// Ball radius range in px.
#define BP_MIN_RADIUS 0.5f
#define BP_MAX_RADIUS 200.0f
/// World box side range in px.
#define BP_MIN_WORLD 16.0f
#define BP_MAX_WORLD 65536.0f
/// Speed cap range in px/s (default BP_DEFAULT_SPEED_CAP).
#define BP_DEFAULT_SPEED_CAP 20000.0f
#define BP_MAX_SPEED_CAP 100000.0f
/// Frame rate and sub-step ranges.
#define BP_MAX_FPS 1000.0f
#define BP_MAX_SUBSTEPS 1000
/// Largest |coordinate|, |velocity| or mass accepted anywhere.
#define BP_MAX_ABS_VALUE 1.0e7f

/* ---- World ------------------------------------------------------------ */

/// Scene-wide parameters. A zeroed struct passed to bp_world_create means
/// the defaults: 1280x720 box, gravity (0,900), e=0.9, 33 fps, 30 sub-steps,
/// speed cap 20000 px/s. Use bp_params_default() to get them filled in.
typedef struct bp_params {
    float width, height;       ///< world box [0,width] x [0,height], px
    float gravity_x, gravity_y;///< px/s^2, default (0, 900)
    float restitution;         ///< 0..1, default 0.9
    float fps;                 ///< frames per simulated second, default 33
    int substeps;              ///< sub-steps per frame, default 30
    float speed_cap;           ///< no ball moves faster, px/s, default 20000
} bp_params;

/// The world: structure-of-arrays ball state plus static line segments.
/// Fields are read-only for users except through the functions below.
typedef struct bp_world {
    bp_params params;
    uint32_t count;            ///< number of balls
    uint32_t capacity;         ///< allocated ball slots
    float *x, *y, *vx, *vy;    ///< centre px, velocity px/s
    float *r, *m;              ///< radius px, mass (default pi*r^2)
    uint8_t *contacts;         ///< balls each touched in the last sub-step: the
                               ///< engines' mass splitting (docs/physics.md), kept
                               ///< here so a switch or an attach loses none; 0 for
                               ///< a new ball
    uint32_t nlines;           ///< number of line segments
    uint32_t lines_capacity;
    float *lx1, *ly1, *lx2, *ly2; ///< segment end points px
    uint32_t lines_version;    ///< bumped whenever lines change
    uint32_t balls_version;    ///< bumped whenever balls are added/removed
    uint64_t frames;           ///< frames stepped so far
    uint64_t substeps_done;    ///< sub-steps stepped so far
    uint32_t *id;              ///< id (creation order) of the ball in each slot;
                               ///< NULL while every slot holds its own id. The
                               ///< engines re-sort large worlds' balls by place
                               ///< (docs/architecture.md, "Ball order"); the dump
                               ///< CSV and saved scenes list balls by id
} bp_world;

/// Fills in the default parameters.
bp_params bp_params_default(void);
/// Replaces width, height, fps, substeps, speed_cap <= 0 by their defaults
/// (gravity and restitution are taken as given: 0 is valid for both).
void bp_params_fill_defaults(bp_params *p);
/// Checks parameters; returns 0 or writes a one-line reason into err.
int bp_params_check(const bp_params *p, char *err, size_t errlen);

/// Creates an empty world. p NULL means all defaults; otherwise *p is taken
/// as given except that width, height, fps, substeps or speed_cap <= 0 mean
/// their default. Returns NULL only when out of memory.
bp_world *bp_world_create(const bp_params *p);
void bp_world_destroy(bp_world *w);
/// Deep copy (for snapshots / reset).
bp_world *bp_world_clone(const bp_world *w);
/// Copies src into an existing dst, reusing its memory. Returns 0 or -1 (OOM).
int bp_world_copy(bp_world *dst, const bp_world *src);

/// Adds a ball; m <= 0 means pi*r^2. Returns the new id, or -1 with a reason
/// in err (NULL allowed) when a value is non-finite, the radius is out of
/// range, the centre is outside the box, or BP_MAX_BALLS is reached.
int64_t bp_world_add_ball(bp_world *w, float x, float y, float vx, float vy,
                          float r, float m, char *err, size_t errlen);
/// Adds up to count balls of radius r scattered deterministically in a disc
/// of radius spread around (cx,cy) (same seed -> same balls), all with
/// velocity (vx,vy). Balls whose centre would leave the box are placed at
/// the nearest point inside. Clipped at BP_MAX_BALLS: returns how many were
/// added (and a message in err when clipped), -1 on bad values.
int64_t bp_world_add_swarm(bp_world *w, float cx, float cy, uint32_t count,
                           float r, float spread, float vx, float vy,
                           uint64_t seed, char *err, size_t errlen);
/// As bp_world_add_swarm (the same draws), but a ball whose centre would
/// leave the box is mirrored back in across the bound it crossed (then put
/// at the nearest point inside, for a disc wider than the box), instead of
/// every such ball landing on the bound itself, one on another. For swarms
/// that bp_world_settle gives room next: a scene's `settle` swarms.
int64_t bp_world_add_swarm_folded(bp_world *w, float cx, float cy, uint32_t count, float r,
                                  float spread, float vx, float vy, uint64_t seed, char *err,
                                  size_t errlen);
/// Finds room for balls first..count-1 (the ones just added: a swarm):
/// taken in id order, a ball closer than the resting contact's skin (0.06
/// of the smaller radius) to a ball placed before it (an older ball, which
/// never moves, or a new one) or to a line moves out of any wider ball it
/// lies in, then to the nearest free spot inside the box on rings around
/// there, up to 64 radii away; it stays where it is when there is none, or
/// when the looks run out (300 a ball, at least 4 million and at most 100
/// million in all).
/// Positions only, velocities as they were, so a dense swarm does not
/// burst apart when it starts moving (src/sim/settle.c). With drop set, the
/// new balls left without room are taken out of the world (the others keep
/// their order) instead of left overlapping. Returns how many new balls
/// had no room (taken out when dropping), or -1 with a reason in err (out
/// of memory: the balls are then as they were).
int64_t bp_world_settle(bp_world *w, uint32_t first, int drop, char *err, size_t errlen);
/// Adds a segment (zero length allowed: it acts as a point). Returns its
/// index or -1 with a reason (non-finite, BP_MAX_LINES reached).
int64_t bp_world_add_line(bp_world *w, float x1, float y1, float x2, float y2,
                          char *err, size_t errlen);
/// Removes segment i (later segments shift down by one).
void bp_world_remove_line(bp_world *w, uint32_t i);
void bp_world_clear_balls(bp_world *w);
void bp_world_clear_lines(bp_world *w);

/* ---- Measurements ----------------------------------------------------- */

typedef struct bp_stats {
    double kinetic_energy;     ///< sum m*v^2/2
    double momentum_x, momentum_y;
    uint32_t escaped;          ///< balls whose centre is outside the box
    double max_overlap;        ///< max (ri+rj-dij)/min(ri,rj), 0 if none
    double rms_speed;          ///< sqrt(mean v^2)
    double max_speed;
    uint32_t nonfinite;        ///< balls with NaN/inf anywhere (must be 0)
} bp_stats;

/// Computes the measurements of w (max_overlap with a grid, O(n)).
void bp_world_measure(const bp_world *w, bp_stats *out);
/// Writes the dump CSV `id,x,y,vx,vy,r,m` (one row per ball, id order) to f.
int bp_world_write_csv(const bp_world *w, FILE *f);

/* ---- Scene files (docs/scene-format.md) ------------------------------- */

/// Loads a scene file into a new world. On error returns NULL and writes
/// "FILE:LINE: what is wrong" into err.
bp_world *bp_scene_load(const char *path, char *err, size_t errlen);
/// Same, from a memory buffer; name is used in messages.
bp_world *bp_scene_parse(const char *text, size_t len, const char *name,
                         char *err, size_t errlen);
/// Saves w atomically (temp file in the same folder, fsync, rename): a
/// failed save leaves any old file untouched. Returns 0 or -1 with reason.
int bp_scene_save(const bp_world *w, const char *path, char *err, size_t errlen);

/* ---- Engines ------------------------------------------------------------ */

typedef enum bp_backend {
    BP_BACKEND_CPU = 0,
    BP_BACKEND_OPENCL = 1,
} bp_backend;

/// Engine options; a zeroed struct (or NULL) means defaults.
typedef struct bp_engine_opts {
    int threads;               ///< CPU threads, 0 = all cores
    int device;                ///< OpenCL device index as --list-devices shows
    int device_set;            ///< nonzero: use `device`; zero: GPU first, else any
    int sort_by_place;         ///< nonzero: bp_engine_step re-sorts the balls
                               ///< by place every 128 sub-steps (1,024 from
                               ///< 262,144 balls) (faster; the slots then no longer are
                               ///< the ids: see bp_world.id). Zero keeps creation order
} bp_engine_opts;

typedef struct bp_engine bp_engine;

/// Creates an engine. Returns NULL with a one-line reason in err when the
/// backend cannot run (e.g. no OpenCL device); the caller stays on its old one.
bp_engine *bp_engine_create(bp_backend kind, const bp_engine_opts *opts,
                            char *err, size_t errlen);
void bp_engine_destroy(bp_engine *e);
/// Hands the whole world (balls, lines, params) to the engine. Call after
/// creating the engine and after every edit of the world.
int bp_engine_attach(bp_engine *e, bp_world *w, char *err, size_t errlen);
/// Advances n sub-steps. w must be the attached world. Returns 0, or -1
/// with a reason when the engine failed (the world keeps its last good
/// state after bp_engine_read).
int bp_engine_step(bp_engine *e, bp_world *w, uint32_t n, char *err, size_t errlen);
/// Makes w hold the engine's current state (no-op on the CPU).
int bp_engine_read(bp_engine *e, bp_world *w, char *err, size_t errlen);
bp_backend bp_engine_kind(const bp_engine *e);
/// "cpu" or "opencl".
const char *bp_engine_name(const bp_engine *e);
/// Device in use, e.g. "2 threads" or the OpenCL device name.
const char *bp_engine_device(const bp_engine *e);
int bp_engine_threads(const bp_engine *e);
/// How many of the host's cores a step keeps busy: the CPU engine's
/// threads; an OpenCL CPU device's compute units (PoCL), 0 on a GPU. The
/// sandbox gives the drawing the cores left over.
int bp_engine_host_cores(const bp_engine *e);
/// Moves the running world from *e to engine n (made by bp_engine_create,
/// perhaps on another thread while *e ran) without losing or changing a
/// ball: *e's state read into w, n attached to it, *e destroyed and
/// replaced by n. On failure n is destroyed, *e is untouched, -1 and a
/// reason.
int bp_engine_adopt(bp_engine **e, bp_engine *n, bp_world *w, char *err, size_t errlen);
/// Moves the running world from *e to a new engine of kind `to` without
/// losing or changing a ball. On failure *e is untouched, -1 and a reason.
int bp_engine_switch(bp_engine **e, bp_backend to, const bp_engine_opts *opts,
                     bp_world *w, char *err, size_t errlen);

/// Per-phase wall time of the last bp_engine_step, seconds (for the bench):
/// the whole call's, a re-sort by place in it counted in the grid phase.
typedef struct bp_phase_times {
    double integrate, grid, ball_contacts, static_contacts, readback;
} bp_phase_times;
void bp_engine_phase_times(const bp_engine *e, bp_phase_times *out);
/// Bytes the engine holds for the attached world besides the world's own
/// arrays: its scratch and broad phase (host memory for the CPU engine,
/// device buffers for OpenCL), as allocated. 0 before the first attach.
size_t bp_engine_memory(const bp_engine *e);

/// Lists OpenCL devices ("N: platform / device (type)") to f. Returns the
/// number of devices, or -1 with a reason when OpenCL is unusable.
int bp_opencl_list_devices(FILE *f, char *err, size_t errlen);
/// 1 when this binary was built with OpenCL support.
int bp_opencl_built(void);
/// Sets the environment defaults ballpit wants from OpenCL drivers
/// (POCL_AFFINITY=1, unless set: docs/opencl.md). The OpenCL engine does
/// it when it first loads OpenCL; a program with threads calls it first
/// thing in main, as setenv must not race with other threads' getenv.
void bp_opencl_prepare(void);

#endif

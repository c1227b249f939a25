/* step.h - private: what both engines compute on the host before stepping.
 *
 * bp_step_setup fills the pass parameters (kernels/bp_physics.h) from the
 * world; bp_seggrid_build builds the static segment grid, which only
 * changes when the lines do (world->lines_version).
 */
#ifndef BP_STEP_H
#define BP_STEP_H

#include "ballpit.h"
#include "bp_physics.h"

/* Resting-contact solver constants (docs/physics.md, "Resting contact"). */
#define BP_BETA 0.5f           /* share of a predicted overlap removed per sub-step */
#define BP_REST_TIME 0.1f      /* rest_speed = |g| * BP_REST_TIME */
#ifndef BP_SPRING_WH
#define BP_SPRING_WH 0.8f      /* resting spring: angular frequency * sub-step */
#define BP_SPRING_ZETA 0.25f   /* resting spring: damping ratio of a lone pair (BP_DAMP_SPLIT) */
#endif
#define BP_SKIN 0.05f          /* resting spring engages this share of a radius early */
#ifndef BP_FRICTION
#define BP_FRICTION 0.02f      /* resting contacts: share of the sliding speed removed per sub-step */
#endif
#define BP_SPRING_RANGE 0.25f  /* deeper overlap (share of a radius): displacement */

/* The ball grid's size: at most this many cells per ball (4 bytes each, on
 * top of the CPU engine's 58 bytes per ball and the ids' 4 of a world
 * sorted by place: 63.2 in all, plus the segment grid), or this many in a
 * world of few balls (docs/benchmarks.md, "Memory"). */
#define BP_GRID_CELLS_PER_BALL 0.3
#define BP_GRID_MIN_CELLS 2048u

/* bp_seggrid.gap where no cell of the grid holds a segment. */
#define BP_SEG_GAP_MAX 0x7fffffffu

typedef struct bp_seggrid {
    uint32_t *start;  /* ncells + 1 offsets into list */
    uint32_t *list;   /* segment indices, ascending within each cell */
    uint32_t *gap;    /* per cell: chessboard distance in cells to the nearest
                       * cell with a segment (0 there; BP_SEG_GAP_MAX when none
                       * is nearer), so a box of cells within that distance of
                       * the cell holds no segment */
    uint32_t ncells, nlist;
    uint32_t cap_cells, cap_list;
    float cell;
    int gw, gh;
} bp_seggrid;

/* Ball grid geometry and the physics constants for world w. Engines call
 * it when a world is attached (not per step), so both engines use the very
 * same grid for the same world. */
void bp_step_setup(const bp_world *w, const bp_seggrid *sg, bp_step_params *P);
/* The speed the ball grid's cells are sized for: the fastest ball now or a
 * free fall across the box, whichever is faster (px/s). */
float bp_world_speed_hint(const bp_world *w);
/* Largest radius of the balls of w (0 when none). */
float bp_world_rmax(const bp_world *w);
/* (Re)builds the segment grid; returns 0 or -1 when out of memory. */
int bp_seggrid_build(bp_seggrid *sg, const bp_world *w);
void bp_seggrid_free(bp_seggrid *sg);

#endif

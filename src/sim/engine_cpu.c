/* engine_cpu.c - the plain-C engine: the passes of kernels/bp_physics.h in
 * loops over blocks of balls in SIMD lanes (cpu_blocks.h; or one ball at a
 * time, BALLPIT_CPU_LANES=1), spread over the cores with OpenMP.
 *
 * Every loop writes only its own balls' slots and reads what earlier loops
 * wrote, so the answer is the same bits for any thread count and lane
 * width. The grid build is a serial counting sort (ties in ball-index
 * order). The block passes of all the sub-steps of a call run in one
 * OpenMP team.
 */
#include "engine_impl.h"
#include "step.h"
#include "cpu_blocks.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct cpu_engine {
    bp_engine base;
    uint32_t cap;           /* ball slots of the scratch arrays */
    float *nvx, *nvy, *cpx, *cpy;
    uint32_t *cell, *sorted;
    float *spos;            /* x, y of sorted[k] at 2k, 2k + 1 (the grid's order) */
    int32_t *best;          /* shares cell's block: cell is dead once the grid is built */
    uint8_t *ncontact;      /* this sub-step's contact counts (last one's: w->contacts) */
    uint32_t *cell_start;   /* ncells + 1 */
    uint32_t cell_cap;
    bp_seggrid sg;
    bp_step_params P;       /* set at attach: grid and constants */
    const bp_block_passes *blocks; /* passes 1, 3-5 in blocks (cpu_blocks.c), or NULL */
} cpu_engine;

/* Grows one scratch array; on failure the old block stays valid. */
static int grow(void **p, size_t bytes)
{
    void *n = realloc(*p, bytes);
    if (!n)
        return -1;
    *p = n;
    return 0;
}

static int cpu_reserve(cpu_engine *c, uint32_t n)
{
    if (n <= c->cap && c->sorted) /* allocated even for no balls: attach clears the slack */
        return 0;
    /* The first world's size exactly; 25% more when a world grows (a
     * sandbox pouring balls does not reallocate every frame). */
    size_t cap = c->sorted ? (size_t)n + n / 4 : n, f = sizeof(float);
    cap = cap < 1024 ? 1024 : cap;
    if (grow((void **)&c->nvx, cap * f) || grow((void **)&c->nvy, cap * f) ||
        grow((void **)&c->cpx, cap * f) || grow((void **)&c->cpy, cap * f) ||
        grow((void **)&c->cell, cap * 4) ||
        grow((void **)&c->sorted, (cap + BP_SCREEN_PAD) * 4) ||
        grow((void **)&c->spos, (cap + BP_SCREEN_PAD) * 2 * f) ||
        grow((void **)&c->ncontact, cap))
        return -1;
    c->best = (int32_t *)c->cell;
    c->cap = (uint32_t)cap;
    return 0;
}

static int cpu_attach(bp_engine *e, bp_world *w, char *err, size_t errlen)
{
    cpu_engine *c = (cpu_engine *)e;
    if (cpu_reserve(c, w->count))
        return bp_fail(err, errlen, "cpu engine: out of memory for %u balls", w->count);
    if (bp_seggrid_build(&c->sg, w))
        return bp_fail(err, errlen, "cpu engine: out of memory for the segment grid");
    bp_step_setup(w, &c->sg, &c->P);
    /* What the screening reads past the last ball is masked off, but is
     * defined (valgrind, and no NaN in a lane). */
    memset(c->sorted + w->count, 0, BP_SCREEN_PAD * sizeof *c->sorted);
    memset(c->spos + 2 * (size_t)w->count, 0, 2 * BP_SCREEN_PAD * sizeof *c->spos);
    uint32_t ncells = (uint32_t)(c->P.gw * c->P.gh);
    if (ncells + 1 > c->cell_cap) {
        uint32_t *s = realloc(c->cell_start, (ncells + 1) * sizeof *s);
        if (!s)
            return bp_fail(err, errlen, "cpu engine: out of memory for %u grid cells", ncells);
        c->cell_start = s;
        c->cell_cap = ncells + 1;
    }
    /* 4 float arrays, cell (best), ncontact; sorted and spos with their pad */
    c->base.bytes = (size_t)c->cap * (4 * sizeof(float) + 4 + 1) +
                    ((size_t)c->cap + BP_SCREEN_PAD) * (4 + 2 * sizeof(float)) +
                    (size_t)c->cell_cap * 4 + ((size_t)c->sg.cap_cells + c->sg.cap_list) * 4;
    return 0;
}

/* One past the last ball of block b of a world of n balls. */
static inline uint32_t block_end(int b, int n)
{
    uint32_t e = ((uint32_t)b + 1u) * BP_BLOCK;
    return e < (uint32_t)n ? e : (uint32_t)n;
}

static int cpu_step(bp_engine *e, bp_world *w, uint32_t nsub, char *err, size_t errlen)
{
    cpu_engine *c = (cpu_engine *)e;
    if (w->count != c->P.n || w->nlines != c->P.nlines || w->count > c->cap)
        return bp_fail(err, errlen, "cpu engine: the world changed without bp_engine_attach");
    const bp_step_params P = c->P;
    uint32_t ncells = (uint32_t)(P.gw * P.gh);
    const int n = (int)w->count;
    const int nt = c->base.threads;
    float *x = w->x, *y = w->y, *vx = w->vx, *vy = w->vy, *r = w->r, *m = w->m;
    const float *lx1 = w->lx1, *ly1 = w->ly1, *lx2 = w->lx2, *ly2 = w->ly2;
    const uint32_t *seg_start = c->sg.start, *seg_list = c->sg.list;
    bp_phase_times T = {0};
    (void)nt;
    const bp_block_passes *B = c->blocks;
    bp_block_arrays A = {x, y, vx, vy, r, m, w->contacts, c->cell_start, c->sorted, c->spos,
                         c->best, c->ncontact, c->nvx, c->nvy, c->cpx, c->cpy, lx1, ly1,
                         lx2, ly2, seg_start, seg_list};
    const int nb = (n + (int)BP_BLOCK - 1) / (int)BP_BLOCK;
    if (B) {
        /* One team for all the sub-steps: each pass a worksharing loop
         * (its end the barrier the next pass needs), the grid build one
         * thread's, so the threads are started once per call, not five
         * times per sub-step. */
        float v2max = 0.0f;
        double t0 = 0.0, t1 = 0.0, t2 = 0.0, t3 = 0.0;
#pragma omp parallel num_threads(nt)
        for (uint32_t s = 0; s < nsub; s++) {
#pragma omp single
            {
                t0 = bp_now();
                v2max = 0.0f;
            }
#pragma omp for schedule(static) reduction(max : v2max)
            for (int b = 0; b < nb; b++)
                v2max = B->integrate(&P, &A, c->cell, (uint32_t)b * BP_BLOCK, block_end(b, n),
                                     v2max);
#pragma omp single
            {
                t1 = bp_now();
                bp_grid_build((uint32_t)n, ncells, c->cell, c->cell_start, c->sorted);
            }
#pragma omp for schedule(static)
            for (int k = 0; k < n; k++)
                bp_grid_position((bp_u32)k, c->sorted, x, y, c->spos);
            float vmax = sqrtf(v2max);
#pragma omp single
            t2 = bp_now();
#pragma omp for schedule(dynamic, 1)
            for (int b = 0; b < nb; b++)
                B->contacts(&P, &A, vmax, (uint32_t)b * BP_BLOCK, block_end(b, n));
#pragma omp for schedule(static)
            for (int b = 0; b < nb; b++)
                B->resolve(&P, &A, (uint32_t)b * BP_BLOCK, block_end(b, n));
#pragma omp single
            t3 = bp_now();
#pragma omp for schedule(dynamic, 1)
            for (int b = 0; b < nb; b++)
                B->move(&P, &A, (uint32_t)b * BP_BLOCK, block_end(b, n));
#pragma omp single
            {
                double t4 = bp_now();
                T.integrate += t1 - t0;
                T.grid += t2 - t1;
                T.ball_contacts += t3 - t2;
                T.static_contacts += t4 - t3;
            }
        }
    } else {
        /* one ball at a time (BALLPIT_CPU_LANES=1) */
        for (uint32_t s = 0; s < nsub; s++) {
            double t0 = bp_now();
            float v2max = 0.0f;
#pragma omp parallel for schedule(static) num_threads(nt) reduction(max : v2max)
            for (int i = 0; i < n; i++) {
                float v2 = bp_integrate((bp_u32)i, &P, vx, vy);
                if (v2 > v2max)
                    v2max = v2;
                c->cell[i] = bp_cell_of(&P, x[i], y[i]);
            }
            double t1 = bp_now();
            bp_grid_build((uint32_t)n, ncells, c->cell, c->cell_start, c->sorted);
#pragma omp parallel for schedule(static) num_threads(nt)
            for (int k = 0; k < n; k++)
                bp_grid_position((bp_u32)k, c->sorted, x, y, c->spos);
            float vmax = sqrtf(v2max);
            double t2 = bp_now();
#pragma omp parallel for schedule(dynamic, 512) num_threads(nt)
            for (int i = 0; i < n; i++)
                bp_contacts((bp_u32)i, &P, vmax, x, y, vx, vy, r, m, w->contacts,
                            c->cell_start, c->sorted, c->spos, c->ncontact, c->best, c->nvx,
                            c->nvy, c->cpx, c->cpy);
#pragma omp parallel for schedule(static) num_threads(nt)
            for (int i = 0; i < n; i++)
                bp_resolve((bp_u32)i, &P, x, y, vx, vy, r, m, w->contacts, c->best, c->nvx,
                           c->nvy, c->cpx, c->cpy);
            double t3 = bp_now();
#pragma omp parallel for schedule(dynamic, 512) num_threads(nt)
            for (int i = 0; i < n; i++) {
                bp_move_static((bp_u32)i, &P, x, y, vx, vy, c->nvx, c->nvy, c->cpx, c->cpy, r,
                               lx1, ly1, lx2, ly2, seg_start, seg_list);
                w->contacts[i] = c->ncontact[i];
            }
            double t4 = bp_now();
            T.integrate += t1 - t0;
            T.grid += t2 - t1;
            T.ball_contacts += t3 - t2;
            T.static_contacts += t4 - t3;
        }
    }
    c->base.times = T;
    w->substeps_done += nsub;
    w->frames = w->substeps_done / (uint64_t)w->params.substeps;
    return 0;
}

static int cpu_read(bp_engine *e, bp_world *w, char *err, size_t errlen)
{
    (void)e; (void)w; (void)err; (void)errlen;
    return 0; /* the CPU engine works in the world's own arrays */
}

static void cpu_destroy(bp_engine *e)
{
    cpu_engine *c = (cpu_engine *)e;
    free(c->nvx); free(c->nvy); free(c->cpx); free(c->cpy);
    free(c->cell); free(c->sorted); free(c->spos); free(c->cell_start);
    free(c->ncontact);
    bp_seggrid_free(&c->sg);
    free(c);
}

static const bp_engine_ops cpu_ops = {
    .name = "cpu", .attach = cpu_attach, .step = cpu_step, .read = cpu_read, .destroy = cpu_destroy,
};

bp_engine *bp_cpu_engine_create(const bp_engine_opts *opts, char *err, size_t errlen)
{
    cpu_engine *c = calloc(1, sizeof *c);
    if (!c) {
        bp_fail(err, errlen, "cpu engine: out of memory");
        return NULL;
    }
    c->base.ops = &cpu_ops;
    c->base.kind = BP_BACKEND_CPU;
    int cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1)
        cores = 1;
    int t = opts && opts->threads > 0 ? opts->threads : cores;
#ifndef _OPENMP
    t = 1; /* built without OpenMP: one thread */
#endif
    c->base.threads = t;
    /* Passes 1 and 3-5 in blocks of balls, 16 lanes wide where the
     * processor has AVX-512 (x86-64-v4), 8 with AVX2 (x86-64-v3), else 4
     * (cpu_blocks.h). BALLPIT_CPU_LANES picks: 1 runs them one ball at a
     * time (bp_integrate, bp_contacts, bp_resolve, bp_move_static, as the
     * OpenCL kernels on GPUs do), 4, 8 or 16 those widths: for A/B runs,
     * and for the test that all give the same bits. */
    const char *lanes = getenv("BALLPIT_CPU_LANES");
    c->blocks = bp_blocks_best();
    if (lanes && *lanes) {
        if (strcmp(lanes, "1") == 0) {
            c->blocks = NULL;
        } else if (strcmp(lanes, "4") == 0 || strcmp(lanes, "8") == 0 ||
                   strcmp(lanes, "16") == 0) {
            c->blocks = bp_blocks_of_width(atoi(lanes));
            if (!c->blocks) {
                bp_fail(err, errlen, "BALLPIT_CPU_LANES=%s needs %s, which this processor or "
                                     "build lacks", lanes,
                        strcmp(lanes, "8") == 0 ? "AVX2 (x86-64-v3)" : "AVX-512 (x86-64-v4)");
                free(c);
                return NULL;
            }
        } else {
            bp_fail(err, errlen, "BALLPIT_CPU_LANES=%s is not 1, 4, 8 or 16", lanes);
            free(c);
            return NULL;
        }
    }
    snprintf(c->base.device, sizeof c->base.device, "%d thread%s, %d lane%s", t,
             t == 1 ? "" : "s", c->blocks ? c->blocks->lanes : 1, c->blocks ? "s" : "");
    return &c->base;
}

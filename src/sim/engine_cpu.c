/* engine_cpu.c - the plain-C engine: the passes of kernels/bp_physics.h in
 * loops over the balls, spread over the cores with OpenMP.
 *
 * Every loop writes only ball i's own slots and reads what earlier loops
 * wrote, so the answer is the same bits for any thread count. The grid
 * build is a serial counting sort (ties in ball-index order).
 */
#include "engine_impl.h"
#include "step.h"

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
    int blocks;             /* contact pass in blocks of balls (contacts_block) */
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


/* ---- Pass 3 on a block of balls: the pairs in full SIMD lanes ------------
 *
 * bp_contacts takes one ball at a time, so its groups of lanes hold that
 * ball's neighbours only: 1-2 of 4 lanes on the rain. Here the balls of a
 * block are screened as there, their pairs (i, j) appended to one list,
 * and the list is evaluated BP_LANES pairs at a time whatever ball they
 * belong to; then each pair is folded into its ball's sums in list order,
 * which is each ball's neighbour order. Each lane does what bp_contacts'
 * lane does, so the sums are its bits. */
#define CPU_PAIRS 256 /* the list is worked off when it holds this many */
#define CPU_BLOCK 512 /* balls per block (the OpenMP chunk) */

typedef struct pair_list {
    bp_u32 i[CPU_PAIRS + BP_LANES], j[CPU_PAIRS + BP_LANES];
    float t[CPU_PAIRS + BP_LANES], dvx[CPU_PAIRS + BP_LANES], dvy[CPU_PAIRS + BP_LANES];
    float px[CPU_PAIRS + BP_LANES], py[CPU_PAIRS + BP_LANES];
    bp_i32 close[CPU_PAIRS + BP_LANES], cand[CPU_PAIRS + BP_LANES], soft[CPU_PAIRS + BP_LANES];
    bp_u32 n;
} pair_list;

typedef struct step_arrays {
    const float *x, *y, *vx, *vy, *r, *m;
    const uint8_t *split;
} step_arrays;

/* The lanes of a mask as bits; for each such mask, how many lanes are on
 * and which they are, first to last (the rest repeat lane 0). */
static inline unsigned lane_mask(bp_vi m)
{
#if defined(__SSE__)
    return (unsigned)_mm_movemask_ps((__m128)m);
#else
    return (m[0] & 1u) | (m[1] & 2u) | (m[2] & 4u) | (m[3] & 8u);
#endif
}
static const uint8_t popc[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
static const uint8_t pick[16][4] = {
    {0, 0, 0, 0}, {0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {2, 0, 0, 0}, {0, 2, 0, 0},
    {1, 2, 0, 0}, {0, 1, 2, 0}, {3, 0, 0, 0}, {0, 3, 0, 0}, {1, 3, 0, 0}, {0, 1, 3, 0},
    {2, 3, 0, 0}, {0, 2, 3, 0}, {1, 2, 3, 0}, {0, 1, 2, 3}};

static void pairs_work_off(pair_list *L, const bp_step_params *P, const step_arrays *A,
                           bp_fold *st, bp_u32 i0)
{
    bp_u32 n = L->n;
    if (n == 0)
        return;
    for (bp_u32 k = n; k % BP_LANES; k++) { /* pad the last group with its first pair */
        L->i[k] = L->i[n - n % BP_LANES];
        L->j[k] = L->j[n - n % BP_LANES];
    }
    const float *x = A->x, *y = A->y, *vx = A->vx, *vy = A->vy, *r = A->r;
    for (bp_u32 p = 0; p < n; p += BP_LANES) {
        const bp_u32 *I = L->i + p, *J = L->j + p;
        bp_vpair v;
        float ni[BP_LANES];
        for (bp_u32 k = 0; k < BP_LANES; k++)
            ni[k] = bp_split_n(A->split[I[k]]);
        v.i = BP_VLOADU(I);
        v.xi = BP_VGATHER(x, I);
        v.yi = BP_VGATHER(y, I);
        v.ri = BP_VGATHER(r, I);
        v.mi = BP_VGATHER(A->m, I);
        v.ni = BP_VLOAD(ni);
        bp_vpair_with_j(&v, BP_VGATHER(vx, I), BP_VGATHER(vy, I), x, y, r, vx, vy, J);
        bp_vterms o;
        if (!bp_vpair_eval(P, &v, BP_LANE_IDS < BP_VUSPLAT(n - p), A->m, A->split, J, &o)) {
            bp_vf none = BP_VSPLAT(-1.0f);
            bp_vi zero = BP_VI0;
            BP_VSTORE(none, L->t + p);
            BP_VSTORE(zero, L->close + p);
            continue;
        }
        BP_VSTORE(o.t, L->t + p);
        BP_VSTORE(o.dvx, L->dvx + p);
        BP_VSTORE(o.dvy, L->dvy + p);
        BP_VSTORE(o.px, L->px + p);
        BP_VSTORE(o.py, L->py + p);
        BP_VSTORE(o.close, L->close + p);
        BP_VSTORE(o.cand, L->cand + p);
        BP_VSTORE(o.soft, L->soft + p);
    }
    for (bp_u32 p = 0; p < n; p++) {
        if (!L->close[p] && L->t[p] < 0.0f)
            continue;
        bp_push c;
        c.dvx = L->dvx[p];
        c.dvy = L->dvy[p];
        c.px = L->px[p];
        c.py = L->py[p];
        bp_fold_pair(st + (L->i[p] - i0), (bp_i32)L->j[p], L->t[p], L->close[p], L->cand[p],
                     L->soft[p], c);
    }
    L->n = 0;
}

static void contacts_block(const cpu_engine *c, const bp_step_params *P, const step_arrays *A,
                           float vmax, bp_u32 i0, bp_u32 i1, bp_i32 *best, float *sdvx,
                           float *sdvy, float *spx, float *spy)
{
    pair_list L;
    bp_fold st[CPU_BLOCK];
    L.n = 0;
    const bp_u32 *cell_start = c->cell_start, *sorted = c->sorted;
    const float *spos = c->spos;
    for (bp_u32 i = i0; i < i1; i++) {
        st[i - i0] = bp_fold_start();
        float xi = A->x[i], yi = A->y[i], vxi = A->vx[i], vyi = A->vy[i];
        float reach = bp_reach(P, A->r[i], sqrtf(vxi * vxi + vyi * vyi), vmax);
        float reach2 = reach * reach;
        bp_window win = bp_search_window(P, xi, yi, reach);
        for (bp_i32 gy = win.y0; gy <= win.y1; gy++) {
            bp_u32 row = (bp_u32)(gy * P->gw);
            bp_u32 k0 = cell_start[row + (bp_u32)win.x0], k1 = cell_start[row + (bp_u32)win.x1 + 1u];
            for (bp_u32 k = k0; k < k1; k += BP_LANES) {
                if (L.n > CPU_PAIRS - BP_LANES)
                    pairs_work_off(&L, P, A, st, i0);
                bp_vf px, py;
                BP_VLOAD_XY(spos + 2u * k, px, py);
                bp_vu jv = BP_VLOADU(sorted + k);
                bp_vf dx = px - xi, dy = py - yi;
                bp_vi in = (dx * dx + dy * dy <= reach2) &
                           (BP_VUSPLAT(k) + BP_LANE_IDS < BP_VUSPLAT(k1)) & (jv != BP_VUSPLAT(i));
                bp_u32 lj[BP_LANES];
                BP_VSTORE(jv, lj);
                unsigned mk = lane_mask(in);
                bp_u32 nn = L.n;
                bp_vu iv = BP_VUSPLAT(i);
                BP_VSTORE(iv, L.i + nn);
                L.j[nn] = lj[pick[mk][0]];
                L.j[nn + 1] = lj[pick[mk][1]];
                L.j[nn + 2] = lj[pick[mk][2]];
                L.j[nn + 3] = lj[pick[mk][3]];
                L.n = nn + popc[mk];
            }
        }
    }
    pairs_work_off(&L, P, A, st, i0);
    for (bp_u32 i = i0; i < i1; i++) {
        const bp_fold *f = st + (i - i0);
        best[i] = f->b;
        c->ncontact[i] = (bp_u8)(f->count < 255u ? f->count : 255u);
        sdvx[i] = f->acc.dvx;
        sdvy[i] = f->acc.dvy;
        spx[i] = f->acc.px;
        spy[i] = f->acc.py;
    }
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
        if (c->blocks) {
            step_arrays A = {x, y, vx, vy, r, m, w->contacts};
            int nb = (n + CPU_BLOCK - 1) / CPU_BLOCK;
#pragma omp parallel for schedule(dynamic, 1) num_threads(nt)
            for (int b = 0; b < nb; b++) {
                bp_u32 i0 = (bp_u32)b * CPU_BLOCK, i1 = i0 + CPU_BLOCK;
                contacts_block(c, &P, &A, vmax, i0, i1 < (bp_u32)n ? i1 : (bp_u32)n, c->best,
                               c->nvx, c->nvy, c->cpx, c->cpy);
            }
        } else {
#pragma omp parallel for schedule(dynamic, 512) num_threads(nt)
            for (int i = 0; i < n; i++)
                bp_contacts((bp_u32)i, &P, vmax, x, y, vx, vy, r, m, w->contacts, c->cell_start,
                            c->sorted, c->spos, c->ncontact, c->best, c->nvx, c->nvy, c->cpx,
                            c->cpy);
        }
#pragma omp parallel for schedule(static) num_threads(nt)
        for (int i = 0; i < n; i++)
            bp_resolve((bp_u32)i, &P, x, y, vx, vy, r, m, w->contacts, c->best, c->nvx, c->nvy,
                       c->cpx, c->cpy);
        double t3 = bp_now();
#pragma omp parallel for schedule(dynamic, 512) num_threads(nt)
        for (int i = 0; i < n; i++) {
            bp_move_static((bp_u32)i, &P, x, y, vx, vy, c->nvx, c->nvy, c->cpx, c->cpy, r, lx1,
                           ly1, lx2, ly2, seg_start, seg_list);
            w->contacts[i] = c->ncontact[i];
        }
        double t4 = bp_now();
        T.integrate += t1 - t0;
        T.grid += t2 - t1;
        T.ball_contacts += t3 - t2;
        T.static_contacts += t4 - t3;
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
    /* BALLPIT_CPU_CONTACTS=balls: the contact pass one ball at a time
     * (bp_contacts, as the OpenCL kernels run it), for A/B runs and the
     * test that both give the same bits; pairs (the default): in blocks. */
    const char *how = getenv("BALLPIT_CPU_CONTACTS");
    c->blocks = 1;
    if (how && *how) {
        if (strcmp(how, "pairs") != 0 && strcmp(how, "balls") != 0) {
            bp_fail(err, errlen, "BALLPIT_CPU_CONTACTS=%s is not pairs or balls", how);
            free(c);
            return NULL;
        }
        c->blocks = strcmp(how, "pairs") == 0;
    }
    snprintf(c->base.device, sizeof c->base.device, "%d thread%s", t, t == 1 ? "" : "s");
    return &c->base;
}

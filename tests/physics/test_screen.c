/* test_screen.c - bp_contacts' screening of the grid rows in SIMD lanes
 * finds the same neighbours, in the same order, as a ball-by-ball scan,
 * and misses none within the reach (kernels/bp_physics.h); the pick of a
 * range's ghosts by position misses none of them, and their block filled
 * from a list of slots is the contiguous fill's.
 *
 * bp_contacts screens each row run of the grid BP_LANES balls at a time
 * from spos (the positions in grid order), masks off the lanes past the
 * run's end (the arrays have BP_SCREEN_PAD slots of slack), and appends
 * the balls within reach to a list without a branch. Its results depend on
 * that list and its order, so here they are compared, bit for bit, with a
 * reference that scans every run one ball at a time (the screening as it
 * was before the lanes) and hands the same list to bp_contact_group; and
 * the reference's list is compared with a scan of all balls. Random worlds
 * with clusters (long runs), sparse parts (runs of 0-2), fast balls (a
 * reach over several cells), balls at the walls (clamped windows) and
 * unequal radii, with and without gravity; the slack after the arrays
 * holds real balls' data, so a lane that escaped its mask would show.
 */
#include "bp_physics.h"
#include "step.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng_state = 2468u;
/* bp_test_frand on this file's state */
static float frand(float lo, float hi)
{
    return bp_test_frand(&rng_state, lo, hi);
}

/* The grid and what the contact pass reads, for one world. */
typedef struct grid {
    bp_step_params P;
    uint32_t n, ncells;
    uint32_t *cell, *start, *sorted;
    float *spos, vmax;
} grid;

static int grid_build(bp_world *w, grid *g)
{
    bp_seggrid sg = {0};
    if (bp_seggrid_build(&sg, w))
        return -1;
    bp_step_setup(w, &sg, &g->P);
    bp_seggrid_free(&sg);
    g->n = w->count;
    g->ncells = (uint32_t)(g->P.gw * g->P.gh);
    g->cell = malloc(g->n * sizeof *g->cell);
    g->start = malloc((g->ncells + 1) * sizeof *g->start);
    g->sorted = malloc((g->n + BP_SCREEN_PAD) * sizeof *g->sorted);
    g->P.ystride = g->n + BP_SCREEN_PAD; /* the x plane, then the y plane */
    g->spos = malloc(2 * (g->n + BP_SCREEN_PAD) * sizeof *g->spos);
    if (!g->cell || !g->start || !g->sorted || !g->spos)
        return -1;
    float v2max = 0.0f;
    for (uint32_t i = 0; i < g->n; i++) {
        g->cell[i] = bp_cell_of(&g->P, w->x[i], w->y[i]);
        float v2 = w->vx[i] * w->vx[i] + w->vy[i] * w->vy[i];
        v2max = v2 > v2max ? v2 : v2max;
    }
    g->vmax = sqrtf(v2max);
    bp_grid_build(g->n, g->ncells, g->cell, g->start, g->sorted);
    for (uint32_t k = 0; k < g->n; k++)
        bp_grid_position(k, g->sorted, w->x, w->y, g->spos, g->P.ystride);
    /* The slack: the last balls of the grid order again, in reach of the
     * balls whose windows end there, so that a lane read past the last run
     * and not masked off would add them a second time. */
    for (uint32_t k = g->n; k < g->n + BP_SCREEN_PAD; k++) {
        uint32_t back = k - g->n + 1u;
        uint32_t j = g->sorted[g->n >= back ? g->n - back : 0u];
        g->sorted[k] = j;
        g->spos[k] = w->x[j];
        g->spos[g->P.ystride + k] = w->y[j];
    }
    return 0;
}

static void grid_free(grid *g)
{
    free(g->cell);
    free(g->start);
    free(g->sorted);
    free(g->spos);
}

/* What bp_contacts leaves for one ball. */
typedef struct result {
    int32_t best;
    uint8_t count;
    float dvx, dvy, px, py;
} result;

/* The reference: bp_contacts with every row run scanned one ball at a
 * time; the list (in[], returned count) also goes out for the check
 * against all balls. */
static uint32_t ref_contacts(uint32_t i, const bp_world *w, const grid *g, result *out,
                             uint32_t *in, uint32_t cap)
{
    const bp_step_params *P = &g->P;
    float xi = w->x[i], yi = w->y[i], vxi = w->vx[i], vyi = w->vy[i];
    bp_side si = bp_side_of(xi, yi, w->r[i], w->m[i], w->contacts[i]);
    float reach = bp_reach(P, w->r[i], sqrtf(vxi * vxi + vyi * vyi), g->vmax);
    float reach2 = reach * reach;
    bp_window win = bp_search_window(P, xi, yi, reach);
    uint32_t nn = 0;
    for (bp_i32 gy = win.y0; gy <= win.y1; gy++) {
        uint32_t row = (uint32_t)(gy * P->gw);
        uint32_t k0 = g->start[row + (uint32_t)win.x0];
        uint32_t k1 = g->start[row + (uint32_t)win.x1 + 1u];
        for (uint32_t k = k0; k < k1; k++) {
            uint32_t j = g->sorted[k];
            float dx = w->x[j] - xi, dy = w->y[j] - yi;
            if (dx * dx + dy * dy <= reach2 && j != i && nn < cap)
                in[nn++] = j;
        }
    }
    bp_fold f = bp_fold_start();
    for (uint32_t q = 0; q < nn; q += BP_LANES)
        bp_contact_group(i, P, w->x, w->y, w->vx, w->vy, w->r, w->m, w->contacts, si, vxi, vyi,
                         in + q, nn - q, &f);
    out->best = f.b;
    out->count = (uint8_t)(f.count < 255u ? f.count : 255u);
    out->dvx = f.acc.dvx;
    out->dvy = f.acc.dvy;
    out->px = f.acc.px;
    out->py = f.acc.py;
    return nn;
}

/* A world of n balls in a w x h box: clusters, a sparse rest, some fast
 * balls, some at the walls. */
static bp_world *random_world(uint32_t n, float wd, float ht, float gravity)
{
    bp_params p = bp_params_default();
    p.width = wd;
    p.height = ht;
    p.gravity_y = gravity;
    bp_world *w = bp_world_create(&p);
    if (!w)
        return NULL;
    float cx[4], cy[4];
    float sx = wd < 100.0f ? 0.3f * wd : 40.0f; /* cluster half-size in x */
    for (int c = 0; c < 4; c++) {
        cx[c] = frand(0.2f * wd, 0.8f * wd);
        cy[c] = frand(0.2f * ht, 0.8f * ht);
    }
    for (uint32_t k = 0; k < n; k++) {
        float r = frand(0.0f, 1.0f) < 0.8f ? 2.0f : frand(1.0f, 5.0f);
        float x, y, u = frand(0.0f, 1.0f);
        if (u < 0.6f) { /* in a cluster: dense runs */
            int c = (int)frand(0.0f, 3.999f);
            x = cx[c] + frand(-sx, sx);
            y = cy[c] + frand(-25.0f, 25.0f);
        } else if (u < 0.7f) { /* at a wall */
            x = frand(0.0f, 1.0f) < 0.5f ? r : wd - r;
            y = frand(r, ht - r);
        } else {
            x = frand(r, wd - r);
            y = frand(r, ht - r);
        }
        x = x < r ? r : (x > wd - r ? wd - r : x);
        y = y < r ? r : (y > ht - r ? ht - r : y);
        float s = frand(0.0f, 1.0f) < 0.05f ? 3000.0f : 200.0f;
        if (bp_world_add_ball(w, x, y, frand(-s, s), frand(-s, s), r, 0.0f, NULL, 0) < 0)
            break;
    }
    /* a few contact counts above one, as mass splitting leaves them */
    for (uint32_t i = 0; i < w->count; i += 7)
        w->contacts[i] = (uint8_t)(1 + i % 5);
    return w;
}

static int lanes_screen_as_one_by_one(void)
{
    const uint32_t cap = 4096;
    uint32_t *in = malloc(cap * sizeof *in);
    uint8_t *ncontact = NULL;
    int32_t *best = NULL;
    float *out = NULL;
    ENSURE(in);
    long balls = 0, listed = 0, with_partner = 0, runs_ending_at_n = 0;
    for (int world = 0; world < 24; world++) {
        float gravity = world % 2 ? 900.0f : 0.0f;
        uint32_t n = 300 + (uint32_t)frand(0.0f, 2700.0f);
        /* one world in four is a narrow shaft, 2-5 cells wide: a row's run
         * is then followed, in the grid order, by the next row's balls,
         * which are in reach of a ball at the right wall */
        int narrow = world % 4 == 3;
        float wd = narrow ? frand(10.0f, 24.0f) : frand(150.0f, 700.0f);
        if (narrow)
            n /= 8;
        bp_world *w = random_world(n, wd, frand(120.0f, 500.0f), gravity);
        ENSURE(w && w->count > 0);
        grid g;
        ENSURE(grid_build(w, &g) == 0);
        n = w->count;
        ncontact = realloc(ncontact, n);
        best = realloc(best, n * sizeof *best);
        out = realloc(out, 4 * (size_t)n * sizeof *out);
        ENSURE(ncontact && best && out);
        for (uint32_t i = 0; i < n; i++)
            bp_contacts(i, &g.P, g.vmax, w->x, w->y, w->vx, w->vy, w->r, w->m, w->contacts,
                        g.start, g.sorted, g.spos, ncontact, best, out);
        for (uint32_t i = 0; i < n; i++) {
            result ref;
            uint32_t nn = ref_contacts(i, w, &g, &ref, in, cap);
            ENSURE(nn < cap);
            const float *o = out + 4 * (size_t)i; /* ball i's record: dvx, dvy, px, py */
            if (best[i] != ref.best || ncontact[i] != ref.count ||
                !bp_test_same_bits(o[0], ref.dvx) || !bp_test_same_bits(o[1], ref.dvy) ||
                !bp_test_same_bits(o[2], ref.px) || !bp_test_same_bits(o[3], ref.py)) {
                fprintf(stderr,
                        "world %d ball %u: lanes best %d count %u dv (%.9g, %.9g) p (%.9g, "
                        "%.9g); one by one best %d count %u dv (%.9g, %.9g) p (%.9g, %.9g)\n",
                        world, i, best[i], ncontact[i], o[0], o[1], o[2], o[3], ref.best,
                        ref.count, ref.dvx, ref.dvy, ref.px, ref.py);
                ENSURE(!"the SIMD screening differs from the one-by-one scan");
            }
            /* The window holds every ball within the reach: the list has
             * exactly the balls that a scan of all of them finds. */
            float xi = w->x[i], yi = w->y[i];
            float vi = sqrtf(w->vx[i] * w->vx[i] + w->vy[i] * w->vy[i]);
            float reach = bp_reach(&g.P, w->r[i], vi, g.vmax);
            uint32_t all = 0;
            for (uint32_t j = 0; j < n; j++) {
                float dx = w->x[j] - xi, dy = w->y[j] - yi;
                all += (j != i && dx * dx + dy * dy <= reach * reach) ? 1u : 0u;
            }
            ENSURE(all == nn);
            balls++;
            listed += nn;
            with_partner += ref.best >= 0;
        }
        /* how many cells end at the last ball (their runs read the slack) */
        for (uint32_t c = 0; c < g.ncells; c++)
            runs_ending_at_n += g.start[c] < n && g.start[c + 1] == n;
        grid_free(&g);
        bp_world_destroy(w);
    }
    printf("screen: %ld balls, %ld neighbours within reach (%.2f per ball), %ld with an "
           "impact partner, %ld runs ending at the last ball; 0 differ\n",
           balls, listed, (double)listed / (double)balls, with_partner, runs_ending_at_n);
    ENSURE(listed > 5 * balls / 2 && with_partner > 0);
    free(in);
    free(ncontact);
    free(best);
    free(out);
    return 0;
}

/* bp_ghost_pick, which picks a range's ghosts (bp_once_contacts) by
 * their positions before they are filled in, keeps every ghost whose
 * window (bp_window_one's, from the ball's own reach) ends at slot a's
 * cell or after: random worlds with fast balls (windows over several
 * cells) and balls at the walls, cuts all over the grid order. */
static int ghost_pick_keeps_every_ghost(void)
{
    long ghosts = 0, picked = 0, scanned = 0;
    static uint32_t K[BP_BLOCK + BP_LANES];
    static bp_block_reach W;
    for (int world = 0; world < 16; world++) {
        uint32_t n = 300 + (uint32_t)frand(0.0f, 2700.0f);
        bp_world *w = random_world(n, frand(150.0f, 700.0f), frand(120.0f, 500.0f),
                                   world % 2 ? 900.0f : 0.0f);
        ENSURE(w && w->count > 1);
        grid g;
        ENSURE(grid_build(w, &g) == 0);
        n = w->count;
        uint8_t *pick = malloc(n);
        ENSURE(pick);
        for (int cut = 0; cut < 12; cut++) {
            uint32_t a = 1u + (uint32_t)frand(0.0f, (float)(n - 1) - 0.01f);
            bp_i32 ca;
            float rm;
            uint32_t g0 = bp_ghost_first(&g.P, g.start, g.spos, g.vmax, a, &ca, &rm);
            memset(pick, 0, n);
            for (uint32_t k = g0; k < a;) {
                uint32_t nk = bp_ghost_pick(&g.P, g.spos, &k, a, ca, rm, K);
                ENSURE(nk <= BP_BLOCK);
                for (uint32_t q = 0; q < nk; q++) {
                    ENSURE(K[q] >= g0 && K[q] < a && (q == 0 || K[q] > K[q - 1]));
                    pick[K[q]] = 1;
                }
                picked += nk;
            }
            for (uint32_t k = g0; k < a; k++) {
                uint32_t j = g.sorted[k];
                bp_window_one(&g.P, g.vmax, g.spos[k], g.spos[g.P.ystride + k], w->vx[j],
                              w->vy[j], w->r[j], &W, 0);
                if (W.y1[0] * g.P.gw + W.x1[0] >= ca) {
                    ghosts++;
                    if (!pick[k])
                        fprintf(stderr, "world %d, cut at slot %u: the ghost in slot %u "
                                "(window to cell %d, slot a's cell %d) was not picked\n",
                                world, a, k, W.y1[0] * g.P.gw + W.x1[0], ca);
                    ENSURE(pick[k]);
                }
                scanned++;
            }
        }
        free(pick);
        grid_free(&g);
        bp_world_destroy(w);
    }
    printf("ghosts: %ld balls before the cuts, %ld picked by position, %ld ghosts by their "
           "windows, none missed\n", scanned, picked, ghosts);
    ENSURE(ghosts > 0 && picked >= ghosts && picked < scanned);
    return 0;
}

/* bp_slot_block_fill_at (the ghosts' block, filled from a list of slots)
 * leaves each entry as bp_slot_block_fill leaves the same slot's, bit for
 * bit, and zeros past the last. */
static int fill_at_as_fill(void)
{
    static bp_slot_block S1, S2;
    static uint32_t K[BP_BLOCK + BP_LANES];
    long entries = 0;
    for (int world = 0; world < 8; world++) {
        bp_world *w = random_world(300 + (uint32_t)frand(0.0f, 2700.0f), frand(150.0f, 700.0f),
                                   frand(120.0f, 500.0f), 900.0f);
        ENSURE(w && w->count > 0);
        grid g;
        ENSURE(grid_build(w, &g) == 0);
        uint32_t n = w->count;
        bp_block_arrays A = {.x = w->x, .y = w->y, .vx = w->vx, .vy = w->vy, .r = w->r,
                             .m = w->m, .split = w->contacts, .cell_start = g.start,
                             .sorted = g.sorted, .spos = g.spos};
        for (int t = 0; t < 20; t++) {
            uint32_t k0 = (uint32_t)frand(0.0f, (float)n - 0.01f);
            uint32_t k1 = k0 + 1u + (uint32_t)frand(0.0f, (float)BP_BLOCK - 0.01f);
            k1 = k1 < n ? k1 : n;
            bp_slot_block_fill(&g.P, &A, g.vmax, k0, k1, &S1);
            uint32_t nb = 0;
            for (uint32_t k = k0; k < k1; k++)
                if (t % 4 == 0 || frand(0.0f, 1.0f) < 0.4f)
                    K[nb++] = k;
            bp_slot_block_fill_at(&g.P, &A, g.vmax, K, nb, &S2);
            for (uint32_t q = 0; q < nb + BP_LANES; q++) {
                uint32_t e = q < nb ? K[q] - k0 : 0u;
                int same = q < nb
                    ? bp_test_same_bits(S2.x[q], S1.x[e]) && bp_test_same_bits(S2.y[q], S1.y[e]) &&
                          bp_test_same_bits(S2.vx[q], S1.vx[e]) &&
                          bp_test_same_bits(S2.vy[q], S1.vy[e]) &&
                          bp_test_same_bits(S2.r[q], S1.r[e]) &&
                          bp_test_same_bits(S2.m[q], S1.m[e]) &&
                          bp_test_same_bits(S2.n[q], S1.n[e]) && S2.id[q] == S1.id[e] &&
                          S2.id[q] == g.sorted[K[q]] && S2.W.x0[q] == S1.W.x0[e] &&
                          S2.W.x1[q] == S1.W.x1[e] && S2.W.y0[q] == S1.W.y0[e] &&
                          S2.W.y1[q] == S1.W.y1[e] &&
                          bp_test_same_bits(S2.W.reach2[q], S1.W.reach2[e])
                    : S2.x[q] == 0.0f && S2.y[q] == 0.0f && S2.vx[q] == 0.0f &&
                          S2.r[q] == 0.0f && S2.m[q] == 0.0f && S2.n[q] == 0.0f && S2.id[q] == 0u;
                if (!same)
                    fprintf(stderr, "world %d, slots %u..%u, %u of them: entry %u (slot %u) "
                            "differs\n", world, k0, k1 - 1u, nb, q, q < nb ? K[q] : 0u);
                ENSURE(same);
            }
            entries += nb;
        }
        grid_free(&g);
        bp_world_destroy(w);
    }
    printf("fill_at: %ld entries as the contiguous fill's\n", entries);
    ENSURE(entries > 0);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        {"lanes_screen_as_one_by_one", lanes_screen_as_one_by_one},
        {"ghost_pick_keeps_every_ghost", ghost_pick_keeps_every_ghost},
        {"fill_at_as_fill", fill_at_as_fill},
    };
    return bp_test_main(argc, argv, tests, sizeof tests / sizeof *tests);
}

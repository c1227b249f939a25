/* test_hugepages.c - the CPU engine's per-ball arrays (its sums, grid and
 * screening arrays) are one block, which for a large world starts on a
 * 2 MiB boundary and which Linux is asked to back with transparent huge
 * pages (bp_alloc_big; docs/benchmarks.md, "Optimisations", ninetieth
 * session); a small world's block is not, and BALLPIT_HUGEPAGES=0 turns
 * the request off. Read from the kernel's own account of the
 * process's mappings (/proc/self/smaps, VmFlags "hg": MADV_HUGEPAGE).
 * Skipped where the kernel has no transparent huge pages.
 */
#include "ballpit.h"
#include "engine_impl.h"
#include "test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HUGE_PAGE ((uintptr_t)2u << 20)

/* 1: the mapping holding p is marked for huge pages, 0: it is not, -1:
 * no mapping holds p (or smaps cannot be read). */
static int marked(const void *p)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    uintptr_t a = (uintptr_t)p;
    char line[512];
    int in = 0, res = -1;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char dash;
        if (sscanf(line, "%lx%c%lx ", &lo, &dash, &hi) == 3 && dash == '-') {
            in = a >= lo && a < hi;
            continue;
        }
        if (in && strncmp(line, "VmFlags:", 8) == 0) {
            res = strstr(line, " hg") != NULL;
            break;
        }
    }
    fclose(f);
    return res;
}

/* A rain-like world of n balls of radius 2 in a large box. */
static bp_world *world_of(uint32_t n)
{
    bp_params p = bp_params_default();
    p.width = p.height = 8192.0f;
    bp_world *w = bp_world_create(&p);
    if (!w)
        return NULL;
    char err[256] = "";
    if (bp_world_add_swarm(w, 4096, 4096, n, 2.0f, 4000, 0, 0, 7, err, sizeof err) != (int64_t)n) {
        bp_world_destroy(w);
        return NULL;
    }
    return w;
}

static int thp_available(void)
{
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return 0;
    char line[128] = "";
    int ok = fgets(line, sizeof line, f) != NULL && strstr(line, "[never]") == NULL;
    fclose(f);
    return ok;
}

/* The CPU engine attached to a world of n balls, or NULL; its block in
 * *block (the scratch op's: the block's first array). */
static bp_engine *engine_on(bp_world *w, void **block)
{
    char err[256] = "";
    bp_engine *e = bp_engine_create(BP_BACKEND_CPU, NULL, err, sizeof err);
    if (!e)
        return NULL;
    size_t bytes = 0;
    if (bp_engine_attach(e, w, err, sizeof err) || !e->ops->scratch ||
        !(*block = e->ops->scratch(e, &bytes)) || bytes < (size_t)w->count * 16u) {
        bp_engine_destroy(e);
        return NULL;
    }
    return e;
}

static int large_world_on_huge_pages(void)
{
    if (!thp_available())
        return BP_TEST_SKIP;
    unsetenv("BALLPIT_HUGEPAGES");
    bp_world *w = world_of(200000); /* the engine's block: 6.6 MB */
    ENSURE(w != NULL);
    void *b = NULL;
    bp_engine *e = engine_on(w, &b);
    ENSURE(e != NULL);
    ENSURE(((uintptr_t)b & (HUGE_PAGE - 1u)) == 0u);
    ENSURE(marked(b) == 1);
    ENSURE(marked((char *)b + 3u * HUGE_PAGE - 1u) == 1); /* its three whole pages */
    /* a step runs on them as on any memory, and the world's own arrays
     * stay as they were (their capacity's slack would be made resident) */
    char err[256] = "";
    ENSURE(bp_engine_step(e, w, 1, err, sizeof err) == 0);
    ENSURE(marked(w->x) == 0);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return 0;
}

static int small_world_and_switch_off(void)
{
    if (!thp_available())
        return BP_TEST_SKIP;
    unsetenv("BALLPIT_HUGEPAGES");
    bp_world *w = world_of(1000); /* a 33 KB block: no whole huge page */
    ENSURE(w != NULL);
    void *b = NULL;
    bp_engine *e = engine_on(w, &b);
    ENSURE(e != NULL);
    ENSURE(((uintptr_t)b & 63u) == 0u);
    ENSURE(marked(b) == 0);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    ENSURE(setenv("BALLPIT_HUGEPAGES", "0", 1) == 0);
    w = world_of(200000);
    ENSURE(w != NULL);
    e = engine_on(w, &b);
    ENSURE(e != NULL);
    ENSURE(marked(b) == 0);
    bp_engine_destroy(e);
    bp_world_destroy(w);
    /* any other value is refused in one line naming it */
    char err[256] = "";
    ENSURE(setenv("BALLPIT_HUGEPAGES", "yes", 1) == 0);
    e = bp_engine_create(BP_BACKEND_CPU, NULL, err, sizeof err);
    unsetenv("BALLPIT_HUGEPAGES");
    ENSURE(e == NULL);
    ENSURE(strstr(err, "BALLPIT_HUGEPAGES=yes") != NULL && strchr(err, '\n') == NULL);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(large_world_on_huge_pages),
        BP_TEST(small_world_and_switch_off),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

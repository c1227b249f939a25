/* util.c - small helpers shared by the engine files. */
#include "engine_impl.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

int bp_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int bp_env_word(const char *who, const char *name, const char *const *words, int nwords,
                int *index, char *err, size_t errlen)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    for (int k = 0; k < nwords; k++)
        if (strcmp(v, words[k]) == 0) {
            *index = k;
            return 0;
        }
    /* "is not A, B or C" */
    char list[160] = "";
    size_t at = 0;
    for (int k = 0; k < nwords && at < sizeof list; k++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s",
                               k == 0 ? "" : k + 1 == nwords ? " or " : ", ", words[k]);
    return bp_fail(err, errlen, "%s%s=%s is not %s", who, name, v, list);
}

int bp_env_choice(const char *who, const char *name, const char *one, const char *zero,
                  int *flag, char *err, size_t errlen)
{
    const char *const words[2] = {one, zero};
    int k = -1; /* unset: *flag stays */
    if (bp_env_word(who, name, words, 2, &k, err, errlen))
        return -1;
    if (k >= 0)
        *flag = k == 0;
    return 0;
}

int bp_env_merge_max(const char *who, const char *name, uint32_t *max, char *err,
                     size_t errlen)
{
    static const char *const words[3] = {"auto", "merge", "count"};
    int k = 0;
    if (bp_env_word(who, name, words, 3, &k, err, errlen))
        return -1;
    if (k > 0)
        *max = k == 1 ? UINT32_MAX : 0u;
    return 0;
}

int bp_env_count(const char *who, const char *name, unsigned long lo, unsigned long hi,
                 unsigned long *out, char *err, size_t errlen)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    char *end = NULL;
    unsigned long t = strtoul(v, &end, 10);
    if (*end != '\0' || v[0] == '-' || t < lo || t > hi)
        return bp_fail(err, errlen, "%s%s=%s is not %lu..%lu", who, name, v, lo, hi);
    *out = t;
    return 0;
}

int bp_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void *bp_grow_aligned(void *old, size_t old_bytes, size_t new_bytes)
{
    size_t bytes = (new_bytes + 63u) & ~(size_t)63u;
    void *n = aligned_alloc(64, bytes ? bytes : 64u);
    if (!n)
        return NULL;
    if (old)
        memcpy(n, old, old_bytes < new_bytes ? old_bytes : new_bytes);
    free(old);
    return n;
}

/* Linux's transparent huge pages, where the system gives them on request
 * (madvise mode, Debian's default): BP_HUGE_PAGE bytes a page. */
#define BP_HUGE_PAGE ((size_t)2u << 20)

void *bp_alloc_big(size_t bytes, int huge)
{
    bytes = (bytes + 63u) & ~(size_t)63u;
    if (bytes < BP_HUGE_PAGE || !huge)
        return aligned_alloc(64, bytes ? bytes : 64u);
    /* On a page, so that the block's whole pages can be huge ones; the
     * size a multiple of the page, as aligned_alloc asks, but only the
     * whole pages within the bytes asked for are marked, so the rounding
     * costs no memory that is touched. */
    void *n = aligned_alloc(BP_HUGE_PAGE, (bytes + BP_HUGE_PAGE - 1u) & ~(BP_HUGE_PAGE - 1u));
#ifdef MADV_HUGEPAGE
    if (n)
        (void)madvise(n, bytes & ~(BP_HUGE_PAGE - 1u), MADV_HUGEPAGE);
#endif
    return n;
}

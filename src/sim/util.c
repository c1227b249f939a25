/* util.c - small helpers shared by the engine files. */
#include "engine_impl.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
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

int bp_env_choice(const char *who, const char *name, const char *one, const char *zero,
                  int *flag, char *err, size_t errlen)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return 0;
    if (strcmp(v, one) != 0 && strcmp(v, zero) != 0)
        return bp_fail(err, errlen, "%s%s=%s is not %s or %s", who, name, v, one, zero);
    *flag = strcmp(v, one) == 0;
    return 0;
}

int bp_env_merge_max(const char *who, const char *name, uint32_t *max, char *err,
                     size_t errlen)
{
    const char *v = getenv(name);
    if (!v || !*v || strcmp(v, "auto") == 0)
        return 0;
    if (strcmp(v, "merge") != 0 && strcmp(v, "count") != 0)
        return bp_fail(err, errlen, "%s%s=%s is not auto, merge or count", who, name, v);
    *max = v[0] == 'm' ? UINT32_MAX : 0u;
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

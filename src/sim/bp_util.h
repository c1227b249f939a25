/* bp_util.h - the small helpers of util.c that the engine, the command line
 * and the sandbox share. */
#ifndef BP_UTIL_H
#define BP_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Writes "fmt ..." into err (if err != NULL) and returns -1. */
int bp_fail(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A setting of one of nwords words from the environment variable `name`:
 * *index = k for words[k], unchanged when unset or empty. Any other value
 * is refused, -1 with "<who>NAME=VALUE is not A, B or C" in err. */
int bp_env_word(const char *who, const char *name, const char *const *words, int nwords,
                int *index, char *err, size_t errlen);

/* A setting of two words from the environment variable `name`: *flag = 1
 * for `one`, 0 for `zero`, unchanged when unset or empty. Any other value
 * is refused, -1 with "<who>NAME=VALUE is not ONE or ZERO" in err. */
int bp_env_choice(const char *who, const char *name, const char *one, const char *zero,
                  int *flag, char *err, size_t errlen);

/* A count from the environment variable `name`: *out set when it is a
 * decimal number lo..hi, unchanged when unset or empty. Anything else is
 * refused, -1 with "<who>NAME=VALUE is not LO..HI" in err. */
int bp_env_count(const char *who, const char *name, unsigned long lo, unsigned long hi,
                 unsigned long *out, char *err, size_t errlen);

/* The grid merge's setting (kernels/bp_physics.h) from the environment
 * variable `name`: auto (or unset, or empty) leaves *max, the most balls
 * of a world whose grid is merged; merge sets it to every world's
 * (UINT32_MAX), count to none (0). Anything else is refused, -1 with
 * "<who>NAME=VALUE is not auto, merge or count" in err. */
int bp_env_merge_max(const char *who, const char *name, uint32_t *max, char *err,
                     size_t errlen);

/* Seconds from a monotonic clock. */
double bp_now(void);

/* Grows (or first allocates, old == NULL) a block to new_bytes, starting
 * on a 64-byte boundary: the first min(old_bytes, new_bytes) bytes are
 * copied and the old block freed. On failure NULL, and the old block
 * stays. The result is freed with free(). The per-ball arrays use it so
 * that a vector of 16 floats at a multiple of 16 is one cache line
 * (malloc gives 16-byte alignment only). */
void *bp_grow_aligned(void *old, size_t old_bytes, size_t new_bytes);

/* A block of bytes for several per-ball arrays at once (the CPU
 * engine's), on a 64-byte boundary, freed with free(). From 2 MiB up it
 * starts on a 2 MiB boundary and its whole 2 MiB pages within the bytes
 * asked for are offered to Linux as transparent huge pages (madvise), so
 * that a large world's arrays take a few TLB entries instead of
 * thousands; huge == 0 (an engine made with BALLPIT_HUGEPAGES=0) asks for
 * none. A huge page is resident as a whole once touched: only blocks
 * whose every byte is used should ask for them. */
void *bp_alloc_big(size_t bytes, int huge);

/* qsort's comparison of two doubles, ascending (for medians). */
int bp_cmp_double(const void *a, const void *b);

#endif

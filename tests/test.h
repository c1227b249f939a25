/* test.h - the tiny test harness every C test uses.
 *
 * A test file defines `static int name(void)` functions returning 0 on
 * success, lists them in a `bp_test tests[]` table and calls
 * bp_test_main(argc, argv, tests, count). ENSURE(cond) fails the test with
 * file:line and the condition; ENSURE_NEAR(a, b, tol) prints both values.
 * argv[1], if given, runs only the tests whose name contains it.
 * Exit status: 0 all passed, 1 some failed, 77 all skipped (meson: skip).
 */
#ifndef BP_TEST_H
#define BP_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BP_TEST_SKIP 77

#define ENSURE(cond)                                                          \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "%s:%d: ENSURE(%s) failed\n", __FILE__, __LINE__, \
                    #cond);                                                   \
            return 1;                                                         \
        }                                                                     \
    } while (0)

#define ENSURE_NEAR(a, b, tol)                                                \
    do {                                                                      \
        double ensure_a_ = (double)(a), ensure_b_ = (double)(b);              \
        if (!(fabs(ensure_a_ - ensure_b_) <= (double)(tol))) {                \
            fprintf(stderr, "%s:%d: %s = %.9g, %s = %.9g, differ by more "   \
                    "than %g\n", __FILE__, __LINE__, #a, ensure_a_, #b,       \
                    ensure_b_, (double)(tol));                                \
            return 1;                                                         \
        }                                                                     \
    } while (0)

/* A float in [lo, hi) from a xorshift32 state: the same cases on every
 * run and machine. */
static inline float bp_test_frand(uint32_t *state, float lo, float hi)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return lo + (hi - lo) * (float)(*state >> 8) / 16777216.0f;
}

/* a and b are the same float to the bit (so -0 is not 0, and NaN can be
 * equal to itself). */
static inline int bp_test_same_bits(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

typedef struct bp_test {
    const char *name;
    int (*fn)(void);
} bp_test;

#define BP_TEST(fn) { #fn, fn }

static inline int bp_test_main(int argc, char **argv, const bp_test *tests,
                               int count)
{
    int failed = 0, ran = 0, skipped = 0;
    for (int i = 0; i < count; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1]))
            continue;
        int rc = tests[i].fn();
        if (rc == BP_TEST_SKIP) {
            printf("SKIP %s\n", tests[i].name);
            skipped++;
            continue;
        }
        ran++;
        printf("%s %s\n", rc == 0 ? "ok  " : "FAIL", tests[i].name);
        fflush(stdout);
        if (rc != 0)
            failed++;
    }
    printf("%d passed, %d failed, %d skipped\n", ran - failed, failed, skipped);
    if (failed)
        return 1;
    return ran == 0 && skipped > 0 ? BP_TEST_SKIP : 0;
}

#define BP_TEST_COUNT(t) ((int)(sizeof(t) / sizeof((t)[0])))

#endif

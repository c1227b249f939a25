/* bp_fail.h - the one-line error helper of the engine and the sandbox
 * (defined in util.c). */
#ifndef BP_FAIL_H
#define BP_FAIL_H

#include <stddef.h>

/* Writes "fmt ..." into err (if err != NULL) and returns -1. */
int bp_fail(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif

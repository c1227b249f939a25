/* fail.h - the sandbox's one-line error helper, shared by files.c and
 * png.c (the PNG unit test links png.c alone, hence a header). */
#ifndef BP_APP_FAIL_H
#define BP_APP_FAIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Writes "fmt ..." into err (when err is not NULL) and returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static inline int bp_app_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#endif

/* files.c - folders, screenshot names, atomic small writes (see files.h). */
#include "files.h"
#include "bp_util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int bp_mkdir_p(const char *dir, char *err, size_t errlen)
{
    char buf[4096];
    size_t n = strlen(dir);
    if (n == 0)
        return bp_fail(err, errlen, "empty folder name");
    if (n >= sizeof buf)
        return bp_fail(err, errlen, "%.60s...: folder name too long", dir);
    memcpy(buf, dir, n + 1);
    while (n > 1 && buf[n - 1] == '/')
        buf[--n] = '\0';
    /* Create each prefix in turn; EEXIST is fine if it is a folder. */
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            int e = errno;
            return bp_fail(err, errlen, "%s: cannot create folder: %s", buf,
                        strerror(e));
        }
        buf[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return bp_fail(err, errlen, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return bp_fail(err, errlen, "%s: not a folder", dir);
    return 0;
}

int bp_shot_reserve(const char *dir, time_t t, char *out, size_t outlen,
                    char *err, size_t errlen)
{
    if (bp_mkdir_p(dir, err, errlen))
        return -1;
    struct tm tm;
    if (!localtime_r(&t, &tm))
        return bp_fail(err, errlen, "screenshot: cannot read the clock");
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    for (int k = 1; k < 1000; k++) {
        int len = k == 1
            ? snprintf(out, outlen, "%s/ballpit-%s.png", dir, stamp)
            : snprintf(out, outlen, "%s/ballpit-%s-%d.png", dir, stamp, k);
        if (len < 0 || (size_t)len >= outlen)
            return bp_fail(err, errlen, "%s: folder name too long", dir);
        int fd = open(out, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd >= 0) {
            close(fd);
            return 0;
        }
        if (errno != EEXIST) {
            int e = errno;
            return bp_fail(err, errlen, "%s: %s", out, strerror(e));
        }
    }
    return bp_fail(err, errlen, "%s: too many screenshots in one second", dir);
}

/* $VAR/suffix, or $HOME/home_suffix, or fallback. */
static void pick(char *out, size_t outlen, const char *var,
                 const char *suffix, const char *home_suffix,
                 const char *fallback)
{
    const char *v = getenv(var);
    if (v && v[0] == '/') {
        snprintf(out, outlen, "%s/%s", v, suffix);
        return;
    }
    const char *home = getenv("HOME");
    if (home && home[0] == '/') {
        snprintf(out, outlen, "%s/%s", home, home_suffix);
        return;
    }
    snprintf(out, outlen, "%s", fallback);
}

void bp_default_shot_dir(char *out, size_t outlen)
{
    pick(out, outlen, "XDG_PICTURES_DIR", "ballpit", "Pictures/ballpit",
         "./screenshots");
}

void bp_default_save_path(char *out, size_t outlen)
{
    pick(out, outlen, "XDG_DATA_HOME", "ballpit/saved.scene",
         ".local/share/ballpit/saved.scene", "./ballpit-saved.scene");
}

void bp_dirname(const char *path, char *out, size_t outlen)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(out, outlen, ".");
        return;
    }
    if (slash == path) {
        snprintf(out, outlen, "/");
        return;
    }
    snprintf(out, outlen, "%.*s", (int)(slash - path), path);
}

int bp_write_atomic(const char *path, const void *data, size_t len,
                    char *err, size_t errlen)
{
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path,
                         (long)getpid()) >= sizeof tmp)
        return bp_fail(err, errlen, "%s: path too long", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return bp_fail(err, errlen, "%s: %s", tmp, strerror(errno));
    size_t put = fwrite(data, 1, len, f);
    int bad = put != len;
    if (fclose(f) != 0)
        bad = 1;
    if (bad) {
        remove(tmp);
        return bp_fail(err, errlen, "%s: write failed", path);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return bp_fail(err, errlen, "%s: %s", path, strerror(e));
    }
    return 0;
}

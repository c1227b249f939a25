/* scene.c - scene files, format v1 (docs/scene-format.md): parse, load,
 * and atomic save.
 *
 * The format is line based: one item per line, `#` starts a comment, fields
 * are separated by blanks. The first item is the header `ballpit-scene 1`.
 * Settings (world, gravity, restitution, fps, substeps, speed_cap) come
 * before the first object (line, ball, swarm) because objects are checked
 * against the world box and speed cap they live in; each setting appears at
 * most once. Every malformed line is rejected with "FILE:LINE: what is
 * wrong" and no world: a half-loaded scene would be worse than none.
 */
#include "ballpit.h"
#include "order.h"
#include "scene_io.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Longest accepted line, newline excluded: scene lines are short, a longer
 * one means a binary or a corrupt file. */
#define BP_SCENE_MAX_LINE 4096
/* Most fields kept per line; more are reported as extra fields. */
#define BP_SCENE_MAX_FIELDS 12
/* Largest scene file read into memory (4 Mi balls of ~70 bytes each fit). */
#define BP_SCENE_MAX_FILE ((size_t)1 << 30)
/* A velocity may exceed the speed cap by this factor (float rounding of a
 * capped velocity written by the sandbox) before the line is rejected. */
#define BP_SPEED_CAP_SLACK 1.001f

enum { SET_WORLD, SET_GRAVITY, SET_RESTITUTION, SET_FPS, SET_SUBSTEPS,
       SET_SPEED_CAP, SET_COUNT };

static const char *const setting_names[SET_COUNT] = {
    "world", "gravity", "restitution", "fps", "substeps", "speed_cap",
};

typedef struct parser {
    const char *name;          /* file name used in messages */
    int lineno;                /* 1-based line being parsed */
    char *err;
    size_t errlen;
    int have_header;
    int setting_line[SET_COUNT]; /* line where each setting was given, 0 if not */
    int first_object_line;
    bp_params params;
    bp_world *w;               /* created at the first object */
    uint32_t swarms;           /* swarms so far (default seeds 1, 2, ...) */
    const char *tok[BP_SCENE_MAX_FIELDS];
    int ntok;                  /* fields on the line (may exceed MAX_FIELDS) */
} parser;

/* Writes "name:line: message" into err and returns -1. */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int perr(parser *p, const char *fmt, ...)
{
    if (!p->err || p->errlen == 0)
        return -1;
    int n = snprintf(p->err, p->errlen, "%s:%d: ", p->name, p->lineno);
    if (n < 0 || (size_t)n >= p->errlen)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    /* Quoted fields may hold control bytes: keep the message one plain line. */
    for (char *c = p->err; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    return -1;
}

/* Writes a message without a line number (file-level problems). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Splits buf in place into fields, dropping a `#` comment. */
static void tokenize(parser *p, char *buf)
{
    char *hash = strchr(buf, '#');
    if (hash)
        *hash = '\0';
    p->ntok = 0;
    char *s = buf;
    for (;;) {
        while (is_blank(*s))
            s++;
        if (!*s)
            break;
        if (p->ntok < BP_SCENE_MAX_FIELDS)
            p->tok[p->ntok] = s;
        p->ntok++;
        while (*s && !is_blank(*s))
            s++;
        if (*s)
            *s++ = '\0';
    }
}

/* Field count check: `usage` names the fields, e.g. "X Y VX VY R [M]". */
static int want_fields(parser *p, int min, int max, const char *usage)
{
    int have = p->ntok - 1;
    if (have < min)
        return perr(p, "'%s' needs %s, got %d field%s", p->tok[0], usage, have,
                    have == 1 ? "" : "s");
    if (have > max) {
        /* tok[0] is the keyword, so tok[max + 1] is the first extra one. */
        const char *extra = max + 1 < BP_SCENE_MAX_FIELDS ? p->tok[max + 1]
                                                          : "...";
        return perr(p, "extra field '%.32s' after '%s %s'", extra, p->tok[0],
                    usage);
    }
    return 0;
}

/* Parses a finite float with |v| <= BP_MAX_ABS_VALUE. */
static int parse_float(parser *p, int i, const char *what, float *out)
{
    const char *t = p->tok[i];
    char *end = NULL;
    errno = 0;
    float v = strtof(t, &end);
    if (end == t || *end != '\0')
        return perr(p, "%s '%.32s' is not a number", what, t);
    if (isnan(v))
        return perr(p, "%s '%.32s' is not a finite number", what, t);
    if (isinf(v)) {
        /* strtof gives inf both for "inf" and for overflow like 1e99. */
        if (strpbrk(t, "iI"))
            return perr(p, "%s '%.32s' is not a finite number", what, t);
        return perr(p, "%s '%.32s' is out of range (|value| <= %g)", what, t,
                    (double)BP_MAX_ABS_VALUE);
    }
    if (fabsf(v) > BP_MAX_ABS_VALUE)
        return perr(p, "%s '%.32s' is out of range (|value| <= %g)", what, t,
                    (double)BP_MAX_ABS_VALUE);
    *out = v;
    return 0;
}

/* Parses a decimal unsigned integer (digits only) no larger than max. */
static int parse_uint(parser *p, int i, const char *what, uint64_t max,
                      uint64_t *out)
{
    const char *t = p->tok[i];
    if (*t == '\0' || strspn(t, "0123456789") != strlen(t))
        return perr(p, "%s '%.32s' is not a whole number >= 0", what, t);
    errno = 0;
    unsigned long long v = strtoull(t, NULL, 10);
    if (errno == ERANGE || v > max)
        return perr(p, "%s '%.32s' is above the limit %llu", what, t,
                    (unsigned long long)max);
    *out = v;
    return 0;
}

static int parse_header(parser *p)
{
    if (strcmp(p->tok[0], "ballpit-scene") != 0)
        return perr(p, "missing header: the first line must be 'ballpit-scene 1'"
                    ", got '%.32s'", p->tok[0]);
    if (p->ntok < 2)
        return perr(p, "header has no version: expected 'ballpit-scene 1'");
    if (strcmp(p->tok[1], "1") != 0)
        return perr(p, "unknown scene format version '%.32s' (this ballpit "
                    "reads version 1)", p->tok[1]);
    if (p->ntok > 2)
        return perr(p, "extra field '%.32s' after 'ballpit-scene 1'", p->tok[2]);
    p->have_header = 1;
    return 0;
}

static int parse_setting(parser *p, int which)
{
    if (p->setting_line[which])
        return perr(p, "'%s' given twice (first on line %d)",
                    setting_names[which], p->setting_line[which]);
    if (p->first_object_line)
        return perr(p, "'%s' must come before the first line, ball or swarm "
                    "(line %d)", setting_names[which], p->first_object_line);
    bp_params *q = &p->params;
    switch (which) {
    case SET_WORLD: {
        float w, h;
        if (want_fields(p, 2, 2, "W H") || parse_float(p, 1, "width", &w) ||
            parse_float(p, 2, "height", &h))
            return -1;
        if (!(w >= BP_MIN_WORLD && w <= BP_MAX_WORLD && h >= BP_MIN_WORLD &&
              h <= BP_MAX_WORLD))
            return perr(p, "world size %gx%g is out of range (each side "
                        "%g..%g px)", (double)w, (double)h,
                        (double)BP_MIN_WORLD, (double)BP_MAX_WORLD);
        q->width = w;
        q->height = h;
        break;
    }
    case SET_GRAVITY:
        if (want_fields(p, 2, 2, "GX GY") ||
            parse_float(p, 1, "gravity x", &q->gravity_x) ||
            parse_float(p, 2, "gravity y", &q->gravity_y))
            return -1;
        break;
    case SET_RESTITUTION: {
        float e;
        if (want_fields(p, 1, 1, "E") || parse_float(p, 1, "restitution", &e))
            return -1;
        if (!(e >= 0.0f && e <= 1.0f))
            return perr(p, "restitution %g is outside 0..1", (double)e);
        q->restitution = e;
        break;
    }
    case SET_FPS: {
        float f;
        if (want_fields(p, 1, 1, "F") || parse_float(p, 1, "fps", &f))
            return -1;
        if (!(f >= 1.0f && f <= BP_MAX_FPS)) /* see bp_params_check */
            return perr(p, "fps %g is out of range (1 <= fps <= %g)", (double)f,
                        (double)BP_MAX_FPS);
        q->fps = f;
        break;
    }
    case SET_SUBSTEPS: {
        uint64_t s;
        if (want_fields(p, 1, 1, "S") ||
            parse_uint(p, 1, "substeps", BP_MAX_SUBSTEPS, &s))
            return -1;
        if (s < 1)
            return perr(p, "substeps must be 1..%d, got 0", BP_MAX_SUBSTEPS);
        q->substeps = (int)s;
        break;
    }
    case SET_SPEED_CAP: {
        float v;
        if (want_fields(p, 1, 1, "V") || parse_float(p, 1, "speed_cap", &v))
            return -1;
        if (!(v > 0.0f && v <= BP_MAX_SPEED_CAP))
            return perr(p, "speed_cap %g is out of range (0 < V <= %g px/s)",
                        (double)v, (double)BP_MAX_SPEED_CAP);
        q->speed_cap = v;
        break;
    }
    default:
        return perr(p, "internal error: unknown setting");
    }
    p->setting_line[which] = p->lineno;
    return 0;
}

/* Creates the world at the first object, once all settings are known. */
static int ensure_world(parser *p)
{
    if (!p->first_object_line)
        p->first_object_line = p->lineno;
    if (p->w)
        return 0;
    char why[256] = "";
    if (bp_params_check(&p->params, why, sizeof why) != 0)
        return perr(p, "bad scene settings: %s", why);
    p->w = bp_world_create(&p->params);
    if (!p->w)
        return perr(p, "out of memory creating the world");
    return 0;
}

static int check_radius(parser *p, float r)
{
    if (!(r > 0.0f))
        return perr(p, "radius %g must be > 0", (double)r);
    if (r < BP_MIN_RADIUS || r > BP_MAX_RADIUS)
        return perr(p, "radius %g is outside %g..%g px", (double)r,
                    (double)BP_MIN_RADIUS, (double)BP_MAX_RADIUS);
    return 0;
}

static int check_inside(parser *p, const char *what, float x, float y)
{
    const bp_params *q = &p->params;
    if (!(x >= 0.0f && x <= q->width && y >= 0.0f && y <= q->height))
        return perr(p, "%s (%g, %g) is outside the world 0..%g x 0..%g", what,
                    (double)x, (double)y, (double)q->width, (double)q->height);
    return 0;
}

static int check_speed(parser *p, float vx, float vy)
{
    double speed = sqrt((double)vx * vx + (double)vy * vy);
    if (speed > (double)p->params.speed_cap * BP_SPEED_CAP_SLACK)
        return perr(p, "speed %g px/s is above the speed cap %g px/s",
                    speed, (double)p->params.speed_cap);
    return 0;
}

static int parse_line_item(parser *p)
{
    float v[4];
    static const char *const what[4] = { "x1", "y1", "x2", "y2" };
    if (want_fields(p, 4, 4, "X1 Y1 X2 Y2"))
        return -1;
    for (int i = 0; i < 4; i++)
        if (parse_float(p, i + 1, what[i], &v[i]))
            return -1;
    if (ensure_world(p))
        return -1;
    if (p->w->nlines >= BP_MAX_LINES)
        return perr(p, "too many lines: the limit is %u", BP_MAX_LINES);
    char why[256] = "";
    if (bp_world_add_line(p->w, v[0], v[1], v[2], v[3], why, sizeof why) < 0)
        return perr(p, "%s", why);
    return 0;
}

static int parse_ball(parser *p)
{
    float v[6] = { 0 };
    static const char *const what[6] = { "x", "y", "vx", "vy", "radius", "mass" };
    if (want_fields(p, 5, 6, "X Y VX VY R [M]"))
        return -1;
    for (int i = 0; i < p->ntok - 1; i++)
        if (parse_float(p, i + 1, what[i], &v[i]))
            return -1;
    if (check_radius(p, v[4]))
        return -1;
    if (p->ntok == 7 && !(v[5] > 0.0f))
        return perr(p, "mass %g must be > 0", (double)v[5]);
    if (check_inside(p, "ball centre", v[0], v[1]) || check_speed(p, v[2], v[3]))
        return -1;
    if (ensure_world(p))
        return -1;
    if (p->w->count >= BP_MAX_BALLS)
        return perr(p, "too many balls: the limit is %u", BP_MAX_BALLS);
    char why[256] = "";
    if (bp_world_add_ball(p->w, v[0], v[1], v[2], v[3], v[4], v[5], why,
                          sizeof why) < 0)
        return perr(p, "%s", why);
    return 0;
}

static int parse_swarm(parser *p)
{
    float cx, cy, r, spread, vx, vy;
    uint64_t count, seed;
    /* A last field `settle` (an extension of v1) gives the balls room
     * first, as the sandbox's spawns get it; the fields before it are
     * read as without it. */
    int settle = p->ntok >= 9 && p->ntok <= BP_SCENE_MAX_FIELDS &&
                 strcmp(p->tok[p->ntok - 1], "settle") == 0;
    if (settle)
        p->ntok--;
    if (want_fields(p, 7, 8, "CX CY COUNT R SPREAD VX VY [SEED] [settle]"))
        return -1;
    if (parse_float(p, 1, "cx", &cx) || parse_float(p, 2, "cy", &cy) ||
        parse_uint(p, 3, "count", BP_MAX_BALLS, &count) ||
        parse_float(p, 4, "radius", &r) || parse_float(p, 5, "spread", &spread) ||
        parse_float(p, 6, "vx", &vx) || parse_float(p, 7, "vy", &vy))
        return -1;
    seed = (uint64_t)p->swarms + 1; /* default: 1 for the first swarm, ... */
    if (p->ntok == 9 && parse_uint(p, 8, "seed", UINT64_MAX, &seed))
        return -1;
    if (count < 1)
        return perr(p, "swarm count must be 1..%u, got 0", BP_MAX_BALLS);
    if (check_radius(p, r))
        return -1;
    if (!(spread >= 0.0f && spread <= BP_MAX_WORLD))
        return perr(p, "spread %g is out of range (0..%g px)", (double)spread,
                    (double)BP_MAX_WORLD);
    if (check_inside(p, "swarm centre", cx, cy) || check_speed(p, vx, vy))
        return -1;
    if (ensure_world(p))
        return -1;
    if ((uint64_t)p->w->count + count > BP_MAX_BALLS)
        return perr(p, "too many balls: this swarm makes %llu, the limit is %u",
                    (unsigned long long)p->w->count + count, BP_MAX_BALLS);
    char why[256] = "";
    int64_t added = (settle ? bp_world_add_swarm_folded : bp_world_add_swarm)(
        p->w, cx, cy, (uint32_t)count, r, spread, vx, vy, seed, why, sizeof why);
    if (added < 0)
        return perr(p, "%s", why);
    if ((uint64_t)added != count)
        return perr(p, "swarm added %lld of %llu balls: %s", (long long)added,
                    (unsigned long long)count, why[0] ? why : "unknown reason");
    /* Room among the balls and lines given before it; a ball with none
     * stays where the line put it (a file keeps its ball count). */
    if (settle && bp_world_settle(p->w, p->w->count - (uint32_t)count, 0, why, sizeof why) < 0)
        return perr(p, "%s", why);
    p->swarms++;
    return 0;
}

/* Parses one line (already split into fields). */
static int parse_item(parser *p)
{
    const char *k = p->tok[0];
    if (!p->have_header)
        return parse_header(p);
    for (int i = 0; i < SET_COUNT; i++)
        if (strcmp(k, setting_names[i]) == 0)
            return parse_setting(p, i);
    if (strcmp(k, "line") == 0)
        return parse_line_item(p);
    if (strcmp(k, "ball") == 0)
        return parse_ball(p);
    if (strcmp(k, "swarm") == 0)
        return parse_swarm(p);
    if (strcmp(k, "ballpit-scene") == 0)
        return perr(p, "header 'ballpit-scene' given twice");
    return perr(p, "unknown keyword '%.32s' (expected world, gravity, "
                "restitution, fps, substeps, speed_cap, line, ball or swarm)", k);
}

bp_world *bp_scene_parse(const char *text, size_t len, const char *name,
                         char *err, size_t errlen)
{
    parser p;
    memset(&p, 0, sizeof p);
    p.name = name ? name : "(scene)";
    p.err = err;
    p.errlen = errlen;
    p.params = bp_params_default();
    if (err && errlen)
        err[0] = '\0';
    if (!text && len > 0) {
        set_err(err, errlen, "%s: no text", p.name);
        return NULL;
    }

    char buf[BP_SCENE_MAX_LINE + 1];
    size_t pos = 0;
    /* A UTF-8 byte order mark (some Windows editors add one) is not text. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
        pos = 3;
    int failed = 0;
    while (pos < len && !failed) {
        p.lineno++;
        const char *start = text + pos;
        const char *nl = memchr(start, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - start) : len - pos;
        pos += n + (nl ? 1 : 0);
        if (n > 0 && start[n - 1] == '\r')
            n--; /* CRLF files from other editors */
        if (n > BP_SCENE_MAX_LINE) {
            failed = perr(&p, "line is longer than %d characters",
                          BP_SCENE_MAX_LINE);
            break;
        }
        if (memchr(start, '\0', n)) {
            failed = perr(&p, "NUL byte in the line (not a text file?)");
            break;
        }
        memcpy(buf, start, n);
        buf[n] = '\0';
        tokenize(&p, buf);
        if (p.ntok == 0)
            continue;
        if (parse_item(&p) != 0)
            failed = 1;
    }
    if (!failed && !p.have_header) {
        p.lineno = p.lineno > 0 ? p.lineno : 1;
        failed = perr(&p, "missing header: a scene starts with 'ballpit-scene 1'");
    }
    if (!failed && !p.w) {
        int keep = p.lineno;
        if (ensure_world(&p))
            failed = 1;
        p.first_object_line = 0;
        p.lineno = keep;
    }
    if (failed) {
        bp_world_destroy(p.w);
        return NULL;
    }
    return p.w;
}

bp_world *bp_scene_load(const char *path, char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
    if (!path || !*path) {
        set_err(err, errlen, "scene: empty file name");
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        set_err(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
        fclose(f);
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        set_err(err, errlen, "%s: is a folder, not a scene file", path);
        fclose(f);
        return NULL;
    }
    /* Read in chunks: works for pipes and files whose size is unknown. */
    size_t cap = S_ISREG(st.st_mode) && st.st_size > 0
                     ? (size_t)st.st_size + 1 : 65536;
    if (cap > BP_SCENE_MAX_FILE)
        cap = BP_SCENE_MAX_FILE;
    char *text = malloc(cap);
    size_t len = 0;
    int bad = text == NULL;
    while (!bad) {
        if (len == cap) {
            if (cap >= BP_SCENE_MAX_FILE) {
                set_err(err, errlen, "%s: file is larger than %zu bytes", path,
                        BP_SCENE_MAX_FILE);
                bad = 2;
                break;
            }
            size_t ncap = cap * 2 > BP_SCENE_MAX_FILE ? BP_SCENE_MAX_FILE
                                                      : cap * 2;
            char *t = realloc(text, ncap);
            if (!t) {
                bad = 1;
                break;
            }
            text = t;
            cap = ncap;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        const char *nul = memchr(text + len, '\0', got);
        len += got;
        if (nul) {
            /* Stop at once: /dev/zero or a binary must not be read whole. */
            int line = 1;
            for (const char *c = text; c < nul; c++)
                line += *c == '\n';
            set_err(err, errlen, "%s:%d: NUL byte in the line (not a text file?)", path,
                    line);
            bad = 2;
            break;
        }
        if (got == 0) {
            if (ferror(f)) {
                set_err(err, errlen, "%s: read error: %s", path,
                        strerror(errno));
                bad = 2;
            }
            break;
        }
    }
    fclose(f);
    if (bad) {
        if (bad == 1)
            set_err(err, errlen, "%s: out of memory reading the file", path);
        free(text);
        return NULL;
    }
    bp_world *w = bp_scene_parse(text, len, path, err, errlen);
    free(text);
    return w;
}

/* ---- Atomic writes -------------------------------------------------- */

/* fsync the folder holding path so the rename itself survives a crash.
 * Best effort: some file systems refuse fsync on a folder. */
static void sync_folder(const char *path)
{
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) {
        strcpy(dir, ".");
    } else {
        size_t n = (size_t)(slash - path);
        if (n == 0)
            n = 1; /* "/file" -> "/" */
        if (n >= sizeof dir)
            return;
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int fd = open(dir, O_RDONLY);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

/* A pipe or a device such as /dev/stdout cannot be replaced by a rename:
 * write to it directly (there is no old content to protect). */
static int write_special(const char *path, bp_file_filler fill, void *ctx, char *err,
                         size_t errlen)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    errno = 0;
    int bad = fill(f, ctx) != 0 || ferror(f);
    int e = errno ? errno : EIO;
    if (!bad && fflush(f) != 0) {
        bad = 1;
        e = errno;
    }
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        set_err(err, errlen, "%s: write failed: %s", path, strerror(e));
        return -1;
    }
    return 0;
}

/* Where bp_file_write_atomic writes path: a new temporary file beside the
 * file (beside the one a symbolic link points to), its name in *tmp, the
 * file a link points to in *real (NULL when path is no link; both to
 * free), the permission bits to give in *mode. Returns the open
 * descriptor; BP_TEMP_SPECIAL for a pipe or device, written directly; -1
 * with "PATH: why" in err. */
#define BP_TEMP_SPECIAL (-2)
static int open_temp(const char *path, char **tmp, char **real, mode_t *mode, char *err,
                     size_t errlen)
{
    *tmp = *real = NULL;
    *mode = 0644;
    if (!path || !*path) {
        set_err(err, errlen, "cannot write: empty file name");
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            set_err(err, errlen, "%s: is a folder, not a file", path);
            return -1;
        }
        if (!S_ISREG(st.st_mode))
            return BP_TEMP_SPECIAL;
        *mode = st.st_mode & 0777;
        /* Through a symbolic link, replace the file it points to, not the
         * link itself. */
        struct stat lst;
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode))
            *real = realpath(path, NULL);
    }
    const char *target = *real ? *real : path;
    size_t n = strlen(target);
    *tmp = malloc(n + 16);
    if (!*tmp) {
        set_err(err, errlen, "%s: out of memory", path);
        free(*real);
        *real = NULL;
        return -1;
    }
    memcpy(*tmp, target, n);
    memcpy(*tmp + n, ".tmp-XXXXXX", 12);
    int fd = mkstemp(*tmp);
    if (fd < 0) {
        set_err(err, errlen, "%s: cannot create a temporary file in its "
                "folder: %s (the old file, if any, is kept)", path, strerror(errno));
        free(*tmp);
        free(*real);
        *tmp = *real = NULL;
    }
    return fd;
}

int bp_file_check_writable(const char *path, char *err, size_t errlen)
{
    char *tmp, *real;
    mode_t mode;
    int fd = open_temp(path, &tmp, &real, &mode, err, errlen);
    if (fd == BP_TEMP_SPECIAL) {
        if (access(path, W_OK) != 0) {
            set_err(err, errlen, "%s: cannot open: %s", path, strerror(errno));
            return -1;
        }
        return 0;
    }
    if (fd < 0)
        return -1;
    close(fd);
    unlink(tmp);
    free(tmp);
    free(real);
    return 0;
}

int bp_file_write_atomic(const char *path, bp_file_filler fill, void *ctx,
                         char *err, size_t errlen)
{
    char *tmp, *real;
    mode_t mode;
    int fd = open_temp(path, &tmp, &real, &mode, err, errlen);
    if (fd == BP_TEMP_SPECIAL)
        return write_special(path, fill, ctx, err, errlen);
    if (fd < 0)
        return -1;
    const char *target = real ? real : path;
    const char *what = NULL;
    int e = 0;
    if (fchmod(fd, mode) != 0) {
        what = "cannot set permissions";
        e = errno;
    }
    FILE *f = what ? NULL : fdopen(fd, "wb");
    if (!what && !f) {
        what = "cannot open the temporary file";
        e = errno;
    }
    if (!what) {
        errno = 0;
        if (fill(f, ctx) != 0 || ferror(f)) {
            what = "write failed";
            e = errno ? errno : EIO;
        }
    }
    if (!what && fflush(f) != 0) {
        what = "write failed";
        e = errno;
    }
    if (!what && fsync(fileno(f)) != 0) {
        what = "fsync failed";
        e = errno;
    }
    if (f) {
        /* fclose also closes fd; its error counts only if nothing failed yet. */
        if (fclose(f) != 0 && !what) {
            what = "close failed";
            e = errno;
        }
    } else {
        close(fd);
    }
    if (!what && rename(tmp, target) != 0) {
        what = "cannot replace the file";
        e = errno;
    }
    if (what) {
        unlink(tmp);
        set_err(err, errlen, "%s: %s: %s (the old file, if any, is kept)", path,
                what, strerror(e));
    } else {
        sync_folder(target);
    }
    free(tmp);
    free(real);
    return what ? -1 : 0;
}

/* ---- Save ------------------------------------------------------------ */

static float clampf(float v, float lo, float hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static int write_scene(FILE *f, void *ctx)
{
    const bp_world *w = ctx;
    const bp_params *q = &w->params;
    /* %.9g prints every float32 so that strtof gives the same bits back. */
    if (fprintf(f, "ballpit-scene 1\n# saved by ballpit %s: %u balls, %u lines\n"
                "world %.9g %.9g\ngravity %.9g %.9g\nrestitution %.9g\n"
                "fps %.9g\nsubsteps %d\nspeed_cap %.9g\n",
                BP_VERSION, w->count, w->nlines, (double)q->width,
                (double)q->height, (double)q->gravity_x, (double)q->gravity_y,
                (double)q->restitution, (double)q->fps, q->substeps,
                (double)q->speed_cap) < 0)
        return -1;
    for (uint32_t i = 0; i < w->nlines; i++)
        if (fprintf(f, "line %.9g %.9g %.9g %.9g\n", (double)w->lx1[i],
                    (double)w->ly1[i], (double)w->lx2[i], (double)w->ly2[i]) < 0)
            return -1;
    /* By id, wherever the engine has moved the balls (order.h), so the
     * file's order is the creation order and the ids hold across a save. */
    int owned;
    uint32_t *slot = bp_world_slots_by_id(w, &owned);
    if (owned && !slot)
        return -1;
    int rc = 0;
    for (uint32_t k = 0; k < w->count && rc == 0; k++) {
        uint32_t i = slot ? slot[k] : k;
        /* A centre that slipped out of the box by rounding is written at
         * the nearest point inside, so the saved file always loads. */
        float x = clampf(w->x[i], 0.0f, q->width);
        float y = clampf(w->y[i], 0.0f, q->height);
        if (fprintf(f, "ball %.9g %.9g %.9g %.9g %.9g %.9g\n", (double)x,
                    (double)y, (double)w->vx[i], (double)w->vy[i],
                    (double)w->r[i], (double)w->m[i]) < 0)
            rc = -1;
    }
    free(slot);
    return rc;
}

static int finite_all(const float *a, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (!isfinite(a[i]))
            return 0;
    return 1;
}

int bp_scene_save(const bp_world *w, const char *path, char *err, size_t errlen)
{
    if (!w) {
        set_err(err, errlen, "%s: no world to save", path ? path : "(null)");
        return -1;
    }
    /* Refuse to write what could not be loaded back. */
    if (!finite_all(w->x, w->count) || !finite_all(w->y, w->count) ||
        !finite_all(w->vx, w->count) || !finite_all(w->vy, w->count) ||
        !finite_all(w->r, w->count) || !finite_all(w->m, w->count) ||
        !finite_all(w->lx1, w->nlines) || !finite_all(w->ly1, w->nlines) ||
        !finite_all(w->lx2, w->nlines) || !finite_all(w->ly2, w->nlines)) {
        set_err(err, errlen, "%s: the world holds a non-finite value; not saved",
                path ? path : "(null)");
        return -1;
    }
    return bp_file_write_atomic(path, write_scene, (void *)w, err, errlen);
}

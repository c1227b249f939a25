/* cli.c - the command line (a contract: docs/cli.md): parsing, usage text,
 * scene lookup (file path first, then a built-in name).
 *
 * Parsing is strict on purpose: an unknown flag, a repeated flag, a bad
 * value or a flag that means nothing in the chosen mode is an error (exit
 * status 2) rather than something silently ignored, because scripts and
 * tests depend on every flag doing what it says.
 */
#include "cli.h"
#include "cli_internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Which modes accept a flag. */
enum {
    M_SANDBOX = 1 << 0,
    M_HEADLESS = 1 << 1,
    M_BENCH = 1 << 2,
    M_LIST = 1 << 3,
};

typedef enum opt_id {
    O_HEADLESS, O_FRAMES, O_BACKEND, O_THREADS, O_DEVICE, O_DUMP, O_STATS,
    O_BENCH, O_BENCH_SIZES, O_BENCH_FRAMES, O_BENCH_RUNS, O_BENCH_JSON, O_BENCH_DRAW, O_LIST_DEVICES,
    O_SCREENSHOT_DIR, O_FONT, O_SAVE_TO, O_SCREENSHOT_AFTER, O_SCREENSHOT_PATH,
    O_STATE_FILE, O_WINDOW, O_KEEP_ORDER, O_COUNT
} opt_id;

typedef struct opt_def {
    const char *name;   /* without the leading "--" */
    int takes_value;
    int modes;          /* modes in which the flag is allowed */
} opt_def;

static const opt_def opts[O_COUNT] = {
    [O_HEADLESS] = { "headless", 1, M_HEADLESS },
    [O_FRAMES] = { "frames", 1, M_HEADLESS },
    [O_BACKEND] = { "backend", 1, M_SANDBOX | M_HEADLESS | M_BENCH },
    [O_THREADS] = { "threads", 1, M_SANDBOX | M_HEADLESS | M_BENCH },
    [O_DEVICE] = { "device", 1, M_SANDBOX | M_HEADLESS | M_BENCH },
    [O_DUMP] = { "dump", 1, M_HEADLESS },
    [O_STATS] = { "stats", 0, M_HEADLESS },
    [O_BENCH] = { "bench", 0, M_BENCH },
    [O_BENCH_SIZES] = { "bench-sizes", 1, M_BENCH },
    [O_BENCH_FRAMES] = { "bench-frames", 1, M_BENCH },
    [O_BENCH_RUNS] = { "bench-runs", 1, M_BENCH },
    [O_BENCH_JSON] = { "bench-json", 1, M_BENCH },
    [O_BENCH_DRAW] = { "bench-draw", 1, M_BENCH },
    [O_LIST_DEVICES] = { "list-devices", 0, M_LIST },
    [O_SCREENSHOT_DIR] = { "screenshot-dir", 1, M_SANDBOX },
    [O_FONT] = { "font", 1, M_SANDBOX },
    [O_SAVE_TO] = { "save-to", 1, M_SANDBOX },
    [O_SCREENSHOT_AFTER] = { "screenshot-after", 1, M_SANDBOX },
    [O_SCREENSHOT_PATH] = { "screenshot-path", 1, M_SANDBOX },
    [O_STATE_FILE] = { "state-file", 1, M_SANDBOX },
    [O_WINDOW] = { "window", 1, M_SANDBOX },
    [O_KEEP_ORDER] = { "keep-order", 0, M_SANDBOX | M_HEADLESS | M_BENCH },
};

/* Limits of numeric flags. */
#define BP_CLI_MAX_FRAMES 1000000000L
#define BP_CLI_MAX_THREADS 1024L
#define BP_CLI_MAX_DEVICE 1023L
#define BP_CLI_MAX_BENCH_FRAMES 1000000L
#define BP_CLI_MAX_BENCH_RUNS 99L
#define BP_CLI_MIN_WINDOW 64L
#define BP_CLI_MAX_WINDOW 16384L

/* Replaces control bytes (from argv or file names) by '?' so a message
 * stays one plain line on the terminal. */
static void one_line(char *s)
{
    for (; s && *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            *s = '?';
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int fail2(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        one_line(err);
    }
    return 2;
}

/* Parses a whole decimal number lo..hi (digits only, no sign). */
static int parse_long(const char *flag, const char *v, long lo, long hi, long *out,
                      char *err, size_t errlen)
{
    if (!*v || strspn(v, "0123456789") != strlen(v))
        return fail2(err, errlen, "--%s: '%.40s' is not a whole number (%ld..%ld)",
                     flag, v, lo, hi);
    errno = 0;
    long n = strtol(v, NULL, 10);
    if (errno == ERANGE || n < lo || n > hi)
        return fail2(err, errlen, "--%s: %.40s is out of range (%ld..%ld)", flag, v,
                     lo, hi);
    *out = n;
    return 0;
}

int bp_parse_sizes(const char *s, uint32_t *out, int max, char *err, size_t errlen)
{
    int n = 0;
    const char *p = s;
    if (!s || !*s) {
        fail2(err, errlen, "--bench-sizes: empty list");
        return -1;
    }
    for (;;) {
        const char *start = p;
        size_t digits = strspn(p, "0123456789");
        if (digits == 0 || digits > 9) {
            fail2(err, errlen, "--bench-sizes: '%.40s' is not a ball count like "
                  "1000, 10k or 1M", start);
            return -1;
        }
        uint64_t v = strtoull(p, NULL, 10);
        p += digits;
        if (*p == 'k' || *p == 'K') {
            v *= 1000u;
            p++;
        } else if (*p == 'm' || *p == 'M') {
            v *= 1000000u;
            p++;
        }
        if (*p != ',' && *p != '\0') {
            fail2(err, errlen, "--bench-sizes: '%.40s' is not a ball count like "
                  "1000, 10k or 1M", start);
            return -1;
        }
        if (v < 1 || v > BP_MAX_BALLS) {
            fail2(err, errlen, "--bench-sizes: %llu balls is out of range (1..%u)",
                  (unsigned long long)v, BP_MAX_BALLS);
            return -1;
        }
        if (n >= max) {
            fail2(err, errlen, "--bench-sizes: more than %d sizes", max);
            return -1;
        }
        out[n++] = (uint32_t)v;
        if (*p == '\0')
            return n;
        p++; /* the comma */
    }
}

static int parse_window(const char *v, int *w, int *h, char *err, size_t errlen)
{
    const char *x = strpbrk(v, "xX");
    if (!x || x == v || x[1] == '\0')
        return fail2(err, errlen, "--window: '%.40s' is not WIDTHxHEIGHT, e.g. 1280x720",
                     v);
    char a[32];
    size_t n = (size_t)(x - v);
    if (n >= sizeof a)
        return fail2(err, errlen, "--window: '%.40s' is not WIDTHxHEIGHT", v);
    memcpy(a, v, n);
    a[n] = '\0';
    long lw, lh;
    if (parse_long("window", a, BP_CLI_MIN_WINDOW, BP_CLI_MAX_WINDOW, &lw, err, errlen) ||
        parse_long("window", x + 1, BP_CLI_MIN_WINDOW, BP_CLI_MAX_WINDOW, &lh, err,
                   errlen))
        return 2;
    *w = (int)lw;
    *h = (int)lh;
    return 0;
}

static int find_opt(const char *name, size_t len)
{
    for (int i = 0; i < O_COUNT; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, name, len) == 0)
            return i;
    return -1;
}

static const char *mode_flag(int mode)
{
    switch (mode) {
    case M_HEADLESS: return "--headless";
    case M_BENCH: return "--bench";
    case M_LIST: return "--list-devices";
    default: return "the sandbox window";
    }
}

/* Stores the value of flag `id` into out. */
static int apply(bp_cli *out, int id, const char *v, char *err, size_t errlen)
{
    long n;
    switch ((opt_id)id) {
    case O_HEADLESS:
        out->scene = v;
        return 0;
    case O_FRAMES:
        if (parse_long("frames", v, 0, BP_CLI_MAX_FRAMES, &n, err, errlen))
            return 2;
        out->frames = n;
        return 0;
    case O_BACKEND:
        if (strcmp(v, "cpu") == 0)
            out->backend = BP_BACKEND_CPU;
        else if (strcmp(v, "opencl") == 0)
            out->backend = BP_BACKEND_OPENCL;
        else
            return fail2(err, errlen, "--backend: '%.40s' is not cpu or opencl", v);
        out->backend_set = 1;
        return 0;
    case O_THREADS:
        if (parse_long("threads", v, 1, BP_CLI_MAX_THREADS, &n, err, errlen))
            return 2;
        out->engine.threads = (int)n;
        return 0;
    case O_DEVICE:
        if (parse_long("device", v, 0, BP_CLI_MAX_DEVICE, &n, err, errlen))
            return 2;
        out->engine.device = (int)n;
        out->engine.device_set = 1;
        return 0;
    case O_DUMP:
        out->dump = v;
        return 0;
    case O_BENCH_SIZES: {
        uint32_t sizes[BP_BENCH_MAX_SIZES];
        if (bp_parse_sizes(v, sizes, BP_BENCH_MAX_SIZES, err, errlen) < 0)
            return 2;
        out->bench_sizes = v;
        return 0;
    }
    case O_BENCH_FRAMES:
        if (parse_long("bench-frames", v, 1, BP_CLI_MAX_BENCH_FRAMES, &n, err, errlen))
            return 2;
        out->bench_frames = n;
        return 0;
    case O_BENCH_RUNS:
        if (parse_long("bench-runs", v, 1, BP_CLI_MAX_BENCH_RUNS, &n, err, errlen))
            return 2;
        out->bench_runs = n;
        return 0;
    case O_BENCH_JSON:
        out->bench_json = v;
        return 0;
    case O_BENCH_DRAW:
        if (parse_long("bench-draw", v, 0, BP_MAX_BALLS, &n, err, errlen))
            return 2;
        out->bench_draw = n;
        out->bench_draw_set = 1;
        return 0;
    case O_SCREENSHOT_DIR:
        out->screenshot_dir = v;
        return 0;
    case O_FONT:
        out->font = v;
        return 0;
    case O_SAVE_TO:
        out->save_to = v;
        return 0;
    case O_SCREENSHOT_AFTER:
        if (parse_long("screenshot-after", v, 1, BP_CLI_MAX_FRAMES, &n, err, errlen))
            return 2;
        out->screenshot_after = n;
        return 0;
    case O_SCREENSHOT_PATH:
        out->screenshot_path = v;
        return 0;
    case O_STATE_FILE:
        out->state_file = v;
        return 0;
    case O_WINDOW:
        return parse_window(v, &out->width, &out->height, err, errlen);
    case O_STATS:
        out->stats = 1;
        return 0;
    case O_KEEP_ORDER:
        out->engine.sort_by_place = 0;
        return 0;
    case O_BENCH:
    case O_LIST_DEVICES:
    case O_COUNT:
        return 0;
    }
    return 0;
}

int bp_cli_parse(int argc, char **argv, bp_cli *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->mode = BP_MODE_SANDBOX;
    out->backend = BP_BACKEND_CPU;
    out->frames = -1;
    out->engine.sort_by_place = 1; /* --keep-order: 0 */
    if (err && errlen)
        err[0] = '\0';

    /* --help and --version win over everything else, like in most tools. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            out->mode = BP_MODE_HELP;
            return 0;
        }
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--version") == 0) {
            out->mode = BP_MODE_VERSION;
            return 0;
        }
    }

    int seen[O_COUNT] = { 0 };
    int only_positional = 0;
    const char *positional = NULL; /* the sandbox's SCENE */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_positional && strcmp(a, "--") == 0) {
            only_positional = 1;
            continue;
        }
        if (only_positional || a[0] != '-' || a[1] == '\0') {
            if (positional)
                return fail2(err, errlen, "more than one scene given ('%.60s' and "
                             "'%.60s')", positional, a);
            if (*a == '\0')
                return fail2(err, errlen, "empty scene name");
            positional = a;
            continue;
        }
        if (a[1] != '-')
            return fail2(err, errlen, "unknown option '%.60s' (see ballpit --help)", a);
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        int id = find_opt(name, len);
        if (id < 0)
            return fail2(err, errlen, "unknown option '--%.*s' (see ballpit --help)",
                         (int)(len > 60 ? 60 : len), name);
        if (seen[id])
            return fail2(err, errlen, "--%s given twice", opts[id].name);
        seen[id] = 1;
        const char *v = NULL;
        if (opts[id].takes_value) {
            if (eq) {
                v = eq + 1;
            } else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
                v = argv[++i];
            } else {
                return fail2(err, errlen, "--%s needs a value", opts[id].name);
            }
            if (*v == '\0')
                return fail2(err, errlen, "--%s: empty value", opts[id].name);
        } else if (eq) {
            return fail2(err, errlen, "--%s takes no value", opts[id].name);
        }
        int rc = apply(out, id, v, err, errlen);
        if (rc)
            return rc;
    }

    /* Pick the mode; two modes at once is an error. */
    int mode = M_SANDBOX;
    const int mode_opts[3] = { O_HEADLESS, O_BENCH, O_LIST_DEVICES };
    const int mode_bits[3] = { M_HEADLESS, M_BENCH, M_LIST };
    for (int k = 0; k < 3; k++) {
        if (!seen[mode_opts[k]])
            continue;
        if (mode != M_SANDBOX)
            return fail2(err, errlen, "%s and --%s cannot be combined", mode_flag(mode),
                         opts[mode_opts[k]].name);
        mode = mode_bits[k];
    }
    for (int id = 0; id < O_COUNT; id++) {
        if (!seen[id] || (opts[id].modes & mode))
            continue;
        if (opts[id].modes == M_HEADLESS)
            return fail2(err, errlen, "--%s needs --headless", opts[id].name);
        if (opts[id].modes == M_BENCH)
            return fail2(err, errlen, "--%s needs --bench", opts[id].name);
        if (opts[id].modes == M_SANDBOX)
            return fail2(err, errlen, "--%s is for the sandbox window, not %s",
                         opts[id].name, mode_flag(mode));
        return fail2(err, errlen, "--%s cannot be used with %s", opts[id].name,
                     mode_flag(mode));
    }
    if (positional && mode == M_HEADLESS)
        return fail2(err, errlen, "unexpected argument '%.60s' (the scene goes right "
                     "after --headless)", positional);
    if (positional && mode != M_SANDBOX)
        return fail2(err, errlen, "unexpected argument '%.60s' with %s", positional,
                     mode_flag(mode));
    if (mode == M_SANDBOX)
        out->scene = positional;
    switch (mode) {
    case M_HEADLESS:
        out->mode = BP_MODE_HEADLESS;
        if (out->frames < 0)
            return fail2(err, errlen, "--headless needs --frames N");
        if (out->engine.device_set && out->backend != BP_BACKEND_OPENCL)
            return fail2(err, errlen, "--device needs --backend opencl");
        break;
    case M_BENCH:
        out->mode = BP_MODE_BENCH;
        break;
    case M_LIST:
        out->mode = BP_MODE_LIST_DEVICES;
        break;
    default:
        out->mode = BP_MODE_SANDBOX;
        if (seen[O_SCREENSHOT_PATH] && !seen[O_SCREENSHOT_AFTER])
            return fail2(err, errlen, "--screenshot-path needs --screenshot-after N");
        break;
    }
    return 0;
}

void bp_cli_usage(FILE *f)
{
    fprintf(f,
        "ballpit %s - an interactive 2D ball-physics sandbox\n"
        "\n"
        "Usage:\n"
        "  ballpit [SCENE] [sandbox options]      open the sandbox window\n"
        "  ballpit --headless SCENE --frames N [options]\n"
        "                                         simulate without a window\n"
        "  ballpit --bench [bench options]        measure the engines\n"
        "  ballpit --list-devices                 list OpenCL devices\n"
        "  ballpit --help | --version\n"
        "\n"
        "SCENE is a scene file (docs/scene-format.md) or a built-in scene name:",
        BP_VERSION);
    for (size_t i = 0; i < bp_builtin_scene_count; i++)
        fprintf(f, " %s", bp_builtin_scenes[i].name);
    fprintf(f,
        ".\nA file that exists wins over a built-in name. Default: the default scene.\n"
        "\n"
        "Engine (sandbox, headless, bench):\n"
        "  --backend cpu|opencl   engine to use (default cpu)\n"
        "  --threads T            CPU engine threads, 1..1024 (default: all cores)\n"
        "  --device N             OpenCL device from --list-devices (default: GPU first)\n"
        "  --keep-order           keep the balls in creation order in memory (default:\n"
        "                         re-sort the balls by place, faster)\n"
        "\n"
        "Headless:\n"
        "  --headless SCENE       run SCENE with no display\n"
        "  --frames N             frames to run, 0..1000000000 (each = the scene's sub-steps)\n"
        "  --dump PATH            write the final state as CSV id,x,y,vx,vy,r,m\n"
        "  --stats                print one JSON line of measurements on stdout\n"
        "\n"
        "Bench:\n"
        "  --bench                rain at 1k,10k,50k,100k,200k balls, pile at 50k, per engine\n"
        "  --bench-sizes LIST     rain sizes, e.g. 1000,10k,1M\n"
        "  --bench-frames N       timed frames per row (default 33: 1 s simulated)\n"
        "  --bench-runs N         run every row N times, 1..99, in turns; show the median\n"
        "  --bench-json PATH      also write one JSON object per row (- = stdout)\n"
        "  --bench-draw N         also time the sandbox drawing N balls, 0 = not\n"
        "                         (skipped when no window opens; default 100000 without\n"
        "                         --bench-sizes)\n"
        "\n"
        "Sandbox:\n"
        "  --window WxH           window size in pixels (default 1280x720)\n"
        "  --font PATH            TrueType font for the HUD\n"
        "  --screenshot-dir DIR   where F12 screenshots go\n"
        "  --save-to PATH         scene file Ctrl+S writes\n"
        "  --screenshot-after N   take a screenshot after N frames, then quit\n"
        "  --screenshot-path F    file for --screenshot-after\n"
        "  --state-file PATH      write the sandbox state to PATH when it changes (tests)\n"
        "\n"
        "Exit status: 0 success, 1 run-time failure (e.g. a file could not be\n"
        "written), 2 bad command line or bad scene, 3 OpenCL unusable.\n"
        "Full reference: docs/cli.md\n");
}

const bp_builtin_scene *bp_builtin_scene_find(const char *name)
{
    for (size_t i = 0; i < bp_builtin_scene_count; i++)
        if (strcmp(bp_builtin_scenes[i].name, name) == 0)
            return &bp_builtin_scenes[i];
    return NULL;
}

bp_world *bp_cli_load_scene(const char *scene, char *err, size_t errlen)
{
    if (!scene)
        scene = "default";
    struct stat st;
    if (stat(scene, &st) == 0)
        return bp_scene_load(scene, err, errlen);
    const bp_builtin_scene *b = bp_builtin_scene_find(scene);
    if (b) {
        char name[128];
        snprintf(name, sizeof name, "%s.scene", b->name);
        return bp_scene_parse(b->text, b->len, name, err, errlen);
    }
    if (err && errlen) {
        int n = snprintf(err, errlen, "%s: no such file, and not a built-in scene (",
                         scene);
        for (size_t i = 0; i < bp_builtin_scene_count && n >= 0 && (size_t)n < errlen;
             i++)
            n += snprintf(err + n, errlen - (size_t)n, "%s%s", i ? ", " : "",
                          bp_builtin_scenes[i].name);
        if (n >= 0 && (size_t)n < errlen)
            snprintf(err + n, errlen - (size_t)n, ")");
        one_line(err);
    }
    return NULL;
}

void bp_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

void bp_json_number(FILE *f, double v)
{
    if (!isfinite(v))
        fputs("null", f);
    else
        fprintf(f, "%.17g", v);
}

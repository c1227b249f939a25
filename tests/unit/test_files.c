/* test_files.c - screenshot names, folder creation, atomic writes and the
 * JSON state file (src/app/files.c, src/app/state.c). */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/files.h"
#include "app/fontfind.h"
#include "app/state.h"
#include "test.h"

static int shot_names_are_dated_and_unique(void)
{
    char dir[] = "/tmp/bp_files_XXXXXX";
    ENSURE(mkdtemp(dir) != NULL);
    char sub[256];
    snprintf(sub, sizeof sub, "%s/new/deeper", dir); /* created on demand */
    struct tm tm = { .tm_year = 2026 - 1900, .tm_mon = 0, .tm_mday = 2,
                     .tm_hour = 3, .tm_min = 4, .tm_sec = 5, .tm_isdst = -1 };
    time_t t = mktime(&tm);
    char a[512], b[512], c[512], err[256];
    ENSURE(bp_shot_reserve(sub, t, a, sizeof a, err, sizeof err) == 0);
    ENSURE(bp_shot_reserve(sub, t, b, sizeof b, err, sizeof err) == 0);
    ENSURE(bp_shot_reserve(sub, t, c, sizeof c, err, sizeof err) == 0);
    char want[512];
    snprintf(want, sizeof want, "%s/ballpit-20260102-030405.png", sub);
    ENSURE(strcmp(a, want) == 0);
    snprintf(want, sizeof want, "%s/ballpit-20260102-030405-2.png", sub);
    ENSURE(strcmp(b, want) == 0);
    snprintf(want, sizeof want, "%s/ballpit-20260102-030405-3.png", sub);
    ENSURE(strcmp(c, want) == 0);
    ENSURE(access(a, F_OK) == 0); /* reserved on disk */
    remove(a);
    remove(b);
    remove(c);
    snprintf(want, sizeof want, "%s/new", dir);
    rmdir(sub);
    rmdir(want);
    rmdir(dir);
    return 0;
}

static int folder_that_is_a_file_is_reported(void)
{
    char dir[] = "/tmp/bp_files_XXXXXX";
    ENSURE(mkdtemp(dir) != NULL);
    char file[256], under[300], err[512] = "", out[512];
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    ENSURE(f);
    fclose(f);
    snprintf(under, sizeof under, "%s/shots", file);
    ENSURE(bp_mkdir_p(under, err, sizeof err) == -1);
    ENSURE(strstr(err, "plain") != NULL);
    ENSURE(bp_shot_reserve(file, time(NULL), out, sizeof out, err,
                           sizeof err) == -1);
    ENSURE(strstr(err, "not a folder") != NULL);
    ENSURE(bp_mkdir_p("", err, sizeof err) == -1);
    remove(file);
    rmdir(dir);
    return 0;
}

static int atomic_write_replaces_whole(void)
{
    char dir[] = "/tmp/bp_files_XXXXXX";
    ENSURE(mkdtemp(dir) != NULL);
    char path[256], err[256], buf[64] = "";
    snprintf(path, sizeof path, "%s/state.json", dir);
    ENSURE(bp_write_atomic(path, "first\n", 6, err, sizeof err) == 0);
    ENSURE(bp_write_atomic(path, "second\n", 7, err, sizeof err) == 0);
    FILE *f = fopen(path, "r");
    ENSURE(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    ENSURE(strcmp(buf, "second\n") == 0);
    char bad[300];
    snprintf(bad, sizeof bad, "%s/no/such/file", dir);
    ENSURE(bp_write_atomic(bad, "x", 1, err, sizeof err) == -1);
    remove(path);
    rmdir(dir);
    return 0;
}

static int defaults_and_dirname(void)
{
    char out[512];
    setenv("HOME", "/home/someone", 1);
    unsetenv("XDG_PICTURES_DIR");
    unsetenv("XDG_DATA_HOME");
    bp_default_shot_dir(out, sizeof out);
    ENSURE(strcmp(out, "/home/someone/Pictures/ballpit") == 0);
    bp_default_save_path(out, sizeof out);
    ENSURE(strcmp(out, "/home/someone/.local/share/ballpit/saved.scene") == 0);
    setenv("XDG_DATA_HOME", "/data", 1);
    bp_default_save_path(out, sizeof out);
    ENSURE(strcmp(out, "/data/ballpit/saved.scene") == 0);
    unsetenv("HOME");
    bp_default_shot_dir(out, sizeof out);
    ENSURE(strcmp(out, "./screenshots") == 0);
    bp_dirname("a/b/c.scene", out, sizeof out);
    ENSURE(strcmp(out, "a/b") == 0);
    bp_dirname("c.scene", out, sizeof out);
    ENSURE(strcmp(out, ".") == 0);
    bp_dirname("/c.scene", out, sizeof out);
    ENSURE(strcmp(out, "/") == 0);
    return 0;
}

static int state_json(void)
{
    bp_app_state s = { .frame = 12, .balls = 3000, .lines = 4,
                       .engine = "cpu", .device = "2 threads",
                       .engine_error = "no \"OpenCL\" platform\\", .starting = 1,
                       .message = "line1\nline2", .scene = "rain",
                       .paused = 1, .gravity = 1, .swarm_size = 200,
                       .radius = 2.5f, .win_w = 1280, .win_h = 720,
                       .last_screenshot = "/tmp/x.png" };
    char buf[2048];
    int n = bp_state_format(&s, buf, sizeof buf);
    ENSURE(n > 0 && (size_t)n == strlen(buf));
    ENSURE(strstr(buf, "\"balls\":3000,"));
    ENSURE(strstr(buf, "\"paused\":true,"));
    ENSURE(strstr(buf, "\"slowmo\":false,"));
    ENSURE(strstr(buf, "\"radius\":2.5,"));
    ENSURE(strstr(buf, "\"window\":[1280,720]"));
    ENSURE(strstr(buf, "\"engine_error\":\"no \\\"OpenCL\\\" platform\\\\\","));
    ENSURE(strstr(buf, "\"engine_starting\":true,"));
    ENSURE(strstr(buf, "\"message\":\"line1\\u000aline2\""));
    ENSURE(strstr(buf, "\"screenshot_error\":\"\"}\n"));
    ENSURE(buf[0] == '{');
    /* Too small a buffer is refused, not truncated into bad JSON. */
    ENSURE(bp_state_format(&s, buf, 40) == -1);
    return 0;
}

static int font_search(void)
{
    char out[1024];
    setenv("BALLPIT_FONT_SEARCH", "0", 1);
    ENSURE(bp_font_find(NULL, out, sizeof out) == -1);
    unsetenv("BALLPIT_FONT_SEARCH");
    if (bp_font_find(NULL, out, sizeof out) != 0)
        return BP_TEST_SKIP; /* a machine without any font */
    ENSURE(access(out, R_OK) == 0);
    size_t n = strlen(out);
    ENSURE(n > 4 && (!strcmp(out + n - 4, ".ttf") || !strcmp(out + n - 4, ".otf") ||
                     !strcmp(out + n - 4, ".ttc")));
    /* The one found is skipped when it was already tried and failed. */
    char other[1024];
    if (bp_font_find(out, other, sizeof other) == 0)
        ENSURE(strcmp(other, out) != 0);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(shot_names_are_dated_and_unique),
        BP_TEST(folder_that_is_a_file_is_reported),
        BP_TEST(atomic_write_replaces_whole),
        BP_TEST(defaults_and_dirname),
        BP_TEST(state_json),
        BP_TEST(font_search),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

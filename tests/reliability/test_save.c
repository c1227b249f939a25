/* test_save.c - nothing lost: a save that dies half way (SIGKILL in the
 * middle of writing, or a short write at the file size limit), into an
 * unwritable folder or onto a full device leaves the old scene intact
 * (docs/reliability.md, "Saves").
 */
#include "ballpit.h"
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char dir[256];
static char path[300];
static char *old_bytes;
static size_t old_len;

/* Reads a whole file; NULL when it cannot. */
static char *slurp(const char *p, size_t *len)
{
    FILE *f = fopen(p, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    while (b) {
        n += fread(b + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *t = realloc(b, cap *= 2);
        if (!t) {
            free(b);
            b = NULL;
        }
        b = t;
    }
    fclose(f);
    *len = n;
    return b;
}

/* The old scene is still there, byte for byte, and loads. */
static int old_scene_intact(void)
{
    size_t n = 0;
    char *now = slurp(path, &n);
    ENSURE(now != NULL);
    int same = n == old_len && memcmp(now, old_bytes, n) == 0;
    free(now);
    ENSURE(same);
    char err[256] = "";
    bp_world *w = bp_scene_load(path, err, sizeof err);
    ENSURE(w != NULL);
    ENSURE(w->count == 3 && w->nlines == 1);
    bp_world_destroy(w);
    return 0;
}

/* Counts (and with remove, deletes) temporary files left in dir;
 * biggest gets the largest one's size. */
static int temp_files(int remove, long *biggest)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strstr(e->d_name, ".tmp-"))
            continue;
        n++;
        char p[600];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (biggest && stat(p, &st) == 0 && st.st_size > *biggest)
            *biggest = (long)st.st_size;
        if (remove)
            unlink(p);
    }
    closedir(d);
    return n;
}

static bp_world *big_world(uint32_t count)
{
    bp_params p = bp_params_default();
    p.width = p.height = 8192.0f;
    bp_world *w = bp_world_create(&p);
    if (w && bp_world_add_swarm(w, 4096, 4096, count, 0.5f, 4000, 3.25f, -1.5f, 9, NULL, 0) !=
                 (int64_t)count) {
        bp_world_destroy(w);
        return NULL;
    }
    return w;
}

static int setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/bp-save-XXXXXX");
    ENSURE(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/old.scene", dir);
    bp_world *w = bp_world_create(NULL);
    ENSURE(w != NULL);
    ENSURE(bp_world_add_ball(w, 100, 100, 1, 2, 5, 0, NULL, 0) == 0);
    ENSURE(bp_world_add_ball(w, 200, 100, 0, 0, 6, 0, NULL, 0) == 1);
    ENSURE(bp_world_add_ball(w, 300, 100, -1, 0, 7, 3, NULL, 0) == 2);
    ENSURE(bp_world_add_line(w, 0, 500, 600, 600, NULL, 0) == 0);
    char err[256] = "";
    ENSURE(bp_scene_save(w, path, err, sizeof err) == 0);
    bp_world_destroy(w);
    old_bytes = slurp(path, &old_len);
    ENSURE(old_bytes != NULL && old_len > 0);
    return 0;
}

/* A child saves a ~60 MB scene over the old one and is SIGKILLed while the
 * temporary file is being written. */
static int killed_mid_save_keeps_old_file(void)
{
    bp_world *w = big_world(1000000);
    ENSURE(w != NULL);
    pid_t pid = fork();
    ENSURE(pid >= 0);
    if (pid == 0) {
        char err[256];
        int rc = bp_scene_save(w, path, err, sizeof err);
        _exit(rc == 0 ? 3 : 4); /* 3: finished before the kill */
    }
    bp_world_destroy(w);
    /* Wait until the temporary file holds at least 1 MiB: mid-write. */
    long biggest = 0;
    struct timespec nap = { 0, 1000000 };
    for (int i = 0; i < 20000 && biggest < (1L << 20); i++) {
        nanosleep(&nap, NULL);
        temp_files(0, &biggest);
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            fprintf(stderr, "child ended (status %d) before the kill\n", st);
            return 1;
        }
    }
    ENSURE(biggest >= (1L << 20));
    ENSURE(kill(pid, SIGKILL) == 0);
    int st = 0;
    ENSURE(waitpid(pid, &st, 0) == pid);
    ENSURE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    printf("killed the saving child with a %ld-byte temporary file written\n", biggest);
    if (old_scene_intact())
        return 1;
    /* A killed process cannot clean up: its temporary file stays beside
     * the scene (never in its place); remove it. */
    ENSURE(temp_files(1, NULL) == 1);
    return 0;
}

/* RLIMIT_FSIZE makes write() stop short (EFBIG) half way through. */
static int short_write_keeps_old_file(void)
{
    bp_world *w = big_world(50000);
    ENSURE(w != NULL);
    pid_t pid = fork();
    ENSURE(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = { 256 * 1024, 256 * 1024 };
        signal(SIGXFSZ, SIG_IGN);
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(5);
        char err[256] = "";
        int rc = bp_scene_save(w, path, err, sizeof err);
        printf("short write: %s\n", err);
        fflush(stdout);
        /* 0: refused with a message naming the file and the cause. */
        _exit(rc == -1 && strstr(err, path) && strstr(err, "File too large") &&
                      strstr(err, "the old file, if any, is kept")
                  ? 0 : 6);
    }
    bp_world_destroy(w);
    int st = 0;
    ENSURE(waitpid(pid, &st, 0) == pid);
    ENSURE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    if (old_scene_intact())
        return 1;
    ENSURE(temp_files(0, NULL) == 0); /* the failed save cleaned up */
    return 0;
}

/* A full device (/dev/full takes no bytes) is reported, not fatal. */
static int full_device_reported(void)
{
    bp_world *w = big_world(1000);
    ENSURE(w != NULL);
    char err[256] = "";
    int rc = bp_scene_save(w, "/dev/full", err, sizeof err);
    bp_world_destroy(w);
    ENSURE(rc == -1);
    ENSURE(strstr(err, "/dev/full") && strstr(err, "No space left on device"));
    return 0;
}

/* An unwritable folder: the save says so and the old file stays. */
static int unwritable_folder_keeps_old_file(void)
{
    if (geteuid() == 0) {
        printf("running as root: permissions do not stop root, skipped\n");
        return BP_TEST_SKIP;
    }
    ENSURE(chmod(dir, 0555) == 0);
    bp_world *w = big_world(1000);
    ENSURE(w != NULL);
    char err[256] = "";
    int rc = bp_scene_save(w, path, err, sizeof err);
    bp_world_destroy(w);
    ENSURE(chmod(dir, 0755) == 0);
    ENSURE(rc == -1);
    ENSURE(strstr(err, "cannot create a temporary file") && strstr(err, "Permission denied"));
    return old_scene_intact();
}

/* A missing folder is a message too. */
static int missing_folder_reported(void)
{
    char p[400], err[256] = "";
    snprintf(p, sizeof p, "%s/no/such/folder/x.scene", dir);
    bp_world *w = big_world(10);
    ENSURE(w != NULL);
    int rc = bp_scene_save(w, p, err, sizeof err);
    bp_world_destroy(w);
    ENSURE(rc == -1 && strstr(err, "No such file or directory"));
    return 0;
}

/* After all that, a good save still replaces the file. */
static int good_save_replaces(void)
{
    bp_world *w = big_world(10);
    ENSURE(w != NULL);
    char err[256] = "";
    ENSURE(bp_scene_save(w, path, err, sizeof err) == 0);
    bp_world_destroy(w);
    w = bp_scene_load(path, err, sizeof err);
    ENSURE(w != NULL && w->count == 10);
    bp_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    if (setup() != 0)
        return 1;
    static const bp_test tests[] = {
        BP_TEST(killed_mid_save_keeps_old_file),
        BP_TEST(short_write_keeps_old_file),
        BP_TEST(full_device_reported),
        BP_TEST(unwritable_folder_keeps_old_file),
        BP_TEST(missing_folder_reported),
        BP_TEST(good_save_replaces),
    };
    int rc = bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
    temp_files(1, NULL);
    unlink(path);
    rmdir(dir);
    free(old_bytes);
    return rc;
}

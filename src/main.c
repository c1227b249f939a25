/* main.c - ballpit's entry point: parse the command line (src/cli.c), then
 * open the sandbox window, run headless, run the bench, list OpenCL devices,
 * or print help/version. Exit statuses are a contract (docs/cli.md):
 * 0 success, 1 run-time failure, 2 bad command line or scene, 3 OpenCL
 * unusable.
 */
#include "cli.h"

#include <stdio.h>

#ifdef BP_HAVE_SDL
static const char have_window[] = "built";
#else
static const char have_window[] = "not built";
#endif

static int list_devices(void)
{
    char err[1024] = "";
    int n = bp_opencl_list_devices(stdout, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "ballpit: %s\n", err);
        return 3;
    }
    if (n == 0) {
        fprintf(stderr, "ballpit: OpenCL works but offers no device\n");
        return 3;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "ballpit: cannot write to stdout\n");
        return 1;
    }
    return 0;
}

static int sandbox(const bp_cli *cli)
{
#ifdef BP_HAVE_SDL
    return bp_app_run(cli);
#else
    (void)cli;
    fprintf(stderr, "ballpit: this build has no window (SDL2 and SDL2_ttf were not found "
            "when it was built); run a scene with 'ballpit --headless SCENE --frames N' "
            "or install libsdl2-dev and libsdl2-ttf-dev and rebuild\n");
    return 1;
#endif
}

int main(int argc, char **argv)
{
    bp_opencl_prepare(); /* before any thread starts */
    bp_cli cli;
    char err[512];
    if (bp_cli_parse(argc, argv, &cli, err, sizeof err) != 0) {
        fprintf(stderr, "ballpit: %s\n", err);
        return 2;
    }
    switch (cli.mode) {
    case BP_MODE_HELP:
        bp_cli_usage(stdout);
        return fflush(stdout) == 0 ? 0 : 1;
    case BP_MODE_VERSION:
        printf("ballpit %s (OpenCL engine: %s, sandbox window: %s)\n", BP_VERSION,
               bp_opencl_built() ? "built" : "not built", have_window);
        return fflush(stdout) == 0 ? 0 : 1;
    case BP_MODE_LIST_DEVICES:
        return list_devices();
    case BP_MODE_HEADLESS:
        return bp_headless_run(&cli);
    case BP_MODE_BENCH:
        return bp_bench_run(&cli);
    case BP_MODE_SANDBOX:
        return sandbox(&cli);
    }
    return 2;
}

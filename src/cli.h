/* cli.h - the command line of ballpit (a contract: docs/cli.md). */
#ifndef BP_CLI_H
#define BP_CLI_H

#include "ballpit.h"

typedef enum bp_mode {
    BP_MODE_SANDBOX = 0,   ///< the SDL window (default)
    BP_MODE_HEADLESS,      ///< --headless SCENE --frames N
    BP_MODE_BENCH,         ///< --bench
    BP_MODE_LIST_DEVICES,  ///< --list-devices
    BP_MODE_HELP,          ///< --help
    BP_MODE_VERSION,       ///< --version
} bp_mode;

typedef struct bp_cli {
    bp_mode mode;
    const char *scene;        ///< scene path or built-in name; NULL = default scene
    long frames;              ///< --frames N (headless)
    bp_backend backend;       ///< --backend cpu|opencl
    int backend_set;
    bp_engine_opts engine;    ///< --threads T, --device N
    const char *dump;         ///< --dump PATH
    int stats;                ///< --stats
    const char *bench_json;   ///< --bench-json PATH ("-" = stdout)
    const char *bench_sizes;  ///< --bench-sizes 1000,10000,... (default 1k,10k,50k,100k)
    long bench_frames;        ///< --bench-frames N
    long bench_runs;          ///< --bench-runs N: runs of every row, the median shown (0 = 1)
    long bench_draw;          ///< --bench-draw N: balls of the drawing row, 0 = none
    int bench_draw_set;
    const char *screenshot_dir; ///< --screenshot-dir DIR
    const char *font;         ///< --font PATH
    const char *save_to;      ///< --save-to PATH (Ctrl+S target)
    long screenshot_after;    ///< --screenshot-after N: screenshot after N frames, then quit
    const char *screenshot_path; ///< --screenshot-path FILE for --screenshot-after
    const char *state_file;   ///< --state-file PATH: sandbox writes its state when it changes (tests)
    int width, height;        ///< --window WxH
} bp_cli;

/// Parses argv. Returns 0, or 2 with a one-line message in err.
int bp_cli_parse(int argc, char **argv, bp_cli *out, char *err, size_t errlen);
void bp_cli_usage(FILE *f);
/// Loads cli->scene (a path, a built-in scene name, or NULL for the default).
bp_world *bp_cli_load_scene(const char *scene, char *err, size_t errlen);
/// Runs a headless simulation; returns the process exit status.
int bp_headless_run(const bp_cli *cli);
/// Runs the benchmark; returns the process exit status.
int bp_bench_run(const bp_cli *cli);
/// Opens the sandbox window (src/app); returns the exit status.
int bp_app_run(const bp_cli *cli);

#endif

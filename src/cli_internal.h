/* cli_internal.h - private helpers of the command line front end (cli.c,
 * headless.c, bench.c) that its tests also use. Not part of the engine API.
 */
#ifndef BP_CLI_INTERNAL_H
#define BP_CLI_INTERNAL_H

#include "ballpit.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- Built-in scenes (generated from assets/scenes by tools/embed_scenes.py) */

/// One scene file compiled into the binary.
typedef struct bp_builtin_scene {
    const char *name;  ///< file name without ".scene", e.g. "rain"
    const char *text;  ///< the file's bytes, NUL-terminated
    size_t len;        ///< bytes, without the NUL
} bp_builtin_scene;

extern const bp_builtin_scene bp_builtin_scenes[];
extern const size_t bp_builtin_scene_count;

/// The built-in scene called name, or NULL.
const bp_builtin_scene *bp_builtin_scene_find(const char *name);

/* ---- Values on the command line ---------------------------------------- */

/// Most sizes in one --bench-sizes list.
#define BP_BENCH_MAX_SIZES 32

/// Parses "1000,10k,2M" (k = 1000, M = 1000000) into out[], each 1 ..
/// BP_MAX_BALLS. Returns how many, or -1 with a one-line reason in err.
int bp_parse_sizes(const char *s, uint32_t *out, int max, char *err, size_t errlen);

/* ---- Benchmark worlds (bench.c) ------------------------------------------ */

/// Ball count of assets/scenes/rain.scene; bp_rain_build(BP_RAIN_REF_N)
/// gives exactly that scene (a test checks it bit for bit).
#define BP_RAIN_REF_N 10000u

/// The rain scene with n balls: r=2 balls in 24 swarms falling onto 8
/// slanted ramps in a 1280x960 box, gravity 900, e=0.9, 30 sub-steps at
/// 33 fps. Above BP_RAIN_REF_N balls every length grows by
/// sqrt(n / BP_RAIN_REF_N) so the density stays that of the scene file.
/// Returns NULL with a reason in err.
bp_world *bp_rain_build(uint32_t n, char *err, size_t errlen);

/// The pile benchmark: n balls r=2 at rest in a hexagonal packing on the
/// floor of a 1280x720 box (wider and taller by sqrt(n/50000) above 50k
/// balls), gravity 900, e=0.9: every ball touches its neighbours, the
/// densest case for the contact passes. Returns NULL with a reason in err.
bp_world *bp_pile_build(uint32_t n, char *err, size_t errlen);

/* ---- Output helpers ------------------------------------------------------ */

/// Writes s as a JSON string literal (quotes included) to f.
void bp_json_string(FILE *f, const char *s);
/// Writes a JSON number (%.17g), or null when v is not finite.
void bp_json_number(FILE *f, double v);

#endif

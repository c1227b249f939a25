/* engine_switch.c - a small world moved CPU -> OpenCL -> CPU a few times,
 * stepping on each engine; run under valgrind by test_valgrind.py to show
 * that engine switches leak nothing. Without a usable OpenCL device the
 * switches fail cleanly (also leak-free) and the world stays on the CPU.
 * Exit status 0 when every ball survived every switch.
 *
 *     engine_switch [ROUNDS] [--leak]
 *
 * --leak loses one block on purpose: the valgrind test's control that a
 * real ballpit leak is reported, not hidden by the suppressions.
 */
#include "ballpit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile lost; /* --leak: overwritten, so definitely lost */

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    if (argc > 2 && strcmp(argv[2], "--leak") == 0) {
        lost = malloc(4242);
        lost = NULL;
    }
    char err[256] = "";
    bp_world *w = bp_world_create(NULL);
    if (!w)
        return 1;
    if (bp_world_add_swarm(w, 640, 200, 300, 3, 150, 0, 0, 1, err, sizeof err) != 300 ||
        bp_world_add_line(w, 100, 600, 1200, 650, err, sizeof err) < 0) {
        fprintf(stderr, "engine_switch: %s\n", err);
        return 1;
    }
    bp_engine_opts opts = { .threads = 1 };
    bp_engine *e = bp_engine_create(BP_BACKEND_CPU, &opts, err, sizeof err);
    if (!e || bp_engine_attach(e, w, err, sizeof err) != 0) {
        fprintf(stderr, "engine_switch: %s\n", err);
        return 1;
    }
    int switched = 0, failed = 0;
    for (int i = 0; i < 2 * rounds; i++) {
        bp_backend to = i % 2 == 0 ? BP_BACKEND_OPENCL : BP_BACKEND_CPU;
        if (bp_engine_step(e, w, 10, err, sizeof err) != 0 ||
            bp_engine_read(e, w, err, sizeof err) != 0) {
            fprintf(stderr, "engine_switch: step on %s: %s\n", bp_engine_name(e), err);
            failed = 1;
            break;
        }
        if (bp_engine_switch(&e, to, &opts, w, err, sizeof err) == 0)
            switched++;
        else
            printf("engine_switch: stays on %s: %s\n", bp_engine_name(e), err);
    }
    bp_stats st;
    bp_world_measure(w, &st);
    printf("engine_switch: %d switches, %u balls, %u non-finite, on %s\n", switched, w->count,
           st.nonfinite, bp_engine_name(e));
    int ok = !failed && w->count == 300 && st.nonfinite == 0;
    bp_engine_destroy(e);
    bp_world_destroy(w);
    return ok ? 0 : 1;
}

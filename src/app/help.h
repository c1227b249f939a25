/* help.h - the mouse and key reference shown on F1/H (and in the README).
 * docs/user-guide.md carries the same table; keep the two in step.
 */
#ifndef BP_HELP_H
#define BP_HELP_H

typedef struct bp_help_row {
    const char *keys;
    const char *what;
} bp_help_row;

static const bp_help_row bp_help_rows[] = {
    { "Left-drag", "draw a straight line (live preview)" },
    { "Ctrl + left-drag", "draw freehand (simplified polyline)" },
    { "Middle-drag", "erase the lines it touches" },
    { "E", "eraser mode for the left button (on/off)" },
    { "Ctrl+Z / Ctrl+Y", "undo / redo line edits" },
    { "Right-click", "spawn a swarm at the cursor" },
    { "Right-drag, release", "throw the swarm with the drag's velocity" },
    { "Right-hold", "keep pouring balls" },
    { "Wheel / Shift+wheel", "swarm size / ball radius" },
    { "G", "switch engine CPU <-> OpenCL" },
    { "Space", "pause / resume" },
    { "N or .", "one frame while paused" },
    { "S", "slow motion (1/4 speed) on/off" },
    { "V", "gravity on/off" },
    { "] / [", "twice / half the sub-steps per frame" },
    { "C / L", "clear balls / clear lines" },
    { "R", "reset to the loaded scene" },
    { "F12 or P", "screenshot (PNG, path shown below)" },
    { "Ctrl+S / Ctrl+O", "save / load the scene (--save-to)" },
    { "F1 or H", "this help" },
    { "Esc", "quit" },
};

#define BP_HELP_ROWS (int)(sizeof bp_help_rows / sizeof bp_help_rows[0])

#endif

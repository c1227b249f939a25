/* test_undo.c - undo/redo of line edits on a real bp_world
 * (src/app/undo.c). */
#include "app/undo.h"
#include "test.h"

static int has_line(const bp_world *w, float x1, float y1, float x2, float y2)
{
    for (uint32_t i = 0; i < w->nlines; i++)
        if (w->lx1[i] == x1 && w->ly1[i] == y1 && w->lx2[i] == x2 &&
            w->ly2[i] == y2)
            return 1;
    return 0;
}

static int draw_undo_redo(void)
{
    bp_world *w = bp_world_create(NULL);
    ENSURE(w);
    bp_undo u;
    bp_undo_init(&u);
    /* A 3-segment polyline drawn as one edit. */
    float seg[12] = { 0, 0, 10, 0, 10, 0, 10, 10, 10, 10, 0, 10 };
    for (int i = 0; i < 3; i++)
        ENSURE(bp_world_add_line(w, seg[4 * i], seg[4 * i + 1], seg[4 * i + 2],
                                 seg[4 * i + 3], NULL, 0) >= 0);
    ENSURE(bp_undo_record(&u, BP_UNDO_ADDED, seg, 3, 0) == 0);
    /* A second, single line. */
    ENSURE(bp_world_add_line(w, 50, 50, 60, 60, NULL, 0) >= 0);
    float one[4] = { 50, 50, 60, 60 };
    ENSURE(bp_undo_record(&u, BP_UNDO_ADDED, one, 1, 0) == 0);
    ENSURE(w->nlines == 4 && bp_undo_depth(&u) == 2);

    ENSURE(bp_undo_undo(&u, w) == 1);
    ENSURE(w->nlines == 3 && !has_line(w, 50, 50, 60, 60));
    ENSURE(bp_undo_undo(&u, w) == 1);
    ENSURE(w->nlines == 0);
    ENSURE(bp_undo_undo(&u, w) == 0); /* nothing left */
    ENSURE(bp_undo_redo_depth(&u) == 2);
    ENSURE(bp_undo_redo(&u, w) == 1);
    ENSURE(w->nlines == 3 && has_line(w, 10, 0, 10, 10));
    /* A new edit drops the redo tail. */
    ENSURE(bp_world_add_line(w, 1, 1, 2, 2, NULL, 0) >= 0);
    float n2[4] = { 1, 1, 2, 2 };
    ENSURE(bp_undo_record(&u, BP_UNDO_ADDED, n2, 1, 0) == 0);
    ENSURE(bp_undo_redo_depth(&u) == 0);
    ENSURE(bp_undo_redo(&u, w) == 0);
    bp_undo_free(&u);
    bp_world_destroy(w);
    return 0;
}

static int erase_drag_is_one_step(void)
{
    bp_world *w = bp_world_create(NULL);
    ENSURE(w);
    bp_undo u;
    bp_undo_init(&u);
    for (int i = 0; i < 4; i++)
        ENSURE(bp_world_add_line(w, 0, (float)i * 10, 100, (float)i * 10,
                                 NULL, 0) >= 0);
    /* One drag (group 7) erases lines 0 and 2 in two motion events. */
    float a[4] = { 0, 0, 100, 0 }, b[4] = { 0, 20, 100, 20 };
    ENSURE(bp_lines_remove_equal(w, 0, 0, 100, 0) == 1);
    ENSURE(bp_undo_record(&u, BP_UNDO_REMOVED, a, 1, 7) == 0);
    ENSURE(bp_lines_remove_equal(w, 100, 20, 0, 20) == 1); /* either way */
    ENSURE(bp_undo_record(&u, BP_UNDO_REMOVED, b, 1, 7) == 0);
    ENSURE(w->nlines == 2 && bp_undo_depth(&u) == 1);
    ENSURE(bp_undo_undo(&u, w) == 1);
    ENSURE(w->nlines == 4 && has_line(w, 0, 0, 100, 0) &&
           has_line(w, 0, 20, 100, 20));
    ENSURE(bp_undo_redo(&u, w) == 1);
    ENSURE(w->nlines == 2 && !has_line(w, 0, 20, 100, 20));
    /* A different group is a separate step. */
    float c[4] = { 0, 10, 100, 10 };
    ENSURE(bp_lines_remove_equal(w, 0, 10, 100, 10) == 1);
    ENSURE(bp_undo_record(&u, BP_UNDO_REMOVED, c, 1, 8) == 0);
    ENSURE(bp_undo_depth(&u) == 2);
    ENSURE(bp_lines_remove_equal(w, 5, 5, 6, 6) == 0); /* not there */
    bp_undo_free(&u);
    bp_world_destroy(w);
    return 0;
}

static int history_is_bounded(void)
{
    bp_world *w = bp_world_create(NULL);
    ENSURE(w);
    bp_undo u;
    bp_undo_init(&u);
    for (uint32_t i = 0; i < BP_UNDO_MAX + 10; i++) {
        float s[4] = { (float)i, 0, (float)i, 5 };
        ENSURE(bp_world_add_line(w, s[0], s[1], s[2], s[3], NULL, 0) >= 0);
        ENSURE(bp_undo_record(&u, BP_UNDO_ADDED, s, 1, 0) == 0);
    }
    ENSURE(bp_undo_depth(&u) == BP_UNDO_MAX);
    uint32_t undone = 0;
    while (bp_undo_undo(&u, w) == 1)
        undone++;
    ENSURE(undone == BP_UNDO_MAX);
    /* The 10 oldest lines are beyond the history and stay. */
    ENSURE(w->nlines == 10 && has_line(w, 9, 0, 9, 5) && !has_line(w, 10, 0, 10, 5));
    bp_undo_free(&u);
    bp_world_destroy(w);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(draw_undo_redo),
        BP_TEST(erase_drag_is_one_step),
        BP_TEST(history_is_bounded),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

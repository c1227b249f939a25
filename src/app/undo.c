/* undo.c - undo/redo of line edits (see undo.h). */
#include "undo.h"

#include <stdlib.h>
#include <string.h>

void bp_undo_init(bp_undo *u)
{
    memset(u, 0, sizeof *u);
}

static void drop_entry(bp_undo_entry *e)
{
    free(e->seg);
    memset(e, 0, sizeof *e);
}

void bp_undo_free(bp_undo *u)
{
    for (uint32_t i = 0; i < u->len; i++)
        drop_entry(&u->e[i]);
    u->len = u->pos = 0;
}

int bp_undo_record(bp_undo *u, bp_undo_kind kind, const float *seg,
                   uint32_t n, uint32_t group)
{
    if (n == 0)
        return 0;
    for (uint32_t i = u->pos; i < u->len; i++)
        drop_entry(&u->e[i]);
    u->len = u->pos;
    /* Same eraser drag: grow the previous entry instead of a new step. */
    if (group && u->pos > 0 && u->e[u->pos - 1].group == group &&
        u->e[u->pos - 1].kind == kind) {
        bp_undo_entry *e = &u->e[u->pos - 1];
        float *s = realloc(e->seg, ((size_t)e->n + n) * 4 * sizeof *s);
        if (!s) {
            bp_undo_free(u);
            return -1;
        }
        memcpy(s + 4 * (size_t)e->n, seg, (size_t)n * 4 * sizeof *s);
        e->seg = s;
        e->n += n;
        return 0;
    }
    if (u->len == BP_UNDO_MAX) {
        /* Forget the oldest step. */
        drop_entry(&u->e[0]);
        memmove(&u->e[0], &u->e[1], (BP_UNDO_MAX - 1) * sizeof u->e[0]);
        memset(&u->e[BP_UNDO_MAX - 1], 0, sizeof u->e[0]);
        u->len--;
        u->pos--;
    }
    float *s = malloc((size_t)n * 4 * sizeof *s);
    if (!s) {
        bp_undo_free(u);
        return -1;
    }
    memcpy(s, seg, (size_t)n * 4 * sizeof *s);
    u->e[u->len] = (bp_undo_entry){ kind, group, n, s };
    u->len++;
    u->pos = u->len;
    return 0;
}

int bp_lines_remove_equal(bp_world *w, float x1, float y1, float x2, float y2)
{
    for (uint32_t i = w->nlines; i-- > 0;) {
        if ((w->lx1[i] == x1 && w->ly1[i] == y1 && w->lx2[i] == x2 &&
             w->ly2[i] == y2) ||
            (w->lx1[i] == x2 && w->ly1[i] == y2 && w->lx2[i] == x1 &&
             w->ly2[i] == y1)) {
            bp_world_remove_line(w, i);
            return 1;
        }
    }
    return 0;
}

/* Applies entry e forward (redo) or backward (undo). */
static int apply(const bp_undo_entry *e, bp_world *w, int forward)
{
    int add = (e->kind == BP_UNDO_ADDED) == forward;
    for (uint32_t i = 0; i < e->n; i++) {
        const float *s = e->seg + 4 * (size_t)i;
        if (add) {
            if (bp_world_add_line(w, s[0], s[1], s[2], s[3], NULL, 0) < 0)
                return -1;
        } else {
            /* A segment already gone (cleared since) is simply skipped. */
            bp_lines_remove_equal(w, s[0], s[1], s[2], s[3]);
        }
    }
    return 1;
}

int bp_undo_undo(bp_undo *u, bp_world *w)
{
    if (u->pos == 0)
        return 0;
    u->pos--;
    return apply(&u->e[u->pos], w, 0);
}

int bp_undo_redo(bp_undo *u, bp_world *w)
{
    if (u->pos == u->len)
        return 0;
    u->pos++;
    return apply(&u->e[u->pos - 1], w, 1);
}

uint32_t bp_undo_depth(const bp_undo *u)
{
    return u->pos;
}

uint32_t bp_undo_redo_depth(const bp_undo *u)
{
    return u->len - u->pos;
}

/* cmdq.c - fixed ring of edit commands (see cmdq.h). */
#include "cmdq.h"

#include <stdlib.h>
#include <string.h>

void bp_cmd_free(bp_cmd *c)
{
    if (!c)
        return;
    free(c->pts);
    free(c->str);
    memset(c, 0, sizeof *c);
}

const char *bp_cmd_name(bp_cmd_kind k)
{
    switch (k) {
    case BP_CMD_NONE: return "none";
    case BP_CMD_ADD_LINES: return "add lines";
    case BP_CMD_ERASE: return "erase";
    case BP_CMD_UNDO: return "undo";
    case BP_CMD_REDO: return "redo";
    case BP_CMD_SPAWN: return "spawn";
    case BP_CMD_CLEAR_BALLS: return "clear balls";
    case BP_CMD_CLEAR_LINES: return "clear lines";
    case BP_CMD_RESET: return "reset";
    case BP_CMD_LOAD: return "load";
    case BP_CMD_SAVE: return "save";
    case BP_CMD_ENGINE_TOGGLE: return "engine toggle";
    case BP_CMD_PAUSE_TOGGLE: return "pause";
    case BP_CMD_STEP_ONE: return "step";
    case BP_CMD_GRAVITY_TOGGLE: return "gravity";
    case BP_CMD_SLOWMO_TOGGLE: return "slow motion";
    case BP_CMD_SUBSTEPS: return "sub-steps";
    }
    return "?";
}

int bp_cmdq_init(bp_cmdq *q, uint32_t cap)
{
    memset(q, 0, sizeof *q);
    if (cap == 0)
        cap = BP_CMDQ_DEFAULT_CAP;
    q->ring = calloc(cap, sizeof *q->ring);
    if (!q->ring)
        return -1;
    q->cap = cap;
    return 0;
}

void bp_cmdq_free(bp_cmdq *q)
{
    bp_cmd c;
    if (!q->ring)
        return;
    while (bp_cmdq_pop(q, &c))
        bp_cmd_free(&c);
    free(q->ring);
    memset(q, 0, sizeof *q);
}

int bp_cmdq_push(bp_cmdq *q, bp_cmd *c)
{
    if (!q->ring || q->len == q->cap) {
        q->dropped++;
        return -1;
    }
    q->ring[(q->head + q->len) % q->cap] = *c;
    q->len++;
    memset(c, 0, sizeof *c);
    return 0;
}

int bp_cmdq_pop(bp_cmdq *q, bp_cmd *out)
{
    if (q->len == 0)
        return 0;
    *out = q->ring[q->head];
    memset(&q->ring[q->head], 0, sizeof q->ring[q->head]);
    q->head = (q->head + 1) % q->cap;
    q->len--;
    return 1;
}

uint32_t bp_cmdq_len(const bp_cmdq *q)
{
    return q->len;
}

/* test_cmdq.c - the edit command ring (src/app/cmdq.c). */
#include <stdlib.h>

#include "app/cmdq.h"
#include "test.h"

static int fifo_order_and_wraparound(void)
{
    bp_cmdq q;
    ENSURE(bp_cmdq_init(&q, 4) == 0);
    /* Push and pop past the ring's end several times: order must hold. */
    uint32_t next_in = 0, next_out = 0;
    for (int round = 0; round < 10; round++) {
        for (int k = 0; k < 3; k++) {
            bp_cmd c = { .kind = BP_CMD_SPAWN, .u = next_in++ };
            ENSURE(bp_cmdq_push(&q, &c) == 0);
            ENSURE(c.kind == BP_CMD_NONE); /* moved out of the caller */
        }
        ENSURE(bp_cmdq_len(&q) == 3);
        bp_cmd out;
        for (int k = 0; k < 3; k++) {
            ENSURE(bp_cmdq_pop(&q, &out) == 1);
            ENSURE(out.kind == BP_CMD_SPAWN);
            ENSURE(out.u == next_out);
            next_out++;
        }
        ENSURE(bp_cmdq_pop(&q, &out) == 0);
    }
    bp_cmdq_free(&q);
    return 0;
}

static int full_ring_refuses_and_keeps_payload(void)
{
    bp_cmdq q;
    ENSURE(bp_cmdq_init(&q, 2) == 0);
    for (int i = 0; i < 2; i++) {
        bp_cmd c = { .kind = BP_CMD_UNDO };
        ENSURE(bp_cmdq_push(&q, &c) == 0);
    }
    bp_cmd c = { .kind = BP_CMD_ADD_LINES, .npts = 2 };
    c.pts = malloc(4 * sizeof *c.pts);
    ENSURE(c.pts != NULL);
    ENSURE(bp_cmdq_push(&q, &c) == -1);
    /* Refused: the caller still owns the payload. */
    ENSURE(c.pts != NULL && c.kind == BP_CMD_ADD_LINES);
    ENSURE(q.dropped == 1);
    bp_cmd_free(&c);
    ENSURE(c.pts == NULL);
    bp_cmdq_free(&q);
    return 0;
}

static int payload_travels_and_free_releases_queued(void)
{
    bp_cmdq q;
    ENSURE(bp_cmdq_init(&q, 0) == 0);
    ENSURE(q.cap == BP_CMDQ_DEFAULT_CAP);
    bp_cmd c = { .kind = BP_CMD_SAVE };
    c.str = malloc(8);
    ENSURE(c.str != NULL);
    memcpy(c.str, "a.scene", 8);
    char *sent = c.str;
    ENSURE(bp_cmdq_push(&q, &c) == 0);
    bp_cmd out;
    ENSURE(bp_cmdq_pop(&q, &out) == 1);
    ENSURE(out.str == sent && strcmp(out.str, "a.scene") == 0);
    bp_cmd_free(&out);
    /* Commands still queued at free time are released (ASan checks). */
    bp_cmd d = { .kind = BP_CMD_LOAD };
    d.str = malloc(16);
    ENSURE(d.str != NULL);
    ENSURE(bp_cmdq_push(&q, &d) == 0);
    bp_cmdq_free(&q);
    ENSURE(q.ring == NULL);
    return 0;
}

static int names(void)
{
    ENSURE(strcmp(bp_cmd_name(BP_CMD_SPAWN), "spawn") == 0);
    ENSURE(strcmp(bp_cmd_name(BP_CMD_ENGINE_TOGGLE), "engine toggle") == 0);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(fifo_order_and_wraparound),
        BP_TEST(full_ring_refuses_and_keeps_payload),
        BP_TEST(payload_travels_and_free_releases_queued),
        BP_TEST(names),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

/* test_snapshot.c - the triple-buffered snapshot hand-over
 * (src/app/snapshot.c): newest wins, no slot is shared, and under two
 * threads the reader never sees a half-written snapshot. */
#include <pthread.h>
#include <stdlib.h>

#include "app/snapshot.h"
#include "test.h"

static int empty_before_first_publish(void)
{
    bp_snapbuf b;
    bp_snapbuf_init(&b);
    int fresh = 7;
    ENSURE(bp_snapbuf_acquire(&b, &fresh) == NULL);
    ENSURE(fresh == 0);
    bp_snapbuf_free(&b);
    return 0;
}

static int newest_wins_and_slots_stay_apart(void)
{
    bp_snapbuf b;
    bp_snapbuf_init(&b);
    for (int i = 1; i <= 3; i++) {
        bp_snap *s = bp_snapbuf_back(&b);
        s->frame = (uint64_t)i;
        bp_snapbuf_publish(&b);
    }
    int fresh = 0;
    const bp_snap *r = bp_snapbuf_acquire(&b, &fresh);
    ENSURE(r != NULL && fresh == 1);
    ENSURE(r->frame == 3); /* frames 1 and 2 were skipped, not queued */
    ENSURE(r->seq == 3);
    /* The writer's slot is never the one being read. */
    ENSURE(bp_snapbuf_back(&b) != r);
    /* Nothing new: same snapshot, not fresh. */
    const bp_snap *again = bp_snapbuf_acquire(&b, &fresh);
    ENSURE(again == r && fresh == 0);
    bp_snap *s = bp_snapbuf_back(&b);
    ENSURE(s != r);
    s->frame = 4;
    bp_snapbuf_publish(&b);
    ENSURE(bp_snapbuf_back(&b) != r);
    r = bp_snapbuf_acquire(&b, &fresh);
    ENSURE(fresh == 1 && r->frame == 4);
    bp_snapbuf_free(&b);
    return 0;
}

static int fill_copies_world(void)
{
    bp_world *w = bp_world_create(NULL);
    ENSURE(w != NULL);
    ENSURE(bp_world_add_ball(w, 100, 200, 3, 4, 5, 0, NULL, 0) == 0);
    ENSURE(bp_world_add_ball(w, 300, 400, 0, 0, 2, 0, NULL, 0) == 1);
    ENSURE(bp_world_add_line(w, 1, 2, 3, 4, NULL, 0) == 0);
    bp_snap s = { 0 };
    ENSURE(bp_snap_fill(&s, w) == 0);
    ENSURE(s.count == 2 && s.nlines == 1);
    ENSURE_NEAR(s.x[0], 100, 0);
    ENSURE_NEAR(s.y[1], 400, 0);
    ENSURE_NEAR(s.r[0], 5, 0);
    ENSURE_NEAR(s.speed[0], 5, 1e-5); /* |(3,4)| */
    ENSURE_NEAR(s.speed[1], 0, 0);
    ENSURE_NEAR(s.lines[3], 4, 0);
    ENSURE_NEAR(s.world_w, w->params.width, 0);
    /* Shrinking keeps the buffers and just lowers the count. */
    bp_world_clear_balls(w);
    ENSURE(bp_snap_fill(&s, w) == 0);
    ENSURE(s.count == 0 && s.capacity >= 2);
    bp_snap_free(&s);
    bp_world_destroy(w);
    return 0;
}

/* Two threads: the writer fills every element of a snapshot with its
 * sequence number (and a count that depends on it); the reader checks each
 * snapshot it takes is whole and that sequence numbers never go back. */
enum { ROUNDS = 20000 };

typedef struct shared {
    bp_snapbuf b;
    int bad;
} shared;

static void *writer(void *arg)
{
    shared *sh = arg;
    for (uint32_t i = 1; i <= ROUNDS; i++) {
        bp_snap *s = bp_snapbuf_back(&sh->b);
        uint32_t n = 50 + i % 200;
        if (n > s->capacity) {
            free(s->x);
            s->x = malloc(250 * sizeof *s->x);
            if (!s->x) {
                sh->bad = 1;
                return NULL;
            }
            s->capacity = 250;
        }
        for (uint32_t k = 0; k < n; k++)
            s->x[k] = (float)i;
        s->count = n;
        s->frame = i;
        bp_snapbuf_publish(&sh->b);
    }
    return NULL;
}

static int two_threads_never_tear(void)
{
    shared *sh = calloc(1, sizeof *sh);
    ENSURE(sh != NULL);
    bp_snapbuf_init(&sh->b);
    pthread_t t;
    ENSURE(pthread_create(&t, NULL, writer, sh) == 0);
    uint64_t last = 0, seen = 0;
    int bad = 0;
    while (last < ROUNDS && !bad) {
        const bp_snap *s = bp_snapbuf_acquire(&sh->b, NULL);
        if (!s)
            continue;
        if (s->frame < last)
            bad = 1;
        if (s->count != 50 + s->frame % 200)
            bad = 2;
        for (uint32_t k = 0; k < s->count && !bad; k++)
            if (s->x[k] != (float)s->frame)
                bad = 3;
        if (s->frame != last)
            seen++;
        last = s->frame;
    }
    pthread_join(t, NULL);
    ENSURE(bad == 0);
    ENSURE(sh->bad == 0);
    ENSURE(last == ROUNDS); /* the newest one is always delivered */
    ENSURE(seen >= 1);
    bp_snapbuf_free(&sh->b);
    free(sh);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(empty_before_first_publish),
        BP_TEST(newest_wins_and_slots_stay_apart),
        BP_TEST(fill_copies_world),
        BP_TEST(two_threads_never_tear),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

/* snapshot.c - snapshot filling and the lock-free triple buffer. */
#include "snapshot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Grows *p to hold n floats; keeps the old block on failure. */
static int grow(float **p, size_t n)
{
    float *q = realloc(*p, n * sizeof **p);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

int bp_snap_fill(bp_snap *s, const bp_world *w)
{
    if (w->count > s->capacity) {
        /* Grow with headroom: pouring adds balls every frame. */
        size_t cap = (size_t)w->count + w->count / 2 + 64;
        if (grow(&s->x, cap) || grow(&s->y, cap) || grow(&s->r, cap) ||
            grow(&s->speed, cap))
            return -1;
        s->capacity = (uint32_t)cap;
    }
    if (w->nlines > s->lines_capacity) {
        size_t cap = (size_t)w->nlines + w->nlines / 2 + 16;
        if (grow(&s->lines, cap * 4))
            return -1;
        s->lines_capacity = (uint32_t)cap;
    }
    uint32_t n = w->count;
    if (n) {
        memcpy(s->x, w->x, n * sizeof(float));
        memcpy(s->y, w->y, n * sizeof(float));
        memcpy(s->r, w->r, n * sizeof(float));
    }
    for (uint32_t i = 0; i < n; i++)
        s->speed[i] = sqrtf(w->vx[i] * w->vx[i] + w->vy[i] * w->vy[i]);
    s->count = n;
    for (uint32_t i = 0; i < w->nlines; i++) {
        s->lines[4 * i + 0] = w->lx1[i];
        s->lines[4 * i + 1] = w->ly1[i];
        s->lines[4 * i + 2] = w->lx2[i];
        s->lines[4 * i + 3] = w->ly2[i];
    }
    s->nlines = w->nlines;
    s->world_w = w->params.width;
    s->world_h = w->params.height;
    s->frame = w->frames;
    return 0;
}

void bp_snap_free(bp_snap *s)
{
    free(s->x);
    free(s->y);
    free(s->r);
    free(s->speed);
    free(s->lines);
    memset(s, 0, sizeof *s);
}

void bp_snapbuf_init(bp_snapbuf *b)
{
    memset(b->slot, 0, sizeof b->slot);
    b->back = 0;
    b->front = 1;
    atomic_init(&b->middle, 2);
    atomic_init(&b->published, 0);
}

void bp_snapbuf_free(bp_snapbuf *b)
{
    for (int i = 0; i < 3; i++)
        bp_snap_free(&b->slot[i]);
}

bp_snap *bp_snapbuf_back(bp_snapbuf *b)
{
    return &b->slot[b->back];
}

void bp_snapbuf_publish(bp_snapbuf *b)
{
    unsigned long long seq = atomic_load(&b->published) + 1;
    b->slot[b->back].seq = seq;
    /* acq_rel: the slot's contents happen-before the reader's exchange. */
    int old = atomic_exchange_explicit(&b->middle, b->back | BP_SNAP_NEW,
                                       memory_order_acq_rel);
    b->back = old & 3;
    atomic_store(&b->published, seq);
}

const bp_snap *bp_snapbuf_acquire(bp_snapbuf *b, int *fresh)
{
    int f = 0;
    if (atomic_load_explicit(&b->middle, memory_order_acquire) & BP_SNAP_NEW) {
        int old = atomic_exchange_explicit(&b->middle, b->front,
                                           memory_order_acq_rel);
        b->front = old & 3;
        f = 1;
    }
    if (fresh)
        *fresh = f;
    return b->slot[b->front].seq ? &b->slot[b->front] : NULL;
}

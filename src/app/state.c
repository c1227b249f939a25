/* state.c - JSON formatting of the test state file (see state.h). */
#include "state.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct out {
    char *p;
    size_t len, cap;
    int bad;
} out;

static void put(out *o, const char *fmt, ...)
{
    if (o->bad)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= o->cap - o->len) {
        o->bad = 1;
        return;
    }
    o->len += (size_t)n;
}

/* "key":"escaped value" */
static void put_str(out *o, const char *key, const char *v)
{
    put(o, "\"%s\":\"", key);
    for (const unsigned char *c = (const unsigned char *)(v ? v : ""); *c;
         c++) {
        if (*c == '"' || *c == '\\')
            put(o, "\\%c", *c);
        else if (*c < 0x20)
            put(o, "\\u%04x", *c);
        else
            put(o, "%c", *c);
    }
    put(o, "\",");
}

int bp_state_format(const bp_app_state *s, char *buf, size_t len)
{
    if (len < 4)
        return -1;
    out o = { buf, 0, len, 0 };
    put(&o, "{");
    put(&o, "\"frame\":%llu,\"rendered\":%llu,", (unsigned long long)s->frame,
        (unsigned long long)s->rendered);
    put(&o, "\"balls\":%u,\"lines\":%u,", s->balls, s->lines);
    put_str(&o, "engine", s->engine);
    put_str(&o, "device", s->device);
    put_str(&o, "engine_error", s->engine_error);
    put(&o, "\"engine_starting\":%s,", s->starting ? "true" : "false");
    put_str(&o, "message", s->message);
    put_str(&o, "scene", s->scene);
    put(&o, "\"paused\":%s,\"gravity\":%s,\"slowmo\":%s,\"eraser\":%s,"
            "\"help\":%s,\"font\":%s,",
        s->paused ? "true" : "false", s->gravity ? "true" : "false",
        s->slowmo ? "true" : "false", s->eraser ? "true" : "false",
        s->help ? "true" : "false", s->font ? "true" : "false");
    put(&o, "\"substeps\":%u,", s->substeps);
    put(&o, "\"swarm_size\":%u,\"radius\":%g,", s->swarm_size,
        (double)s->radius);
    put(&o, "\"window\":[%d,%d],", s->win_w, s->win_h);
    put(&o, "\"undo\":%u,\"redo\":%u,", s->undo, s->redo);
    put(&o, "\"fps\":%.2f,\"draw_ms\":%.3f,\"frame_ms\":%.3f,"
            "\"step_ms\":%.3f,\"rtf\":%.3f,",
        s->fps, s->draw_ms, s->frame_ms, s->step_ms, s->rtf);
    put(&o, "\"draw_every\":%d,", s->draw_every > 1 ? s->draw_every : 1);
    put_str(&o, "last_screenshot", s->last_screenshot);
    put_str(&o, "screenshot_error", s->screenshot_error);
    if (o.bad)
        return -1;
    o.len--; /* drop the trailing comma */
    put(&o, "}\n");
    return o.bad ? -1 : (int)o.len;
}

/* png.c - PNG writer with stored deflate blocks (see png.h). */
#include "png.h"
#include "bp_util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint32_t bp_crc32(uint32_t crc, const void *buf, size_t len)
{
    static uint32_t table[256];
    static int ready;
    if (!ready) {
        /* Built on first use; identical on every call, so a race between
         * two first callers writes the same values. */
        for (uint32_t n = 0; n < 256; n++) {
            uint32_t c = n;
            for (int k = 0; k < 8; k++)
                c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
            table[n] = c;
        }
        ready = 1;
    }
    const uint8_t *p = buf;
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

uint32_t bp_adler32(uint32_t adler, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    uint32_t a = adler & 0xffff, b = adler >> 16;
    while (len) {
        /* 5552 bytes is the most that cannot overflow 32 bits before mod. */
        size_t n = len < 5552 ? len : 5552;
        len -= n;
        while (n--) {
            a += *p++;
            b += a;
        }
        a %= 65521u;
        b %= 65521u;
    }
    return (b << 16) | a;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return p + 4;
}

/* Writes a chunk header+data+crc at p; data already at p+8. */
static uint8_t *finish_chunk(uint8_t *p, const char type[4], size_t len)
{
    put32(p, (uint32_t)len);
    memcpy(p + 4, type, 4);
    uint32_t crc = bp_crc32(0, p + 4, len + 4);
    return put32(p + 8 + len, crc);
}

int bp_png_encode(const uint8_t *rgba, int w, int h, int stride,
                  uint8_t **out, size_t *outlen, char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    if (!rgba || w <= 0 || h <= 0 || w > 32768 || h > 32768 ||
        stride < 4 * w)
        return bp_fail(err, errlen, "png: bad image %dx%d (stride %d)", w, h,
                    stride);
    size_t row = 1 + 3 * (size_t)w;          /* filter byte + RGB */
    size_t raw = row * (size_t)h;
    size_t nblocks = (raw + 65534) / 65535;
    size_t zlen = 2 + raw + 5 * nblocks + 4; /* header, blocks, adler */
    size_t total = 8 + (12 + 13) + (12 + zlen) + 12;
    uint8_t *png = malloc(total);
    if (!png)
        return bp_fail(err, errlen, "png: out of memory for %zu bytes", total);

    static const uint8_t sig[8] = { 137, 80, 78, 71, 13, 10, 26, 10 };
    uint8_t *p = png;
    memcpy(p, sig, 8);
    p += 8;
    /* IHDR: width, height, depth 8, colour type 2 (RGB), deflate, no
     * filter method variants, no interlace. */
    uint8_t *d = p + 8;
    d = put32(d, (uint32_t)w);
    d = put32(d, (uint32_t)h);
    d[0] = 8;
    d[1] = 2;
    d[2] = d[3] = d[4] = 0;
    p = finish_chunk(p, "IHDR", 13);

    /* IDAT: zlib header (CM=8, CINFO=7, FCHECK so that it divides by 31,
     * no dictionary, "fastest" level), stored blocks, Adler-32. */
    uint8_t *idat = p;
    d = p + 8;
    *d++ = 0x78;
    *d++ = 0x01;
    uint32_t adler = 1;
    size_t left = raw, in_block = 0;
    uint8_t *block_hdr = NULL;
    for (int y = 0; y < h; y++) {
        uint8_t line[1 + 3 * 32768];
        const uint8_t *src = rgba + (size_t)y * (size_t)stride;
        line[0] = 0; /* filter type None */
        for (int x = 0; x < w; x++) {
            line[1 + 3 * x] = src[4 * x];
            line[2 + 3 * x] = src[4 * x + 1];
            line[3 + 3 * x] = src[4 * x + 2];
        }
        adler = bp_adler32(adler, line, row);
        /* Copy the row into as many stored blocks as it spans. */
        size_t off = 0;
        while (off < row) {
            if (in_block == 0) {
                size_t bl = left < 65535 ? left : 65535;
                block_hdr = d;
                d[0] = bl == left ? 1 : 0; /* BFINAL on the last block */
                d[1] = (uint8_t)bl;
                d[2] = (uint8_t)(bl >> 8);
                d[3] = (uint8_t)~bl;
                d[4] = (uint8_t)(~bl >> 8);
                d += 5;
                in_block = bl;
            }
            size_t n = row - off < in_block ? row - off : in_block;
            memcpy(d, line + off, n);
            d += n;
            off += n;
            in_block -= n;
            left -= n;
        }
    }
    (void)block_hdr;
    d = put32(d, adler);
    size_t idat_len = (size_t)(d - (idat + 8));
    p = finish_chunk(idat, "IDAT", idat_len);
    p = finish_chunk(p, "IEND", 0);
    *out = png;
    *outlen = (size_t)(p - png);
    return 0;
}

int bp_png_write(const char *path, const uint8_t *rgba, int w, int h,
                 int stride, char *err, size_t errlen)
{
    uint8_t *png;
    size_t len;
    char why[160];
    if (bp_png_encode(rgba, w, h, stride, &png, &len, why, sizeof why))
        return bp_fail(err, errlen, "%s: %s", path, why);
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >=
        sizeof tmp) {
        free(png);
        return bp_fail(err, errlen, "%s: path too long", path);
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int e = errno;
        free(png);
        return bp_fail(err, errlen, "%s: cannot write: %s", path, strerror(e));
    }
    size_t put = fwrite(png, 1, len, f);
    int e = errno;
    free(png);
    if (put != len || fflush(f) != 0) {
        e = errno ? errno : e;
        fclose(f);
        remove(tmp);
        return bp_fail(err, errlen, "%s: write failed: %s", path,
                    strerror(e ? e : EIO));
    }
    if (fclose(f) != 0) {
        e = errno;
        remove(tmp);
        return bp_fail(err, errlen, "%s: write failed: %s", path, strerror(e));
    }
    if (rename(tmp, path) != 0) {
        e = errno;
        remove(tmp);
        return bp_fail(err, errlen, "%s: cannot rename into place: %s", path,
                    strerror(e));
    }
    return 0;
}

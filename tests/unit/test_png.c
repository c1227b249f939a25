/* test_png.c - the zlib-free PNG writer (src/app/png.c): known CRC-32 and
 * Adler-32 values, and a full decode of what it writes (chunk CRCs, the
 * stored deflate blocks, the Adler trailer, every pixel). */
#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/png.h"
#include "test.h"

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int known_checksums(void)
{
    ENSURE(bp_crc32(0, "123456789", 9) == 0xCBF43926u);
    ENSURE(bp_adler32(1, "Wikipedia", 9) == 0x11E60398u);
    /* Incremental use gives the same answer as one call. */
    uint32_t c = bp_crc32(bp_crc32(0, "1234", 4), "56789", 5);
    ENSURE(c == 0xCBF43926u);
    uint32_t a = bp_adler32(bp_adler32(1, "Wiki", 4), "pedia", 5);
    ENSURE(a == 0x11E60398u);
    return 0;
}

/* Decodes a PNG written by bp_png_encode (stored blocks only) into rgb.
 * Returns 0 or a nonzero code naming the first problem found. */
static int decode(const uint8_t *png, size_t len, int *w, int *h,
                  uint8_t **rgb)
{
    static const uint8_t sig[8] = { 137, 80, 78, 71, 13, 10, 26, 10 };
    if (len < 8 || memcmp(png, sig, 8) != 0)
        return 1;
    size_t pos = 8;
    uint8_t *z = NULL;
    size_t zlen = 0;
    int seen_end = 0;
    while (pos + 12 <= len) {
        uint32_t n = get32(png + pos);
        const uint8_t *type = png + pos + 4;
        if (pos + 12 + n > len)
            return 2;
        if (bp_crc32(0, type, n + 4) != get32(png + pos + 8 + n))
            return 3;
        if (!memcmp(type, "IHDR", 4)) {
            *w = (int)get32(type + 4);
            *h = (int)get32(type + 8);
            if (type[12] != 8 || type[13] != 2 || type[16] != 0)
                return 4;
        } else if (!memcmp(type, "IDAT", 4)) {
            uint8_t *nz = realloc(z, zlen + n);
            if (!nz)
                return 5;
            z = nz;
            memcpy(z + zlen, type + 4, n);
            zlen += n;
        } else if (!memcmp(type, "IEND", 4)) {
            seen_end = 1;
        }
        pos += 12 + n;
    }
    if (!seen_end || pos != len || zlen < 6)
        return 6;
    if (z[0] != 0x78 || ((z[0] << 8) | z[1]) % 31 != 0)
        return 7;
    size_t row = 1 + 3 * (size_t)*w, raw_len = row * (size_t)*h;
    uint8_t *raw = malloc(raw_len ? raw_len : 1);
    size_t zp = 2, out = 0;
    int final = 0;
    while (!final) {
        if (zp + 5 > zlen)
            return 8;
        final = z[zp] & 1;
        if ((z[zp] >> 1) & 3)
            return 9; /* not a stored block */
        uint32_t bl = z[zp + 1] | (uint32_t)z[zp + 2] << 8;
        uint32_t nl = z[zp + 3] | (uint32_t)z[zp + 4] << 8;
        if ((bl ^ 0xffffu) != nl || zp + 5 + bl > zlen || out + bl > raw_len)
            return 10;
        memcpy(raw + out, z + zp + 5, bl);
        out += bl;
        zp += 5 + bl;
    }
    if (out != raw_len || zp + 4 != zlen)
        return 11;
    if (get32(z + zp) != bp_adler32(1, raw, raw_len))
        return 12;
    *rgb = malloc(3 * (size_t)*w * (size_t)*h);
    for (int y = 0; y < *h; y++) {
        if (raw[(size_t)y * row] != 0)
            return 13;
        memcpy(*rgb + 3 * (size_t)*w * y, raw + (size_t)y * row + 1, row - 1);
    }
    free(raw);
    free(z);
    return 0;
}

static int roundtrip(int w, int h)
{
    int stride = 4 * w + 8; /* padded rows must be handled */
    uint8_t *img = malloc((size_t)stride * (size_t)h);
    ENSURE(img);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint8_t *p = img + (size_t)y * stride + 4 * x;
            p[0] = (uint8_t)(x * 7 + y);
            p[1] = (uint8_t)(y * 3);
            p[2] = (uint8_t)(x ^ y);
            p[3] = 255;
        }
    uint8_t *png;
    size_t len;
    char err[128];
    ENSURE(bp_png_encode(img, w, h, stride, &png, &len, err, sizeof err) == 0);
    int dw = 0, dh = 0;
    uint8_t *rgb = NULL;
    int rc = decode(png, len, &dw, &dh, &rgb);
    if (rc)
        fprintf(stderr, "decode problem %d\n", rc);
    ENSURE(rc == 0);
    ENSURE(dw == w && dh == h);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *p = img + (size_t)y * stride + 4 * x;
            const uint8_t *q = rgb + 3 * ((size_t)y * w + x);
            ENSURE(p[0] == q[0] && p[1] == q[1] && p[2] == q[2]);
        }
    free(rgb);
    free(png);
    free(img);
    return 0;
}

static int small_image_roundtrip(void)
{
    return roundtrip(3, 2);
}

static int multi_block_image_roundtrip(void)
{
    /* 300x200 RGB = 180,200 bytes of rows: three stored blocks, with a
     * block boundary in the middle of a row. */
    return roundtrip(300, 200);
}

static int bad_input_refused(void)
{
    uint8_t px[16] = { 0 };
    uint8_t *png = (uint8_t *)1;
    size_t len = 9;
    char err[128] = "";
    ENSURE(bp_png_encode(px, 0, 2, 4, &png, &len, err, sizeof err) == -1);
    ENSURE(png == NULL && len == 0 && strstr(err, "bad image"));
    ENSURE(bp_png_encode(px, 2, 2, 4, &png, &len, err, sizeof err) == -1);
    return 0;
}

static int write_and_unwritable_folder(void)
{
    char dir[] = "/tmp/bp_png_XXXXXX";
    ENSURE(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/a.png", dir);
    uint8_t px[4 * 4 * 4];
    memset(px, 200, sizeof px);
    char err[256] = "";
    ENSURE(bp_png_write(path, px, 4, 4, 16, err, sizeof err) == 0);
    struct stat st;
    ENSURE(stat(path, &st) == 0 && st.st_size > 60);
    /* Into a folder that does not exist: a clear message, no file. */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing/b.png", dir);
    ENSURE(bp_png_write(bad, px, 4, 4, 16, err, sizeof err) == -1);
    ENSURE(strstr(err, "missing/b.png") && strstr(err, "cannot write"));
    ENSURE(stat(bad, &st) != 0);
    /* Read-only folder (skipped as root, who may write anyway). */
    if (geteuid() != 0) {
        char ro[100];
        snprintf(ro, sizeof ro, "%s/ro", dir);
        ENSURE(mkdir(ro, 0555) == 0);
        snprintf(bad, sizeof bad, "%s/c.png", ro);
        ENSURE(bp_png_write(bad, px, 4, 4, 16, err, sizeof err) == -1);
        rmdir(ro);
    }
    remove(path);
    rmdir(dir);
    return 0;
}

int main(int argc, char **argv)
{
    static const bp_test tests[] = {
        BP_TEST(known_checksums),
        BP_TEST(small_image_roundtrip),
        BP_TEST(multi_block_image_roundtrip),
        BP_TEST(bad_input_refused),
        BP_TEST(write_and_unwritable_folder),
    };
    return bp_test_main(argc, argv, tests, BP_TEST_COUNT(tests));
}

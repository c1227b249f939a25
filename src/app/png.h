/* png.h - a tiny PNG writer with no zlib.
 *
 * Screenshots are written as 8-bit RGB PNG whose zlib stream uses stored
 * (uncompressed) deflate blocks: bigger files than zlib would make, but no
 * dependency, and any PNG reader opens them. CRC-32 (PNG chunks) and
 * Adler-32 (zlib trailer) are computed here.
 */
#ifndef BP_PNG_H
#define BP_PNG_H

#include <stddef.h>
#include <stdint.h>

/// CRC-32 (ISO 3309, as PNG uses) of buf, continuing from crc (start 0).
uint32_t bp_crc32(uint32_t crc, const void *buf, size_t len);
/// Adler-32 of buf, continuing from adler (start 1).
uint32_t bp_adler32(uint32_t adler, const void *buf, size_t len);

/// Encodes a w x h image whose rows are `stride` bytes apart and whose
/// pixels are 4 bytes R,G,B,A (alpha dropped) into a malloc'ed PNG in
/// *out / *outlen. Returns 0, or -1 with a reason (bad size, out of memory).
int bp_png_encode(const uint8_t *rgba, int w, int h, int stride,
                  uint8_t **out, size_t *outlen, char *err, size_t errlen);

/// Encodes and writes the image to path atomically (temporary file in the
/// same folder, then rename): a failed write leaves no partial PNG.
/// Returns 0, or -1 with "path: reason" in err.
int bp_png_write(const char *path, const uint8_t *rgba, int w, int h,
                 int stride, char *err, size_t errlen);

#endif

/*
 * hexfile.h — test support: binary fixtures written as commented text ("hex files") and turned
 * into bytes at test time, plus a helper that materialises a fixture directory.
 *
 * Hex file grammar (one token stream, whitespace separated):
 *   # ...            comment to the end of the line
 *   0a1b2c           bytes as pairs of hex digits (any even number of digits per token)
 *   00*252           one byte repeated: <2 hex digits>*<decimal count>
 *   u8:N u16:N u32:N u64:N   little-endian integers; N decimal or 0x-prefixed hex
 * Anything else is an error (the loader says which line).
 */
#ifndef TP_TEST_HEXFILE_H
#define TP_TEST_HEXFILE_H

#include <stddef.h>
#include <stdint.h>

/* Loads `path` and converts it. On success returns 0 and *out (malloc'ed, caller frees) and
 * *n; on error returns -1 and prints the reason to stderr. */
int tp_test_hex_load(const char *path, uint8_t **out, size_t *n);
/* Converts text[0..len) (same grammar); `name` is used in error messages. */
int tp_test_hex_parse(const char *text, size_t len, const char *name, uint8_t **out, size_t *n);
/* Copies the fixture directory `src` into `dst` (created): every `X.hex` becomes the binary
 * file `X`, every other regular file is copied verbatim. Returns 0 or -1 (message on
 * stderr). */
int tp_test_fixture_dir(const char *src, const char *dst);
/* Writes n bytes to path. Returns 0 or -1. */
int tp_test_write_file(const char *path, const void *data, size_t n);

#endif

/*
 * hexfile.c — test support: commented hex fixtures to bytes, and fixture directories to real
 * directories (see hexfile.h for the grammar). Used by unit tests only; plain malloc is fine.
 */
#include "hexfile.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

struct out {
	uint8_t *p;
	size_t n, cap;
};

static int put(struct out *o, uint8_t b)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 256;
		uint8_t *np = realloc(o->p, cap);
		if (!np)
			return -1;
		o->p = np;
		o->cap = cap;
	}
	o->p[o->n++] = b;
	return 0;
}

static int parse_num(const char *s, size_t n, unsigned long long *v)
{
	char buf[40];
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *end;
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return (*end || errno) ? -1 : 0;
}

int tp_test_hex_parse(const char *text, size_t len, const char *name, uint8_t **out, size_t *n)
{
	struct out o = {0};
	size_t i = 0;
	unsigned long line = 1;
	while (i < len) {
		char c = text[i];
		if (c == '\n') {
			line++;
			i++;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '|') {
			i++;
			continue;
		}
		if (c == '#') {
			while (i < len && text[i] != '\n')
				i++;
			continue;
		}
		size_t b = i;
		while (i < len && text[i] != ' ' && text[i] != '\t' && text[i] != '\n' &&
		       text[i] != '\r')
			i++;
		const char *t = text + b;
		size_t tn = i - b;
		const char *colon = memchr(t, ':', tn);
		const char *star = memchr(t, '*', tn);
		if (colon) {
			size_t w = 0;
			if (colon - t == 2 && !memcmp(t, "u8", 2))
				w = 1;
			else if (colon - t == 3 && !memcmp(t, "u16", 3))
				w = 2;
			else if (colon - t == 3 && !memcmp(t, "u32", 3))
				w = 4;
			else if (colon - t == 3 && !memcmp(t, "u64", 3))
				w = 8;
			unsigned long long v;
			if (!w || parse_num(colon + 1, tn - (size_t)(colon + 1 - t), &v) != 0)
				goto bad;
			for (size_t k = 0; k < w; k++)
				if (put(&o, (uint8_t)(v >> (8 * k))) != 0)
					goto oom;
			continue;
		}
		if (star) {
			unsigned long long cnt;
			if (star - t != 2 || hexval(t[0]) < 0 || hexval(t[1]) < 0 ||
			    parse_num(star + 1, tn - 3, &cnt) != 0 || cnt > (1ull << 30))
				goto bad;
			uint8_t byte = (uint8_t)(hexval(t[0]) << 4 | hexval(t[1]));
			for (unsigned long long k = 0; k < cnt; k++)
				if (put(&o, byte) != 0)
					goto oom;
			continue;
		}
		if (tn % 2)
			goto bad;
		for (size_t k = 0; k < tn; k += 2) {
			int hi = hexval(t[k]), lo = hexval(t[k + 1]);
			if (hi < 0 || lo < 0)
				goto bad;
			if (put(&o, (uint8_t)(hi << 4 | lo)) != 0)
				goto oom;
		}
		continue;
	bad:
		fprintf(stderr, "%s:%lu: bad hex token \"%.*s\"\n", name, line, (int)tn, t);
		free(o.p);
		return -1;
	oom:
		fprintf(stderr, "%s: out of memory\n", name);
		free(o.p);
		return -1;
	}
	if (!o.p)
		o.p = malloc(1);
	*out = o.p;
	*n = o.n;
	return 0;
}

static int read_all(const char *path, char **buf, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, len = 0;
	char *p = malloc(cap);
	size_t got;
	while (p && (got = fread(p + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap) {
			char *np = realloc(p, cap * 2);
			if (!np) {
				free(p);
				p = NULL;
				break;
			}
			p = np;
			cap *= 2;
		}
	}
	fclose(f);
	if (!p)
		return -1;
	*buf = p;
	*n = len;
	return 0;
}

int tp_test_hex_load(const char *path, uint8_t **out, size_t *n)
{
	char *text;
	size_t len;
	if (read_all(path, &text, &len) != 0)
		return -1;
	int rc = tp_test_hex_parse(text, len, path, out, n);
	free(text);
	return rc;
}

int tp_test_write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	int ok = fwrite(data, 1, n, f) == n;
	ok &= fclose(f) == 0;
	return ok ? 0 : -1;
}

int tp_test_fixture_dir(const char *src, const char *dst)
{
	if (mkdir(dst, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: %s\n", dst, strerror(errno));
		return -1;
	}
	DIR *d = opendir(src);
	if (!d) {
		fprintf(stderr, "%s: %s\n", src, strerror(errno));
		return -1;
	}
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char in[4096], outp[4096];
		snprintf(in, sizeof in, "%s/%s", src, de->d_name);
		size_t nl = strlen(de->d_name);
		int hex = nl > 4 && !strcmp(de->d_name + nl - 4, ".hex");
		snprintf(outp, sizeof outp, "%s/%.*s", dst, (int)(hex ? nl - 4 : nl), de->d_name);
		if (hex) {
			uint8_t *b;
			size_t n;
			rc = tp_test_hex_load(in, &b, &n);
			if (rc == 0) {
				rc = tp_test_write_file(outp, b, n);
				free(b);
			}
		} else {
			char *b;
			size_t n;
			rc = read_all(in, &b, &n);
			if (rc == 0) {
				rc = tp_test_write_file(outp, b, n);
				free(b);
			}
		}
	}
	closedir(d);
	return rc;
}

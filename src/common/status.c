/*
 * status.c — the status table (generated from TP_STATUS_TABLE) and diagnostics that carry the
 * input location: "path@0xOFFSET: message" for binary files, "path:LINE: message" for text.
 */
#include "common/common.h"

#include <stdio.h>
#include <string.h>

const char *tp_strerror(int status)
{
	switch (status) {
#define TP_STATUS_TEXT(name, value, text)                                                          \
	case value:                                                                                \
		return text;
		TP_STATUS_TABLE(TP_STATUS_TEXT)
#undef TP_STATUS_TEXT
	}
	return "unknown status";
}

const char *tp_status_name(int status)
{
	switch (status) {
#define TP_STATUS_NAME(name, value, text)                                                          \
	case value:                                                                                \
		return #name;
		TP_STATUS_TABLE(TP_STATUS_NAME)
#undef TP_STATUS_NAME
	}
	return "TP_E?";
}

int tp_status_exit_code(int status)
{
	switch (status) {
	case TP_OK:
		return 0;
	case TP_EUSAGE:
		return 1;
	case TP_EOUTPUT:
	case TP_ENOMEM:
		return 3;
	default:
		return 2;
	}
}

static int vdiag(struct tp_diag *d, int status, const char *prefix, const char *fmt, va_list ap)
{
	if (!d || d->status != TP_OK)
		return status;
	d->status = status;
	size_t n = 0;
	if (prefix) {
		n = strlen(prefix);
		if (n >= sizeof d->msg)
			n = sizeof d->msg - 1;
		memcpy(d->msg, prefix, n);
	}
	vsnprintf(d->msg + n, sizeof d->msg - n, fmt, ap);
	return status;
}

int tp_diag_at(struct tp_diag *d, int status, const char *path, uint64_t offset, const char *fmt,
               ...)
{
	char prefix[600];
	snprintf(prefix, sizeof prefix, "%s@0x%llx: ", path ? path : "?",
	         (unsigned long long)offset);
	va_list ap;
	va_start(ap, fmt);
	int r = vdiag(d, status, prefix, fmt, ap);
	va_end(ap);
	return r;
}

int tp_diag_line(struct tp_diag *d, int status, const char *path, unsigned long line,
                 const char *fmt, ...)
{
	char prefix[600];
	snprintf(prefix, sizeof prefix, "%s:%lu: ", path ? path : "?", line);
	va_list ap;
	va_start(ap, fmt);
	int r = vdiag(d, status, prefix, fmt, ap);
	va_end(ap);
	return r;
}

int tp_diag_set(struct tp_diag *d, int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = vdiag(d, status, NULL, fmt, ap);
	va_end(ap);
	return r;
}

/*
 * output.c — tp_output_write: the part every output shares (see output.h). It names the file
 * inside OUT_DIR for the outputs that write it themselves, and owns the buffer and the file for
 * the outputs that only render their contents.
 */
#include "writers/output.h"

int tp_output_write(const struct tp_output *out, const struct tp_profile *p,
                    const struct tp_analysis *a, const struct tp_out_opts *o, struct tp_diag *d)
{
	const char *dir = o && o->out_dir ? o->out_dir : ".";
	if (out->render) {
		struct tp_buf b;
		tp_buf_init(&b);
		int st = out->render(p, a, o, &b, d);
		if (st == TP_OK && (b.len || b.oom))
			st = tp_write_buf_file(dir, out->file, &b, d);
		tp_buf_free(&b);
		return st;
	}
	char *path = tp_path_join(dir, out->file);
	if (!path)
		return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", out->file);
	int st = out->write(p, a, path, o, d);
	tp_free(path);
	return st;
}

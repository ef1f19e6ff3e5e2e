/*
 * vendor.c — the "vendor" output: OUT_DIR/vendor/ with the files the vendor's profiler writes
 * for the same dump (vendor.h). The folder is written whole under a temporary name and then
 * swapped with the previous one, so it never mixes two runs' files (one chip's files with
 * another's) and a failed run leaves the previous folder as it was. Owns nothing past a call.
 */
#define _GNU_SOURCE /* renameat2 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writers/vendor/vendor_int.h"

int tp_vendor_write_dir(const struct tp_profile *p, const struct tp_analysis *a, const char *dir,
                        size_t *nfiles, struct tp_diag *d)
{
	struct vf_ctx c = {.p = p, .fl = vf_flavour_of(p)};
	if (nfiles)
		*nfiles = 0;
	if (c.fl == VF_NONE)
		return TP_OK;
	if (c.fl == VF_LEGACY) {
		int rc = vf_write_instruction_csv(&c, dir, nfiles, d);
		return rc == TP_OK ? vf_write_layer_files(&c, a, dir, nfiles, d) : rc;
	}
	int rc = vf_write_reginfo(&c, dir, nfiles, d);
	if (rc == TP_OK)
		rc = vf_write_perfai_csv(&c, dir, nfiles, d);
	return rc;
}

/* Removes the files of a folder this output wrote earlier, then the folder; best effort (a
 * folder someone put a subfolder into stays, under its temporary name). */
static void remove_old(const char *path)
{
	DIR *dir = opendir(path);
	struct dirent *e;
	while (dir && (e = readdir(dir)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, ".."))
			unlinkat(dirfd(dir), e->d_name, 0);
	if (dir)
		closedir(dir);
	rmdir(path);
}

/* Puts folder tmp at path: swapped with an existing folder (whose old files are then
 * removed) or renamed. */
static int swap_into_place(const char *tmp, const char *path, struct tp_diag *d)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
#ifdef RENAME_EXCHANGE
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0) {
			remove_old(tmp);
			return TP_OK;
		}
#endif
		char *old = tp_temp_path_for(path);
		if (!old)
			return tp_diag_set(d, TP_ENOMEM, "%s: out of memory", path);
		unlink(old);
		int moved = rename(path, old) == 0;
		tp_temp_forget(old);
		if (!moved) {
			int e = errno;
			tp_free(old);
			return tp_diag_set(d, TP_EOUTPUT, "%s: cannot move the previous folder: %s",
			                   path, strerror(e));
		}
		if (rename(tmp, path) != 0) {
			int e = errno;
			rename(old, path); /* put the previous folder back */
			tp_free(old);
			return tp_diag_set(d, TP_EOUTPUT, "%s: cannot rename into place: %s", path,
			                   strerror(e));
		}
		remove_old(old);
		tp_free(old);
		return TP_OK;
	}
	if (rename(tmp, path) != 0)
		return tp_diag_set(d, TP_EOUTPUT, "%s: cannot rename into place: %s", path,
		                   strerror(errno));
	return TP_OK;
}

int tp_vendor_output_write(const struct tp_profile *p, const struct tp_analysis *a,
                           const char *path, const struct tp_out_opts *o, struct tp_diag *d)
{
	(void)o;
	if (vf_flavour_of(p) == VF_NONE)
		return TP_OK;
	char *tmp = tp_temp_path_for(path);
	if (!tmp)
		return tp_diag_set(d, TP_ENOMEM, "vendor files: out of memory");
	/* tp_temp_path_for made an empty file under the fresh name: a folder takes its place. */
	unlink(tmp);
	tp_temp_forget(tmp);
	int rc = TP_OK;
	if (mkdir(tmp, 0777) != 0) {
		rc = tp_diag_set(d, TP_EOUTPUT, "%s: cannot create: %s", tmp, strerror(errno));
		goto out;
	}
	tp_temp_track_dir(tmp); /* an interrupted run leaves no empty temporary folder */
	size_t n = 0;
	rc = tp_vendor_write_dir(p, a, tmp, &n, d);
	if (rc == TP_OK)
		rc = swap_into_place(tmp, path, d);
	if (rc != TP_OK)
		remove_old(tmp);
	tp_temp_forget(tmp);
out:
	tp_free(tmp);
	return rc;
}

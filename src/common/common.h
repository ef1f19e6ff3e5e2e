/*
 * common.h — the foundations every tpuprof module stands on: the status table, diagnostics
 * that say where an input went wrong, the allocation wrapper (with a fault-injection hook),
 * the chunked arena, the bounds-checked little-endian byte cursor, string interning, and
 * atomic output files (temporary name + rename).
 *
 * Nothing here owns global state except the allocation fault hook, which exists for tests.
 */
#ifndef TP_COMMON_H
#define TP_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------------------------------- */
/* Status table. TP_OK is 0, every error is negative. The CLI maps classes to exit codes:    */
/* usage errors -> 1, input errors -> 2, output errors -> 3.                                 */
/* ---------------------------------------------------------------------------------------- */

#define TP_STATUS_TABLE(X)                                                                         \
	X(TP_OK, 0, "success")                                                                     \
	X(TP_ENOMEM, -1, "out of memory")                                                          \
	X(TP_EUSAGE, -2, "invalid usage")                                                          \
	X(TP_EIO, -3, "cannot read input")                                                         \
	X(TP_EFORMAT, -4, "malformed input")                                                       \
	X(TP_ETRUNC, -5, "truncated input")                                                        \
	X(TP_ENOTFOUND, -6, "input not found")                                                     \
	X(TP_EUNSUPPORTED, -7, "unsupported input")                                                \
	X(TP_EOUTPUT, -8, "cannot write output")                                                   \
	X(TP_ERANGE, -9, "value out of range")

enum tp_status {
#define TP_STATUS_ENUM(name, value, text) name = value,
	TP_STATUS_TABLE(TP_STATUS_ENUM)
#undef TP_STATUS_ENUM
};

/* Human text for a status ("malformed input"); never NULL. */
const char *tp_strerror(int status);
/* The enumerator's name ("TP_EFORMAT"); never NULL. */
const char *tp_status_name(int status);
/* Process exit code for a status: 0 ok, 1 usage, 2 bad input, 3 output failure. */
int tp_status_exit_code(int status);

/* ---------------------------------------------------------------------------------------- */
/* Diagnostics. Library code never prints: it fills a tp_diag and returns the status.        */
/* ---------------------------------------------------------------------------------------- */

#define TP_DIAG_MAX 1024

struct tp_diag {
	int status;            /* the status of the first error recorded, TP_OK if none */
	char msg[TP_DIAG_MAX]; /* one line, no trailing newline */
};
typedef struct tp_diag tp_diag;

/* Records "path@0xOFFSET: message" (binary inputs). Keeps the first error only; returns
 * `status` so callers can write `return tp_diag_at(d, TP_EFORMAT, path, off, "...")`.
 * `d` may be NULL. `path` is printed as given (callers pass the file's display name). */
int tp_diag_at(struct tp_diag *d, int status, const char *path, uint64_t offset, const char *fmt,
               ...) __attribute__((format(printf, 5, 6)));
/* Records "path:LINE: message" (text inputs). Same contract as tp_diag_at. */
int tp_diag_line(struct tp_diag *d, int status, const char *path, unsigned long line,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Records "message" with no location (paths given inside the message if needed). */
int tp_diag_set(struct tp_diag *d, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---------------------------------------------------------------------------------------- */
/* Allocation. Every heap allocation in the project goes through these, so tests can make   */
/* the Nth allocation fail (tp_alloc_fail_after) and exercise out-of-memory paths.          */
/* ---------------------------------------------------------------------------------------- */

void *tp_malloc(size_t n);
void *tp_calloc(size_t count, size_t size);
void *tp_realloc(void *p, size_t n);
/* Grows an array to hold at least `need` elements of `elem` bytes; *cap is updated. Returns
 * the new pointer or NULL (old block untouched) on overflow or out of memory. */
void *tp_grow(void *p, size_t elem, size_t need, size_t *cap);
/* Appends one element of `elem` bytes to the array whose pointer is at `arrp` (a `T **`, read
 * and written with memcpy so any element type fits without aliasing a `void **`), holding *n
 * elements in *cap slots: grows it through tp_grow, bumps *n and returns the new slot, left
 * uninitialised for the caller to fill. NULL on overflow or out of memory, with nothing
 * changed. */
void *tp_push(void *arrp, size_t elem, size_t *n, size_t *cap);
char *tp_strdup(const char *s);
void tp_free(void *p);
/* Frees the n blocks whose pointers the array `arr` holds (a `T **`, read with memcpy; NULL
 * entries are fine), then the array itself. */
void tp_free_each(void *arr, size_t n);
/* Frees the n blocks listed (NULL ones are fine). TP_FREE_ALL(a, b, ...) lists a free
 * function's owned members in one call instead of a tp_free line each. */
void tp_free_list(void *const *blocks, size_t n);
#define TP_FREE_ALL(...)                                                                           \
	tp_free_list((void *const[]){__VA_ARGS__},                                                 \
	             sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* The last member of a struct whose array elements threads update at once, each its own:
 * one element's last fields and the next one's first then never share a cache line. (The
 * arrays come from tp_malloc, 16-byte aligned, so aligning the struct would not do.) */
#define TP_LINE_PAD char line_pad_[64]

/* Calls fn(arg, k) once for each k in [0, n), on up to `threads` threads (the caller is one of
 * them; at most 64; fewer when threads cannot start). Returns when every call has returned.
 * Calls run concurrently in any order: fn must only touch what index k owns. */
void tp_par_run(unsigned threads, size_t n, void (*fn)(void *arg, size_t k), void *arg);
/* The most threads a conversion runs (--jobs; tp_par_run's and the pools' limit). */
#define TP_MAX_JOBS 64
/* How many CPUs this process may use (resources.c): those of its affinity, at most its cgroup's
 * CPU quota rounded up; at least 1. Found once per process. */
int tp_cpu_count(void);
/* The default of --jobs: tp_cpu_count, at most TP_MAX_JOBS. */
int tp_jobs_default(void);
/* tp_cpu_count for `affinity` CPUs, the cgroups listed in the file proc_cgroup (the format of
 * /proc/self/cgroup; NULL: none) and cgroup file systems mounted at root. */
int tp_cpu_count_in(int affinity, const char *proc_cgroup, const char *root);
/* Bytes of memory this process may use (resources.c): the system's MemAvailable, at most its
 * cgroup's memory limit; 0 if neither is known. */
uint64_t tp_mem_room(void);
/* tp_mem_room from the file meminfo (the format of /proc/meminfo; NULL: none) and the
 * cgroups as for tp_cpu_count_in. */
uint64_t tp_mem_room_in(const char *meminfo, const char *proc_cgroup, const char *root);
/* How many parts of at most `size` items n items make (at least 1, for n = 0 too). */
static inline size_t tp_split_count(size_t n, size_t size)
{
	size_t np = size ? n / size + (n % size != 0) : 1;
	return np ? np : 1;
}
/* Items [*lo, *hi) of part q when n items are cut into np parts of nearly equal size, in
 * order (the last ones may be shorter or empty). */
static inline void tp_split_at(size_t n, size_t np, size_t q, size_t *lo, size_t *hi)
{
	size_t per = n / np + (n % np != 0);
	*lo = q * per < n ? q * per : n;
	*hi = n - *lo < per ? n : *lo + per;
}

/* Sorts the indexes v[0..n) stably by `before` (nonzero: index x goes before index y; two
 * indexes neither of which goes first keep their input order) with a bottom-up merge sort through
 * the caller's tmp[0..n); runs already in order are copied, not merged. The result is in v. */
void tp_sort_index(uint32_t *v, uint32_t *tmp, size_t n,
                   int (*before)(const void *ctx, uint32_t x, uint32_t y), const void *ctx);
/* The three-way comparison (-1, 0, 1) of two sort keys of n components, the first deciding
 * first: what the qsort comparators that order by several fields return. The components are
 * int64 (unsigned ones below 2^63, or through tp_key_u64); a field sorted descending goes in with
 * the two sides swapped. */
static inline int tp_cmp_keys(const int64_t *a, const int64_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}
/* A uint64 sort-key component that may reach 2^63 (ids a user or a trace chose), as an int64
 * component of tp_cmp_keys: flipping the top bit maps unsigned order onto signed order. */
static inline int64_t tp_key_u64(uint64_t u)
{
	return (int64_t)(u ^ UINT64_C(1) << 63);
}
/* Binary search over a sorted table of n entries: the first index i < n whose entry sorts
 * after the caller's key (`after(ctx, i)` nonzero), or n when none does. `after` must be zero
 * for a prefix of the table and nonzero from there on; ctx holds the table and the key. */
size_t tp_upper_bound(size_t n, int (*after)(const void *ctx, size_t i), const void *ctx);
/* tp_upper_bound over n elements of `size` bytes at base sorted by the int64 at byte offset
 * `off` of each: the first index whose field is above key, or n. */
size_t tp_upper_bound_i64(const void *base, size_t n, size_t size, size_t off, int64_t key);
/* A walk over the indexes i < n of a table that `keep` accepts, in `before` order (a strict
 * total order), without a sorted index: for a table nearly in that order already, a window of
 * the next TP_WALK_WINDOW accepted indexes is kept sorted and its first one handed out.
 * tp_walk_ordered makes one walk and says whether the window sufficed (the indexes came out
 * ascending; then every walk hands out exactly the sorted order), so a caller can keep this
 * struct (~170 bytes, no allocation) instead of 4 bytes per element; else it sorts an index.
 * Owns nothing; ctx is the caller's table. n < 2^32. */
#define TP_WALK_WINDOW 32
struct tp_walk {
	size_t n, next; /* table size; next table index to look at */
	int (*keep)(const void *ctx, size_t i);
	int (*before)(const void *ctx, uint32_t x, uint32_t y);
	const void *ctx;
	uint32_t win[TP_WALK_WINDOW]; /* ring, in `before` order from head */
	size_t head, len;
	size_t k;           /* indexes handed out so far (tp_walk_at) */
	uint32_t cur, prev; /* the last two handed out */
};
void tp_walk_start(struct tp_walk *w, size_t n, int (*keep)(const void *ctx, size_t i),
                   int (*before)(const void *ctx, uint32_t x, uint32_t y), const void *ctx);
/* The next index of the walk into *out: 1, or 0 when the walk is over. */
int tp_walk_next(struct tp_walk *w, uint32_t *out);
/* Walks once from the start: 1 when the indexes came out in `before` order; *count = how many
 * `keep` accepted. Leaves the walk at its start. */
int tp_walk_ordered(struct tp_walk *w, size_t *count);
/* The k-th index of the walk (k < the count): the one after the last asked for, or either of
 * the last two, cost O(1); a k further back starts the walk over. */
uint32_t tp_walk_at(struct tp_walk *w, size_t k);
/* Test hook: the allocation after `n` more successful ones fails (n < 0 disables). Not
 * thread-safe; tests only. Returns how many allocations were made since the last call. */
long tp_alloc_fail_after(long n);

/* ---------------------------------------------------------------------------------------- */
/* Arena: chunked bump allocator. Everything of one loaded profile lives in one arena and is */
/* released by one tp_arena_free. Not thread-safe.                                           */
/* ---------------------------------------------------------------------------------------- */

struct tp_arena_chunk;
struct tp_arena {
	struct tp_arena_chunk *head;
	size_t chunk_size; /* default size of new chunks */
	size_t used;       /* bytes handed out (statistics) */
	size_t reserved;   /* bytes allocated from the heap (statistics) */
};
typedef struct tp_arena tp_arena;

void tp_arena_init(struct tp_arena *a, size_t chunk_size);
/* Returns 16-byte aligned zeroed memory, or NULL on out of memory / overflow. */
void *tp_arena_alloc(struct tp_arena *a, size_t n);
/* Copies n bytes and appends a NUL (byte-aligned: strings are packed). */
char *tp_arena_strndup(struct tp_arena *a, const char *s, size_t n);
char *tp_arena_strdup(struct tp_arena *a, const char *s);
void tp_arena_free(struct tp_arena *a);

/* ---------------------------------------------------------------------------------------- */
/* Byte cursor: the one way binary input is read. Reads are little-endian and bounds-checked; */
/* the first failure makes the cursor sticky-bad (every later read returns 0) and remembers   */
/* the absolute file offset where it happened.                                               */
/* ---------------------------------------------------------------------------------------- */

struct tp_cursor {
	const uint8_t *base; /* first byte of this cursor's window */
	size_t len;          /* window length */
	size_t pos;          /* read position inside the window */
	uint64_t origin;     /* absolute file offset of base[0], for messages */
	int bad;             /* sticky: a read went past the window */
	uint64_t bad_at;     /* absolute offset of the failed read */
	size_t bad_need;     /* bytes the failed read wanted */
};
typedef struct tp_cursor tp_cursor;

void tp_cur_init(struct tp_cursor *c, const void *base, size_t len, uint64_t origin);
static inline size_t tp_cur_left(const struct tp_cursor *c)
{
	return c->bad ? 0 : c->len - c->pos;
}
static inline uint64_t tp_cur_offset(const struct tp_cursor *c)
{
	return c->origin + c->pos;
}
uint8_t tp_cur_u8(struct tp_cursor *c);
uint16_t tp_cur_u16(struct tp_cursor *c);
uint32_t tp_cur_u32(struct tp_cursor *c);
uint64_t tp_cur_u64(struct tp_cursor *c);
/* Returns a pointer to the next n bytes and advances, or NULL (cursor goes bad). */
const uint8_t *tp_cur_bytes(struct tp_cursor *c, size_t n);
/* Skips n bytes; 0 on success, -1 (cursor bad) if fewer remain. */
int tp_cur_skip(struct tp_cursor *c, size_t n);
/* Carves the next n bytes into `sub` (which can never read past them) and advances.
 * Returns 0, or -1 with `c` marked bad when fewer than n bytes remain. */
int tp_cur_sub(struct tp_cursor *c, size_t n, struct tp_cursor *sub);
/* Little-endian loads from a raw pointer that the caller has bounds-checked. */
static inline uint32_t tp_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t tp_le64(const uint8_t *p)
{
	return (uint64_t)tp_le32(p) | (uint64_t)tp_le32(p + 4) << 32;
}
/* Bits [lo, lo+width) of a little-endian bit stream (bit 0 = LSB of byte 0); width <= 64.
 * The caller guarantees the stream holds those bits. */
uint64_t tp_bits(const uint8_t *p, unsigned lo, unsigned width);

/* ---------------------------------------------------------------------------------------- */
/* String interning. Id 0 is always "". Strings live in the table's own blocks.              */
/* ---------------------------------------------------------------------------------------- */

/* Strings are copied into blocks of 2^TP_STRTAB_BLOCK_BITS bytes (a longer string gets a block
 * of its own); an id's location is a uint32_t (block << TP_STRTAB_BLOCK_BITS | offset), so a
 * table holds up to 2^(32 - TP_STRTAB_BLOCK_BITS) blocks (4 GiB of strings) and each string
 * is shorter than TP_STRTAB_MAX_LEN bytes: beyond that, adding fails with TP_ENOMEM. */
#define TP_STRTAB_BLOCK_BITS 20
#define TP_STRTAB_MAX_LEN ((size_t)1 << 31)
struct tp_strtab {
	char **blocks; /* owned; each (at least) 2^TP_STRTAB_BLOCK_BITS bytes */
	uint32_t nblocks, cap_blocks;
	size_t used;    /* bytes used in the last block */
	uint32_t *locs; /* owned; id -> location of its varint header, bytes, NUL */
	uint32_t count, cap;
	uint32_t nfind;  /* ids linked into the hash */
	uint32_t *slots; /* open-addressing hash: id+1, 0 = empty */
	uint32_t nslots;
	/* The reserved batches (first id, count; in id order): unique strings whose headers the
	 * fill writes, which a rehash therefore skips unread. Owned. */
	uint32_t (*resv)[2];
	size_t nresv, cap_resv;
};
typedef struct tp_strtab tp_strtab;

/* Makes an empty table holding "" as id 0. TP_OK or TP_ENOMEM (then free it anyway). */
int tp_strtab_init(struct tp_strtab *t);
void tp_strtab_free(struct tp_strtab *t);
/* Interns s[0..n) and stores its id in *id. Returns TP_OK or TP_ENOMEM. */
int tp_strtab_intern(struct tp_strtab *t, const char *s, size_t n, uint32_t *id);
/* Adds s[0..n) under a new id WITHOUT making it findable (no de-duplication): for strings
 * that are nearly always unique (layer names), where hashing millions of them costs more than
 * it saves. Returns TP_OK or TP_ENOMEM. */
int tp_strtab_add_unique(struct tp_strtab *t, const char *s, size_t n, uint32_t *id);
/* A batch of unique strings added in two steps, so that another thread copies the bytes:
 * tp_strtab_reserve_unique gives strings 0..n-1 (lengths len[], each > 0) the ids
 * *first + i, the same ids and table as n tp_strtab_add_unique calls, and places them
 * without writing there, and describes the places as runs (a run's strings are stored back
 * to back from `at`, header first). tp_strtab_fill_unique then writes the headers and bytes,
 * on any thread, while the table's thread goes on adding strings: nothing reads a reserved
 * string before the fill is done (the caller's to ensure), and the runs stay valid until the
 * table is freed. *run (*cap_run entries, tp_grow'n) receives *nrun runs. TP_OK, or
 * TP_ENOMEM with the table as it was. */
struct tp_strtab_run {
	char *at;
	size_t count;
};
int tp_strtab_reserve_unique(struct tp_strtab *t, const uint32_t *len, size_t n, uint32_t *first,
                             struct tp_strtab_run **run, size_t *nrun, size_t *cap_run);
/* Writes the strings a reservation placed: bytes holds them back to back, in order, len[]
 * their lengths (the arrays given to tp_strtab_reserve_unique). */
void tp_strtab_fill_unique(const struct tp_strtab_run *run, size_t nrun, const uint32_t *len,
                           const char *bytes);
/* The string of an id (NUL-terminated); "" for an out-of-range id. */
const char *tp_strtab_get(const struct tp_strtab *t, uint32_t id);
/* Looks a string up without adding it; returns 1 and sets *id if present, else 0. */
int tp_strtab_find(const struct tp_strtab *t, const char *s, size_t n, uint32_t *id);

/* ---------------------------------------------------------------------------------------- */
/* Files.                                                                                   */
/* ---------------------------------------------------------------------------------------- */

/* An open-addressing index over an array the caller owns ("find or append" tables): slot
 * values are element index + 1 (0 = empty), at most half the slots are used, linear probing.
 * The caller hashes and compares its elements; a lookup walks
 *     for (k = tp_ixmap_start(m, h); m->slot[k]; k = tp_ixmap_next(m, k))
 *         if (same(element m->slot[k] - 1)) ...found...
 * and an append stores its index + 1 in the empty slot the walk ended on. Zero-initialise. */
struct tp_ixmap {
	uint32_t *slot;
	size_t cap; /* 0, or a power of two */
};
typedef size_t (*tp_ixmap_hash_fn)(const void *ctx, size_t i);
int tp_ixmap_grow(struct tp_ixmap *m, size_t n, tp_ixmap_hash_fn hash, const void *ctx);
/* Makes room for one more element while elements 0..n-1 are in the map: when the table must
 * grow it is rebuilt (tp_ixmap_grow), hashing each element with hash(ctx, i). Call before
 * every walk that may end in an append (inline: one compare when there is room). TP_OK, or
 * TP_ENOMEM (the map is unchanged). */
static inline int tp_ixmap_reserve(struct tp_ixmap *m, size_t n, tp_ixmap_hash_fn hash,
                                   const void *ctx)
{
	return 2 * (n + 1) <= m->cap ? TP_OK : tp_ixmap_grow(m, n, hash, ctx);
}
static inline size_t tp_ixmap_start(const struct tp_ixmap *m, size_t h)
{
	return h & (m->cap - 1);
}
static inline size_t tp_ixmap_next(const struct tp_ixmap *m, size_t k)
{
	return (k + 1) & (m->cap - 1);
}
void tp_ixmap_free(struct tp_ixmap *m);
/* Grows an open-addressing table whose slots hold whole entries of `size` bytes (zero bytes:
 * empty; used(e) nonzero for a used entry): a zeroed table of twice *cap entries (first_cap, a
 * power of two, when *cap is 0) gets each used entry of from[0..*cap) at the first free slot
 * from hash(e, new cap) on (linear probing); from is freed and *cap updated. Returns the new
 * table, or NULL (out of memory; from and *cap untouched). */
void *tp_oa_grow(void *from, size_t *cap, size_t first_cap, size_t size, int (*used)(const void *e),
                 size_t (*hash)(const void *e, size_t cap));
/* Empties such a table of cap slots of `size` bytes, keeping its memory (slots may be NULL
 * when cap is 0). */
void tp_oa_clear(void *slots, size_t cap, size_t size);
/* Stores v (nonzero) in the first empty slot from hash h on of an open-addressing table of
 * mask + 1 slots (a power of two, 0 = empty), probing linearly: the insert of a rebuild, for
 * tp_ixmap and the tables that keep their own slots. The table must have an empty slot. */
static inline void tp_slot_put(uint32_t *slots, size_t mask, size_t h, uint32_t v)
{
	h &= mask;
	while (slots[h])
		h = (h + 1) & mask;
	slots[h] = v;
}

/* A whole input file mapped (or read) into memory. */
struct tp_file {
	const uint8_t *data;
	size_t size;
	int mapped;
	size_t reported; /* bytes already counted as read (tp_file_progress) */
};
/* Opens `path` read-only if it is a regular file, without ever blocking (a FIFO, device,
 * directory or socket in its place is refused, a symlink loop is named as such). Returns the
 * fd (>= 0, caller closes) or TP_ENOTFOUND / TP_EIO with a message naming the path. */
int tp_open_regular(const char *path, struct tp_diag *d);
/* Loads a regular file (tp_open_regular's checks). Errors: TP_ENOTFOUND, TP_EIO (message
 * names the path). */
int tp_file_load(struct tp_file *f, const char *path, struct tp_diag *d);
/* Counts the file as read up to byte `upto` for the reading progress (common/progress.h), so
 * a reader that parses in pieces moves the live line per piece; release counts the rest.
 * Not thread-safe on one f (call it from the thread that owns f). */
void tp_file_progress(struct tp_file *f, size_t upto);
void tp_file_release(struct tp_file *f);
/* Gives back the whole pages inside [base + from, base + to) (MADV_DONTNEED), for memory the
 * caller is done with: a reader calls it on input bytes it has parsed, so reading a multi-GB
 * input does not keep it resident (a later read faults them in again from the file), and
 * tp_free on a large block before freeing it. Anonymous memory given back reads as zeros. */
void tp_map_drop(const void *base, size_t from, size_t to);
/* tp_map_drop on f's bytes when f is a mapping; nothing otherwise. */
void tp_file_drop(const struct tp_file *f, size_t from, size_t to);

/* An output file written under a temporary name in the same directory and renamed into
 * place by tp_afile_commit, so a failed run never leaves a file that looks complete. */
struct tp_afile {
	FILE *fp;       /* write through this (buffers larger than 1 MiB: tp_afile_write) */
	char *path;     /* final path (owned) */
	char *tmp_path; /* temporary path (owned) */
	int err;        /* errno of the first failed tp_afile_write, 0 if none */
};
typedef struct tp_afile tp_afile;

/* Opens `path`.tmp-PID.N (a fresh name) for writing (binary). TP_ENOMEM when out of memory,
 * TP_EOUTPUT when the file cannot be created. */
int tp_afile_open(struct tp_afile *f, const char *path, struct tp_diag *d);
/* Writes n bytes through f->fp in pieces of at most TP_WRITE_PIECE, so no single write(2)
 * is larger. Returns 0, or -1 with errno set when the stream fails (the caller reports it).
 * Why: on the bench VM (Linux 6.18, ext4 with large folios, virtio_balloon free page
 * reporting of 2 MiB blocks) a write(2) of 2 MiB or more fills the page cache with 2 MiB
 * folios taken from memory the host has reclaimed, and the first touch of each costs a host
 * fault: 1.1 GB in 4 MiB writes took 1.7-4.2 s, in 1 MiB writes 0.28-0.38 s. */
#define TP_WRITE_PIECE ((size_t)1 << 20)
int tp_afile_write(struct tp_afile *f, const void *p, size_t n);
/* Flushes, closes and renames into place. On any failure the temporary is removed. */
int tp_afile_commit(struct tp_afile *f, struct tp_diag *d);
/* The error of a failed write through f (tp_afile_write, or f->fp directly just before):
 * sets d to "PATH: write failed: REASON", naming the final file (never the temporary) with
 * the operating system's reason (the failed write's errno, else errno now, else "I/O
 * error"), and returns TP_EOUTPUT. Writers report every write failure through it. */
int tp_afile_fail(struct tp_afile *f, struct tp_diag *d);
/* Closes and removes the temporary. Safe on a never-opened or committed tp_afile. */
void tp_afile_abort(struct tp_afile *f);
/* For writers whose library insists on opening the file itself (SQLite, libxlsxwriter):
 * returns a fresh temporary path next to `path` (caller frees), to be renamed with
 * tp_rename_into_place. NULL on failure, with errno ENOMEM when out of memory. */
char *tp_temp_path_for(const char *path);
int tp_rename_into_place(const char *tmp_path, const char *path, struct tp_diag *d);
/* Every temporary from tp_temp_path_for / tp_afile_open is tracked until it is renamed or
 * removed; tp_temp_cleanup_on_signals (called once by the CLI) installs SIGINT/SIGTERM/SIGHUP/
 * SIGQUIT handlers that unlink the tracked temporaries (async-signal-safe) and then die of
 * the same signal. A signal already ignored stays ignored. Process-global; not for libraries. */
void tp_temp_cleanup_on_signals(void);
/* Also removes directory `dir` (if empty by then) when such a signal arrives: for a folder a
 * writer created for its output (PerfDoc/). Forget it with tp_temp_forget once it holds a
 * committed file. */
void tp_temp_track_dir(const char *dir);
/* Also removes file `path` when such a signal arrives: for a file that is not an output's
 * temporary but must not outlive the run (the output folder's lock). */
void tp_temp_track_file(const char *path);
/* Stops tracking a temporary file or directory (by path). */
void tp_temp_forget(const char *tmp_path);

struct tp_buf; /* below */
/* Writes b's bytes to dir/name atomically (temporary + rename). A buffer that ran out of
 * memory is TP_ENOMEM and writes nothing. TP_OK / TP_ENOMEM / TP_EOUTPUT. */
int tp_write_buf_file(const char *dir, const char *name, const struct tp_buf *b, struct tp_diag *d);
/* The same, to the file `path`. */
int tp_write_buf_path(const char *path, const struct tp_buf *b, struct tp_diag *d);

/* mkdir -p. TP_OK if it exists or was created, TP_EOUTPUT otherwise. */
int tp_mkdirs(const char *path, struct tp_diag *d);
/* Joins dir and name with one '/', allocated with tp_malloc. */
char *tp_path_join(const char *dir, const char *name);
/* Returns 1 if `path` is an existing directory, 0 otherwise. */
int tp_is_dir(const char *path);

/* ---------------------------------------------------------------------------------------- */
/* Text helpers (locale-independent).                                                        */
/* ---------------------------------------------------------------------------------------- */

/* A growable byte buffer. */
struct tp_buf {
	char *data;
	size_t len, cap;
	int oom; /* sticky out-of-memory flag; appends become no-ops */
};
typedef struct tp_buf tp_buf;

void tp_buf_init(struct tp_buf *b);
void tp_buf_free(struct tp_buf *b);
void tp_buf_put(struct tp_buf *b, const void *p, size_t n);
void tp_buf_puts(struct tp_buf *b, const char *s);
void tp_buf_putc(struct tp_buf *b, char c);
void tp_buf_printf(struct tp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s as the body of a JSON string (no quotes): escapes ", \, control characters,
 * U+2028/U+2029 and the sequences "</" and "<!--" (as \u003c) so the result can sit inside an
 * HTML <script>; invalid UTF-8 becomes \ufffd (text.c's rules), so the output is valid JSON. */
void tp_buf_json_str(struct tp_buf *b, const char *s);
/* Formats a double with %.*f semantics but never in exponent form; "-0.000" becomes
 * "0.000". Decimal point is always '.'. */
void tp_buf_fixed(struct tp_buf *b, double v, int decimals);
/* Writes ns as microseconds with exactly 3 decimals, exact to the nanosecond
 * (integer arithmetic, no floating point), e.g. 1234567 -> "1234.567". */
void tp_buf_ns_as_us(struct tp_buf *b, int64_t ns);
/* Appends code point cp (<= 0x10FFFF, not a surrogate) as UTF-8: the JSON readers' \u escapes. */
void tp_buf_utf8(struct tp_buf *b, uint32_t cp);
/* The decimal digits of v (a '-' first for a negative one) at out, which has room for
 * TP_FMT_INT_MAX bytes; returns how many were written (no NUL). Locale-free, no printf, two
 * digits per step from tp_digits2 ("00".."99"): the writers format tens of millions of
 * integers (inline for them). tp_buf_i64 / tp_buf_u64 append them to a buffer. */
#define TP_FMT_INT_MAX 20
extern const char tp_digits2[201];
static inline size_t tp_fmt_u64(char *out, uint64_t v)
{
	size_t n = 1;
	for (uint64_t t = v; t >= 10; t /= 10)
		n++;
	char *q = out + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		q[0] = tp_digits2[2 * r];
		q[1] = tp_digits2[2 * r + 1];
	}
	if (v >= 10) {
		q[-2] = tp_digits2[2 * v];
		q[-1] = tp_digits2[2 * v + 1];
	} else {
		q[-1] = (char)('0' + v);
	}
	return n;
}
static inline size_t tp_fmt_i64(char *out, int64_t v)
{
	if (v >= 0)
		return tp_fmt_u64(out, (uint64_t)v);
	out[0] = '-';
	return 1 + tp_fmt_u64(out + 1, 0 - (uint64_t)v);
}
void tp_buf_u64(struct tp_buf *b, uint64_t v);
void tp_buf_i64(struct tp_buf *b, int64_t v);

/* ---------------------------------------------------------------------------------------- */
/* Text safety (text.c): every string that came from an input passes through here on its way */
/* into an output. Strict UTF-8 (no overlong forms, surrogates, code points > U+10FFFF, lead  */
/* bytes C0/C1/F5..FF); each maximal invalid subpart becomes U+FFFD.                         */
/* ---------------------------------------------------------------------------------------- */

#define TP_UTF8_REPLACEMENT "\xEF\xBF\xBD" /* U+FFFD */
enum tp_text_flags {
	TP_TEXT_UTF8 = 0, /* only repair invalid UTF-8 (JSON, SQLite, Perfetto: they escape) */
	TP_TEXT_CTRL = 1u << 0, /* also replace C0 controls but \t \n \r, DEL and C1 controls
	                          (U+0080..U+009F) with U+FFFD (ops.csv, whose quoting keeps
	                          \t \n \r) */
	TP_TEXT_LINE = 1u << 1, /* with TP_TEXT_CTRL: \t \n \r too (one-line fields, table cells) */
	TP_TEXT_XML = 1u << 2, /* XML 1.0 (xlsx): C0 but \t \n \r replaced, U+FFFE/U+FFFF dropped */
	TP_TEXT_NOCR = 1u << 3, /* with TP_TEXT_CTRL: \r too (a CR can overwrite a terminal line) */
	TP_TEXT_TERM = TP_TEXT_CTRL | TP_TEXT_NOCR, /* terminals, summary.txt, summary.md */
};

/* Decodes the UTF-8 sequence at s[0..n), n >= 1. Returns the bytes it spans (>= 1) and stores
 * the code point in *cp, or -1 when the bytes are not valid UTF-8, in which case the return
 * value is the length of the maximal invalid subpart (what one U+FFFD replaces). */
size_t tp_utf8_decode(const unsigned char *s, size_t n, int32_t *cp);
/* 1 when s[0..n) is valid UTF-8 that tp_text_put would copy unchanged under `flags`. */
int tp_text_is_safe(const char *s, size_t n, unsigned flags);
/* Appends s[0..n) to b made safe under `flags` (enum tp_text_flags), appending at most
 * max_bytes bytes and max_chars characters (0 = unlimited), always cut on a character
 * boundary. Returns the number of characters appended. Sets b->oom like every append. */
size_t tp_text_put(struct tp_buf *b, const char *s, size_t n, unsigned flags, size_t max_bytes,
                   size_t max_chars);
/* Copies NUL-terminated s (NULL = "") into dst[cap] made safe under `flags`, cut on a
 * character boundary to at most cap-1 bytes; always NUL-terminates (cap > 0). Returns dst. On
 * out of memory dst is "". */
char *tp_text_copy(char *dst, size_t cap, const char *s, unsigned flags);
/* The HTML character reference for c when it is one of & < > " ' ("&amp;" ...), else NULL:
 * what text between tags and inside quoted attributes must not hold literally. */
const char *tp_html_ref(char c);
/* Cleans b's bytes from offset `from` to the end in place under `flags` (a whole text report
 * at once: summary.txt, summary.md, the console). Returns 1 if anything changed. */
int tp_buf_clean(struct tp_buf *b, size_t from, unsigned flags);
/* fputs(s, f) through the cleaner: the one way input-derived text reaches a terminal. */
void tp_text_fputs(FILE *f, const char *s, unsigned flags);

/* Converts a double read from an input (JSON numbers) to int64 when it is finite, integral
 * or not, and within [INT64_MIN, INT64_MAX] (truncating toward zero like a cast). Returns 0
 * and stores *out, or -1 (NaN, infinite, out of range) leaving *out untouched: the checked
 * replacement for a bare (int64_t) cast, which is undefined behaviour out of range. */
int tp_f64_to_i64(double v, int64_t *out);
/* v truncated toward zero and clamped to [lo, hi] (NaN gives lo): for values derived from file
 * data where saturation is the right answer. Never undefined behaviour. */
int64_t tp_f64_to_i64_clamp(double v, int64_t lo, int64_t hi);

/* The index of the first `sep` in s[i..n), or n: the end of the field of a separated list
 * that starts at i. */
static inline size_t tp_field_end(const char *s, size_t n, size_t i, char sep)
{
	while (i < n && s[i] != sep)
		i++;
	return i;
}

/* Parses a decimal integer s[0..n); returns 0 on success, -1 if not a number / overflow. */
int tp_parse_i64(const char *s, size_t n, int64_t *out);
int tp_parse_u64(const char *s, size_t n, uint64_t *out);
/* The int64 with sign `neg` (nonzero: negative) and magnitude u; returns 0 and stores *out, or
 * -1 when it does not fit (u above 2^63, or 2^63 and positive) leaving *out untouched. */
int tp_i64_from_magnitude(int neg, uint64_t u, int64_t *out);
/* The 4 hex digits at p (either case) as *v; -1 when one is not a hex digit. */
int tp_parse_hex4(const char *p, uint32_t *v);

#endif /* TP_COMMON_H */

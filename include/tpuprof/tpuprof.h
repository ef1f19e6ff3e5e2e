/*
 * tpuprof.h — the public capture API of libtpuprof, the C library an AI runtime (or any C/C++
 * program) links to record what it does: application activities, graph steps, framework
 * operators with their tensors, runtime calls and counters. Records go into per-thread
 * buffers with no lock, allocation, system call or log per event, and are written as one
 * self-describing binary dump per enable/disable pair (see docs/capture-format.md), which
 * `tpuprof` converts to traces and reports.
 *
 * Switching capture on:
 *   - from the environment, with no code change: TPUPROF=1 or TPUPROF=2 starts one session
 *     when the library loads and writes it at exit (docs/env.md lists every switch);
 *   - from code: tpuprof_enable(max_records, mode) ... tpuprof_disable().
 * Detail modes (TPUPROF_MODE_*): 0 records times only (scope kinds, step indices, times),
 * 1 adds names, operator types, activity meta text, categories, colours and tpuprof_counter()
 * samples, 2 adds tensor details, operator attributes, bytes/flops, source locations and
 * per-operator hardware counters.
 *
 * Where dumps go: each session writes the directory
 *     $TPUPROF_DIR/tpuprof_data_dev{D}-{N}.{PID}/capture.tpp
 * D is the device set with tpuprof_set_device (0 by default), N counts the sessions of this
 * process (0, 1, ...), PID is the process id, so several processes of one job never write to
 * the same place (if the directory exists already, ".1", ".2", ... is appended).
 * The dump is written at tpuprof_disable(), at exit(), and when SIGINT or SIGTERM arrives:
 * the handler is installed with the application's mask and flags (never adding SA_RESTART,
 * so blocking calls still return EINTR) and then calls the application's previous action as
 * the kernel would have. A forked child starts clean: it never writes its parent's records;
 * if the parent was capturing, the child gets its own session (its own PID in the name),
 * created on disk only when the child records something (fork+exec writes nothing).
 *
 * Strings: every string is recorded BY VALUE (copied into the dump once per thread and
 * content): a name built in a reused buffer, a C++ std::string or a Python string may change
 * or die right after the call. A pointer seen before is only a hint, checked against the
 * stored bytes. Text is stored as valid UTF-8: invalid bytes become U+FFFD, and text longer
 * than 1023 bytes is cut at 1023 bytes or less, on a character boundary.
 *
 * Crash safety: while a session records, each thread's records go straight into a file of the
 * dump directory (thread-K.tpc, shared-mapped; its disk space is reserved before use), so
 * whatever was recorded survives abort(), a crash, SIGKILL or _exit(): `tpuprof` rebuilds the
 * dump from those files with a "process died" note. A normal end writes capture.tpp (into a
 * temporary file renamed into place; nothing on disk is ever rewritten) and removes them.
 * The library starts one background thread of its own (on first use, all signals blocked)
 * that maps and pre-faults the next 1 MiB of a busy thread's file before the thread needs
 * it; TPUPROF_PREFAULT=0 does without it (each thread then maps its own extents).
 *
 * Thread-safety: every recording function may be called from any number of threads at
 * once, also while another thread calls tpuprof_enable or tpuprof_disable (docs/libtpuprof.md,
 * "Sessions"). tpuprof_enable, tpuprof_disable and tpuprof_set_device are serialised
 * internally.
 * Every function is cheap when capture is off (one load and a branch).
 * Signals: no function is async-signal-safe. Do not record from a signal handler: a thread's
 * record being written when the signal lands would be overwritten, and at an extent
 * boundary the handler could wait for a lock its own thread holds. (The library's own
 * SIGINT/SIGTERM flush, described above, is written for that context.)
 */
#ifndef TPUPROF_TPUPROF_H
#define TPUPROF_TPUPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define TPUPROF_API __attribute__((visibility("default")))
#else
#define TPUPROF_API
#endif

/* The version of this header: TPUPROF_VERSION_MAJOR, _MINOR, _PATCH and TPUPROF_VERSION_STRING,
 * generated from the project version and installed next to this file. The library's own is
 * tpuprof_version(). TPUPROF_ABI_VERSION is the shared library's SONAME number
 * (libtpuprof.so.N): it changes only when a program built against an older header could
 * break, not with the project version. */
#include <tpuprof/tpuprof_version.h>
/* ABI 2: struct tpuprof_op_detail starts with size fields (ABI 1 had none). */
#define TPUPROF_ABI_VERSION 2

/* Detail modes: the same numbers as the TPUPROF environment variable (TPUPROF=0 records in
 * mode 0; unset, empty or "off" records nothing automatically). */
#define TPUPROF_MODE_TIMING 0    /* times, scope kinds, step indices */
#define TPUPROF_MODE_CONDENSED 1 /* + names, operator types, meta text */
#define TPUPROF_MODE_DETAILED 2  /* + tensors, attributes, bytes/flops, counters */

/* Status codes returned by the control functions. */
#define TPUPROF_OK 0
#define TPUPROF_EINVAL (-1) /* bad argument (mode out of range, ...) */
#define TPUPROF_EBUSY (-2)  /* a session is already active */
#define TPUPROF_EIO (-3)    /* the dump directory or file could not be created/written */
#define TPUPROF_ENOMEM (-4) /* out of memory */
#define TPUPROF_EOFF (-5)   /* no session is active */

/* A static operator descriptor: one per operator instance (or per operator type), normally a
 * `static const` object. Only its address is recorded per event; its strings are copied once
 * per thread. `post_op` (a fused post operation such as "gelu") may be NULL.
 * This descriptor never grows (it is an identity, read on the hot path): anything new about an
 * operator goes into struct tpuprof_op_detail, which carries its own size. */
struct tpuprof_op {
	const char *type;    /* operator type: "MatMul", "Softmax", ... */
	const char *name;    /* operator instance name: "encoder.0.attn.qkv" */
	const char *post_op; /* fused post operation or NULL */
};

/* One tensor of an operator (mode 2). `shape` points to `ndim` dimensions (at most 8 are
 * recorded). `name` and `dtype` ("fp32", "int8", ...) may be NULL. */
struct tpuprof_tensor {
	const char *name;
	const char *dtype;
	const int64_t *shape;
	int ndim;
};

/* One operator attribute as text, e.g. {"kernel", "3x3"} (mode 2). */
struct tpuprof_attr {
	const char *key;
	const char *value;
};

/* Per-execution operator details, recorded in mode 2 only. Every pointer may be NULL with a
 * zero count. `weight_sparsity` is the fraction of zero weights, or negative if unknown; it is
 * recorded only with a `weight_shape`. `bytes` and `flops` of 0 mean unknown and are not
 * reported. Nothing is kept after the call returns (the data is copied).
 *
 * Growing without breaking the ABI: `size` must be sizeof(struct tpuprof_op_detail), and
 * `tensor_size` / `attr_size` the sizeof of struct tpuprof_tensor / tpuprof_attr, as the caller
 * compiled them (TPUPROF_OP_DETAIL_INIT or tpuprof_op_detail_init() set all three). The library
 * reads only the fields the caller's `size` covers (a field it does not cover is absent), steps
 * through `inputs`/`outputs` by `tensor_size` and through `attrs` by `attr_size`, and reads only
 * the element fields those sizes cover. A later header only appends fields. A struct whose
 * `size` does not cover `tensor_size`/`attr_size` (e.g. zero-initialised) records nothing, and
 * an element size of 0 leaves that array out. So a zero-initialised struct reports nothing as
 * measured. */
struct tpuprof_op_detail {
	uint32_t size;        /* sizeof(struct tpuprof_op_detail) */
	uint16_t tensor_size; /* sizeof(struct tpuprof_tensor): the stride of inputs/outputs */
	uint16_t attr_size;   /* sizeof(struct tpuprof_attr): the stride of attrs */
	const struct tpuprof_tensor *inputs;
	int num_inputs;
	const struct tpuprof_tensor *outputs;
	int num_outputs;
	const int64_t *weight_shape; /* NULL if the operator has no weight */
	int weight_ndim;
	double weight_sparsity;
	const struct tpuprof_attr *attrs;
	int num_attrs;
	uint64_t bytes; /* bytes moved, 0 if unknown */
	uint64_t flops; /* floating point operations, 0 if unknown */
};
/* An initialiser for the three size fields, the rest zero (C). */
#define TPUPROF_OP_DETAIL_INIT                                                                     \
	{                                                                                          \
		sizeof(struct tpuprof_op_detail), sizeof(struct tpuprof_tensor),                   \
		    sizeof(struct tpuprof_attr), NULL, 0, NULL, 0, NULL, 0, -1.0, NULL, 0, 0, 0    \
	}
/* Zeroes *d and sets its size fields (C and C++). */
static inline void tpuprof_op_detail_init(struct tpuprof_op_detail *d)
{
	static const struct tpuprof_op_detail init = TPUPROF_OP_DETAIL_INIT;
	*d = init;
}

/* ---------------------------------------------------------------------------------------- */
/* Control                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Starts a capture session. `max_records` is the per-thread record limit (0 = the
 * TPUPROF_RECORD_SIZE default); events beyond it are dropped and counted in the dump. `mode`
 * is a TPUPROF_MODE_* value. Creates the dump directory and file at once, so an unwritable
 * TPUPROF_DIR is reported here: one warning on stderr, TPUPROF_EIO, and capture stays off
 * (the program keeps running). Returns TPUPROF_OK, TPUPROF_EINVAL, TPUPROF_EBUSY (a session
 * — possibly the TPUPROF=1/2 one — is already active), TPUPROF_EIO or TPUPROF_ENOMEM.
 * Thread-safe; serialised with tpuprof_disable. */
TPUPROF_API int tpuprof_enable(uint32_t max_records, int mode);

/* Ends the active session and writes its dump; returns TPUPROF_OK, TPUPROF_EOFF if no
 * session was active, or TPUPROF_EIO if writing failed (one warning on stderr). Other threads
 * may go on recording: a recording call that started before the end finishes into the
 * session first (disable waits for it), so each of the session's events is in the dump or
 * counted there as dropped; calls after the end record nothing. Thread-safe; not from inside
 * a signal handler. */
TPUPROF_API int tpuprof_disable(void);

/* Returns the active session's mode (0..2), or -1 when capture is off. Thread-safe. */
TPUPROF_API int tpuprof_mode(void);

/* Records run metadata (key -> value) written into every later dump of the process, e.g.
 * tpuprof_meta("batch_size", "8") — the reports use batch_size for throughput. Keys are at
 * most 31 bytes and values 95 (longer ones are rejected with TPUPROF_EINVAL); setting a key
 * again replaces its value; at most 32 calls per process (then TPUPROF_ENOMEM). Not for the
 * hot path (it takes a lock). Thread-safe. */
TPUPROF_API int tpuprof_meta(const char *key, const char *value);

/* Sets the device index D used in the names of later dump directories (default 0);
 * negative values are rejected with TPUPROF_EINVAL. Thread-safe. */
TPUPROF_API int tpuprof_set_device(int device);

/* Writes the active session's dump now without ending it: capture.tpp is written to a new
 * file and renamed over the previous one, so a failed flush (full disk) leaves what was on
 * disk as it was. TPUPROF_OK, TPUPROF_EOFF or TPUPROF_EIO. Thread-safe. */
TPUPROF_API int tpuprof_flush(void);

/* ---------------------------------------------------------------------------------------- */
/* Recording. All are no-ops when capture is off. Scopes must nest per thread: end the       */
/* innermost open scope first. Begin and end of one scope happen on the same thread.         */
/* ---------------------------------------------------------------------------------------- */

/* Application-layer activity (data preparation, post-processing, ...). `name` and `meta`
 * (free text, may be NULL, mode >= 1) are copied by value;
 * `step` is the application's iteration index (or -1). */
TPUPROF_API void tpuprof_activity_begin(const char *name, int64_t step, const char *meta);
TPUPROF_API void tpuprof_activity_end(const char *name, int64_t step, const char *meta);

/* One step (iteration) of graph `graph`. `warmup` != 0 marks a warm-up
 * step, which reports exclude. Operators and runtime calls recorded inside the step — on
 * this thread, or on other threads while it is the process's most recent open step — carry
 * its index and warm-up flag. */
TPUPROF_API void tpuprof_step_begin(const char *graph, int64_t step, int warmup);
TPUPROF_API void tpuprof_step_end(const char *graph, int64_t step);

/* One operator execution. `op` points to a descriptor (NULL records an unnamed operator); its
 * strings are read at op_begin, by value, and may change between calls. `detail` (op_end
 * only, may be NULL) is recorded in mode 2 only. With TPUPROF_HWCOUNTERS=1 in mode 2, the
 * counters' deltas over the operator are recorded too: each begin and end costs one read()
 * system call (microseconds per operator, against tens of nanoseconds without counters; see
 * docs/libtpuprof.md), and the cost of that read, measured when the thread starts, is
 * subtracted from every delta, so the library's own system calls are not counted in the
 * operator. */
TPUPROF_API void tpuprof_op_begin(const struct tpuprof_op *op);
TPUPROF_API void tpuprof_op_end(const struct tpuprof_op *op,
                                const struct tpuprof_op_detail *detail);

/* A runtime / driver call (memcpy to device, kernel launch, sync, ...). */
TPUPROF_API void tpuprof_runtime_begin(const char *name);
TPUPROF_API void tpuprof_runtime_end(const char *name);

/* A counter sample (modes 1 and 2; mode 0 records no names): `name`, `value` now. */
TPUPROF_API void tpuprof_counter(const char *name, double value);

/* ---------------------------------------------------------------------------------------- */
/* Marks, ranges, async ranges, thread names (NVTX / Tracy / ITT style).                     */
/* ---------------------------------------------------------------------------------------- */

/* Optional attributes of a mark or range. `size` must be sizeof(struct tpuprof_event_attr)
 * as the caller compiled it (TPUPROF_EVENT_ATTR_INIT does it), so the struct can grow: the
 * library reads only the fields the caller's size covers. `color` is TPUPROF_RGB(r, g, b) or
 * 0 for none; `category` (a domain such as "io", "net") and the source location may be NULL.
 * Category and colour are recorded in mode >= 1, the source location in mode 2. */
struct tpuprof_event_attr {
	uint32_t size;
	uint32_t color;
	const char *category;
	const char *file;
	int line;
	const char *function;
};
#define TPUPROF_RGB(r, g, b)                                                                       \
	(0x01000000u | ((uint32_t)(r) << 16) | ((uint32_t)(g) << 8) | (uint32_t)(b))
#define TPUPROF_EVENT_ATTR_INIT                                                                    \
	{                                                                                          \
		sizeof(struct tpuprof_event_attr), 0, NULL, NULL, 0, NULL                          \
	}

/* An instant mark (zero duration) at the current time; `attr` may be NULL. */
TPUPROF_API void tpuprof_mark(const char *name, const struct tpuprof_event_attr *attr);

/* A named range on this thread (nests with the other scopes); `attr` may be NULL. */
TPUPROF_API void tpuprof_range_begin(const char *name, const struct tpuprof_event_attr *attr);
TPUPROF_API void tpuprof_range_end(const char *name);

/* An async range identified by `id`: it may begin on one thread and end on another, and may
 * overlap other async ranges. Begin and end must use the same `id` (and name); ranges with no
 * end are reported as cut short. */
TPUPROF_API void tpuprof_async_begin(const char *name, uint64_t id,
                                     const struct tpuprof_event_attr *attr);
TPUPROF_API void tpuprof_async_end(const char *name, uint64_t id);

/* Names the calling thread in every later dump (at most 15 bytes are kept, cut on a UTF-8
 * character boundary); also works while capture is off. Default: the OS thread name. */
TPUPROF_API void tpuprof_thread_name(const char *name);

/* The library's version, e.g. "0.2.0" (compare with the TPUPROF_VERSION_* of the header). */
TPUPROF_API const char *tpuprof_version(void);

/* ---------------------------------------------------------------------------------------- */
/* Inline switch. Calling a recording function while capture is off costs a call and a       */
/* return (a few ns). Call sites that must cost well under a nanosecond when off use these    */
/* macros, which test `tpuprof_active` inline first. `tpuprof_active` is nonzero while a      */
/* session is active; it is written only by the library — read it through TPUPROF_ON().      */
/* ---------------------------------------------------------------------------------------- */

TPUPROF_API extern uint32_t tpuprof_active;

#if defined(__GNUC__)
#define TPUPROF_ON() __builtin_expect(__atomic_load_n(&tpuprof_active, __ATOMIC_RELAXED) != 0, 0)
#else
#define TPUPROF_ON() (*(volatile uint32_t *)&tpuprof_active != 0)
#endif
#define TPUPROF_OP_BEGIN(op)                                                                       \
	do {                                                                                       \
		if (TPUPROF_ON())                                                                  \
			tpuprof_op_begin(op);                                                      \
	} while (0)
#define TPUPROF_OP_END(op, detail)                                                                 \
	do {                                                                                       \
		if (TPUPROF_ON())                                                                  \
			tpuprof_op_end(op, detail);                                                \
	} while (0)
#define TPUPROF_RUNTIME_BEGIN(name)                                                                \
	do {                                                                                       \
		if (TPUPROF_ON())                                                                  \
			tpuprof_runtime_begin(name);                                               \
	} while (0)
#define TPUPROF_RUNTIME_END(name)                                                                  \
	do {                                                                                       \
		if (TPUPROF_ON())                                                                  \
			tpuprof_runtime_end(name);                                                 \
	} while (0)

#ifdef __cplusplus
}

/* ---------------------------------------------------------------------------------------- */
/* C++ only: RAII scopes. { tpuprof::Op op(&desc); ... } records op_begin / op_end;          */
/* tpuprof::Range and TPUPROF_SCOPE(name) record a range with the source location.           */
/* ---------------------------------------------------------------------------------------- */
namespace tpuprof
{
class Op
{
      public:
	explicit Op(const struct tpuprof_op *op, const struct tpuprof_op_detail *detail = nullptr)
	    : op_(op), detail_(detail)
	{
		TPUPROF_OP_BEGIN(op_);
	}
	~Op() { TPUPROF_OP_END(op_, detail_); }
	void set_detail(const struct tpuprof_op_detail *d) { detail_ = d; }
	Op(const Op &) = delete;
	Op &operator=(const Op &) = delete;

      private:
	const struct tpuprof_op *op_;
	const struct tpuprof_op_detail *detail_;
};
class Range
{
      public:
	explicit Range(const char *name, const struct tpuprof_event_attr *attr = nullptr)
	    : name_(name)
	{
		if (TPUPROF_ON())
			tpuprof_range_begin(name_, attr);
	}
	~Range()
	{
		if (TPUPROF_ON())
			tpuprof_range_end(name_);
	}
	Range(const Range &) = delete;
	Range &operator=(const Range &) = delete;

      private:
	const char *name_;
};
class Step
{
      public:
	Step(const char *graph, int64_t step, bool warmup = false) : graph_(graph), step_(step)
	{
		tpuprof_step_begin(graph_, step_, warmup ? 1 : 0);
	}
	~Step() { tpuprof_step_end(graph_, step_); }
	Step(const Step &) = delete;
	Step &operator=(const Step &) = delete;

      private:
	const char *graph_;
	int64_t step_;
};
} // namespace tpuprof
#define TPUPROF_CAT2_(a, b) a##b
#define TPUPROF_CAT_(a, b) TPUPROF_CAT2_(a, b)
#define TPUPROF_SCOPE(name)                                                                        \
	const struct tpuprof_event_attr TPUPROF_CAT_(tpuprof_attr_, __LINE__) = {                  \
	    sizeof(struct tpuprof_event_attr), 0, nullptr, __FILE__, __LINE__, __func__};          \
	tpuprof::Range TPUPROF_CAT_(tpuprof_range_,                                                \
	                            __LINE__)(name, &TPUPROF_CAT_(tpuprof_attr_, __LINE__))
#endif

#endif /* TPUPROF_TPUPROF_H */

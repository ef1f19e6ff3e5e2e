/*
 * traceread.h — the reader of Chrome-trace JSON files (chrome://tracing "Trace Event Format":
 * PyTorch profiler / Kineto, ONNX Runtime, MXNet, TensorFlow timelines, ...) into the profile
 * model. Not to be confused with src/writers/chrome, the Chrome JSON *writer*.
 *
 * The file is streamed: a small tokenizer finds one event object at a time in a bounded
 * buffer (grown only for a single event larger than it), so a file of gigabytes never sits in
 * memory as a whole and no DOM is built. What it fills (docs/input-chrome-trace.md):
 *   - arch TP_ARCH_CPU, source "chrome-trace"; one device per `pid` (named by the `M`
 *     process_name event, else "pid N"), one TP_TRACK_HOST track per (pid, tid) (named by
 *     thread_name, else "tid N"), one "async <cat>" host track per (pid, cat) for b/e/n events;
 *   - `X` complete events and matched `B`/`E` pairs (a per-track stack) as slices of type
 *     TP_CAP_TYPE_OP with args "cat", TP_CAP_KEY_OP_TYPE (args.op_name when present, else the
 *     event name) and the event's own args (PyTorch's "ProfilerStep#N" annotations are
 *     TP_CAP_TYPE_STEP slices instead); `i`/`I` instants as zero-length slices of type
 *     "instant"; async `b`/`e` pairs (matched by cat + id + name) as slices of type "async";
 *   - `C` counters as one tp_counter series per (pid, name, args key);
 *   - timestamps in exact nanoseconds (µs decimals parsed as integers, never through a
 *     double), re-based so the earliest event is at 0; the base is kept in the meta key
 *     TP_META_TRACE_BASE_NS of model/merge.h (absolute ns as a decimal string), which
 *     tp_profile_merge_host reads;
 *   - pid/tid/id as numbers or strings of any size (64-bit hashes above INT64_MAX included).
 *     A pid that is no int32 (a device's id is then its position) or a tid that is no int64
 *     (the track's tid is then 0) keeps its text in tp_device.id_text / tp_track.tid_text.
 * Tolerated with a counted note: trailing commas, a truncated file (the writing tool was
 * killed), `E` without `B`, `B` never closed (closed at the last timestamp), `X` without
 * `dur`, events without `ph`/`ts`, unknown phases, flow events (s/t/f: paired by cat + id into
 * model flows), invalid UTF-8 (replaced by U+FFFD). Rejected with `path@0xOFFSET: message`
 * (TP_EFORMAT): anything that is not a JSON array or an object with "traceEvents", an event that is
 * not an object or is not valid JSON, and a file holding no event at all.
 */
#ifndef TP_TRACEREAD_H
#define TP_TRACEREAD_H

#include "model/model.h"

/* Returns 1 if `path` is a regular file that looks like a Chrome trace (starts, after
 * whitespace and an optional UTF-8 BOM, with '[' or with '{' and names "traceEvents" in its
 * first 64 KiB; for gzip data, the text it inflates to), else 0. Reads at most 64 KiB;
 * never fails loudly. */
int tp_traceread_probe(const char *path);

/* tp_traceread_probe that also says why not: when it returns 0 and `why` is not NULL, why
 * (n bytes) holds a phrase for "<path> ...", e.g. "it starts with byte 0x7f, not '[' or '{'"
 * or "it is gzip data, and the text it holds starts with 'P', not '[' or '{'". */
int tp_traceread_sniff(const char *path, char *why, size_t n);

/* Reads the trace file `path` ("-": standard input, named "<stdin>" in messages) into a new
 * profile stored in *out (caller frees with tp_profile_free). Input that starts with the gzip
 * magic (1f 8b) is inflated as it is read, whatever its name; it may inflate to at most
 * 64 MiB + 256 times its compressed size (a larger ratio is refused as a decompression bomb),
 * and a gzip stream that is corrupt or cut short is an error (TP_EFORMAT, at its offset in
 * the file). Returns TP_OK (possibly with notes), or TP_ENOTFOUND / TP_EIO / TP_EFORMAT /
 * TP_ERANGE / TP_ENOMEM with `d` filled and *out NULL. */
int tp_traceread_read(const char *path, struct tp_profile **out, struct tp_diag *d);

/* Same, for a trace held in memory (`data`, `size` bytes, plain or gzip); `display` names it
 * in messages. Used by the tests and the fuzzer. */
int tp_traceread_parse(const uint8_t *data, size_t size, const char *display,
                       struct tp_profile **out, struct tp_diag *d);

/* Parses a JSON number (optionally inside a string: pass the string's content) given in
 * microseconds, e.g. "1559670489324232", "12.3456", "1.23457e+06", into exact nanoseconds
 * (digits past the nanosecond are rounded half away from zero). Returns 0, or -1 if the text
 * is not a number or the result does not fit in int64. */
int tp_traceread_us_to_ns(const char *s, size_t n, int64_t *ns);

#endif /* TP_TRACEREAD_H */

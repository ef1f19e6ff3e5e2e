/*
 * merge.h — lays a host side next to a device profile on one time axis (`--trace_file`,
 * ../shared/specs/sophgo-cdm.md §10): a Chrome trace (tp_profile_merge_host) or a libtpuprof
 * capture (tp_profile_merge_capture). A model operation: it reads two profiles and writes the
 * device one; the readers only fill the meta keys below.
 */
#ifndef TP_MODEL_MERGE_H
#define TP_MODEL_MERGE_H

#include "model/model.h"

/* Meta key of a host trace (the Chrome-trace reader writes it): the absolute time (ns,
 * decimal) of the profile's time 0. */
#define TP_META_TRACE_BASE_NS "chrome_trace.ts_base_ns"

/* Device-profile meta keys used for host alignment (written by the BM1690 cdm reader; see
 * sophgo-cdm.md §8.2 step 8 and §10). Decimal integers. */
#define TP_META_TAIL_OFFSET_NS "tail_offset_ns"
#define TP_META_PMU_TAIL_CYCLE "pmu_tail_cycle"

/*
 * Merges a host trace `host` (as returned by tp_traceread_read / _parse) into the finished
 * device profile `dev`, on one time axis:
 *   1. disable_end = max end over host events with cat "tpudnn" named "disable_profile";
 *   2. when that exists and dev has the meta keys TP_META_TAIL_OFFSET_NS and
 *      TP_META_PMU_TAIL_CYCLE: device time 0 = disable_end - tail_offset_ns -
 *      ns(pmu_tail_cycle) (the last PMU event ends tail_offset_ns before the host saw
 *      disable_profile finish; ns at dev->tiu_freq_mhz, 1 GHz when unset);
 *   3. else device time 0 = the end of the earliest "tpudnn" event;
 *   4. else (no tpudnn event at all) device time 0 = the start of the host trace (noted);
 *   5. host complete events (X, and B/E pairs; ProfilerStep ranges aside) except those
 *      named "PyTorch Profiler (0)",
 *      "enable_profile", "my_ops::enable_profile", "disable_profile",
 *      "my_ops::disable_profile" become slices on TP_TRACK_HOST tracks of device 0 named
 *      "tpudnn op" (cat tpudnn) and "cpu op" (others; " (<thread>)" appended when the host
 *      trace has several threads), typed by their cat, with their args.
 * The host's time 0 is its meta TP_META_TRACE_BASE_NS (0 when absent). Device slices, layers
 * and counters are shifted so the earliest event of either side is at 0; the meta keys
 * "host_trace.alignment" ("tail", "first tpudnn event" or "none") and
 * "host_trace.device_offset_ns" (where device time 0 now lies) record what was done, and a
 * note says it. dev must have at least one device (else TP_EUSAGE). Returns TP_OK, TP_ENOMEM,
 * or TP_ERANGE (d filled, naming host_path) when the clocks are too far apart for int64 ns.
 * dev is finished again (tp_profile_finish) on success. Not thread-safe on dev.
 */
int tp_profile_merge_host(struct tp_profile *dev, const struct tp_profile *host,
                          const char *host_path, struct tp_diag *d);

/*
 * Merges a libtpuprof capture `cap` (as returned by tp_capfile_read: THREAD tracks whose
 * earliest event is at 0) into the finished device profile `dev`, aligned by the rules of
 * tp_profile_merge_host with the capture's runtime calls (slices of type TP_CAP_TYPE_RUNTIME)
 * and its slices whose "category" argument is "tpudnn" in the part of the `tpudnn` events:
 *   1. disable_end = max end over those named "disable_profile" or "my_ops::disable_profile";
 *   2. the tail rule of tp_profile_merge_host when dev has the tail meta keys;
 *   3. else device time 0 = the end of the earliest of them;
 *   4. else device time 0 = the capture's start (noted as not aligned).
 * Nothing is dropped: every track of the capture (its kind, name, tid and drop count kept)
 * becomes a track of device 0 (core -1) with all its slices, labels and arguments, every
 * counter series follows its track, and the capture's notes are repeated prefixed with
 * "host capture <host_path>: ". Meta "host_trace.alignment" / "host_trace.device_offset_ns"
 * and a note as tp_profile_merge_host. Same return values and finishing as
 * tp_profile_merge_host. Not thread-safe on dev.
 */
int tp_profile_merge_capture(struct tp_profile *dev, const struct tp_profile *cap,
                             const char *host_path, struct tp_diag *d);

#endif /* TP_MODEL_MERGE_H */

/*
 * env_table.h — the one table of libtpuprof's environment switches: name, type, default and a
 * one-line doc. init.c reads the switches once at initialisation from this table, and
 * gen_envdoc.c turns the same table into docs/env.md (a ctest checks the committed page is up
 * to date). Add a switch here and nowhere else.
 *
 * X(id, name, type, default, doc)
 */
#ifndef TP_CAPTURE_ENV_TABLE_H
#define TP_CAPTURE_ENV_TABLE_H

#define TPUPROF_ENV_TABLE(X)                                                                       \
	X(ENV_MODE, "TPUPROF", "off/0/1/2", "",                                                    \
	  "Capture the whole run in this mode, dumped at exit: 0 timing, 1 condensed, "            \
	  "2 detailed (the TPUPROF_MODE_* numbers of the API); unset, empty or off = no "          \
	  "automatic capture; any other value = one warning, off")                                 \
	X(ENV_DIR, "TPUPROF_DIR", "path", ".",                                                     \
	  "Directory under which each session writes tpuprof_data_dev{D}-{N}.{PID}/ "              \
	  "(created if missing)")                                                                  \
	X(ENV_RECORD_SIZE, "TPUPROF_RECORD_SIZE", "count", "1048576",                              \
	  "Per-thread record limit (32 bytes each) when tpuprof_enable gets 0 or TPUPROF "         \
	  "is set; events beyond it are dropped and counted")                                      \
	X(ENV_HWCOUNTERS, "TPUPROF_HWCOUNTERS", "0/1", "0",                                        \
	  "1 = per-operator counters in mode 2 via perf_event_open: cycles, instructions, "        \
	  "cache misses, or task clock, page faults, context switches where the PMU is absent")    \
	X(ENV_CRASHSAFE, "TPUPROF_CRASHSAFE", "0/1", "1",                                          \
	  "1 = each thread records straight into a shared-mapped file of the dump directory, "     \
	  "so abort(), a crash, SIGKILL or _exit() keep everything recorded (the kernel "          \
	  "provisions fresh file pages every session: a few ns per record); 0 = private "          \
	  "memory reused across sessions (fastest; a process that dies loses the session)")        \
	X(ENV_PREFAULT, "TPUPROF_PREFAULT", "0/1", "1",                                            \
	  "With TPUPROF_CRASHSAFE=1: 1 = one background thread (signals blocked) maps and "        \
	  "pre-faults each thread's next 1 MiB of its live file before the thread reaches it, "    \
	  "so the recording thread does not pay for fresh file pages; 0 = each thread maps "       \
	  "its extents itself when it reaches them")

#endif /* TP_CAPTURE_ENV_TABLE_H */

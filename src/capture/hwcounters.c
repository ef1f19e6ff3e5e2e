/*
 * hwcounters.c — the opt-in per-operator counters of mode 2 (TPUPROF_HWCOUNTERS=1): each
 * thread opens one perf_event group (cycles, instructions, cache misses, or the software
 * set where the PMU is absent), calibrates the cost of its own read and records deltas. The
 * first thread to open a set decides the process-wide kind, written into session.tpc.
 */
#include "capture/capture_int.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Hardware counters (opt-in, mode 2).                                                       */
/* ---------------------------------------------------------------------------------------- */

struct hw_event {
	uint32_t type;
	uint64_t config;
	const char *name;
};
static const struct hw_event hw_set[3] = {
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycles"},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instructions"},
    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "cache_misses"},
};
static const struct hw_event sw_set[3] = {
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, "task_clock_ns"},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page_faults"},
    {PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context_switches"},
};

static int open_set(const struct hw_event *set, int *fds)
{
	int leader = -1;
	for (int i = 0; i < 3; i++) {
		struct perf_event_attr at;
		memset(&at, 0, sizeof at);
		at.size = sizeof at;
		at.type = set[i].type;
		at.config = set[i].config;
		at.exclude_kernel = 1;
		at.exclude_hv = 1;
		at.read_format = PERF_FORMAT_GROUP;
		int fd =
		    (int)syscall(SYS_perf_event_open, &at, 0, -1, leader, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			for (int j = 0; j < i; j++)
				close(fds[j]);
			return -1;
		}
		fds[i] = fd;
		if (leader < 0)
			leader = fd;
	}
	return leader;
}

void tp_cap_hw_close(struct cap_thread *t)
{
	if (t->hw_fd >= 0)
		for (uint32_t i = 0; i < t->hw_n; i++)
			close(t->hw_fds[i]);
	t->hw_fd = -1;
	t->hw_n = 0;
	t->hw_kind = TP_CAPFMT_HW_NONE;
}

/* The counters see the library's own read() at each end of an operator: measure what two
 * back-to-back reads add (the smallest of 16 tries) and subtract it from every delta, so an
 * empty operator reads about 0 rather than the cost of the system call. */
static void hw_calibrate(struct cap_thread *t)
{
	uint64_t a[TP_CAPFMT_MAX_HW], b[TP_CAPFMT_MAX_HW];
	for (uint32_t i = 0; i < t->hw_n; i++)
		t->hw_self[i] = UINT64_MAX;
	for (int k = 0; k < 16; k++) {
		if (tp_cap_hw_read(t, a) != 0 || tp_cap_hw_read(t, b) != 0)
			break;
		for (uint32_t i = 0; i < t->hw_n; i++)
			if (b[i] - a[i] < t->hw_self[i])
				t->hw_self[i] = b[i] - a[i];
	}
	for (uint32_t i = 0; i < t->hw_n; i++)
		if (t->hw_self[i] == UINT64_MAX)
			t->hw_self[i] = 0;
}

/* Opens this thread's counter group; the first thread decides the process-wide kind. */
void tp_cap_hw_open(struct cap_thread *t)
{
	int fds[3];
	int leader = -1;
	uint32_t kind = TP_CAPFMT_HW_NONE;
	const struct hw_event *set = NULL;
	pthread_mutex_lock(&tp_cap_hw_mu);
	if (tp_cap_hw_kind != TP_CAPFMT_HW_SOFTWARE && (leader = open_set(hw_set, fds)) >= 0) {
		kind = TP_CAPFMT_HW_HARDWARE;
		set = hw_set;
	} else if (tp_cap_hw_kind != TP_CAPFMT_HW_HARDWARE &&
	           (leader = open_set(sw_set, fds)) >= 0) {
		kind = TP_CAPFMT_HW_SOFTWARE;
		set = sw_set;
	}
	if (set == NULL) {
		pthread_mutex_unlock(&tp_cap_hw_mu);
		return;
	}
	t->hw_fd = leader;
	for (int i = 0; i < 3; i++)
		t->hw_fds[i] = fds[i];
	t->hw_n = 3;
	t->hw_kind = kind;
	hw_calibrate(t);
	if (tp_cap_hw_kind < 0) {
		/* The first thread that opens a set decides the kind for the whole process;
		 * the names are written before the kind is published. */
		tp_cap_hw_n = 3;
		for (int i = 0; i < 3; i++)
			snprintf(tp_cap_hw_names[i], sizeof tp_cap_hw_names[i], "%s", set[i].name);
		atomic_store_explicit(&tp_cap_hw_kind, (int)kind, memory_order_release);
	}
	tp_cap_ses_put_hw();
	pthread_mutex_unlock(&tp_cap_hw_mu);
}

int tp_cap_hw_read(struct cap_thread *t, uint64_t *vals)
{
	uint64_t buf[1 + TP_CAPFMT_MAX_HW];
	ssize_t r = read(t->hw_fd, buf, sizeof buf);
	if (r < (ssize_t)(sizeof(uint64_t) * (1 + t->hw_n)) || buf[0] != t->hw_n)
		return -1;
	for (uint32_t i = 0; i < t->hw_n; i++)
		vals[i] = buf[1 + i];
	return 0;
}

void tp_cap_ses_put_hw(void)
{
	/* Called with tp_cap_hw_mu held. */
	unsigned char *m = __atomic_load_n(&tp_cap_ses.ses, __ATOMIC_ACQUIRE);
	int k = atomic_load_explicit(&tp_cap_hw_kind, memory_order_acquire);
	if (m == NULL || k <= 0)
		return;
	put32(m + TP_CAPFMT_SES_OFF_HW, (uint32_t)k);
	put32(m + TP_CAPFMT_SES_OFF_HW + 4, tp_cap_hw_n);
	memcpy(m + TP_CAPFMT_SES_OFF_HW + 8, tp_cap_hw_names, sizeof tp_cap_hw_names);
}

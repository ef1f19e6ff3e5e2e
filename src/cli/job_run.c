/*
 * job_run.c — runs a job's tasks on this machine: each dump is converted by a child process
 * (`tpuprof job --task K OUT_DIR`, the same command a scheduler runs), so a dump that crashes
 * or exhausts memory takes only itself down, and the job goes on with the others.
 *
 * Several children run at once within two bounds: --jobs threads in all (each child gets
 * jobs / children threads), and an estimate of their memory under --mem-limit (the largest
 * dumps start first; a child's estimate is a fixed base plus a factor times its input bytes,
 * the factor raised to the largest peak RSS per input byte seen so far; one child always
 * runs, whatever its estimate). SIGINT, SIGTERM and SIGHUP are passed on to the children,
 * which remove their temporaries; the job then dies of the same signal.
 * Owns the children (started here, each waited for before returning).
 */
#include "cli/job_int.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* The memory estimate: a default conversion of a generated 8-core cdm dump of 100 k commands
 * (4.9 MB) peaks at 16.6 MB RSS, about 3.4 times its input; the factor starts a little above
 * that, on top of a base no conversion stays under by much, and is raised by what each
 * finished conversion shows (--detail full, the workbook of a big dump). */
#define EST_BASE ((uint64_t)32 << 20)
#define EST_FACTOR 4.0

#define MAX_CHILDREN 64
static volatile pid_t children[MAX_CHILDREN]; /* read by the signal handler */
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
	for (size_t i = 0; i < MAX_CHILDREN; i++)
		if (children[i] > 0)
			kill(children[i], sig);
}

struct running {
	pid_t pid;
	size_t task;
	uint64_t est;
	double t0;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static pid_t spawn_task(const char *self, size_t k, int threads, const char *out_dir)
{
	char ks[32], js[32];
	snprintf(ks, sizeof ks, "%zu", k);
	snprintf(js, sizeof js, "--jobs=%d", threads);
	char *argv[] = {(char *)self, "job", "--task", ks, js, "-q", (char *)out_dir, NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, self, NULL, NULL, argv, environ);
	if (rc != 0) {
		fprintf(stderr, "tpuprof: cannot start %s: %s\n", self, strerror(rc));
		return -1;
	}
	return pid;
}

/* Task order: largest input first (ties in plan order), so the longest start early. */
static size_t *order(const struct tp_job_plan *pl)
{
	size_t *o = tp_malloc((pl->n ? pl->n : 1) * sizeof *o);
	for (size_t i = 0; o && i < pl->n; i++) {
		size_t k = i;
		while (k > 0 && pl->t[o[k - 1]].bytes < pl->t[i].bytes) {
			o[k] = o[k - 1];
			k--;
		}
		o[k] = i;
	}
	return o;
}

static void install(struct sigaction *old)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < 3; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, &old[i]);
	}
}

static void uninstall(const struct sigaction *old)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
}

struct sched {
	const struct tp_job_plan *pl;
	const char *out_dir;
	const struct tp_job_run_opts *o;
	struct running run[MAX_CHILDREN];
	size_t nrun, done;
	uint64_t used;
	double factor;
	long failed;
};

static uint64_t estimate(const struct sched *s, size_t k)
{
	return EST_BASE + (uint64_t)(s->factor * (double)s->pl->t[k].bytes);
}

/* Says how a child ended, writes the entry a killed child could not, and learns from its
 * peak memory. */
static void finished(struct sched *s, struct running *r, int status, const struct rusage *ru)
{
	const struct tp_job_task *t = &s->pl->t[r->task];
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	uint64_t rss = (uint64_t)ru->ru_maxrss * 1024;
	if (t->bytes > ((uint64_t)1 << 20) && rss > EST_BASE) {
		double f = (double)(rss - EST_BASE) / (double)t->bytes;
		if (f > s->factor)
			s->factor = f;
	}
	s->done++;
	if (code)
		s->failed++;
	if (WIFSIGNALED(status)) {
		char msg[200];
		snprintf(msg, sizeof msg, "killed by signal %d (%s)%s", WTERMSIG(status),
		         strsignal(WTERMSIG(status)),
		         WTERMSIG(status) == SIGKILL ? "; out of memory? see --mem-limit" : "");
		tp_job_task_fail(s->pl, r->task, s->out_dir, code, msg);
	}
	if (s->o->quiet)
		return;
	fprintf(stdout, "[%zu/%zu] %-6s %s call %lld: ", s->done, s->pl->n, code ? "FAILED" : "ok",
	        t->device, (long long)t->call);
	tp_text_fputs(stdout, t->input, TP_TEXT_TERM | TP_TEXT_LINE);
	fprintf(stdout, " (%.2f s, %.0f MiB peak)", now_s() - r->t0, (double)rss / 1048576.0);
	if (code)
		fprintf(stdout, " exit %d", code);
	fputc('\n', stdout);
	fflush(stdout);
}

static void reap(struct sched *s)
{
	int status;
	struct rusage ru;
	pid_t pid;
	while ((pid = wait4(-1, &status, 0, &ru)) < 0 && errno == EINTR) {
	}
	if (pid < 0)
		return;
	for (size_t i = 0; i < s->nrun; i++) {
		if (s->run[i].pid != pid)
			continue;
		for (size_t c = 0; c < MAX_CHILDREN; c++)
			if (children[c] == pid)
				children[c] = 0;
		s->used -= s->run[i].est;
		finished(s, &s->run[i], status, &ru);
		s->run[i] = s->run[--s->nrun];
		return;
	}
}

static int start(struct sched *s, const char *self, size_t k, int threads)
{
	pid_t pid = spawn_task(self, k, threads, s->out_dir);
	if (pid < 0)
		return -1;
	for (size_t c = 0; c < MAX_CHILDREN; c++)
		if (children[c] <= 0) {
			children[c] = pid;
			break;
		}
	uint64_t est = estimate(s, k);
	s->run[s->nrun++] = (struct running){pid, k, est, now_s()};
	s->used += est;
	return 0;
}

long tp_job_run_all(const struct tp_job_plan *pl, const char *out_dir,
                    const struct tp_job_run_opts *o)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	size_t *ord = order(pl);
	if (n <= 0 || !ord) {
		fprintf(stderr, "tpuprof: cannot find the tpuprof executable (/proc/self/exe)\n");
		tp_free(ord);
		return -1;
	}
	self[n] = 0;
	struct sched s = {.pl = pl, .out_dir = out_dir, .o = o, .factor = EST_FACTOR};
	size_t par = (size_t)(o->jobs > 0 ? o->jobs : 1);
	if (par > pl->n)
		par = pl->n;
	if (par > MAX_CHILDREN)
		par = MAX_CHILDREN;
	int threads = par ? o->jobs / (int)par : 1;
	struct sigaction old[3];
	install(old);
	size_t next = 0;
	int broken = 0;
	while ((next < pl->n && !got_signal && !broken) || s.nrun) {
		while (
		    next < pl->n && !got_signal && !broken && s.nrun < par &&
		    (!s.nrun || !o->mem_limit || s.used + estimate(&s, ord[next]) <= o->mem_limit))
			broken = start(&s, self, ord[next++], threads < 1 ? 1 : threads) != 0;
		if (s.nrun)
			reap(&s);
	}
	uninstall(old);
	tp_free(ord);
	if (got_signal) {
		signal(got_signal, SIG_DFL);
		raise(got_signal);
	}
	if (broken && !s.done)
		return -1;
	return s.failed + (long)(pl->n - next);
}

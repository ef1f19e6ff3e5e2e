/*
 * par.c — tp_par_run: a fixed piece of work fn(arg, k) for k in [0, n) spread over a few
 * threads that take the next k from a shared counter; the reader's per-core passes, the
 * model's per-track finish and the analysis's per-core passes use it. Owns nothing beyond
 * the call: threads are started and joined inside it.
 */
#include "common.h"
#include "timings.h"

#include <pthread.h>
#include <stdatomic.h>

struct par {
	void (*fn)(void *arg, size_t k);
	void *arg;
	size_t n;
	atomic_size_t next;
};

static void *par_main(void *v)
{
	struct par *pp = v;
	size_t k;
	while ((k = atomic_fetch_add(&pp->next, 1)) < pp->n)
		pp->fn(pp->arg, k);
	return NULL;
}

static void *par_thread(void *v)
{
	tp_tm_thread(1);
	par_main(v);
	tp_tm_thread(-1);
	return NULL;
}

void tp_par_run(unsigned threads, size_t n, void (*fn)(void *arg, size_t k), void *arg)
{
	struct par pp = {.fn = fn, .arg = arg, .n = n};
	/* With more than one thread, a run of one job cannot be spread: --timings counts its CPU
	 * as serial. With one thread every run counts as parallel, as the work a larger --jobs
	 * would split (a wave of one core at --jobs 1 is a wave of several at --jobs 16). */
	int par = n > 1 || threads <= 1;
	atomic_init(&pp.next, 0);
	pthread_t th[TP_MAX_JOBS];
	unsigned started = 0;
	if (threads > n)
		threads = (unsigned)n;
	if (threads > TP_MAX_JOBS)
		threads = TP_MAX_JOBS;
	for (unsigned i = 1; i < threads; i++) {
		if (pthread_create(&th[started], NULL, par_thread, &pp) != 0)
			break; /* the calling thread does the rest */
		started++;
	}
	if (par)
		tp_tm_par_begin();
	par_main(&pp);
	if (par)
		tp_tm_par_end();
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

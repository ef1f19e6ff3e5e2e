/*
 * wsync.c — the worker count and the lock / condition-variable setup that the worker pools
 * share (see wsync.h).
 */
#include "common/wsync.h"

#include "common/common.h"
#include "common/timings.h"

int tp_wsync_workers(int jobs, int max)
{
	if (jobs <= 0)
		jobs = tp_jobs_default();
	return jobs - 1 < max ? jobs - 1 : max;
}

int tp_wsync_init(struct tp_wsync *s)
{
	s->quit = 0;
	if (pthread_mutex_init(&s->mu, NULL))
		return -1;
	if (pthread_cond_init(&s->cv_job, NULL)) {
		pthread_mutex_destroy(&s->mu);
		return -1;
	}
	if (pthread_cond_init(&s->cv_done, NULL)) {
		pthread_cond_destroy(&s->cv_job);
		pthread_mutex_destroy(&s->mu);
		return -1;
	}
	return 0;
}

static void *serve_main(void *arg)
{
	struct tp_wsync *s = arg;
	tp_wsync_serve(s, s->step, s->arg);
	return NULL;
}

int tp_wsync_start(struct tp_wsync *s, pthread_t *th, int jobs, int max, int (*step)(void *arg),
                   void *arg)
{
	int want = tp_wsync_workers(jobs, max), n = 0;
	if (want < 1 || tp_wsync_init(s))
		return 0;
	s->step = step;
	s->arg = arg;
	while (n < want && pthread_create(&th[n], NULL, serve_main, s) == 0)
		n++;
	if (!n)
		tp_wsync_destroy(s);
	return n;
}

void tp_wsync_destroy(struct tp_wsync *s)
{
	pthread_cond_destroy(&s->cv_done);
	pthread_cond_destroy(&s->cv_job);
	pthread_mutex_destroy(&s->mu);
}

void tp_wsync_serve(struct tp_wsync *s, int (*step)(void *arg), void *arg)
{
	tp_tm_thread(1);
	pthread_mutex_lock(&s->mu);
	for (;;) {
		if (step(arg))
			continue;
		if (s->quit)
			break;
		pthread_cond_wait(&s->cv_job, &s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	tp_tm_thread(-1);
}

void tp_wsync_stop(struct tp_wsync *s, pthread_t *th, int n)
{
	pthread_mutex_lock(&s->mu);
	s->quit = 1;
	pthread_cond_broadcast(&s->cv_job);
	pthread_mutex_unlock(&s->mu);
	for (int k = 0; k < n; k++)
		pthread_join(th[k], NULL);
	tp_wsync_destroy(s);
}

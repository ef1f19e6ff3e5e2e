/*
 * wsync.c — the worker count and the lock / condition-variable setup that the writers'
 * worker pools share (see wsync.h).
 */
#include "common/wsync.h"

#include <unistd.h>

int tp_wsync_workers(int jobs, int max)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs <= 0)
		jobs = cpus > 1 ? (int)(cpus > 64 ? 64 : cpus) : 1;
	return jobs - 1 < max ? jobs - 1 : max;
}

int tp_wsync_init(struct tp_wsync *s)
{
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

void tp_wsync_destroy(struct tp_wsync *s)
{
	pthread_cond_destroy(&s->cv_done);
	pthread_cond_destroy(&s->cv_job);
	pthread_mutex_destroy(&s->mu);
}

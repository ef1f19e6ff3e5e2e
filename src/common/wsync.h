/*
 * wsync.h — what the worker pools share (the Chrome-trace formatters, the Perfetto
 * compressors, the bmprofile global.profile scanner): how many workers to start for --jobs,
 * and the lock with its two condition variables (work queued for the workers, work done for
 * the producer). The pools own their queues and threads; this owns only the setup and
 * teardown of the three primitives.
 */
#ifndef TP_WSYNC_H
#define TP_WSYNC_H

#include <pthread.h>

/* The workers a pool starts besides the calling thread: jobs - 1, at most `max`; jobs 0 =
 * tp_jobs_default(). Below 1: no worker (the calling thread does the work). */
int tp_wsync_workers(int jobs, int max);

struct tp_wsync {
	pthread_mutex_t mu;
	pthread_cond_t cv_job;  /* work queued, or quit */
	pthread_cond_t cv_done; /* work done */
	int quit;               /* set by tp_wsync_stop, under mu */
	int (*step)(void *arg); /* what tp_wsync_start's workers serve */
	void *arg;
};

/* 0, or -1 with nothing left to destroy (a pool then runs without workers). */
int tp_wsync_init(struct tp_wsync *s);
void tp_wsync_destroy(struct tp_wsync *s);
/* A worker's loop: under s->mu, calls step(arg) while it finds work (nonzero; it may drop
 * and retake the lock while it works), else waits for cv_job, until quit is set. */
void tp_wsync_serve(struct tp_wsync *s, int (*step)(void *arg), void *arg);
/* Sets quit, wakes the n workers in th[], joins them and destroys s. */
void tp_wsync_stop(struct tp_wsync *s, pthread_t *th, int n);
/* Sets s up and starts tp_wsync_workers(jobs, max) threads into th[], each serving
 * step(arg) (tp_wsync_serve); returns how many started (a failure only means fewer; with
 * none, s is left destroyed). */
int tp_wsync_start(struct tp_wsync *s, pthread_t *th, int jobs, int max, int (*step)(void *arg),
                   void *arg);

#endif /* TP_WSYNC_H */

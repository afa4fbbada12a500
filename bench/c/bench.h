/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every C program of the benchmarks measures with, the same way for each contender: a monotonic
 * clock, the process's CPU time, and a ping-pong's report (the first 10% of round trips dropped as
 * warm-up, as bench/lib/measure.ts does, then p50, p99 and p99.9; the warm-up itself as the first trip and
 * the mean of the dropped ones). Included once per program (static inline definitions).
 */
#ifndef SOFTDPU_BENCH_H_
#define SOFTDPU_BENCH_H_

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* CPU time of this process so far (user + system, every thread), in microseconds. */
static inline double cpu_us(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return (r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e6 + r.ru_utime.tv_usec + r.ru_stime.tv_usec;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Prints a ping-pong's latency fields (no braces): "p50_us", "p99_us", "p99_9_us" of the round trips (ns)
 * after the warm-up, and the warm-up's "first_us" (the first trip) and "warmup_mean_us" (the mean of the
 * trips dropped); the same fields, computed the same way, as bench/lib/measure.ts's printRtt. Sorts rtt.
 */
static inline void rtt_print_fields(double *rtt, int n)
{
	int skip = n / 10, m = n - skip;
	double first = n > 0 ? rtt[0] : 0, warm = 0;

	for (int i = 0; i < skip; i++)
		warm += rtt[i];
	qsort(rtt + skip, (size_t)m, sizeof(double), cmp_double);
	printf("\"p50_us\":%.3f,\"p99_us\":%.3f,\"p99_9_us\":%.3f,\"first_us\":%.3f,\"warmup_mean_us\":%.3f", rtt[skip + m / 2] / 1e3,
	       rtt[skip + (int)(m * 0.99)] / 1e3, rtt[skip + (int)(m * 0.999)] / 1e3, first / 1e3, (skip ? warm / skip : first) / 1e3);
}

/*
 * A stream's clock at its receiver, as bench/lib/measure.ts's StreamClock: stream_at(c, k) with k the
 * messages received so far; the rate over the messages after the warm-up (the first tenth, as the
 * ping-pongs drop) and over all of them, each from one message's arrival to the last's.
 */
struct stream_clock {
	long total, warm, seen;
	double first, steady, last;
};

static inline void stream_clock_init(struct stream_clock *c, long total)
{
	*c = (struct stream_clock){.total = total, .warm = total / 10};
}

static inline void stream_at(struct stream_clock *c, long k)
{
	if (c->seen == 0 && k >= 1)
		c->first = now_ns();
	if (c->seen <= c->warm && k > c->warm)
		c->steady = now_ns();
	if (c->seen < c->total && k >= c->total)
		c->last = now_ns();
	c->seen = k;
}

/* Prints the fields (no braces) "gbps", "rate" (after the warm-up) and "whole_rate" of SIZE-byte messages. */
static inline void stream_print_fields(const struct stream_clock *c, size_t size)
{
	double rate = (c->total - 1 - c->warm) / ((c->last - c->steady) / 1e9);

	printf("\"gbps\":%.3f,\"rate\":%.0f,\"whole_rate\":%.0f", rate * (double)size / 1e9, rate, (c->total - 1) / ((c->last - c->first) / 1e9));
}

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ volatile("yield")
#else
#define cpu_relax() ((void)0)
#endif

#endif /* SOFTDPU_BENCH_H_ */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What every C program of the benchmarks measures with, the same way for each contender: a monotonic
 * clock, the process's CPU time, and a ping-pong's report (the first 10% of round trips dropped as
 * warm-up, as bench/lib/measure.ts does, then p50 and p99). Included once per program (static inline definitions).
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

/* Sorts the round trips (ns) after the warm-up (the first 10%) and gives their p50 and p99 in us. */
static inline void rtt_percentiles(double *rtt, int n, double *p50_us, double *p99_us)
{
	int skip = n / 10, m = n - skip;

	qsort(rtt + skip, (size_t)m, sizeof(double), cmp_double);
	*p50_us = rtt[skip + m / 2] / 1e3;
	*p99_us = rtt[skip + (int)(m * 0.99)] / 1e3;
}

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ volatile("yield")
#else
#define cpu_relax() ((void)0)
#endif

#endif /* SOFTDPU_BENCH_H_ */

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DOCA Sync Event of the C library across processes, one side per process (the file and the sides are
 * those of bench/sync-event-peer.ts, so either side may be the TypeScript peer):
 *   se_pingpong a busy|yield N FILE   creates two events on the Arm (03:00.0; publisher remote PCI,
 *                                     subscriber the CPU), writes their PCI exports to FILE (a line of hex
 *                                     each), says "ready", then N round trips: update_add(e1, 1), wait_eq
 *                                     (e2 == i); prints {"p50_us","p99_us",...,"cpu_us_per_msg"} (bench.h's fields) (CPU from the
 *                                     first trip's end, the importer started)
 *   se_pingpong b busy|yield N FILE   imports both on the host (b1:00.0): wait_eq(e1 == i),
 *                                     update_add(e2, 1); prints {"cpu_us_per_msg"} (from the first wait on)
 * busy: doca_sync_event_wait_eq (spins); yield: doca_sync_event_wait_eq_yield.
 */
#define _GNU_SOURCE
#include <doca_sync_event.h>

#include "doca_bench.h"

#define ALL UINT64_MAX

static doca_error_t (*wait_eq)(struct doca_sync_event *, uint64_t, uint64_t);

static struct doca_sync_event *creator_event(struct doca_dev *dev)
{
	struct doca_sync_event *e;

	check("doca_sync_event_create", doca_sync_event_create(&e));
	check("add_publisher_location_remote_pci", doca_sync_event_add_publisher_location_remote_pci(e));
	check("add_subscriber_location_cpu", doca_sync_event_add_subscriber_location_cpu(e, dev));
	check("doca_sync_event_start", doca_sync_event_start(e));
	return e;
}

static void write_export(FILE *f, struct doca_sync_event *e, struct doca_dev *dev)
{
	const uint8_t *data;
	size_t sz;

	check("export_to_remote_pci", doca_sync_event_export_to_remote_pci(e, dev, &data, &sz));
	for (size_t i = 0; i < sz; i++)
		fprintf(f, "%02x", data[i]);
}

/* The event of line `line` (0, 1) of FILE. */
static struct doca_sync_event *import_line(const char *file, int line, struct doca_dev *dev)
{
	static char text[8192];
	uint8_t bytes[4096];
	size_t len = 0;
	struct doca_sync_event *e;
	FILE *f = fopen(file, "r");

	for (int i = 0; i <= line; i++)
		if (f == NULL || fgets(text, sizeof(text), f) == NULL)
			check(file, DOCA_ERROR_IO_FAILED);
	fclose(f);
	for (unsigned byte; len < sizeof(bytes) && sscanf(text + 2 * len, "%2x", &byte) == 1; len++)
		bytes[len] = (uint8_t)byte;
	check("doca_sync_event_create_from_export", doca_sync_event_create_from_export(dev, bytes, len, &e));
	check("doca_sync_event_start", doca_sync_event_start(e));
	return e;
}

int main(int argc, char **argv)
{
	bool creator = argc == 5 && strcmp(argv[1], "a") == 0;
	long n = argc == 5 ? atol(argv[3]) : 0;
	uint64_t fetched;

	if (argc != 5 || (!creator && strcmp(argv[1], "b") != 0) || (strcmp(argv[2], "busy") != 0 && strcmp(argv[2], "yield") != 0) || n < 1) {
		fprintf(stderr, "usage: se_pingpong a|b busy|yield N FILE\n");
		return 2;
	}
	watchdog("se_pingpong", 300);
	wait_eq = strcmp(argv[2], "busy") == 0 ? doca_sync_event_wait_eq : doca_sync_event_wait_eq_yield;
	if (creator) {
		struct doca_dev *dev = open_dev(ARM_PCI);
		struct doca_sync_event *e1 = creator_event(dev), *e2 = creator_event(dev);
		double *rtt = calloc((size_t)n, sizeof(double)), cpu;
		FILE *f = fopen(argv[4], "w");

		if (f == NULL)
			check(argv[4], DOCA_ERROR_IO_FAILED);
		write_export(f, e1, dev);
		fputc('\n', f);
		write_export(f, e2, dev);
		fclose(f);
		say_ready();
		for (long i = 1; i <= n; i++) {
			double t0 = now_ns();

			check("doca_sync_event_update_add", doca_sync_event_update_add(e1, 1, &fetched));
			check("wait_eq", wait_eq(e2, (uint64_t)i, ALL));
			rtt[i - 1] = now_ns() - t0;
			if (i == 1) /* the first trip waited for the importer to start: not counted */
				cpu = cpu_us();
		}
		cpu = (cpu_us() - cpu) * n / (n > 1 ? n - 1 : 1);
		printf("{");
		rtt_print_fields(rtt, (int)n);
		printf(",\"cpu_us_per_msg\":%.3f}\n", cpu / n);
		doca_sync_event_stop(e1);
		doca_sync_event_stop(e2);
		doca_sync_event_destroy(e1);
		doca_sync_event_destroy(e2);
		doca_dev_close(dev);
	} else {
		struct doca_dev *dev = open_dev(HOST_PCI);
		struct doca_sync_event *e1 = import_line(argv[4], 0, dev), *e2 = import_line(argv[4], 1, dev);
		double cpu = 0;

		for (long i = 1; i <= n; i++) {
			check("wait_eq", wait_eq(e1, (uint64_t)i, ALL));
			if (i == 1)
				cpu = cpu_us();
			check("doca_sync_event_update_add", doca_sync_event_update_add(e2, 1, &fetched));
		}
		printf("{\"cpu_us_per_msg\":%.3f}\n", (cpu_us() - cpu) / n);
		/* The exporter may be gone already: the handles go with the process. */
	}
	return 0;
}

/*
 * C reference for bench/fabric.bench.ts: the physical limits the Node figures are compared with, measured
 * in the same run on the same machine.
 *   fabric_ref spin  N [CPU_A CPU_B]   cross-process ping-pong, both sides spinning on a shared cache line
 *   fabric_ref futex N [CPU_A CPU_B]   the same, sleeping in FUTEX_WAIT, woken by FUTEX_WAKE
 *                                      (with CPUs: the pinger runs on CPU_A, the ponger on CPU_B)
 *   fabric_ref copy  SIZE    memcpy bandwidth into a 64 MiB shared mapping, walking it
 * Prints one JSON object.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ volatile("yield")
#else
#define cpu_relax() ((void)0)
#endif

static void fwait(uint32_t *w, uint32_t v) { syscall(SYS_futex, w, FUTEX_WAIT, v, NULL, NULL, 0); }
static void fwake(uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0); }

static void await_value(uint32_t *w, uint32_t target, int sleep) {
  uint32_t v;
  while ((v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) != target) {
    if (sleep) fwait(w, v);
    else cpu_relax();
  }
}

static void pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
}

static int pingpong(int n, int sleep, int cpu_a, int cpu_b) {
  uint32_t *shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  uint32_t *ping = shm, *pong = shm + 16; /* separate cache lines */
  pid_t pid = fork();
  if (pid == 0) {
    pin(cpu_b);
    for (uint32_t i = 1; i <= (uint32_t)n; i++) {
      await_value(ping, i, sleep);
      __atomic_store_n(pong, i, __ATOMIC_RELEASE);
      if (sleep) fwake(pong);
    }
    _exit(0);
  }
  pin(cpu_a);
  double *rtt = malloc(sizeof(double) * n);
  for (uint32_t i = 1; i <= (uint32_t)n; i++) {
    double t0 = now_ns();
    __atomic_store_n(ping, i, __ATOMIC_RELEASE);
    if (sleep) fwake(ping);
    await_value(pong, i, sleep);
    rtt[i - 1] = now_ns() - t0;
  }
  waitpid(pid, NULL, 0);
  int skip = n / 10;
  qsort(rtt + skip, n - skip, sizeof(double), cmp);
  int m = n - skip;
  printf("{\"mode\":\"%s\",\"n\":%d,\"p50_us\":%.3f,\"p99_us\":%.3f}\n", sleep ? "futex" : "spin", n,
         rtt[skip + m / 2] / 1e3, rtt[skip + (int)(m * 0.99)] / 1e3);
  return 0;
}

static int copy(size_t size) {
  const size_t region = 64u << 20;
  int fd = memfd_create("softdpu.bench", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, region) != 0) return 1;
  uint8_t *dst = mmap(NULL, region, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  uint8_t *src = malloc(size);
  memset(src, 0x5a, size);
  memset(dst, 0, region); /* fault the pages in first: we measure copies, not page faults */
  size_t slots = region / size, total = 0;
  double best = 0;
  for (int run = 0; run < 5; run++) {
    size_t bytes = 0;
    double t0 = now_ns();
    for (size_t k = 0; bytes < (size_t)512 << 20; k++, bytes += size) memcpy(dst + (k % slots) * size, src, size);
    double gbps = bytes / (now_ns() - t0);
    total += bytes;
    if (gbps > best) best = gbps;
  }
  printf("{\"mode\":\"copy\",\"size\":%zu,\"gbps\":%.3f,\"bytes\":%zu}\n", size, best, total);
  return 0;
}

int main(int argc, char **argv) {
  int a = argc == 5 ? atoi(argv[3]) : -1, b = argc == 5 ? atoi(argv[4]) : -1;
  if ((argc == 3 || argc == 5) && !strcmp(argv[1], "spin")) return pingpong(atoi(argv[2]), 0, a, b);
  if ((argc == 3 || argc == 5) && !strcmp(argv[1], "futex")) return pingpong(atoi(argv[2]), 1, a, b);
  if (argc == 3 && !strcmp(argv[1], "copy")) return copy((size_t)atol(argv[2]));
  fprintf(stderr, "usage: fabric_ref spin|futex N [CPU_A CPU_B] | copy SIZE\n");
  return 2;
}

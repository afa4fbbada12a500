/*
 * C reference for the benchmarks: the physical limits the Node figures are compared with, measured in the
 * same run on the same machine. With CPUs given, the first side (pinger, or consumer) runs on CPU_A and
 * the second (echoer, or producer) on CPU_B.
 *   fabric_ref spin    N [CPU_A CPU_B]  ping-pong, both sides spinning on a shared cache line
 *   fabric_ref yield   N [CPU_A CPU_B]  the same, each side calling sched_yield() until the value changes
 *   fabric_ref futex   N [CPU_A CPU_B]  the same, sleeping in FUTEX_WAIT, woken by FUTEX_WAKE
 *   fabric_ref pipe    N [CPU_A CPU_B]  each side blocks in read() on its own pipe; the other writes 1 byte
 *   fabric_ref eventfd N [CPU_A CPU_B]  each side blocks in read() on its own eventfd; the other writes 1
 *       (the limits of a doorbell wake)
 *   fabric_ref unix    N [CPU_A CPU_B]  64-byte messages over a Unix stream socket pair, blocking
 *       read() and write() (what a C program would use instead of comch)
 *       each prints {"p50_us","p99_us","p99_9_us","first_us","warmup_mean_us"} (bench.h) and, for the sleeping ones, the CPU time (getrusage, user +
 *       system) of each side per round trip
 *   fabric_ref ring_rtt SIZE N [CPU_A CPU_B]  ping-pong of SIZE bytes through shared buffers, both sides
 *       asleep in FUTEX_WAIT: the pinger copies SIZE bytes in, the echoer copies them to the reply buffer
 *   fabric_ref shm_ring SIZE COUNT POSTED [CPU_A CPU_B]  the comch fast path as two C processes: the
 *       consumer posts POSTED buffers of SIZE bytes in a shared mapping; the producer memcpy()s each
 *       payload from a private buffer into the next posted buffer and publishes a completion (buffer,
 *       length); the consumer takes completions in order, reads the first and last 8 bytes of the
 *       payload in place and reposts the buffer. Both busy-poll. Prints {"gbps","rate","whole_rate"}
 *       at the consumer (bench.h's stream clock: after the warm-up, and over every message), as the
 *       Node consumer does.
 *   fabric_ref copy SIZE  memcpy bandwidth into a 64 MiB shared mapping, walking it
 * Prints one JSON object.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"

enum mode { SPIN, YIELD, FUTEX, PIPE, EVENTFD, UNIX };
static const char *mode_names[] = {"spin", "yield", "futex", "pipe", "eventfd", "unix"};

/* The message of the unix mode. */
#define UNIX_MSG 64

static void fwait(uint32_t *w, uint32_t v) { syscall(SYS_futex, w, FUTEX_WAIT, v, NULL, NULL, 0); }
static void fwake(uint32_t *w) { syscall(SYS_futex, w, FUTEX_WAKE, 1, NULL, NULL, 0); }

static void await_value(uint32_t *w, uint32_t target, enum mode m) {
  uint32_t v;
  while ((v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) != target) {
    if (m == FUTEX) fwait(w, v);
    else if (m == YIELD) sched_yield();
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

static void *shared(size_t size) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  memset(p, 0, size); /* fault the pages in first: we measure the exchange, not page faults */
  return p;
}

/* Prints the round trips (ns) after the warm-up (bench.h) with both sides' CPU per trip. */
static void report(const char *mode, int n, double *rtt, double cpu_a, double cpu_b) {
  printf("{\"mode\":\"%s\",\"n\":%d,", mode, n);
  rtt_print_fields(rtt, n);
  printf(",\"cpu_pinger_us_per_msg\":%.3f,\"cpu_echoer_us_per_msg\":%.3f}\n", cpu_a / n, cpu_b / n);
}

/* The doorbell of one side: a word to change (and wake, when sleeping), or an fd to write to. */
struct side {
  uint32_t *word;
  int rfd, wfd;
};

/* Moves all `len` bytes through a blocking socket (a stream may split them). */
static void full_io(int fd, uint8_t *buf, size_t len, int reading) {
  for (size_t done = 0; done < len;) {
    ssize_t n = reading ? read(fd, buf + done, len - done) : write(fd, buf + done, len - done);
    if (n <= 0) _exit(1);
    done += (size_t)n;
  }
}

static void ring_bell(struct side *s, uint32_t i, enum mode m) {
  if (m == UNIX) {
    uint8_t msg[UNIX_MSG];
    memset(msg, (int)(i & 0xff), sizeof msg);
    full_io(s->wfd, msg, sizeof msg, 0);
    return;
  }
  if (m == PIPE || m == EVENTFD) {
    uint64_t one = 1;
    if (write(s->wfd, &one, m == PIPE ? 1 : 8) < 0) _exit(1);
    return;
  }
  __atomic_store_n(s->word, i, __ATOMIC_RELEASE);
  if (m == FUTEX) fwake(s->word);
}

static void await_bell(struct side *s, uint32_t i, enum mode m) {
  if (m == UNIX) {
    uint8_t msg[UNIX_MSG];
    full_io(s->rfd, msg, sizeof msg, 1);
    return;
  }
  if (m == PIPE || m == EVENTFD) {
    uint64_t v;
    if (read(s->rfd, &v, m == PIPE ? 1 : 8) <= 0) _exit(1);
    return;
  }
  await_value(s->word, i, m);
}

static struct side make_side(uint32_t *word, enum mode m) {
  struct side s = {word, -1, -1};
  if (m == PIPE) {
    int fds[2];
    if (pipe(fds) != 0) exit(1);
    s.rfd = fds[0];
    s.wfd = fds[1];
  } else if (m == EVENTFD) {
    s.rfd = s.wfd = eventfd(0, 0);
  }
  return s;
}

static int pingpong(int n, enum mode m, int cpu_a, int cpu_b) {
  uint32_t *shm = shared(4096);
  double *echo_cpu = (double *)(shm + 32);
  struct side ping = make_side(shm, m), pong = make_side(shm + 16, m); /* separate cache lines */
  if (m == UNIX) { /* one socket pair: the pinger writes one end, the echoer the other */
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) exit(1);
    ping = (struct side){shm, sv[1], sv[0]};
    pong = (struct side){shm + 16, sv[0], sv[1]};
  }
  pid_t pid = fork();
  if (pid == 0) {
    pin(cpu_b);
    double c0 = 0;
    for (uint32_t i = 1; i <= (uint32_t)n; i++) {
      await_bell(&ping, i, m);
      if (i == 1) c0 = cpu_us();
      ring_bell(&pong, i, m);
    }
    *echo_cpu = cpu_us() - c0;
    _exit(0);
  }
  pin(cpu_a);
  double *rtt = malloc(sizeof(double) * n);
  double c0 = cpu_us();
  for (uint32_t i = 1; i <= (uint32_t)n; i++) {
    double t0 = now_ns();
    ring_bell(&ping, i, m);
    await_bell(&pong, i, m);
    rtt[i - 1] = now_ns() - t0;
  }
  double cpu = cpu_us() - c0;
  waitpid(pid, NULL, 0);
  report(mode_names[m], n, rtt, cpu, *echo_cpu);
  return 0;
}

static uint64_t touch(const uint8_t *p, size_t len) {
  uint64_t a, b;
  memcpy(&a, p, 8);
  memcpy(&b, p + len - 8, 8);
  return a ^ b;
}

static int ring_rtt(size_t size, int n, int cpu_a, int cpu_b) {
  uint8_t *shm = shared(4096 + 2 * size);
  uint32_t *ping = (uint32_t *)shm, *pong = (uint32_t *)(shm + 64);
  double *echo_cpu = (double *)(shm + 128);
  uint8_t *request = shm + 4096, *reply = request + size;
  pid_t pid = fork();
  if (pid == 0) {
    pin(cpu_b);
    double c0 = 0;
    for (uint32_t i = 1; i <= (uint32_t)n; i++) {
      await_value(ping, i, FUTEX);
      if (i == 1) c0 = cpu_us();
      memcpy(reply, request, size);
      __atomic_store_n(pong, i, __ATOMIC_RELEASE);
      fwake(pong);
    }
    *echo_cpu = cpu_us() - c0;
    _exit(0);
  }
  pin(cpu_a);
  uint8_t *src = malloc(size);
  memset(src, 0x5a, size);
  double *rtt = malloc(sizeof(double) * n);
  volatile uint64_t sink = 0;
  double c0 = cpu_us();
  for (uint32_t i = 1; i <= (uint32_t)n; i++) {
    double t0 = now_ns();
    memcpy(request, src, size);
    __atomic_store_n(ping, i, __ATOMIC_RELEASE);
    fwake(ping);
    await_value(pong, i, FUTEX);
    sink ^= touch(reply, size);
    rtt[i - 1] = now_ns() - t0;
  }
  double cpu = cpu_us() - c0;
  waitpid(pid, NULL, 0);
  report("ring_rtt", n, rtt, cpu, *echo_cpu);
  return 0;
}

struct completion {
  uint32_t buf, len;
};

static int shm_ring(size_t size, long count, uint32_t posted, int cpu_consumer, int cpu_producer) {
  /* Control page: posted count and completed count on their own cache lines, then the two rings. */
  size_t ctl = 4096 + posted * (sizeof(uint32_t) + sizeof(struct completion));
  ctl = (ctl + 4095) & ~(size_t)4095;
  uint8_t *shm = shared(ctl + (size_t)posted * size);
  uint32_t *post_head = (uint32_t *)shm, *comp_head = (uint32_t *)(shm + 64);
  uint32_t *post = (uint32_t *)(shm + 4096);
  struct completion *comp = (struct completion *)(post + posted);
  uint8_t *data = shm + ctl;
  pid_t pid = fork();
  if (pid == 0) { /* producer */
    pin(cpu_producer);
    uint8_t *src = malloc(size);
    memset(src, 0x5a, size);
    for (uint32_t k = 0; k < (uint32_t)count; k++) {
      while (__atomic_load_n(post_head, __ATOMIC_ACQUIRE) == k) cpu_relax();
      uint32_t b = post[k % posted];
      memcpy(data + (size_t)b * size, src, size);
      comp[k % posted] = (struct completion){b, (uint32_t)size};
      __atomic_store_n(comp_head, k + 1, __ATOMIC_RELEASE);
    }
    _exit(0);
  }
  pin(cpu_consumer);
  for (uint32_t i = 0; i < posted; i++) post[i] = i;
  __atomic_store_n(post_head, posted, __ATOMIC_RELEASE);
  volatile uint64_t sink = 0;
  struct stream_clock clock;
  stream_clock_init(&clock, count);
  for (uint32_t k = 0; k < (uint32_t)count; k++) {
    while (__atomic_load_n(comp_head, __ATOMIC_ACQUIRE) == k) cpu_relax();
    stream_at(&clock, (long)k + 1);
    struct completion c = comp[k % posted];
    sink ^= touch(data + (size_t)c.buf * size, c.len);
    post[(k + posted) % posted] = c.buf;
    __atomic_store_n(post_head, k + 1 + posted, __ATOMIC_RELEASE);
  }
  waitpid(pid, NULL, 0);
  printf("{\"mode\":\"shm_ring\",\"size\":%zu,\"count\":%ld,\"posted\":%u,", size, count, posted);
  stream_print_fields(&clock, size);
  printf("}\n");
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
  /* Optional trailing CPU_A CPU_B after `fixed` arguments (the mode included). */
#define CPUS(fixed) (argc == (fixed) + 3 ? atoi(argv[(fixed) + 1]) : -1), (argc == (fixed) + 3 ? atoi(argv[(fixed) + 2]) : -1)
#define ARGS_OK(fixed) (argc == (fixed) + 1 || argc == (fixed) + 3)
  for (int m = SPIN; m <= UNIX; m++)
    if (ARGS_OK(2) && !strcmp(argv[1], mode_names[m])) return pingpong(atoi(argv[2]), m, CPUS(2));
  if (ARGS_OK(3) && !strcmp(argv[1], "ring_rtt")) return ring_rtt((size_t)atol(argv[2]), atoi(argv[3]), CPUS(3));
  if (ARGS_OK(4) && !strcmp(argv[1], "shm_ring")) return shm_ring((size_t)atol(argv[2]), atol(argv[3]), (uint32_t)atol(argv[4]), CPUS(4));
  if (argc == 3 && !strcmp(argv[1], "copy")) return copy((size_t)atol(argv[2]));
  fprintf(stderr,
          "usage: fabric_ref spin|yield|futex|pipe|eventfd|unix N [CPU_A CPU_B] | ring_rtt SIZE N [CPU_A CPU_B]\n"
          "       | shm_ring SIZE COUNT POSTED [CPU_A CPU_B] | copy SIZE\n");
  return 2;
}

/*
 * softdpu native layer: shared-memory segments, doorbells and futex waits, nothing else.
 *
 * Node cannot map shared memory across processes, cannot watch a file descriptor it did not open as a
 * socket or pipe stream, cannot sleep on a futex that another process wakes (Atomics.wait only sees
 * waiters of its own isolate group), cannot call sched_yield and cannot ask a Unix socket who is at its
 * other end (SO_PEERCRED). Everything else (naming, layouts, protocols) lives in TypeScript. The
 * declarations are in native.ts.
 *
 * Segments: memfd mappings handed to JS as external (non-shared) ArrayBuffers. Bulk copies into a
 * non-shared buffer run at memcpy speed; Atomics still work on it and are exact across processes.
 * close() detaches the ArrayBuffer before munmap, because an access through a live view of an unmapped
 * region is a SIGSEGV.
 *
 * Doorbells (docs/wakeup.md): a progress engine sleeps on the read end of a pipe that its own thread's
 * event loop polls (uv_poll, registered once for the engine's life); a peer in any process or thread
 * rings it with one write(2) on the write end, which it opened once through /proc/<pid>/fd/<n>. When
 * the pipe becomes readable the loop drains it and calls the engine's callback directly: one kernel
 * event per wake-up, no helper thread. The protocol that decides when to ring is TypeScript.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#define MAX_SEGMENT_SIZE ((uint64_t)4 << 30)

enum { WAIT_OK = 0, WAIT_NOT_EQUAL = 1, WAIT_TIMED_OUT = 2 };

typedef struct segment {
  uint8_t *base;
  size_t size;
  int fd; /* -1 for segments opened from another process */
  uint32_t gen;
  int open;
  napi_ref buffer; /* weak: detached on close */
} segment_t;

typedef struct env_data env_data_t;

/* A doorbell's read end polled by the loop of the thread that made the watch. */
typedef struct fd_watch {
  uv_poll_t poll;
  env_data_t *owner;
  double id;
  int fd;
  int closing;
  napi_ref callback;
  napi_async_context async;
  struct fd_watch *next;
} fd_watch_t;

struct env_data {
  napi_env env;
  segment_t *segs;
  uint32_t nsegs;
  fd_watch_t *watches;
  double next_watch_id;
  uint32_t closing; /* watches whose uv_close has not called back yet */
  napi_async_cleanup_hook_handle cleanup;
};

/* ---------- helpers ---------- */

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int64_t deadline_from_ms(double timeout_ms) {
  /* NaN, negative, Infinity, or beyond what int64 nanoseconds hold (~292 years): no timeout. */
  if (!(timeout_ms >= 0) || timeout_ms >= 9.0e12) return -1;
  return now_ns() + (int64_t)(timeout_ms * 1e6);
}

/* fstat through the syscall: glibc's fstat symbol is 2.33+, and the prebuilt binaries should load on
 * older distributions (the kernel's struct stat is glibc's on x86-64 and on aarch64). */
static int fd_stat(int fd, struct stat *st) { return (int)syscall(SYS_fstat, fd, st); }

static long futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts, uint32_t val3) {
  return syscall(SYS_futex, addr, op, val, ts, NULL, val3);
}

/* ---------- pipe fds, by the thread that holds them ---------- */

/* Which env (thread) made each doorbell pipe fd (pipeCreate, pipeOpen). Fds belong to the process, not
 * to the thread: a worker that exits or dies holding some would leak them into its process, so the env's
 * teardown closes those it still holds. The table is process-wide, and close and forget are one step
 * under its lock, so that no thread ever closes a number another thread has been given since. */
static env_data_t **fd_owners;
static int fd_owners_len;
static char fd_lock;

static void fd_table_lock(void) {
  while (__atomic_test_and_set(&fd_lock, __ATOMIC_ACQUIRE)) sched_yield();
}
static void fd_table_unlock(void) { __atomic_clear(&fd_lock, __ATOMIC_RELEASE); }

/* Records that `ed` holds `fd` (untracked if the table cannot grow: then only its thread closes it). */
static void fd_track(env_data_t *ed, int fd) {
  fd_table_lock();
  if (fd >= fd_owners_len) {
    int len = fd_owners_len ? fd_owners_len : 256;
    while (len <= fd) len *= 2;
    env_data_t **grown = realloc(fd_owners, sizeof *grown * (size_t)len);
    if (grown) {
      memset(grown + fd_owners_len, 0, sizeof *grown * (size_t)(len - fd_owners_len));
      fd_owners = grown;
      fd_owners_len = len;
    }
  }
  if (fd < fd_owners_len) fd_owners[fd] = ed;
  fd_table_unlock();
}

/* Closes `fd` and forgets its owner, as one step. */
static int fd_untrack_close(int fd) {
  fd_table_lock();
  if (fd < fd_owners_len) fd_owners[fd] = NULL;
  int r = close(fd);
  int e = errno;
  fd_table_unlock();
  errno = e;
  return r;
}

/* Closes every fd `ed` still holds (its thread is going away). */
static void fd_close_owned(env_data_t *ed) {
  fd_table_lock();
  for (int i = 0; i < fd_owners_len; i++)
    if (fd_owners[i] == ed) {
      close(i);
      fd_owners[i] = NULL;
    }
  fd_table_unlock();
}

#define NAPI_CALL(env, call)                                         \
  do {                                                               \
    if ((call) != napi_ok) {                                         \
      napi_throw_error((env), "ERR_SOFTDPU_NAPI", "N-API call failed: " #call); \
      return NULL;                                                   \
    }                                                                \
  } while (0)

static napi_value throw_code(napi_env env, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static napi_value throw_code(napi_env env, const char *code, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  napi_throw_error(env, code, msg);
  return NULL;
}

static napi_value throw_errno(napi_env env, const char *what, int err) {
  return throw_code(env, "ERR_SOFTDPU_OS", "%s failed: %s (errno %d)", what, strerror(err), err);
}

static napi_value make_number(napi_env env, double v) {
  napi_value out;
  napi_create_double(env, v, &out);
  return out;
}

static int get_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) {
    throw_code(env, "ERR_SOFTDPU_ARGS", "expected %zu arguments, got %zu", want, argc);
    return 0;
  }
  return 1;
}

static int get_double(napi_env env, napi_value v, const char *name, double *out) {
  if (napi_get_value_double(env, v, out) != napi_ok) {
    throw_code(env, "ERR_SOFTDPU_ARGS", "%s must be a number", name);
    return 0;
  }
  return 1;
}

static env_data_t *env_data(napi_env env) {
  void *d = NULL;
  napi_get_instance_data(env, &d);
  return d;
}

/* Segment handles are slot + generation so that a stale handle never reaches a reused slot. */
static double handle_of(uint32_t slot, uint32_t gen) { return (double)gen * 1048576.0 + slot; }

static segment_t *lookup(napi_env env, env_data_t *ed, napi_value h) {
  double d;
  if (!get_double(env, h, "segment handle", &d)) return NULL;
  if (d < 0 || d != (double)(uint64_t)d) {
    throw_code(env, "ERR_SOFTDPU_HANDLE", "invalid segment handle %g", d);
    return NULL;
  }
  uint64_t v = (uint64_t)d;
  uint32_t slot = (uint32_t)(v % 1048576), gen = (uint32_t)(v / 1048576);
  if (slot >= ed->nsegs || ed->segs[slot].gen != gen) {
    throw_code(env, "ERR_SOFTDPU_HANDLE", "unknown segment handle %g", d);
    return NULL;
  }
  if (!ed->segs[slot].open) {
    throw_code(env, "ERR_SOFTDPU_CLOSED", "segment handle %g is closed", d);
    return NULL;
  }
  return &ed->segs[slot];
}

static uint32_t *word_at(napi_env env, segment_t *s, napi_value off_v) {
  double off;
  if (!get_double(env, off_v, "byteOffset", &off)) return NULL;
  if (off < 0 || off != (double)(uint64_t)off || (uint64_t)off % 4 != 0 || (uint64_t)off + 4 > s->size) {
    throw_code(env, "ERR_SOFTDPU_RANGE", "byteOffset %g is not an aligned 32-bit word inside %zu bytes", off,
               s->size);
    return NULL;
  }
  return (uint32_t *)(s->base + (uint64_t)off);
}

static uint32_t alloc_slot(env_data_t *ed) {
  for (uint32_t i = 0; i < ed->nsegs; i++)
    if (!ed->segs[i].open && ed->segs[i].buffer == NULL) return i;
  segment_t *grown = realloc(ed->segs, sizeof(segment_t) * (ed->nsegs + 1));
  if (!grown) return UINT32_MAX;
  ed->segs = grown;
  memset(&ed->segs[ed->nsegs], 0, sizeof(segment_t));
  return ed->nsegs++;
}

static void unmap_segment(env_data_t *ed, segment_t *s) {
  (void)ed;
  munmap(s->base, s->size);
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
  s->base = NULL;
  s->open = 0;
}

/* Runs on the JS thread when the ArrayBuffer is collected: a segment nobody closed. */
static void buffer_finalize(napi_env env, void *data, void *hint) {
  (void)data;
  env_data_t *ed = env_data(env);
  uint64_t v = (uint64_t)(uintptr_t)hint;
  uint32_t slot = (uint32_t)(v % 1048576), gen = (uint32_t)(v / 1048576);
  if (!ed || slot >= ed->nsegs || ed->segs[slot].gen != gen) return;
  segment_t *s = &ed->segs[slot];
  if (s->open) unmap_segment(ed, s);
  if (s->buffer) napi_delete_reference(env, s->buffer);
  s->buffer = NULL;
  s->gen++;
}

static napi_value publish_segment(napi_env env, env_data_t *ed, uint8_t *base, size_t size, int fd) {
  uint32_t slot = alloc_slot(ed);
  if (slot == UINT32_MAX) {
    munmap(base, size);
    if (fd >= 0) close(fd);
    return throw_code(env, "ERR_SOFTDPU_OS", "out of memory for the segment table");
  }
  segment_t *s = &ed->segs[slot];
  s->gen++;
  s->base = base;
  s->size = size;
  s->fd = fd;
  s->open = 1;
  napi_value ab, out, v;
  uint64_t hint = (uint64_t)s->gen * 1048576 + slot;
  if (napi_create_external_arraybuffer(env, base, size, buffer_finalize, (void *)(uintptr_t)hint, &ab) !=
      napi_ok) {
    unmap_segment(ed, s);
    return throw_code(env, "ERR_SOFTDPU_OS", "cannot wrap a %zu-byte mapping as an ArrayBuffer", size);
  }
  napi_create_reference(env, ab, 0, &s->buffer);
  napi_create_object(env, &out);
  napi_set_named_property(env, out, "handle", make_number(env, handle_of(slot, s->gen)));
  napi_set_named_property(env, out, "buffer", ab);
  napi_set_named_property(env, out, "fd", make_number(env, fd));
  napi_create_double(env, (double)size, &v);
  napi_set_named_property(env, out, "size", v);
  return out;
}

/* ---------- segments ---------- */

/* segmentCreate(size, label) -> { handle, buffer, fd, size } */
static napi_value segment_create(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  double size;
  if (!get_double(env, argv[0], "size", &size)) return NULL;
  if (!(size >= 1) || size > (double)MAX_SEGMENT_SIZE || size != (double)(uint64_t)size)
    return throw_code(env, "ERR_SOFTDPU_RANGE", "segment size %g is not an integer in [1, 4 GiB]", size);
  char label[64];
  size_t len = 0;
  if (napi_get_value_string_utf8(env, argv[1], label, sizeof label, &len) != napi_ok)
    return throw_code(env, "ERR_SOFTDPU_ARGS", "label must be a string");
  int fd = memfd_create(label, MFD_CLOEXEC);
  if (fd < 0) return throw_errno(env, "memfd_create", errno);
  if (ftruncate(fd, (off_t)size) != 0) {
    int e = errno;
    close(fd);
    return throw_errno(env, "ftruncate", e);
  }
  void *base = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    int e = errno;
    close(fd);
    return throw_errno(env, "mmap", e);
  }
  return publish_segment(env, env_data(env), base, (size_t)size, fd);
}

/* segmentOpen(path, expectedSize) -> { handle, buffer, fd: -1, size } */
static napi_value segment_open(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  char path[256];
  size_t len = 0;
  if (napi_get_value_string_utf8(env, argv[0], path, sizeof path, &len) != napi_ok || len == 0 ||
      len >= sizeof path - 1)
    return throw_code(env, "ERR_SOFTDPU_ARGS", "path must be a non-empty string shorter than 254 bytes");
  double expected;
  if (!get_double(env, argv[1], "expectedSize", &expected)) return NULL;
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return throw_code(env, e == ENOENT ? "ERR_SOFTDPU_NOT_FOUND" : "ERR_SOFTDPU_OS", "open %s failed: %s", path,
                      strerror(e));
  }
  struct stat st;
  if (fd_stat(fd, &st) != 0 || (double)st.st_size != expected || st.st_size <= 0 ||
      (uint64_t)st.st_size > MAX_SEGMENT_SIZE) {
    close(fd);
    return throw_code(env, "ERR_SOFTDPU_NOT_FOUND", "%s is not a segment of %g bytes", path, expected);
  }
  void *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int e = errno;
  close(fd);
  if (base == MAP_FAILED) return throw_errno(env, "mmap", e);
  return publish_segment(env, env_data(env), base, (size_t)st.st_size, -1);
}

/* segmentClose(handle) */
static napi_value segment_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  env_data_t *ed = env_data(env);
  segment_t *s = lookup(env, ed, argv[0]);
  if (!s) return NULL;
  napi_value ab;
  if (s->buffer && napi_get_reference_value(env, s->buffer, &ab) == napi_ok && ab != NULL)
    NAPI_CALL(env, napi_detach_arraybuffer(env, ab));
  unmap_segment(ed, s);
  return NULL;
}

/* ---------- sync futex ---------- */

/* futexWait(handle, byteOffset, expected, timeoutMs) -> 0 woken, 1 not-equal, 2 timed-out.
 * Retries EINTR against an absolute CLOCK_MONOTONIC deadline. */
static napi_value futex_wait(napi_env env, napi_callback_info info) {
  napi_value argv[4];
  if (!get_args(env, info, 4, argv)) return NULL;
  segment_t *s = lookup(env, env_data(env), argv[0]);
  if (!s) return NULL;
  uint32_t *addr = word_at(env, s, argv[1]);
  if (!addr) return NULL;
  uint32_t expected;
  double timeout_ms;
  if (napi_get_value_uint32(env, argv[2], &expected) != napi_ok)
    return throw_code(env, "ERR_SOFTDPU_ARGS", "expected must be a uint32");
  if (!get_double(env, argv[3], "timeoutMs", &timeout_ms)) return NULL;
  int64_t deadline = deadline_from_ms(timeout_ms);
  for (;;) {
    struct timespec ts, *tsp = NULL;
    if (deadline >= 0) {
      ts.tv_sec = deadline / 1000000000LL;
      ts.tv_nsec = deadline % 1000000000LL;
      tsp = &ts;
    }
    long r = futex(addr, FUTEX_WAIT_BITSET, expected, tsp, FUTEX_BITSET_MATCH_ANY);
    if (r == 0) return make_number(env, WAIT_OK);
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return make_number(env, WAIT_NOT_EQUAL);
    if (errno == ETIMEDOUT) return make_number(env, WAIT_TIMED_OUT);
    return throw_errno(env, "futex wait", errno);
  }
}

/* futexWake(handle, byteOffset, count) -> number of waiters woken */
static napi_value futex_wake(napi_env env, napi_callback_info info) {
  napi_value argv[3];
  if (!get_args(env, info, 3, argv)) return NULL;
  segment_t *s = lookup(env, env_data(env), argv[0]);
  if (!s) return NULL;
  uint32_t *addr = word_at(env, s, argv[1]);
  if (!addr) return NULL;
  uint32_t count;
  if (napi_get_value_uint32(env, argv[2], &count) != napi_ok || count == 0)
    return throw_code(env, "ERR_SOFTDPU_ARGS", "count must be a positive uint32");
  long r = futex(addr, FUTEX_WAKE, count > INT32_MAX ? INT32_MAX : count, NULL, 0);
  if (r < 0) return throw_errno(env, "futex wake", errno);
  return make_number(env, (double)r);
}

static napi_value sched_yield_js(napi_env env, napi_callback_info info) {
  (void)env;
  (void)info;
  sched_yield();
  return NULL;
}

/* ---------- doorbells ---------- */

static int get_fd(napi_env env, napi_value v, int *out) {
  int32_t fd;
  if (napi_get_value_int32(env, v, &fd) != napi_ok || fd < 0) {
    throw_code(env, "ERR_SOFTDPU_ARGS", "fd must be a non-negative integer");
    return 0;
  }
  *out = fd;
  return 1;
}

/* pipeCreate() -> { readFd, writeFd, inode }: both ends non-blocking and close-on-exec. */
static napi_value pipe_create(napi_env env, napi_callback_info info) {
  (void)info;
  int fds[2];
  if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) return throw_errno(env, "pipe2", errno);
  struct stat st;
  if (fd_stat(fds[0], &st) != 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return throw_errno(env, "fstat", e);
  }
  env_data_t *ed = env_data(env);
  fd_track(ed, fds[0]);
  fd_track(ed, fds[1]);
  napi_value out;
  napi_create_object(env, &out);
  napi_set_named_property(env, out, "readFd", make_number(env, fds[0]));
  napi_set_named_property(env, out, "writeFd", make_number(env, fds[1]));
  napi_set_named_property(env, out, "inode", make_number(env, (double)st.st_ino));
  return out;
}

/* pipeOpen(path, inode) -> fd: a doorbell's write end, opened through /proc/<pid>/fd/<n>. Anything but a
 * pipe with that inode (a reused fd, a forged reference) is NOT_FOUND, so a ring never writes elsewhere. */
static napi_value pipe_open(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  char path[256];
  size_t len = 0;
  if (napi_get_value_string_utf8(env, argv[0], path, sizeof path, &len) != napi_ok || len == 0 ||
      len >= sizeof path - 1)
    return throw_code(env, "ERR_SOFTDPU_ARGS", "path must be a non-empty string shorter than 254 bytes");
  double inode;
  if (!get_double(env, argv[1], "inode", &inode)) return NULL;
  int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int e = errno;
    return throw_code(env, e == ENOENT || e == ENXIO ? "ERR_SOFTDPU_NOT_FOUND" : "ERR_SOFTDPU_OS", "open %s failed: %s",
                      path, strerror(e));
  }
  struct stat st;
  if (fd_stat(fd, &st) != 0 || !S_ISFIFO(st.st_mode) || (double)st.st_ino != inode) {
    close(fd);
    return throw_code(env, "ERR_SOFTDPU_NOT_FOUND", "%s is not the doorbell pipe %.0f", path, inode);
  }
  fd_track(env_data(env), fd);
  return make_number(env, fd);
}

/* pipeRing(fd) -> 0 rung, 1 already rung (the pipe holds unread bytes), 2 nobody reads any more. */
static napi_value pipe_ring(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int fd;
  if (!get_args(env, info, 1, argv) || !get_fd(env, argv[0], &fd)) return NULL;
  static const uint8_t bell = 0x42;
  for (;;) {
    if (write(fd, &bell, 1) == 1) return make_number(env, 0);
    if (errno == EINTR) continue;
    if (errno == EAGAIN) return make_number(env, 1);
    if (errno == EPIPE) return make_number(env, 2);
    return throw_errno(env, "doorbell write", errno);
  }
}

static size_t drain(int fd) {
  uint8_t buf[256];
  size_t total = 0;
  for (;;) {
    ssize_t r = read(fd, buf, sizeof buf);
    if (r > 0) {
      total += (size_t)r;
      if ((size_t)r < sizeof buf) return total;
    } else if (r < 0 && errno == EINTR) {
      continue;
    } else {
      return total;
    }
  }
}

/* pipeDrain(fd) -> bytes read (the fd is non-blocking). */
static napi_value pipe_drain(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int fd;
  if (!get_args(env, info, 1, argv) || !get_fd(env, argv[0], &fd)) return NULL;
  return make_number(env, (double)drain(fd));
}

/* fdPoll(fd, timeoutMs) -> 0 readable, 2 timed out: a blocking wait for a thread that has no event loop
 * to spare (poll(2), EINTR-safe against an absolute deadline). */
static napi_value fd_poll(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int fd;
  double timeout_ms;
  if (!get_args(env, info, 2, argv) || !get_fd(env, argv[0], &fd)) return NULL;
  if (!get_double(env, argv[1], "timeoutMs", &timeout_ms)) return NULL;
  int64_t deadline = deadline_from_ms(timeout_ms);
  for (;;) {
    int ms = -1;
    if (deadline >= 0) {
      int64_t left = deadline - now_ns();
      ms = left <= 0 ? 0 : (int)((left + 999999) / 1000000 > INT32_MAX ? INT32_MAX : (left + 999999) / 1000000);
    }
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, ms);
    if (r > 0) return make_number(env, WAIT_OK);
    if (r == 0) return make_number(env, WAIT_TIMED_OUT);
    if (errno != EINTR) return throw_errno(env, "poll", errno);
  }
}

/* peerCred(fd) -> [pid, uid, gid] of the process at the other end of a connected Unix socket */
static napi_value peer_cred(napi_env env, napi_callback_info info) {
  napi_value argv[1], out, v;
  int fd;
  if (!get_args(env, info, 1, argv) || !get_fd(env, argv[0], &fd)) return NULL;
  struct ucred cred;
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return throw_errno(env, "getsockopt(SO_PEERCRED)", errno);
  NAPI_CALL(env, napi_create_array_with_length(env, 3, &out));
  double fields[3] = {cred.pid, cred.uid, cred.gid};
  for (uint32_t i = 0; i < 3; i++) {
    NAPI_CALL(env, napi_create_double(env, fields[i], &v));
    NAPI_CALL(env, napi_set_element(env, out, i, v));
  }
  return out;
}

/* fdClose(fd) */
static napi_value fd_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int fd;
  if (!get_args(env, info, 1, argv) || !get_fd(env, argv[0], &fd)) return NULL;
  if (fd_untrack_close(fd) != 0 && errno != EINTR) return throw_errno(env, "close", errno);
  return NULL;
}

static void watch_closed(uv_handle_t *h) {
  fd_watch_t *w = h->data;
  env_data_t *ed = w->owner;
  ed->closing--;
  free(w);
  if (ed->closing == 0 && ed->cleanup) {
    napi_async_cleanup_hook_handle handle = ed->cleanup;
    ed->cleanup = NULL;
    napi_remove_async_cleanup_hook(handle);
  }
}

/* Unlinks a watch and closes its poll handle; the memory goes once libuv has let go of it. */
static void watch_stop(napi_env env, fd_watch_t *w) {
  env_data_t *ed = w->owner;
  for (fd_watch_t **pp = &ed->watches; *pp; pp = &(*pp)->next)
    if (*pp == w) {
      *pp = w->next;
      break;
    }
  w->closing = 1;
  if (env) {
    napi_delete_reference(env, w->callback);
    napi_async_destroy(env, w->async);
  }
  uv_poll_stop(&w->poll);
  ed->closing++;
  uv_close((uv_handle_t *)&w->poll, watch_closed);
}

static void on_readable(uv_poll_t *h, int status, int events) {
  (void)events;
  fd_watch_t *w = h->data;
  if (w->closing) return;
  if (status == 0) drain(w->fd);
  napi_env env = w->owner->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value cb, recv, result;
  napi_get_global(env, &recv); /* napi_make_callback wants an object as `this` */
  if (napi_get_reference_value(env, w->callback, &cb) == napi_ok && cb &&
      napi_make_callback(env, w->async, recv, cb, 0, NULL, &result) == napi_pending_exception) {
    napi_value exc;
    napi_get_and_clear_last_exception(env, &exc);
    napi_fatal_exception(env, exc);
  }
  napi_close_handle_scope(env, scope);
}

static fd_watch_t *find_watch(napi_env env, env_data_t *ed, napi_value idv) {
  double id;
  if (!get_double(env, idv, "watch id", &id)) return NULL;
  for (fd_watch_t *w = ed->watches; w; w = w->next)
    if (w->id == id) return w;
  throw_code(env, "ERR_SOFTDPU_HANDLE", "unknown watch %g", id);
  return NULL;
}

/* fdWatch(fd, callback) -> id: this thread's event loop polls `fd`; when it is readable, the loop drains
 * it and runs callback() (microtasks run right after, as for any I/O callback). The watch starts
 * unreferenced: it keeps the loop alive only while fdWatchRef(id, true). */
static napi_value fd_watch(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int fd;
  if (!get_args(env, info, 2, argv) || !get_fd(env, argv[0], &fd)) return NULL;
  napi_valuetype t;
  if (napi_typeof(env, argv[1], &t) != napi_ok || t != napi_function)
    return throw_code(env, "ERR_SOFTDPU_ARGS", "callback must be a function");
  env_data_t *ed = env_data(env);
  uv_loop_t *loop;
  NAPI_CALL(env, napi_get_uv_event_loop(env, &loop));
  fd_watch_t *w = calloc(1, sizeof *w);
  if (!w) return throw_code(env, "ERR_SOFTDPU_OS", "out of memory");
  int r = uv_poll_init(loop, &w->poll, fd);
  if (r != 0) {
    free(w);
    return throw_code(env, "ERR_SOFTDPU_OS", "uv_poll_init failed: %s", uv_strerror(r));
  }
  w->poll.data = w;
  w->owner = ed;
  w->fd = fd;
  w->id = ++ed->next_watch_id;
  napi_value name;
  napi_create_string_utf8(env, "softdpu-doorbell", NAPI_AUTO_LENGTH, &name);
  napi_create_reference(env, argv[1], 1, &w->callback);
  napi_async_init(env, NULL, name, &w->async);
  uv_unref((uv_handle_t *)&w->poll);
  w->next = ed->watches;
  ed->watches = w;
  r = uv_poll_start(&w->poll, UV_READABLE, on_readable);
  if (r != 0) {
    watch_stop(env, w);
    return throw_code(env, "ERR_SOFTDPU_OS", "uv_poll_start failed: %s", uv_strerror(r));
  }
  return make_number(env, w->id);
}

/* fdWatchRef(id, ref): whether the watch keeps the event loop alive (no syscall). */
static napi_value fd_watch_ref(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  fd_watch_t *w = find_watch(env, env_data(env), argv[0]);
  if (!w) return NULL;
  bool ref;
  if (napi_get_value_bool(env, argv[1], &ref) != napi_ok) return throw_code(env, "ERR_SOFTDPU_ARGS", "ref must be a boolean");
  if (ref) uv_ref((uv_handle_t *)&w->poll);
  else uv_unref((uv_handle_t *)&w->poll);
  return NULL;
}

/* fdUnwatch(id): the callback never runs again; the fd stays open (the caller owns it). */
static napi_value fd_unwatch(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  fd_watch_t *w = find_watch(env, env_data(env), argv[0]);
  if (!w) return NULL;
  watch_stop(env, w);
  return NULL;
}

/* ---------- env lifecycle ---------- */

/* The env goes away (a worker ends, or the process): its watches' poll handles must be closed before the
 * loop is, so the cleanup is asynchronous and finishes in watch_closed. */
static void env_cleanup(napi_async_cleanup_hook_handle handle, void *arg) {
  env_data_t *ed = arg;
  ed->cleanup = handle;
  while (ed->watches) watch_stop(NULL, ed->watches);
  if (ed->closing == 0) {
    ed->cleanup = NULL;
    napi_remove_async_cleanup_hook(handle);
  }
}

static void env_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  env_data_t *ed = data;
  fd_close_owned(ed);
  for (uint32_t i = 0; i < ed->nsegs; i++)
    if (ed->segs[i].open) unmap_segment(ed, &ed->segs[i]);
  free(ed->segs);
  free(ed);
}

static napi_value init(napi_env env, napi_value exports) {
  env_data_t *ed = calloc(1, sizeof *ed);
  if (!ed) return throw_code(env, "ERR_SOFTDPU_OS", "out of memory");
  ed->env = env;
  NAPI_CALL(env, napi_set_instance_data(env, ed, env_finalize, NULL));
  NAPI_CALL(env, napi_add_async_cleanup_hook(env, env_cleanup, ed, NULL));
  napi_property_descriptor props[] = {
      {"segmentCreate", NULL, segment_create, NULL, NULL, NULL, napi_enumerable, NULL},
      {"segmentOpen", NULL, segment_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"segmentClose", NULL, segment_close, NULL, NULL, NULL, napi_enumerable, NULL},
      {"futexWait", NULL, futex_wait, NULL, NULL, NULL, napi_enumerable, NULL},
      {"futexWake", NULL, futex_wake, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pipeCreate", NULL, pipe_create, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pipeOpen", NULL, pipe_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pipeRing", NULL, pipe_ring, NULL, NULL, NULL, napi_enumerable, NULL},
      {"pipeDrain", NULL, pipe_drain, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fdPoll", NULL, fd_poll, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fdClose", NULL, fd_close, NULL, NULL, NULL, napi_enumerable, NULL},
      {"peerCred", NULL, peer_cred, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fdWatch", NULL, fd_watch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fdWatchRef", NULL, fd_watch_ref, NULL, NULL, NULL, napi_enumerable, NULL},
      {"fdUnwatch", NULL, fd_unwatch, NULL, NULL, NULL, napi_enumerable, NULL},
      {"schedYield", NULL, sched_yield_js, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  NAPI_CALL(env, napi_define_properties(env, exports, sizeof props / sizeof props[0], props));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)

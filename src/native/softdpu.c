/*
 * softdpu native layer: shared-memory segments and futex waits, nothing else.
 *
 * Node cannot map shared memory across processes, cannot sleep on a futex that another process wakes
 * (Atomics.wait only sees waiters of its own isolate group) and cannot call sched_yield. Everything
 * else (naming, layouts, protocols) lives in TypeScript. The declarations are in native.ts.
 *
 * Segments: memfd mappings handed to JS as external (non-shared) ArrayBuffers. Bulk copies into a
 * non-shared buffer run at memcpy speed; Atomics still work on it and are exact across processes.
 * close() detaches the ArrayBuffer before munmap, because an access through a live view of an unmapped
 * region is a SIGSEGV.
 *
 * Async waits: one waiter thread per process (never the libuv pool, which fs shares) sleeps in
 * futex_waitv on every registered word plus a private control word, and reports through a
 * threadsafe function per env. The tsfn is referenced only while a waiter asked to keep the loop alive.
 */
#define _GNU_SOURCE
#define NAPI_VERSION 8
#include <node_api.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif
#ifndef FUTEX_32
#define FUTEX_32 2
struct futex_waitv {
  uint64_t val;
  uint64_t uaddr;
  uint32_t flags;
  uint32_t __reserved;
};
#endif
#define WAITV_MAX 128 /* kernel limit; one slot is the control word */
#define MAX_SEGMENT_SIZE ((uint64_t)4 << 30)

enum { WAIT_OK = 0, WAIT_NOT_EQUAL = 1, WAIT_TIMED_OUT = 2, WAIT_CANCELLED = 3 };

typedef struct segment {
  uint8_t *base;
  size_t size;
  int fd; /* -1 for segments opened from another process */
  uint32_t gen;
  int open;
  napi_ref buffer; /* weak: detached on close */
} segment_t;

typedef struct env_data env_data_t;

typedef struct wait_entry {
  double id;
  env_data_t *owner;
  uint32_t *addr;
  uint32_t expected;
  int64_t deadline_ns; /* CLOCK_MONOTONIC, -1 = none */
  uint32_t slot, gen; /* the segment the word lives in */
  int keep_alive;
  int result;
  napi_ref callback;
  struct wait_entry *next;
} wait_entry_t;

struct env_data {
  napi_env env;
  segment_t *segs;
  uint32_t nsegs;
  napi_threadsafe_function tsfn;
  uint32_t keep_alive_waits; /* JS thread only */
  int tsfn_referenced;       /* JS thread only */
  wait_entry_t *done;        /* g_mu */
  int notify_pending;        /* g_mu */
  double next_wait_id;       /* JS thread only */
};

/* Process-wide waiter thread state, shared by the main thread and every worker env. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_thread_started;
static uint32_t g_ctl; /* bumped and woken whenever the pending list changes */
static wait_entry_t *g_pending;
static uint32_t g_npending;

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

static long futex(uint32_t *addr, int op, uint32_t val, const struct timespec *ts, uint32_t val3) {
  return syscall(SYS_futex, addr, op, val, ts, NULL, val3);
}

static void ctl_kick(void) { /* g_mu held */
  __atomic_add_fetch(&g_ctl, 1, __ATOMIC_SEQ_CST);
  futex(&g_ctl, FUTEX_WAKE_PRIVATE, 1, NULL, 0);
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

/* Removes every pending async wait on [base, base+size) so the thread never touches unmapped memory;
 * their callbacks report WAIT_CANCELLED. Caller holds g_mu. */
static void cancel_range_locked(env_data_t *ed, uint8_t *base, size_t size);

static void unmap_segment(env_data_t *ed, segment_t *s) {
  pthread_mutex_lock(&g_mu);
  cancel_range_locked(ed, s->base, s->size);
  pthread_mutex_unlock(&g_mu);
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
  if (fstat(fd, &st) != 0 || (double)st.st_size != expected || st.st_size <= 0 ||
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

/* Async waits the waiter thread still holds on a segment (completed or cancelled ones no longer count). */
static uint32_t pending_on(env_data_t *ed, uint32_t slot, uint32_t gen) {
  uint32_t n = 0;
  pthread_mutex_lock(&g_mu);
  for (wait_entry_t *e = g_pending; e; e = e->next)
    if (e->owner == ed && e->slot == slot && e->gen == gen) n++;
  pthread_mutex_unlock(&g_mu);
  return n;
}

/* segmentClose(handle): refused while async waits are in flight on it. */
static napi_value segment_close(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  if (!get_args(env, info, 1, argv)) return NULL;
  env_data_t *ed = env_data(env);
  segment_t *s = lookup(env, ed, argv[0]);
  if (!s) return NULL;
  uint32_t waits = pending_on(ed, (uint32_t)(s - ed->segs), s->gen);
  if (waits > 0) return throw_code(env, "ERR_SOFTDPU_BUSY", "segment has %u async waits in flight", waits);
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

/* ---------- async waits: the waiter thread ---------- */

static void complete_locked(wait_entry_t *e, int result) {
  e->result = result;
  env_data_t *ed = e->owner;
  e->next = ed->done;
  ed->done = e;
  if (!ed->notify_pending && ed->tsfn) {
    ed->notify_pending = 1;
    napi_call_threadsafe_function(ed->tsfn, NULL, napi_tsfn_nonblocking);
  }
}

static void cancel_range_locked(env_data_t *ed, uint8_t *base, size_t size) {
  wait_entry_t **pp = &g_pending;
  int removed = 0;
  while (*pp) {
    wait_entry_t *e = *pp;
    if (e->owner == ed && (uint8_t *)e->addr >= base && (uint8_t *)e->addr < base + size) {
      *pp = e->next;
      g_npending--;
      complete_locked(e, WAIT_CANCELLED);
      removed = 1;
    } else {
      pp = &e->next;
    }
  }
  if (removed) ctl_kick();
}

/* One pass: completes entries whose word changed or whose deadline passed; returns how many were
 * completed and fills the futex_waitv vector and the nearest deadline. */
static int scan_locked(struct futex_waitv *wv, uint32_t *nwv, int64_t *nearest, uint32_t ctl_seen) {
  int64_t now = now_ns();
  int completed = 0;
  *nearest = -1;
  wv[0].val = ctl_seen;
  wv[0].uaddr = (uintptr_t)&g_ctl;
  wv[0].flags = FUTEX_32 | FUTEX_PRIVATE_FLAG;
  wv[0].__reserved = 0;
  *nwv = 1;
  wait_entry_t **pp = &g_pending;
  while (*pp) {
    wait_entry_t *e = *pp;
    uint32_t cur = __atomic_load_n(e->addr, __ATOMIC_SEQ_CST);
    int result = -1;
    if (cur != e->expected) result = WAIT_OK;
    else if (e->deadline_ns >= 0 && e->deadline_ns <= now) result = WAIT_TIMED_OUT;
    if (result >= 0) {
      *pp = e->next;
      g_npending--;
      complete_locked(e, result);
      completed++;
      continue;
    }
    if (*nwv < WAITV_MAX) {
      wv[*nwv].val = e->expected;
      wv[*nwv].uaddr = (uintptr_t)e->addr;
      wv[*nwv].flags = FUTEX_32;
      wv[*nwv].__reserved = 0;
      (*nwv)++;
    }
    if (e->deadline_ns >= 0 && (*nearest < 0 || e->deadline_ns < *nearest)) *nearest = e->deadline_ns;
    pp = &e->next;
  }
  return completed;
}

static void *waiter_main(void *arg) {
  (void)arg;
  static struct futex_waitv wv[WAITV_MAX];
  int have_waitv = 1;
  for (;;) {
    uint32_t nwv;
    int64_t nearest;
    pthread_mutex_lock(&g_mu);
    uint32_t ctl_seen = __atomic_load_n(&g_ctl, __ATOMIC_SEQ_CST);
    scan_locked(wv, &nwv, &nearest, ctl_seen);
    int poll = !have_waitv || g_npending >= WAITV_MAX; /* more words than futex_waitv takes */
    pthread_mutex_unlock(&g_mu);
    if (poll) {
      struct timespec ts = {0, 100000}; /* 100 us */
      if (nwv > 1) nanosleep(&ts, NULL);
      else futex(&g_ctl, FUTEX_WAIT_PRIVATE, ctl_seen, NULL, 0);
      continue;
    }
    struct timespec ts, *tsp = NULL;
    if (nearest >= 0) {
      ts.tv_sec = nearest / 1000000000LL;
      ts.tv_nsec = nearest % 1000000000LL;
      tsp = &ts;
    }
    long r = syscall(SYS_futex_waitv, wv, nwv, 0, tsp, CLOCK_MONOTONIC);
    if (r < 0 && errno == ENOSYS) have_waitv = 0;
    /* A woken word is detected by the next scan: every protocol changes the word before it wakes. A
     * wake without a change is only a hint and is re-armed, which is what a futex waiter expects. */
  }
  return NULL;
}

static void deliver(napi_env env, napi_value js_cb, void *context, void *data) {
  (void)js_cb;
  (void)data;
  env_data_t *ed = context;
  if (!env) return; /* torn down: env_cleanup already freed every entry */
  pthread_mutex_lock(&g_mu);
  wait_entry_t *list = ed->done;
  ed->done = NULL;
  ed->notify_pending = 0;
  pthread_mutex_unlock(&g_mu);
  /* Completion order is the order of registration within one batch. */
  wait_entry_t *rev = NULL;
  while (list) {
    wait_entry_t *n = list->next;
    list->next = rev;
    rev = list;
    list = n;
  }
  while (rev) {
    wait_entry_t *e = rev;
    rev = e->next;
    if (e->keep_alive && --ed->keep_alive_waits == 0 && ed->tsfn_referenced) {
      napi_unref_threadsafe_function(env, ed->tsfn);
      ed->tsfn_referenced = 0;
    }
    napi_value cb, undef, argv[2];
    napi_get_undefined(env, &undef);
    if (napi_get_reference_value(env, e->callback, &cb) == napi_ok && cb) {
      argv[0] = make_number(env, e->result);
      argv[1] = make_number(env, e->id);
      if (napi_call_function(env, undef, cb, 2, argv, NULL) == napi_pending_exception) {
        napi_value exc;
        napi_get_and_clear_last_exception(env, &exc);
        napi_fatal_exception(env, exc);
      }
    }
    napi_delete_reference(env, e->callback);
    free(e);
  }
}

static int ensure_thread(napi_env env, env_data_t *ed) {
  if (!ed->tsfn) {
    napi_value name;
    napi_create_string_utf8(env, "softdpu-waiter", NAPI_AUTO_LENGTH, &name);
    if (napi_create_threadsafe_function(env, NULL, NULL, name, 0, 1, NULL, NULL, ed, deliver, &ed->tsfn) !=
        napi_ok) {
      throw_code(env, "ERR_SOFTDPU_NAPI", "cannot create the waiter's threadsafe function");
      return 0;
    }
    napi_unref_threadsafe_function(env, ed->tsfn);
  }
  pthread_mutex_lock(&g_mu);
  int ok = 1;
  if (!g_thread_started) {
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);
    ok = pthread_create(&t, &a, waiter_main, NULL) == 0;
    pthread_attr_destroy(&a);
    g_thread_started = ok;
  }
  pthread_mutex_unlock(&g_mu);
  if (!ok) throw_code(env, "ERR_SOFTDPU_OS", "cannot start the waiter thread");
  return ok;
}

/* waitAsync(handle, byteOffset, expected, timeoutMs, keepAlive, callback(result, id)) -> id */
static napi_value wait_async(napi_env env, napi_callback_info info) {
  napi_value argv[6];
  if (!get_args(env, info, 6, argv)) return NULL;
  env_data_t *ed = env_data(env);
  segment_t *s = lookup(env, ed, argv[0]);
  if (!s) return NULL;
  uint32_t *addr = word_at(env, s, argv[1]);
  if (!addr) return NULL;
  uint32_t expected;
  double timeout_ms;
  bool keep_alive;
  napi_valuetype t;
  if (napi_get_value_uint32(env, argv[2], &expected) != napi_ok)
    return throw_code(env, "ERR_SOFTDPU_ARGS", "expected must be a uint32");
  if (!get_double(env, argv[3], "timeoutMs", &timeout_ms)) return NULL;
  if (napi_get_value_bool(env, argv[4], &keep_alive) != napi_ok)
    return throw_code(env, "ERR_SOFTDPU_ARGS", "keepAlive must be a boolean");
  if (napi_typeof(env, argv[5], &t) != napi_ok || t != napi_function)
    return throw_code(env, "ERR_SOFTDPU_ARGS", "callback must be a function");
  if (!ensure_thread(env, ed)) return NULL;
  wait_entry_t *e = calloc(1, sizeof *e);
  if (!e) return throw_code(env, "ERR_SOFTDPU_OS", "out of memory");
  e->id = ++ed->next_wait_id;
  e->owner = ed;
  e->addr = addr;
  e->expected = expected;
  e->deadline_ns = deadline_from_ms(timeout_ms);
  e->slot = (uint32_t)(s - ed->segs);
  e->gen = s->gen;
  e->keep_alive = keep_alive;
  napi_create_reference(env, argv[5], 1, &e->callback);
  if (keep_alive && ed->keep_alive_waits++ == 0 && !ed->tsfn_referenced) {
    napi_ref_threadsafe_function(env, ed->tsfn);
    ed->tsfn_referenced = 1;
  }
  pthread_mutex_lock(&g_mu);
  e->next = g_pending;
  g_pending = e;
  g_npending++;
  ctl_kick();
  pthread_mutex_unlock(&g_mu);
  return make_number(env, e->id);
}

/* Frees an entry on the JS thread without delivering it (quiet cancel). */
static void drop_entry(napi_env env, env_data_t *ed, wait_entry_t *e) {
  if (e->keep_alive && --ed->keep_alive_waits == 0 && ed->tsfn_referenced) {
    napi_unref_threadsafe_function(env, ed->tsfn);
    ed->tsfn_referenced = 0;
  }
  napi_delete_reference(env, e->callback);
  free(e);
}

/* Unlinks the entry `id` of `ed` from `*list`, or returns NULL. g_mu held. */
static wait_entry_t *unlink_id_locked(wait_entry_t **list, env_data_t *ed, double id) {
  for (wait_entry_t **pp = list; *pp; pp = &(*pp)->next) {
    wait_entry_t *e = *pp;
    if (e->owner == ed && e->id == id) {
      *pp = e->next;
      return e;
    }
  }
  return NULL;
}

/*
 * waitCancel(id, quiet) -> true if the wait had not been delivered yet. Not quiet: its callback then
 * reports cancelled (even if the waiter thread had already completed it). Quiet: the callback never
 * runs. The waiter thread is not woken: a word it still watches only costs one spurious rescan.
 */
static napi_value wait_cancel(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  if (!get_args(env, info, 2, argv)) return NULL;
  double id;
  bool quiet;
  if (!get_double(env, argv[0], "id", &id)) return NULL;
  if (napi_get_value_bool(env, argv[1], &quiet) != napi_ok)
    return throw_code(env, "ERR_SOFTDPU_ARGS", "quiet must be a boolean");
  env_data_t *ed = env_data(env);
  pthread_mutex_lock(&g_mu);
  wait_entry_t *e = unlink_id_locked(&g_pending, ed, id);
  int pending = e != NULL;
  if (pending) g_npending--;
  else e = unlink_id_locked(&ed->done, ed, id);
  int found = e != NULL;
  if (e && !quiet) {
    complete_locked(e, WAIT_CANCELLED);
    e = NULL;
  }
  pthread_mutex_unlock(&g_mu);
  if (e) drop_entry(env, ed, e);
  napi_value out;
  napi_get_boolean(env, found, &out);
  return out;
}

/* ---------- env lifecycle ---------- */

static void env_cleanup(void *arg) {
  env_data_t *ed = arg;
  pthread_mutex_lock(&g_mu);
  wait_entry_t **pp = &g_pending;
  while (*pp) {
    wait_entry_t *e = *pp;
    if (e->owner == ed) {
      *pp = e->next;
      g_npending--;
      e->next = ed->done;
      ed->done = e;
    } else {
      pp = &e->next;
    }
  }
  wait_entry_t *done = ed->done;
  ed->done = NULL;
  napi_threadsafe_function tsfn = ed->tsfn;
  ed->tsfn = NULL;
  ctl_kick();
  pthread_mutex_unlock(&g_mu);
  while (done) {
    wait_entry_t *n = done->next;
    napi_delete_reference(ed->env, done->callback);
    free(done);
    done = n;
  }
  if (tsfn) napi_release_threadsafe_function(tsfn, napi_tsfn_abort);
}

static void env_finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  env_data_t *ed = data;
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
  NAPI_CALL(env, napi_add_env_cleanup_hook(env, env_cleanup, ed));
  napi_property_descriptor props[] = {
      {"segmentCreate", NULL, segment_create, NULL, NULL, NULL, napi_enumerable, NULL},
      {"segmentOpen", NULL, segment_open, NULL, NULL, NULL, napi_enumerable, NULL},
      {"segmentClose", NULL, segment_close, NULL, NULL, NULL, napi_enumerable, NULL},
      {"futexWait", NULL, futex_wait, NULL, NULL, NULL, napi_enumerable, NULL},
      {"futexWake", NULL, futex_wake, NULL, NULL, NULL, napi_enumerable, NULL},
      {"waitAsync", NULL, wait_async, NULL, NULL, NULL, napi_enumerable, NULL},
      {"waitCancel", NULL, wait_cancel, NULL, NULL, NULL, napi_enumerable, NULL},
      {"schedYield", NULL, sched_yield_js, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  NAPI_CALL(env, napi_define_properties(env, exports, sizeof props / sizeof props[0], props));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)

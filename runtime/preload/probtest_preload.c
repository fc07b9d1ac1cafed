/* The LD_PRELOAD library of `cargo probtest doctor`: it pins a test process's entropy and wall
 * clock to what the doctor's environment variables say, so that a run can be repeated with the
 * same seed or moved to another instant, and calls straight through to libc when they are unset.
 *
 * PROBTEST_DOCTOR_SEED=<u64, decimal>
 *     getrandom(), getentropy() and syscall(SYS_getrandom, ...) fill their buffers from one
 *     splitmix64 stream seeded with it. The stream is process-wide and advances with every call,
 *     from any thread, in 8-byte blocks, so the same sequence of calls gets the same bytes.
 * PROBTEST_DOCTOR_TIME=<unix seconds, decimal, optional fraction>
 *     clock_gettime(CLOCK_REALTIME or CLOCK_REALTIME_COARSE), gettimeofday() and time() read
 *     that instant at the process's first such read, and from then on it advances with the real
 *     CLOCK_MONOTONIC, so sleeps and timeouts measured against the wall clock still behave.
 * PROBTEST_DOCTOR_TIME_FROZEN=1
 *     The wall clock stays at PROBTEST_DOCTOR_TIME. 0 means not frozen.
 * PROBTEST_DOCTOR_SEED_SCOPE=hash
 *     Only std's HashMap keys (the draws made with GRND_INSECURE) come from the seed; every other
 *     draw is real. Hash keys and other draws take separate streams of the seed, so a seed gives
 *     the same hash keys with this scope as without it: the doctor tells "hash order alone" apart.
 * PROBTEST_DOCTOR_TICK_MS=<n, decimal, 1 to 60000>
 *     Tick jitter: every read of the wall clock or of the monotonic clocks (CLOCK_MONOTONIC, which
 *     Rust's Instant reads, CLOCK_BOOTTIME, and their coarse and raw variants) returns at least n
 *     ms more than the read before it, as if the process were descheduled between any two reads.
 *     The monotonic clocks are never pinned: they advance at the kernel's pace plus the jitter,
 *     so a timer (tokio's, which reads Instant and parks in epoll_wait for the time left) always
 *     sees its deadline come.
 * Timed waits until an absolute instant of a changed clock (a futex wait through syscall(), as
 * std's Condvar::wait_timeout and thread::park_timeout make, and clock_nanosleep with
 * TIMER_ABSTIME) wait until that instant as the process reads the clock, not as the kernel
 * does: otherwise a jittered or pinned clock would stretch them to the jitter handed out, or
 * to the years between the pinned instant and now. glibc's own timed waits
 * (pthread_cond_timedwait, sem_timedwait) call the kernel directly and are not moved.
 * PROBTEST_DOCTOR_NET=block
 *     connect() and sendto() to an address outside the loopback network fail with ENETUNREACH, as
 *     on a machine without a route; loopback and local sockets work.
 * PROBTEST_DOCTOR_LOG=<path>
 *     One line appended per event the doctor weighs as evidence: `entropy hash` and `entropy
 *     other` at the first draw of each kind, `blocked <address>` at each connection refused.
 * PROBTEST_DOCTOR_WRITES=1
 *     Each successful call that changes the file system by path (a file opened for writing or
 *     created, a path removed, renamed, made, linked or truncated) appends `write <op> <path>`
 *     to the log, the path made absolute against the working directory or the directory
 *     descriptor it is relative to: the doctor's one run that looks for side effects before it
 *     repeats a test. The calls themselves always go through unchanged.
 *
 * An empty variable counts as unset. A malformed one costs one line on stderr naming it and its
 * value, and its axis calls through: a typo must not crash the test it was meant to probe.
 * Other clocks (the CPU clocks, ...) always call through, as CLOCK_MONOTONIC does without jitter.
 *
 * Why each entry point:
 * - std's HashMap keys and std::random call the `getrandom` symbol through a weak dynamic
 *   reference (`w getrandom@GLIBC_2.25` in a test binary's dynamic symbols), falling back to a
 *   raw syscall only when no such symbol exists. Interposing `getrandom` covers them.
 * - getrandom 0.3 (rand 0.9) and 0.4 look `getrandom` up with dlsym(RTLD_DEFAULT), which finds
 *   this library first; only when that lookup fails do they read /dev/urandom.
 * - getrandom 0.2 (rand 0.8) calls syscall(SYS_getrandom, ...) through libc, hence `syscall`.
 * - Their /dev/urandom fallbacks run only when getrandom fails with ENOSYS or EPERM (or EAGAIN
 *   for std's non-blocking HashMap keys), which never happens here while a seed is set, so file
 *   reads are left alone.
 * - glibc's getentropy() calls the kernel without going through the `getrandom` symbol.
 * - std's SystemTime::now() calls clock_gettime(CLOCK_REALTIME) on 64-bit glibc targets (32-bit
 *   ones call __clock_gettime64, which is not interposed).
 * Code that issues the syscall instruction itself (getrandom's `linux_raw` backend, Go, static
 * binaries) cannot be reached by a preloaded library.
 */

#define _GNU_SOURCE
/* The library defines open(), fopen() and their kin itself: fortified headers would turn their
 * declarations into inline wrappers of the same names. */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/select.h> /* struct timeval, without <sys/time.h>'s gettimeofday prototype,
                           whose second parameter changed type across glibc versions */
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

#define ENV_SEED "PROBTEST_DOCTOR_SEED"
#define ENV_TIME "PROBTEST_DOCTOR_TIME"
#define ENV_TIME_FROZEN "PROBTEST_DOCTOR_TIME_FROZEN"
#define ENV_SEED_SCOPE "PROBTEST_DOCTOR_SEED_SCOPE"
#define ENV_TICK_MS "PROBTEST_DOCTOR_TICK_MS"
#define ENV_NET "PROBTEST_DOCTOR_NET"
#define ENV_LOG "PROBTEST_DOCTOR_LOG"
#define ENV_WRITES "PROBTEST_DOCTOR_WRITES"

#ifndef GRND_NONBLOCK
#define GRND_NONBLOCK 0x0001
#endif
#ifndef GRND_RANDOM
#define GRND_RANDOM 0x0002
#endif
#ifndef GRND_INSECURE
#define GRND_INSECURE 0x0004
#endif

/* The kernel hands out at most this much per getrandom call (MAX_RW_COUNT on 4 KiB pages);
 * callers loop on short reads, and it keeps the count within ssize_t. */
#define GETRANDOM_MAX ((size_t)0x7ffff000)

#define NSEC_PER_SEC 1000000000LL

/* ---------------------------------------------------------------- settings */

struct settings {
    int seeded;
    uint64_t seed;
    /* Only the hash-key draws are seeded. */
    int hash_only;
    int timed;
    int frozen;
    int64_t time_sec;
    int64_t time_nsec;
    /* Tick jitter in nanoseconds; 0 for none. */
    int64_t tick_ns;
    int net_blocked;
    /* The log's path, or NULL; points into the environment, which outlives every call. */
    const char *log;
};

static struct settings settings_value;
/* 0: not read yet, 1: being read, 2: ready in settings_value. */
static int settings_state;

/* stderr by write(2): stdio may not be usable yet, nor safe from every caller. One write, so
 * that lines from concurrent processes do not interleave. */
static void warn_malformed(const char *name, const char *value, const char *why) {
    char line[320];
    size_t n = 0;
    const char *parts[] = {"probtest-preload: ignoring ", name, "=\"", value, "\": ", why};
    for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++) {
        for (const char *c = parts[p]; *c != '\0' && n < sizeof line - 1; c++) {
            line[n++] = *c;
        }
    }
    line[n++] = '\n';
    ssize_t written = write(STDERR_FILENO, line, n);
    (void)written;
}

/* By hand rather than strtoull/strtod: no locale, no leading sign or space accepted, and
 * overflow is an error instead of a clamp. */
static int parse_u64(const char *text, uint64_t *out) {
    uint64_t value = 0;
    if (*text == '\0') {
        return 0;
    }
    for (const char *c = text; *c != '\0'; c++) {
        if (*c < '0' || *c > '9') {
            return 0;
        }
        uint64_t digit = (uint64_t)(*c - '0');
        if (value > (UINT64_MAX - digit) / 10) {
            return 0;
        }
        value = value * 10 + digit;
    }
    *out = value;
    return 1;
}

/* Seconds are capped well below INT64_MAX so that adding the elapsed monotonic time can never
 * overflow; a fraction keeps its first nine digits. */
static int parse_instant(const char *text, int64_t *sec, int64_t *nsec) {
    const int64_t max_sec = INT64_MAX / 4;
    int64_t whole = 0;
    int64_t fraction = 0;
    const char *c = text;
    if (*c < '0' || *c > '9') {
        return 0;
    }
    for (; *c >= '0' && *c <= '9'; c++) {
        whole = whole * 10 + (*c - '0');
        if (whole > max_sec) {
            return 0;
        }
    }
    if (*c == '.') {
        c++;
        if (*c < '0' || *c > '9') {
            return 0;
        }
        int digits = 0;
        for (; *c >= '0' && *c <= '9'; c++) {
            if (digits < 9) {
                fraction = fraction * 10 + (*c - '0');
                digits++;
            }
        }
        for (; digits < 9; digits++) {
            fraction *= 10;
        }
    }
    if (*c != '\0') {
        return 0;
    }
    *sec = whole;
    *nsec = fraction;
    return 1;
}

/* `warn` is 0 for a thread that lost the race to read them first: the winner reports. */
static struct settings read_settings(int warn) {
    struct settings s = {0};
    const char *seed = getenv(ENV_SEED);
    if (seed != NULL && *seed != '\0') {
        if (parse_u64(seed, &s.seed)) {
            s.seeded = 1;
        } else if (warn) {
            warn_malformed(ENV_SEED, seed, "not a decimal u64; entropy is left real");
        }
    }

    const char *instant = getenv(ENV_TIME);
    if (instant != NULL && *instant != '\0') {
        if (parse_instant(instant, &s.time_sec, &s.time_nsec)) {
            s.timed = 1;
        } else if (warn) {
            warn_malformed(ENV_TIME, instant,
                           "not unix seconds (digits, optionally .digits); the clock is left real");
        }
    }

    const char *frozen = getenv(ENV_TIME_FROZEN);
    if (frozen != NULL && *frozen != '\0') {
        if (frozen[0] == '1' && frozen[1] == '\0') {
            s.frozen = 1;
        } else if (!(frozen[0] == '0' && frozen[1] == '\0') && warn) {
            warn_malformed(ENV_TIME_FROZEN, frozen, "neither 1 nor 0; the clock is not frozen");
        }
    }
    const char *scope = getenv(ENV_SEED_SCOPE);
    if (scope != NULL && *scope != '\0') {
        if (scope[0] == 'h' && scope[1] == 'a' && scope[2] == 's' && scope[3] == 'h' &&
            scope[4] == '\0') {
            s.hash_only = 1;
        } else if (warn) {
            warn_malformed(ENV_SEED_SCOPE, scope, "not `hash`; every draw follows the seed");
        }
    }

    const char *tick = getenv(ENV_TICK_MS);
    if (tick != NULL && *tick != '\0') {
        uint64_t ms = 0;
        if (parse_u64(tick, &ms) && ms >= 1 && ms <= 60000) {
            s.tick_ns = (int64_t)ms * 1000000LL;
        } else if (warn) {
            warn_malformed(ENV_TICK_MS, tick, "not a whole number of ms from 1 to 60000; no jitter");
        }
    }

    const char *net = getenv(ENV_NET);
    if (net != NULL && *net != '\0') {
        if (net[0] == 'b' && net[1] == 'l' && net[2] == 'o' && net[3] == 'c' && net[4] == 'k' &&
            net[5] == '\0') {
            s.net_blocked = 1;
        } else if (warn) {
            warn_malformed(ENV_NET, net, "not `block`; the network is left open");
        }
    }

    const char *log = getenv(ENV_LOG);
    if (log != NULL && *log != '\0') {
        s.log = log;
    }

    if (s.frozen && !s.timed) {
        s.frozen = 0;
        if (warn) {
            warn_malformed(ENV_TIME_FROZEN, frozen,
                           "set without a valid " ENV_TIME "; nothing to freeze");
        }
    }
    return s;
}

/* Read on first use, not in a constructor: another library's constructor may call in before
 * this one's has run. A caller that finds another one reading them (another thread, or a signal
 * handler interrupting the reader) reads them for itself instead of waiting, so that nothing
 * can wait on itself. */
static struct settings settings(void) {
    if (__atomic_load_n(&settings_state, __ATOMIC_ACQUIRE) == 2) {
        return settings_value;
    }
    int expected = 0;
    if (!__atomic_compare_exchange_n(&settings_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE)) {
        return expected == 2 ? settings_value : read_settings(0);
    }
    settings_value = read_settings(1);
    __atomic_store_n(&settings_state, 2, __ATOMIC_RELEASE);
    return settings_value;
}

static int open_log(const char *path);

/* One line appended to the log, in one write so that threads and processes never interleave
 * lines. open(2) and write(2), not stdio: callers may be anywhere, signal handlers included. */
static void log_line(const struct settings *s, const char *first, const char *second) {
    if (s->log == NULL) {
        return;
    }
    char line[160];
    size_t n = 0;
    for (const char *part = first; part != NULL; part = part == first ? second : NULL) {
        for (const char *c = part; *c != '\0' && n < sizeof line - 1; c++) {
            line[n++] = *c;
        }
    }
    line[n++] = '\n';
    int fd = open_log(s->log);
    if (fd < 0) {
        return;
    }
    ssize_t written = write(fd, line, n);
    (void)written;
    close(fd);
}

/* Logs `line` the first time only. */
static void log_once(const struct settings *s, int *done, const char *line) {
    if (s->log != NULL && !__atomic_exchange_n(done, 1, __ATOMIC_ACQ_REL)) {
        log_line(s, line, NULL);
    }
}

/* ---------------------------------------------------------------- the next definitions */

/* Looked up once each; a lookup that found nothing is retried, which costs only the calls that
 * would otherwise have nothing to call. */
static void *next_symbol(void **slot, const char *name) {
    void *fn = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (fn == NULL) {
        fn = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, fn, __ATOMIC_RELEASE);
    }
    return fn;
}

typedef ssize_t (*getrandom_fn)(void *, size_t, unsigned int);
typedef int (*getentropy_fn)(void *, size_t);
typedef long (*syscall_fn)(long, ...);
typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);
typedef time_t (*time_fn)(time_t *);

static void *next_getrandom_slot;
static void *next_getentropy_slot;
static void *next_syscall_slot;
static void *next_clock_gettime_slot;
static void *next_gettimeofday_slot;
static void *next_time_slot;

static syscall_fn next_syscall(void) {
    return (syscall_fn)next_symbol(&next_syscall_slot, "syscall");
}

static clock_gettime_fn next_clock_gettime(void) {
    return (clock_gettime_fn)next_symbol(&next_clock_gettime_slot, "clock_gettime");
}

/* ---------------------------------------------------------------- entropy */

/* How many 8-byte blocks of each stream have been handed out: the hash keys' and every other
 * draw's. Claiming a range with one atomic add keeps concurrent callers from ever sharing bytes,
 * without a lock. */
static uint64_t stream_blocks[2];
/* Which kinds of draw have been logged. */
static int logged_draw[2];

/* std asks for its HashMap keys, and for nothing else, with GRND_INSECURE. */
#define HASH_STREAM 0
#define OTHER_STREAM 1
#define HASH_STREAM_SALT 0x68617368ULL /* "hash" */

static uint64_t splitmix64(uint64_t state) {
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void fill_from_stream(uint64_t seed, int stream, unsigned char *buf, size_t len) {
    uint64_t blocks = (len + 7) / 8;
    uint64_t first = __atomic_fetch_add(&stream_blocks[stream], blocks, __ATOMIC_RELAXED);
    if (stream == HASH_STREAM) {
        seed ^= HASH_STREAM_SALT;
    }
    for (uint64_t b = 0; b < blocks; b++) {
        uint64_t word = splitmix64(seed + (first + b + 1) * 0x9e3779b97f4a7c15ULL);
        /* Little-endian by hand, so a seed means the same bytes on every architecture. */
        for (size_t i = 0; i < 8 && b * 8 + i < len; i++) {
            buf[b * 8 + i] = (unsigned char)(word >> (8 * i));
        }
    }
}

/* getrandom(2)'s contract while seeded: the flags the kernel would refuse are still refused
 * (std probes GRND_INSECURE by its EINVAL on old kernels), and nothing ever blocks. */
static ssize_t seeded_getrandom(uint64_t seed, void *buf, size_t len, unsigned int flags) {
    if ((flags & ~(unsigned int)(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE)) != 0 ||
        (flags & (GRND_RANDOM | GRND_INSECURE)) == (GRND_RANDOM | GRND_INSECURE)) {
        errno = EINVAL;
        return -1;
    }
    if (len > GETRANDOM_MAX) {
        len = GETRANDOM_MAX;
    }
    if (len > 0 && buf == NULL) {
        errno = EFAULT;
        return -1;
    }
    fill_from_stream(seed, (flags & GRND_INSECURE) ? HASH_STREAM : OTHER_STREAM, buf, len);
    return (ssize_t)len;
}

/* Whether a draw with `flags` follows the seed, logging its kind. */
static int draw_is_seeded(const struct settings *s, unsigned int flags) {
    int stream = (flags & GRND_INSECURE) ? HASH_STREAM : OTHER_STREAM;
    log_once(s, &logged_draw[stream], stream == HASH_STREAM ? "entropy hash" : "entropy other");
    return s->seeded && (stream == HASH_STREAM || !s->hash_only);
}

EXPORT ssize_t getrandom(void *buf, size_t len, unsigned int flags) {
    struct settings s = settings();
    if (draw_is_seeded(&s, flags)) {
        return seeded_getrandom(s.seed, buf, len, flags);
    }
    getrandom_fn next = (getrandom_fn)next_symbol(&next_getrandom_slot, "getrandom");
    if (next != NULL) {
        return next(buf, len, flags);
    }
    /* A libc older than getrandom(): std bound its weak reference to this definition, so it
     * expects what its own fallback would have done. */
    return (ssize_t)next_syscall()(SYS_getrandom, buf, len, flags);
}

EXPORT int getentropy(void *buf, size_t len) {
    struct settings s = settings();
    if (draw_is_seeded(&s, 0)) {
        if (len > 256) {
            errno = EIO;
            return -1;
        }
        return seeded_getrandom(s.seed, buf, len, 0) < 0 ? -1 : 0;
    }
    getentropy_fn next = (getentropy_fn)next_symbol(&next_getentropy_slot, "getentropy");
    if (next == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return next(buf, len);
}

static int futex_deadline(int op, const struct timespec *timeout, struct timespec *out);

/* Every Linux system call takes at most six register-sized arguments, and glibc's syscall()
 * itself reads six, whatever the caller passed; forwarding six keeps every other call as it
 * was. */
EXPORT long syscall(long number, ...) {
    va_list args;
    va_start(args, number);
    long a1 = va_arg(args, long);
    long a2 = va_arg(args, long);
    long a3 = va_arg(args, long);
    long a4 = va_arg(args, long);
    long a5 = va_arg(args, long);
    long a6 = va_arg(args, long);
    va_end(args);
    if (number == SYS_getrandom) {
        struct settings s = settings();
        if (draw_is_seeded(&s, (unsigned int)a3)) {
            return (long)seeded_getrandom(s.seed, (void *)a1, (size_t)a2, (unsigned int)a3);
        }
    }
    if (number == SYS_futex) {
        struct timespec deadline;
        if (futex_deadline((int)a2, (const struct timespec *)a4, &deadline)) {
            return next_syscall()(number, a1, a2, a3, (long)&deadline, a5, a6);
        }
    }
    return next_syscall()(number, a1, a2, a3, a4, a5, a6);
}

/* ---------------------------------------------------------------- wall clock */

/* CLOCK_MONOTONIC at the first wall-clock read, plus one so that 0 means "not yet". */
static int64_t anchor_plus_one;

static int shifted_realtime(const struct settings *s, struct timespec *out) {
    int64_t elapsed = 0;
    if (!s->frozen) {
        struct timespec mono;
        if (next_clock_gettime()(CLOCK_MONOTONIC, &mono) != 0) {
            return -1;
        }
        int64_t now = (int64_t)mono.tv_sec * NSEC_PER_SEC + mono.tv_nsec;
        int64_t expected = 0;
        __atomic_compare_exchange_n(&anchor_plus_one, &expected, now + 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE);
        int64_t anchor = __atomic_load_n(&anchor_plus_one, __ATOMIC_ACQUIRE) - 1;
        /* A thread that read the monotonic clock just before another one set the anchor
         * would otherwise see the wall clock start slightly before the given instant. */
        elapsed = now > anchor ? now - anchor : 0;
    }
    int64_t nsec = s->time_nsec + elapsed % NSEC_PER_SEC;
    out->tv_sec = (time_t)(s->time_sec + elapsed / NSEC_PER_SEC + nsec / NSEC_PER_SEC);
    out->tv_nsec = (long)(nsec % NSEC_PER_SEC);
    return 0;
}

/* The jitter handed out so far: every read takes one more tick, so that no two reads are ever
 * closer than a tick apart, whichever threads make them. */
static int64_t jitter_total_ns;

static void add_jitter(const struct settings *s, struct timespec *ts) {
    if (s->tick_ns == 0) {
        return;
    }
    int64_t offset = __atomic_add_fetch(&jitter_total_ns, s->tick_ns, __ATOMIC_RELAXED);
    int64_t nsec = (int64_t)ts->tv_nsec + offset % NSEC_PER_SEC;
    ts->tv_sec += (time_t)(offset / NSEC_PER_SEC + nsec / NSEC_PER_SEC);
    ts->tv_nsec = (long)(nsec % NSEC_PER_SEC);
}

static int is_realtime(clockid_t clock) {
    return clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE;
}

/* The clocks that measure elapsed time: what "it ran fast enough" is judged by. */
static int is_elapsed_clock(clockid_t clock) {
    return clock == CLOCK_MONOTONIC || clock == CLOCK_MONOTONIC_COARSE ||
           clock == CLOCK_MONOTONIC_RAW || clock == CLOCK_BOOTTIME;
}

/* The wall clock now, pinned or real, jittered. */
static int wall_clock(const struct settings *s, struct timespec *out) {
    int status = s->timed ? shifted_realtime(s, out) : next_clock_gettime()(CLOCK_REALTIME, out);
    if (status == 0) {
        add_jitter(s, out);
    }
    return status;
}

EXPORT int clock_gettime(clockid_t clock, struct timespec *ts) {
    struct settings s = settings();
    if (is_realtime(clock) && (s.timed || s.tick_ns != 0)) {
        if (s.timed) {
            return wall_clock(&s, ts);
        }
        int status = next_clock_gettime()(clock, ts);
        if (status == 0) {
            add_jitter(&s, ts);
        }
        return status;
    }
    int status = next_clock_gettime()(clock, ts);
    if (status == 0 && s.tick_ns != 0 && is_elapsed_clock(clock)) {
        add_jitter(&s, ts);
    }
    return status;
}

EXPORT int gettimeofday(struct timeval *tv, void *tz) {
    struct settings s = settings();
    gettimeofday_fn next = (gettimeofday_fn)next_symbol(&next_gettimeofday_slot, "gettimeofday");
    if (!s.timed && s.tick_ns == 0) {
        return next(tv, tz);
    }
    /* The obsolete timezone is not the doctor's business: libc still fills it. */
    if (tz != NULL && next(NULL, tz) != 0) {
        return -1;
    }
    if (tv != NULL) {
        struct timespec now;
        if (wall_clock(&s, &now) != 0) {
            return -1;
        }
        tv->tv_sec = now.tv_sec;
        tv->tv_usec = (suseconds_t)(now.tv_nsec / 1000);
    }
    return 0;
}

EXPORT time_t time(time_t *out) {
    struct settings s = settings();
    if (!s.timed && s.tick_ns == 0) {
        return ((time_fn)next_symbol(&next_time_slot, "time"))(out);
    }
    struct timespec now;
    if (wall_clock(&s, &now) != 0) {
        return (time_t)-1;
    }
    if (out != NULL) {
        *out = now.tv_sec;
    }
    return now.tv_sec;
}

/* ---------------------------------------------------------------- absolute deadlines */

/* A wait until an absolute instant is measured by the kernel against its own clock, while the
 * caller computed that instant from its reads of the clock here, which run ahead of the
 * kernel's by the jitter handed out (or, for the wall clock, elsewhere in time). Unchanged, a
 * 50 ms timed wait after a thousand jittered reads would last 250 s, and one on a wall clock
 * pinned years ahead would last years: std's Condvar::wait_timeout and thread::park_timeout
 * (futex FUTEX_WAIT_BITSET against CLOCK_MONOTONIC), and tokio's timed parks through them,
 * would hang. So each such deadline is moved to the kernel's clock: the same distance from now
 * as the caller meant it to be from the clock it read. */

#ifndef FUTEX_WAIT_BITSET
#define FUTEX_WAIT_BITSET 9
#endif
#ifndef FUTEX_LOCK_PI
#define FUTEX_LOCK_PI 6
#endif
#ifndef FUTEX_WAIT_REQUEUE_PI
#define FUTEX_WAIT_REQUEUE_PI 11
#endif
#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif
#ifndef FUTEX_PRIVATE_FLAG
#define FUTEX_PRIVATE_FLAG 128
#endif
#ifndef FUTEX_CLOCK_REALTIME
#define FUTEX_CLOCK_REALTIME 256
#endif

/* `a` minus `b`, saturated to what a deadline can be: never before 0 (a deadline already passed
 * ends the wait at once), never past the largest time_t (a caller's "forever"). */
static void deadline_minus(const struct timespec *a, int64_t b_sec, int64_t b_nsec,
                           struct timespec *out) {
    int64_t sec;
    int64_t nsec = (int64_t)a->tv_nsec - b_nsec;
    if (__builtin_sub_overflow((int64_t)a->tv_sec, b_sec, &sec)) {
        sec = b_sec < 0 ? INT64_MAX : 0;
        nsec = b_sec < 0 ? NSEC_PER_SEC - 1 : 0;
    }
    if (nsec < 0) {
        nsec += NSEC_PER_SEC;
        sec = sec == INT64_MIN ? INT64_MIN : sec - 1;
    } else if (nsec >= NSEC_PER_SEC) {
        nsec -= NSEC_PER_SEC;
        if (sec == INT64_MAX) {
            nsec = NSEC_PER_SEC - 1;
        } else {
            sec++;
        }
    }
    if (sec < 0) {
        sec = 0;
        nsec = 0;
    }
    out->tv_sec = (time_t)sec;
    out->tv_nsec = (long)nsec;
}

/* `deadline` on `clock` as the process reads it, moved onto the kernel's clock into `out`; 0
 * when the process reads that clock as the kernel does, and the deadline stands. Hands out no
 * tick: a wait is not a read. */
static int kernel_deadline(clockid_t clock, const struct timespec *deadline,
                           struct timespec *out) {
    struct settings s = settings();
    int64_t jitter = s.tick_ns != 0 ? __atomic_load_n(&jitter_total_ns, __ATOMIC_RELAXED) : 0;
    int64_t ahead_sec = jitter / NSEC_PER_SEC;
    int64_t ahead_nsec = jitter % NSEC_PER_SEC;
    if (is_realtime(clock) && s.timed) {
        struct timespec seen;
        struct timespec real;
        if (shifted_realtime(&s, &seen) != 0 || next_clock_gettime()(CLOCK_REALTIME, &real) != 0) {
            return 0;
        }
        ahead_sec += (int64_t)seen.tv_sec - (int64_t)real.tv_sec;
        ahead_nsec += (int64_t)seen.tv_nsec - (int64_t)real.tv_nsec;
    } else if (!is_realtime(clock) && !is_elapsed_clock(clock)) {
        return 0;
    }
    /* Within a second now: deadline_minus borrows or carries one second at most. */
    ahead_sec += ahead_nsec / NSEC_PER_SEC;
    ahead_nsec %= NSEC_PER_SEC;
    if (ahead_nsec < 0) {
        ahead_nsec += NSEC_PER_SEC;
        ahead_sec--;
    }
    if (ahead_sec == 0 && ahead_nsec == 0) {
        return 0;
    }
    deadline_minus(deadline, ahead_sec, ahead_nsec, out);
    return 1;
}

/* The futex operations whose timeout is an absolute instant (FUTEX_WAIT's is relative): on
 * CLOCK_MONOTONIC, or CLOCK_REALTIME with FUTEX_CLOCK_REALTIME and always for FUTEX_LOCK_PI. */
static int futex_deadline(int op, const struct timespec *timeout, struct timespec *out) {
    int command = op & ~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME);
    if (timeout == NULL || (command != FUTEX_WAIT_BITSET && command != FUTEX_WAIT_REQUEUE_PI &&
                            command != FUTEX_LOCK_PI && command != FUTEX_LOCK_PI2)) {
        return 0;
    }
    int realtime = command == FUTEX_LOCK_PI || (op & FUTEX_CLOCK_REALTIME) != 0;
    return kernel_deadline(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, timeout, out);
}

typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *, struct timespec *);
static void *next_clock_nanosleep_slot;

/* A sleep until an instant (std's thread::sleep_until): until that instant as the process reads
 * the clock. A relative sleep needs nothing. */
EXPORT int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request,
                           struct timespec *remain) {
    clock_nanosleep_fn next =
        (clock_nanosleep_fn)next_symbol(&next_clock_nanosleep_slot, "clock_nanosleep");
    struct timespec deadline;
    if ((flags & TIMER_ABSTIME) != 0 && request != NULL &&
        kernel_deadline(clock, request, &deadline)) {
        return next(clock, flags, &deadline, remain);
    }
    return next(clock, flags, request, remain);
}

/* ---------------------------------------------------------------- network */

typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);

static void *next_connect_slot;
static void *next_sendto_slot;

/* Whether `address` leaves the machine: an IPv4 or IPv6 address outside loopback (and outside
 * the unspecified address, which means this host). Unix sockets, netlink and the rest stay. */
static int leaves_the_machine(const struct sockaddr *address, socklen_t length) {
    if (address == NULL) {
        return 0;
    }
    if (address->sa_family == AF_INET && length >= (socklen_t)sizeof(struct sockaddr_in)) {
        const unsigned char *ip =
            (const unsigned char *)&((const struct sockaddr_in *)address)->sin_addr;
        int loopback = ip[0] == 127;
        int unspecified = ip[0] == 0 && ip[1] == 0 && ip[2] == 0 && ip[3] == 0;
        return !loopback && !unspecified;
    }
    if (address->sa_family == AF_INET6 && length >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const unsigned char *ip = ((const struct sockaddr_in6 *)address)->sin6_addr.s6_addr;
        int zeros = 1;
        for (int i = 0; i < 15; i++) {
            zeros = zeros && ip[i] == 0;
        }
        int loopback = zeros && ip[15] == 1;
        int unspecified = zeros && ip[15] == 0;
        int mapped = 1;
        for (int i = 0; i < 10; i++) {
            mapped = mapped && ip[i] == 0;
        }
        mapped = mapped && ip[10] == 0xff && ip[11] == 0xff;
        int mapped_loopback = mapped && ip[12] == 127;
        return !loopback && !unspecified && !mapped_loopback;
    }
    return 0;
}

/* `address` as text for the log: `a.b.c.d:port`, or `[hex]:port` for IPv6. */
static void describe_address(const struct sockaddr *address, char *out, size_t size) {
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
#define PUT(ch)                                                                                    \
    do {                                                                                           \
        if (n < size - 1) {                                                                        \
            out[n++] = (ch);                                                                       \
        }                                                                                          \
    } while (0)
    unsigned port = 0;
    if (address->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)address;
        const unsigned char *ip = (const unsigned char *)&v4->sin_addr;
        for (int i = 0; i < 4; i++) {
            char digits[4];
            int d = 0;
            unsigned value = ip[i];
            do {
                digits[d++] = (char)('0' + value % 10);
                value /= 10;
            } while (value > 0);
            while (d > 0) {
                PUT(digits[--d]);
            }
            if (i < 3) {
                PUT('.');
            }
        }
        port = ntohs(v4->sin_port);
    } else {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)address;
        PUT('[');
        for (int i = 0; i < 16; i++) {
            PUT(hex[v6->sin6_addr.s6_addr[i] >> 4]);
            PUT(hex[v6->sin6_addr.s6_addr[i] & 15]);
            if (i % 2 == 1 && i < 15) {
                PUT(':');
            }
        }
        PUT(']');
        port = ntohs(v6->sin6_port);
    }
    PUT(':');
    char digits[6];
    int d = 0;
    do {
        digits[d++] = (char)('0' + port % 10);
        port /= 10;
    } while (port > 0);
    while (d > 0) {
        PUT(digits[--d]);
    }
#undef PUT
    out[n] = '\0';
}

static int refuse(const struct settings *s, const struct sockaddr *address) {
    char text[64];
    describe_address(address, text, sizeof text);
    log_line(s, "blocked ", text);
    errno = ENETUNREACH;
    return -1;
}

EXPORT int connect(int fd, const struct sockaddr *address, socklen_t length) {
    struct settings s = settings();
    if (s.net_blocked && leaves_the_machine(address, length)) {
        return refuse(&s, address);
    }
    return ((connect_fn)next_symbol(&next_connect_slot, "connect"))(fd, address, length);
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
                      const struct sockaddr *address, socklen_t length) {
    struct settings s = settings();
    if (s.net_blocked && leaves_the_machine(address, length)) {
        return refuse(&s, address);
    }
    return ((sendto_fn)next_symbol(&next_sendto_slot, "sendto"))(fd, buf, len, flags, address,
                                                                  length);
}

/* ---------------------------------------------------------------- writes */

/* The log is opened by the next open(), not this library's: its own writes are not the test's,
 * and logging them would log the log forever. */
typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open_2_fn)(const char *, int);
typedef int (*openat_2_fn)(int, const char *, int);
typedef int (*creat_fn)(const char *, mode_t);
typedef FILE *(*fopen_fn)(const char *, const char *);
typedef int (*path_fn)(const char *);
typedef int (*path_mode_fn)(const char *, mode_t);
typedef int (*at_path_mode_fn)(int, const char *, mode_t);
typedef int (*at_path_flags_fn)(int, const char *, int);
typedef int (*two_paths_fn)(const char *, const char *);
typedef int (*renameat_fn)(int, const char *, int, const char *);
typedef int (*renameat2_fn)(int, const char *, int, const char *, unsigned int);
typedef int (*linkat_fn)(int, const char *, int, const char *, int);
typedef int (*symlinkat_fn)(const char *, int, const char *);
typedef int (*truncate_fn)(const char *, off_t);
typedef int (*truncate64_fn)(const char *, off64_t);

/* One slot per entry point, looked up by name; the table's order is the enum's. */
enum write_call {
    W_OPEN,
    W_OPEN64,
    W_OPENAT,
    W_OPENAT64,
    W_OPEN_2,
    W_OPEN64_2,
    W_OPENAT_2,
    W_OPENAT64_2,
    W_CREAT,
    W_CREAT64,
    W_FOPEN,
    W_FOPEN64,
    W_RENAME,
    W_RENAMEAT,
    W_RENAMEAT2,
    W_UNLINK,
    W_UNLINKAT,
    W_RMDIR,
    W_MKDIR,
    W_MKDIRAT,
    W_LINK,
    W_LINKAT,
    W_SYMLINK,
    W_SYMLINKAT,
    W_TRUNCATE,
    W_TRUNCATE64,
    W_CALLS
};

static const char *const write_call_names[W_CALLS] = {
    "open",     "open64",   "openat",   "openat64",   "__open_2", "__open64_2", "__openat_2",
    "__openat64_2", "creat", "creat64", "fopen",      "fopen64",  "rename",     "renameat",
    "renameat2", "unlink",  "unlinkat", "rmdir",      "mkdir",    "mkdirat",    "link",
    "linkat",   "symlink",  "symlinkat", "truncate",  "truncate64"};

static void *write_call_slots[W_CALLS];

static void *next_write_call(enum write_call call) {
    return next_symbol(&write_call_slots[call], write_call_names[call]);
}

/* Looked up at load time: the first open() of a process may come in a child forked from a
 * threaded parent, where dlsym could wait on a lock some other thread of the parent held. */
__attribute__((constructor)) static void resolve_write_calls(void) {
    for (int call = 0; call < W_CALLS; call++) {
        next_write_call((enum write_call)call);
    }
}

static int open_log(const char *path) {
    open_fn next = (open_fn)next_write_call(W_OPEN);
    if (next == NULL) {
        return -1;
    }
    return next(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

/* 0: not read yet, 1: off, 2: on. Reading it twice at once is harmless: both read the same. */
static int watch_state;

static int watching_writes(void) {
    int state = __atomic_load_n(&watch_state, __ATOMIC_ACQUIRE);
    if (state != 0) {
        return state == 2;
    }
    const char *value = getenv(ENV_WRITES);
    state = value != NULL && value[0] == '1' && value[1] == '\0' ? 2 : 1;
    int expected = 0;
    if (__atomic_compare_exchange_n(&watch_state, &expected, state, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE) &&
        value != NULL && *value != '\0' && state == 1) {
        warn_malformed(ENV_WRITES, value, "not 1; writes are not logged");
    }
    return state == 2;
}

static void append_text(char *line, size_t *n, size_t size, const char *text) {
    for (const char *c = text; *c != '\0' && *n < size; c++) {
        /* A newline in a path would start a line of its own in the log. */
        line[(*n)++] = *c == '\n' ? '?' : *c;
    }
}

/* `write <op> <path>`, `path` made absolute against `dirfd` (or the working directory for
 * AT_FDCWD), in one write(2) with O_APPEND: concurrent threads and processes never interleave
 * lines. Only the system calls getcwd, readlink, open and write: callers may be anywhere, a
 * child between fork and exec included. errno is the caller's again afterwards. */
static void log_write(const char *op, int dirfd, const char *path) {
    if (path == NULL || !watching_writes()) {
        return;
    }
    struct settings s = settings();
    if (s.log == NULL) {
        return;
    }
    int saved_errno = errno;
    char line[PATH_MAX + 64];
    /* Room for the newline. */
    const size_t size = sizeof line - 1;
    size_t n = 0;
    append_text(line, &n, size, "write ");
    append_text(line, &n, size, op);
    append_text(line, &n, size, " ");
    if (path[0] != '/') {
        size_t before = n;
        if (dirfd == AT_FDCWD) {
            if (getcwd(line + n, size - n) != NULL) {
                while (n < size && line[n] != '\0') {
                    n++;
                }
            }
        } else {
            char link[40] = "/proc/self/fd/";
            size_t at = 14;
            char digits[12];
            int d = 0;
            unsigned value = (unsigned)dirfd;
            do {
                digits[d++] = (char)('0' + value % 10);
                value /= 10;
            } while (value > 0 && d < (int)sizeof digits);
            while (d > 0) {
                link[at++] = digits[--d];
            }
            link[at] = '\0';
            ssize_t length = readlink(link, line + n, size - n);
            if (length > 0) {
                n += (size_t)length;
            }
        }
        if (n == before) {
            /* Not absolute: the doctor names it as it is, since it cannot tell where it is. */
            append_text(line, &n, size, "?");
        }
        append_text(line, &n, size, "/");
    }
    append_text(line, &n, size, path);
    line[n++] = '\n';
    int fd = open_log(s.log);
    if (fd >= 0) {
        ssize_t written = write(fd, line, n);
        (void)written;
        close(fd);
    }
    errno = saved_errno;
}

/* Whether open() with `flags` can change what is on disk: write access, creation, truncation.
 * An O_PATH descriptor ignores the rest of the flags. */
static int opens_for_writing(int flags) {
    if (flags & O_PATH) {
        return 0;
    }
    return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0;
}

/* Whether the kernel reads a mode argument for `flags`. */
static int takes_mode(int flags) {
    return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE;
}

static int after_open(int fd, int dirfd, const char *path, int flags) {
    if (fd >= 0 && opens_for_writing(flags)) {
        log_write("open", dirfd, path);
    }
    return fd;
}

static int after_call(int status, const char *op, int dirfd, const char *path) {
    if (status == 0) {
        log_write(op, dirfd, path);
    }
    return status;
}

#define MODE_ARG(flags, mode)                                                                      \
    do {                                                                                           \
        if (takes_mode(flags)) {                                                                   \
            va_list args;                                                                          \
            va_start(args, flags);                                                                 \
            (mode) = (mode_t)va_arg(args, int);                                                    \
            va_end(args);                                                                          \
        }                                                                                          \
    } while (0)

static int missing(void) {
    errno = ENOSYS;
    return -1;
}

EXPORT int open(const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    open_fn next = (open_fn)next_write_call(W_OPEN);
    return next == NULL ? missing() : after_open(next(path, flags, mode), AT_FDCWD, path, flags);
}

EXPORT int open64(const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    open_fn next = (open_fn)next_write_call(W_OPEN64);
    return next == NULL ? missing() : after_open(next(path, flags, mode), AT_FDCWD, path, flags);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    openat_fn next = (openat_fn)next_write_call(W_OPENAT);
    return next == NULL ? missing()
                        : after_open(next(dirfd, path, flags, mode), dirfd, path, flags);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    MODE_ARG(flags, mode);
    openat_fn next = (openat_fn)next_write_call(W_OPENAT64);
    return next == NULL ? missing()
                        : after_open(next(dirfd, path, flags, mode), dirfd, path, flags);
}

/* The entry points of C code built with _FORTIFY_SOURCE, which never pass a mode. */
EXPORT int __open_2(const char *path, int flags) {
    open_2_fn next = (open_2_fn)next_write_call(W_OPEN_2);
    return next == NULL ? missing() : after_open(next(path, flags), AT_FDCWD, path, flags);
}

EXPORT int __open64_2(const char *path, int flags) {
    open_2_fn next = (open_2_fn)next_write_call(W_OPEN64_2);
    return next == NULL ? missing() : after_open(next(path, flags), AT_FDCWD, path, flags);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags) {
    openat_2_fn next = (openat_2_fn)next_write_call(W_OPENAT_2);
    return next == NULL ? missing() : after_open(next(dirfd, path, flags), dirfd, path, flags);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags) {
    openat_2_fn next = (openat_2_fn)next_write_call(W_OPENAT64_2);
    return next == NULL ? missing() : after_open(next(dirfd, path, flags), dirfd, path, flags);
}

EXPORT int creat(const char *path, mode_t mode) {
    creat_fn next = (creat_fn)next_write_call(W_CREAT);
    return next == NULL ? missing() : after_open(next(path, mode), AT_FDCWD, path, O_CREAT);
}

EXPORT int creat64(const char *path, mode_t mode) {
    creat_fn next = (creat_fn)next_write_call(W_CREAT64);
    return next == NULL ? missing() : after_open(next(path, mode), AT_FDCWD, path, O_CREAT);
}

/* glibc's fopen() opens through its own internal open, which no interposer reaches. */
static FILE *after_fopen(FILE *file, const char *path, const char *mode) {
    if (file != NULL && mode != NULL) {
        for (const char *c = mode; *c != '\0' && *c != ','; c++) {
            if (*c == 'w' || *c == 'a' || *c == '+') {
                log_write("open", AT_FDCWD, path);
                break;
            }
        }
    }
    return file;
}

EXPORT FILE *fopen(const char *path, const char *mode) {
    fopen_fn next = (fopen_fn)next_write_call(W_FOPEN);
    if (next == NULL) {
        errno = ENOSYS;
        return NULL;
    }
    return after_fopen(next(path, mode), path, mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode) {
    fopen_fn next = (fopen_fn)next_write_call(W_FOPEN64);
    if (next == NULL) {
        errno = ENOSYS;
        return NULL;
    }
    return after_fopen(next(path, mode), path, mode);
}

/* A rename changes both names. */
static int after_rename(int status, int old_dirfd, const char *old_path, int new_dirfd,
                        const char *new_path) {
    if (status == 0) {
        log_write("rename", old_dirfd, old_path);
        log_write("rename", new_dirfd, new_path);
    }
    return status;
}

EXPORT int rename(const char *old_path, const char *new_path) {
    two_paths_fn next = (two_paths_fn)next_write_call(W_RENAME);
    return next == NULL ? missing()
                        : after_rename(next(old_path, new_path), AT_FDCWD, old_path, AT_FDCWD,
                                       new_path);
}

EXPORT int renameat(int old_dirfd, const char *old_path, int new_dirfd, const char *new_path) {
    renameat_fn next = (renameat_fn)next_write_call(W_RENAMEAT);
    return next == NULL ? missing()
                        : after_rename(next(old_dirfd, old_path, new_dirfd, new_path), old_dirfd,
                                       old_path, new_dirfd, new_path);
}

EXPORT int renameat2(int old_dirfd, const char *old_path, int new_dirfd, const char *new_path,
                     unsigned int flags) {
    renameat2_fn next = (renameat2_fn)next_write_call(W_RENAMEAT2);
    return next == NULL ? missing()
                        : after_rename(next(old_dirfd, old_path, new_dirfd, new_path, flags),
                                       old_dirfd, old_path, new_dirfd, new_path);
}

EXPORT int unlink(const char *path) {
    path_fn next = (path_fn)next_write_call(W_UNLINK);
    return next == NULL ? missing() : after_call(next(path), "unlink", AT_FDCWD, path);
}

EXPORT int unlinkat(int dirfd, const char *path, int flags) {
    at_path_flags_fn next = (at_path_flags_fn)next_write_call(W_UNLINKAT);
    return next == NULL ? missing()
                        : after_call(next(dirfd, path, flags),
                                     (flags & AT_REMOVEDIR) ? "rmdir" : "unlink", dirfd, path);
}

EXPORT int rmdir(const char *path) {
    path_fn next = (path_fn)next_write_call(W_RMDIR);
    return next == NULL ? missing() : after_call(next(path), "rmdir", AT_FDCWD, path);
}

EXPORT int mkdir(const char *path, mode_t mode) {
    path_mode_fn next = (path_mode_fn)next_write_call(W_MKDIR);
    return next == NULL ? missing() : after_call(next(path, mode), "mkdir", AT_FDCWD, path);
}

EXPORT int mkdirat(int dirfd, const char *path, mode_t mode) {
    at_path_mode_fn next = (at_path_mode_fn)next_write_call(W_MKDIRAT);
    return next == NULL ? missing() : after_call(next(dirfd, path, mode), "mkdir", dirfd, path);
}

/* A link adds a name; the file it names is not written. */
EXPORT int link(const char *old_path, const char *new_path) {
    two_paths_fn next = (two_paths_fn)next_write_call(W_LINK);
    return next == NULL ? missing()
                        : after_call(next(old_path, new_path), "link", AT_FDCWD, new_path);
}

EXPORT int linkat(int old_dirfd, const char *old_path, int new_dirfd, const char *new_path,
                  int flags) {
    linkat_fn next = (linkat_fn)next_write_call(W_LINKAT);
    return next == NULL ? missing()
                        : after_call(next(old_dirfd, old_path, new_dirfd, new_path, flags), "link",
                                     new_dirfd, new_path);
}

EXPORT int symlink(const char *target, const char *path) {
    two_paths_fn next = (two_paths_fn)next_write_call(W_SYMLINK);
    return next == NULL ? missing() : after_call(next(target, path), "link", AT_FDCWD, path);
}

EXPORT int symlinkat(const char *target, int dirfd, const char *path) {
    symlinkat_fn next = (symlinkat_fn)next_write_call(W_SYMLINKAT);
    return next == NULL ? missing() : after_call(next(target, dirfd, path), "link", dirfd, path);
}

EXPORT int truncate(const char *path, off_t length) {
    truncate_fn next = (truncate_fn)next_write_call(W_TRUNCATE);
    return next == NULL ? missing() : after_call(next(path, length), "truncate", AT_FDCWD, path);
}

EXPORT int truncate64(const char *path, off64_t length) {
    truncate64_fn next = (truncate64_fn)next_write_call(W_TRUNCATE64);
    return next == NULL ? missing() : after_call(next(path, length), "truncate", AT_FDCWD, path);
}

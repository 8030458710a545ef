// c-epoll: the cheapest server that honours the avatar contract.
//
// Every request head ("\r\n\r\n"-terminated; requests carry no body) gets a
// pre-built `302 Found` whose Location is one of N URLs picked uniformly at
// random. One thread per worker, each with its own SO_REUSEPORT listener and
// its own edge-triggered epoll loop. Nothing is allocated per request: the
// only allocations are per connection (a small state struct) and, rarely, a
// carry buffer for a partial head or a pending-output buffer when the socket
// send buffer is full.
//
// Usage: server [-w WORKERS] [-b ADDR] PORT N [LOCATION_TEMPLATE]

#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_TEMPLATE "https://avatar.example/Renard-{n}.png"
#define BACKLOG 4096
#define READ_BUF_BYTES (16 * 1024)
#define CARRY_CAP_BYTES (8 * 1024) // a partial head longer than this closes the connection
#define MAX_EVENTS 512
#define MAX_TEMPLATE_BYTES 2048
#define MAX_N 1000000

// Response variants, chosen per request head.
enum kind { KIND_DEFAULT = 0, KIND_KEEPALIVE = 1, KIND_CLOSE = 2, KIND_COUNT = 3 };

struct responses {
    char *bytes;      // all N * KIND_COUNT responses back to back
    uint32_t *offset; // offset[kind * n + i], with one extra sentinel at the end
    uint32_t n;
    size_t max_len;
};

static struct responses g_resp;

struct conn {
    int fd;
    uint32_t carry_len;
    char *carry;      // CARRY_CAP_BYTES, allocated on first partial head
    char *pending;    // unsent output, only when the send buffer was full
    size_t pending_len;
    size_t pending_off;
    unsigned paused : 1;      // input arrived while output was pending
    unsigned close_after : 1; // close once pending output is written
};

struct worker {
    int listen_fd;
    int epoll_fd;
    uint64_t rng;
    char rbuf[CARRY_CAP_BYTES + READ_BUF_BYTES];
    char *obuf; // sized for the most responses one buffer can ask for
};

static int g_listener_tag; // epoll_data.ptr of listeners points here

// ---- random pick: xorshift64* and Lemire's multiply-shift with rejection ----

static inline uint32_t rng_next32(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

// Uniform in [0, n) without modulo bias (Lemire 2019, "Fast Random Integer
// Generation in an Interval"); the division runs only on the rare slow path.
static inline uint32_t rng_below(uint64_t *s, uint32_t n) {
    uint64_t m = (uint64_t)rng_next32(s) * n;
    uint32_t low = (uint32_t)m;
    if (low < n) {
        uint32_t threshold = (uint32_t)(-n) % n;
        while (low < threshold) {
            m = (uint64_t)rng_next32(s) * n;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}

// ---- pre-built responses ----

static size_t expand_template(char *dst, size_t cap, const char *tmpl, uint32_t n) {
    char num[16];
    int numlen = snprintf(num, sizeof num, "%u", n);
    size_t len = 0;
    for (const char *p = tmpl; *p;) {
        if (p[0] == '{' && p[1] == 'n' && p[2] == '}') {
            if (len + (size_t)numlen < cap) memcpy(dst + len, num, (size_t)numlen);
            len += (size_t)numlen;
            p += 3;
        } else {
            if (len + 1 < cap) dst[len] = *p;
            len++;
            p++;
        }
    }
    if (len < cap) dst[len] = '\0';
    return len;
}

static int build_responses(const char *tmpl, uint32_t n) {
    static const char *const conn_header[KIND_COUNT] = {
        "", "Connection: keep-alive\r\n", "Connection: close\r\n"};
    char url[MAX_TEMPLATE_BYTES * 4];
    size_t total = 0, max_len = 0;
    char line[sizeof url + 256];
    // First pass sizes, second pass fills.
    for (int pass = 0; pass < 2; pass++) {
        size_t off = 0;
        for (int k = 0; k < KIND_COUNT; k++) {
            for (uint32_t i = 0; i < n; i++) {
                size_t ulen = expand_template(url, sizeof url, tmpl, i + 1);
                if (ulen >= sizeof url) return -1;
                int len = snprintf(line, sizeof line,
                                   "HTTP/1.1 302 Found\r\n"
                                   "Location: %s\r\n"
                                   "Content-Length: 0\r\n"
                                   "Cache-Control: no-store\r\n"
                                   "%s\r\n",
                                   url, conn_header[k]);
                if (len < 0 || (size_t)len >= sizeof line) return -1;
                if (pass == 1) {
                    g_resp.offset[(size_t)k * n + i] = (uint32_t)off;
                    memcpy(g_resp.bytes + off, line, (size_t)len);
                }
                off += (size_t)len;
                if ((size_t)len > max_len) max_len = (size_t)len;
            }
        }
        if (pass == 0) {
            total = off;
            if (total > UINT32_MAX) return -1;
            g_resp.bytes = malloc(total);
            g_resp.offset = malloc(((size_t)KIND_COUNT * n + 1) * sizeof(uint32_t));
            if (!g_resp.bytes || !g_resp.offset) return -1;
        } else {
            g_resp.offset[(size_t)KIND_COUNT * n] = (uint32_t)off;
        }
    }
    g_resp.n = n;
    g_resp.max_len = max_len;
    return 0;
}

// ---- request head classification ----

static inline int lower(int c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

static int starts_with_ci(const char *p, const char *end, const char *lit) {
    for (; *lit; lit++, p++) {
        if (p >= end || lower((unsigned char)*p) != *lit) return 0;
    }
    return 1;
}

// Looks for a `close` or `keep-alive` token in the Connection header and at
// the request line's version. HTTP/1.0 closes unless it asks for keep-alive.
static enum kind classify(const char *head, const char *end) {
    const char *eol = memchr(head, '\n', (size_t)(end - head));
    if (!eol) return KIND_DEFAULT;
    int http10 = (eol - head >= 9) && memcmp(eol - 9, "HTTP/1.0\r", 9) == 0;
    int want_close = 0, want_keepalive = 0;
    for (const char *p = eol + 1; p < end;) {
        const char *next = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = next ? next : end;
        if (starts_with_ci(p, line_end, "connection:")) {
            for (const char *v = p + 11; v < line_end; v++) {
                if (starts_with_ci(v, line_end, "close")) want_close = 1;
                else if (starts_with_ci(v, line_end, "keep-alive")) want_keepalive = 1;
            }
        }
        if (!next) break;
        p = next + 1;
    }
    if (want_close) return KIND_CLOSE;
    if (http10) return want_keepalive ? KIND_KEEPALIVE : KIND_CLOSE;
    return KIND_DEFAULT;
}

// ---- connections ----

static void conn_close(struct worker *w, struct conn *c) {
    (void)w;
    close(c->fd); // also removes it from the epoll set
    free(c->carry);
    free(c->pending);
    free(c);
}

// Writes out[0..len); stashes what the socket would not take.
// Returns -1 if the connection is dead.
static int conn_send(struct conn *c, const char *out, size_t len) {
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(c->fd, out + off, len - off);
        if (n > 0) {
            off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            size_t rest = len - off;
            char *p = malloc(rest);
            if (!p) return -1;
            memcpy(p, out + off, rest);
            c->pending = p;
            c->pending_len = rest;
            c->pending_off = 0;
            return 0;
        } else {
            return -1; // EPIPE, ECONNRESET, ...
        }
    }
    return 0;
}

// Flushes pending output. Returns 1 if drained, 0 if still pending, -1 if dead.
static int conn_flush(struct conn *c) {
    while (c->pending_off < c->pending_len) {
        ssize_t n = write(c->fd, c->pending + c->pending_off, c->pending_len - c->pending_off);
        if (n > 0) {
            c->pending_off += (size_t)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        } else {
            return -1;
        }
    }
    free(c->pending);
    c->pending = NULL;
    c->pending_len = c->pending_off = 0;
    return 1;
}

// Answers every complete head in buf[0..len); the first carry_len bytes were
// already scanned last time. Returns -1 to close now, 0 to keep going.
static int conn_process(struct worker *w, struct conn *c, char *buf, size_t len, size_t carry_len) {
    const char *p = buf, *end = buf + len;
    const char *scan = buf + (carry_len >= 3 ? carry_len - 3 : 0);
    char *out = w->obuf;
    size_t out_len = 0;
    int closing = 0;
    const uint32_t n = g_resp.n;
    for (;;) {
        const char *t = memmem(scan, (size_t)(end - scan), "\r\n\r\n", 4);
        if (!t) break;
        const char *head_end = t + 4;
        enum kind k = classify(p, head_end);
        size_t idx = (size_t)k * n + rng_below(&w->rng, n);
        uint32_t ro = g_resp.offset[idx];
        size_t rl = g_resp.offset[idx + 1] - ro;
        memcpy(out + out_len, g_resp.bytes + ro, rl);
        out_len += rl;
        p = scan = head_end;
        if (k == KIND_CLOSE) {
            closing = 1;
            break;
        }
    }
    if (!closing) {
        size_t rest = (size_t)(end - p);
        if (rest > CARRY_CAP_BYTES) return -1;
        if (rest > 0) {
            if (!c->carry && !(c->carry = malloc(CARRY_CAP_BYTES))) return -1;
            memmove(c->carry, p, rest);
        }
        c->carry_len = (uint32_t)rest;
    }
    if (out_len > 0 && conn_send(c, out, out_len) < 0) return -1;
    if (closing) {
        if (!c->pending) return -1;
        c->close_after = 1;
    }
    return 0;
}

// One read per readiness: a read that does not fill the buffer has drained
// the socket, so an edge-triggered loop need not read again to see EAGAIN.
static void conn_readable(struct worker *w, struct conn *c, uint32_t events) {
    if (c->pending || c->close_after) {
        c->paused = 1; // resumes after EPOLLOUT drains the output
        return;
    }
    for (;;) {
        size_t carry = c->carry_len;
        if (carry) memcpy(w->rbuf, c->carry, carry);
        ssize_t n = read(c->fd, w->rbuf + carry, READ_BUF_BYTES);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            conn_close(w, c); // ECONNRESET and friends
            return;
        }
        if (n == 0) {
            conn_close(w, c);
            return;
        }
        if (conn_process(w, c, w->rbuf, carry + (size_t)n, carry) < 0) {
            conn_close(w, c);
            return;
        }
        if (c->pending || c->close_after) {
            c->paused = 1;
            return;
        }
        if ((size_t)n < READ_BUF_BYTES) break;
    }
    // The peer half-closed and everything it sent has been answered.
    if (events & (EPOLLRDHUP | EPOLLHUP)) conn_close(w, c);
}

static void conn_writable(struct worker *w, struct conn *c, uint32_t events) {
    if (!c->pending) return;
    int r = conn_flush(c);
    if (r < 0) {
        conn_close(w, c);
        return;
    }
    if (r == 0) return;
    if (c->close_after) {
        conn_close(w, c);
        return;
    }
    if (c->paused) {
        c->paused = 0;
        conn_readable(w, c, events); // input may have arrived without a new edge
    }
}

static void accept_all(struct worker *w) {
    for (;;) {
        int fd = accept4(w->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            // EAGAIN: drained. EMFILE/ENFILE/ENOBUFS: try again on the next edge.
            return;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = calloc(1, sizeof *c);
        if (!c) {
            close(fd);
            continue;
        }
        c->fd = fd;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, .data.ptr = c};
        if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0) {
            close(fd);
            free(c);
        }
    }
}

static void *worker_main(void *arg) {
    struct worker *w = arg;
    struct epoll_event events[MAX_EVENTS];
    for (;;) {
        int n = epoll_wait(w->epoll_fd, events, MAX_EVENTS, -1);
        if (n < 0) {
            if (errno == EINTR) continue;
            perror("epoll_wait");
            exit(1);
        }
        for (int i = 0; i < n; i++) {
            void *ptr = events[i].data.ptr;
            uint32_t ev = events[i].events;
            if (ptr == &g_listener_tag) {
                accept_all(w);
                continue;
            }
            struct conn *c = ptr;
            if (ev & EPOLLERR) {
                conn_close(w, c);
                continue;
            }
            // Writable first: a drained send buffer may unpause reading.
            if ((ev & EPOLLOUT) && c->pending) {
                conn_writable(w, c, ev);
                continue; // conn_writable reads if it was paused, and c may be gone
            }
            if (ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP)) conn_readable(w, c, ev);
        }
    }
    return NULL;
}

// ---- setup ----

static int open_listener(const struct addrinfo *ai) {
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) < 0 ||
        bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, BACKLOG) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static void usage(void) {
    fprintf(stderr,
            "usage: server [-w WORKERS] [-b ADDR] PORT N [LOCATION_TEMPLATE]\n"
            "  PORT               TCP port; 0 picks a free one (printed on stderr)\n"
            "  N                  number of avatar URLs, 1..%d\n"
            "  LOCATION_TEMPLATE  default %s; {n} becomes 1..=N\n"
            "  -w WORKERS         threads, each with its own SO_REUSEPORT listener\n"
            "                     (default: $WORKERS, else 1)\n"
            "  -b ADDR            bind address (default 127.0.0.1)\n",
            MAX_N, DEFAULT_TEMPLATE);
    exit(2);
}

static long parse_long(const char *s, long lo, long hi, const char *what) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "server: invalid %s '%s': expected %ld..%ld\n", what, s, lo, hi);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    const char *bind_addr = "127.0.0.1";
    long workers = 1;
    const char *env = getenv("WORKERS");
    if (env && *env) workers = parse_long(env, 1, 1024, "WORKERS");
    int opt;
    while ((opt = getopt(argc, argv, "w:b:h")) != -1) {
        switch (opt) {
        case 'w': workers = parse_long(optarg, 1, 1024, "worker count"); break;
        case 'b': bind_addr = optarg; break;
        default: usage();
        }
    }
    if (argc - optind < 2 || argc - optind > 3) usage();
    long port = parse_long(argv[optind], 0, 65535, "port");
    uint32_t n = (uint32_t)parse_long(argv[optind + 1], 1, MAX_N, "N");
    const char *tmpl = argc - optind == 3 ? argv[optind + 2] : DEFAULT_TEMPLATE;
    if (strlen(tmpl) > MAX_TEMPLATE_BYTES || strpbrk(tmpl, "\r\n")) {
        fprintf(stderr, "server: LOCATION_TEMPLATE must be one line of at most %d bytes\n",
                MAX_TEMPLATE_BYTES);
        return 2;
    }
    if (build_responses(tmpl, n) < 0) {
        fprintf(stderr, "server: cannot build responses (out of memory or template too long)\n");
        return 2;
    }

    signal(SIGPIPE, SIG_IGN);
    // Workers inherit this mask; only the main thread takes SIGINT/SIGTERM.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);

    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_PASSIVE};
    struct addrinfo *ai;
    char port_str[8];
    snprintf(port_str, sizeof port_str, "%ld", port);
    int gai = getaddrinfo(bind_addr, port_str, &hints, &ai);
    if (gai != 0) {
        fprintf(stderr, "server: bad bind address '%s': %s\n", bind_addr, gai_strerror(gai));
        return 2;
    }

    struct worker **ws = calloc((size_t)workers, sizeof *ws);
    size_t max_heads = (CARRY_CAP_BYTES + READ_BUF_BYTES) / 4 + 1;
    for (long i = 0; i < workers; i++) {
        struct worker *w = calloc(1, sizeof *w);
        if (!w || !(w->obuf = malloc(max_heads * g_resp.max_len))) {
            fprintf(stderr, "server: out of memory\n");
            return 2;
        }
        w->listen_fd = open_listener(ai);
        if (w->listen_fd < 0) {
            fprintf(stderr, "server: cannot listen on %s:%s: %s (is another server on that port?)\n",
                    bind_addr, port_str, strerror(errno));
            return 2;
        }
        if (i == 0 && port == 0) {
            // Port 0: the other workers join the port the kernel chose.
            struct sockaddr_storage ss;
            socklen_t sl = sizeof ss;
            getsockname(w->listen_fd, (struct sockaddr *)&ss, &sl);
            port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                  : ((struct sockaddr_in *)&ss)->sin_port);
            snprintf(port_str, sizeof port_str, "%ld", port);
            freeaddrinfo(ai);
            if (getaddrinfo(bind_addr, port_str, &hints, &ai) != 0) return 2;
        }
        w->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.ptr = &g_listener_tag};
        if (w->epoll_fd < 0 || epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, w->listen_fd, &ev) < 0) {
            perror("server: epoll");
            return 2;
        }
        uint64_t seed = 0;
        if (getrandom(&seed, sizeof seed, 0) != sizeof seed)
            seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
        w->rng = seed ^ (0x9E3779B97F4A7C15ULL * (uint64_t)(i + 1));
        if (w->rng == 0) w->rng = 0x9E3779B97F4A7C15ULL;
        ws[i] = w;
    }
    freeaddrinfo(ai);

    for (long i = 0; i < workers; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker_main, ws[i]) != 0) {
            fprintf(stderr, "server: cannot start worker thread\n");
            return 2;
        }
        pthread_detach(t);
    }
    if (strchr(bind_addr, ':')) fprintf(stderr, "listening on [%s]:%ld\n", bind_addr, port);
    else fprintf(stderr, "listening on %s:%ld\n", bind_addr, port);

    int sig = 0;
    while (sigwait(&stop, &sig) != 0) {
    }
    fprintf(stderr, "server: caught %s, exiting\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    return 0;
}

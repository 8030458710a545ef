/* The TCP behaviours the diagnosis must name, as a tiny server (tests/netdiag):
 *
 *   tcp_server PORT split 0   answers each request in two writes (head, then body),
 *                             without TCP_NODELAY: Nagle holds the body until the client
 *                             ACKs the head, and the client's kernel delays that ACK ~40 ms.
 *   tcp_server PORT split 1   the same with TCP_NODELAY: no stall.
 *   tcp_server PORT slow 0    listen(fd, 1), accepts one connection every 20 ms, answers one
 *                             request and closes: the accept queue overflows under load.
 *
 * An optional fourth argument is the address to listen on (default 127.0.0.1).
 * It prints "listening" once it listens; a thread per connection for "split".
 * Build: cc -O2 -pthread -o tcp_server tcp_server.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char HEAD[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\n\r\n";
static const char CLOSE_HEAD[] =
    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 6\r\nConnection: close\r\n\r\n";
static const char BODY[] = "hello\n";
static int nodelay;

/* Reads until the end of one request head; 0 on EOF or error. Requests carry no body. */
static int read_head(int fd, char *buf, size_t cap, size_t *have) {
    for (;;) {
        char *end = memmem(buf, *have, "\r\n\r\n", 4);
        if (end) {
            size_t used = (size_t)(end - buf) + 4;
            memmove(buf, buf + used, *have - used);
            *have -= used;
            return 1;
        }
        if (*have == cap) return 0;
        ssize_t n = read(fd, buf + *have, cap - *have);
        if (n <= 0) return 0;
        *have += (size_t)n;
    }
}

static int write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) return 0;
        p += w;
        n -= (size_t)w;
    }
    return 1;
}

static void *serve_split(void *arg) {
    int fd = (int)(long)arg;
    char buf[8192];
    size_t have = 0;
    if (nodelay) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    /* Two writes per response, as the JDK's HttpServer does: the head, then the body. */
    while (read_head(fd, buf, sizeof buf, &have)) {
        if (!write_all(fd, HEAD, sizeof HEAD - 1) || !write_all(fd, BODY, sizeof BODY - 1)) break;
    }
    close(fd);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: tcp_server PORT split|slow NODELAY(0|1) [ADDR]\n");
        return 2;
    }
    /* A client that closes mid-response must not end the server. */
    signal(SIGPIPE, SIG_IGN);
    int slow = strcmp(argv[2], "slow") == 0;
    nodelay = atoi(argv[3]);
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)atoi(argv[1]));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (argc == 5 && inet_pton(AF_INET, argv[4], &a.sin_addr) != 1) {
        fprintf(stderr, "tcp_server: not an IPv4 address: %s\n", argv[4]);
        return 2;
    }
    if (bind(ls, (struct sockaddr *)&a, sizeof a) != 0 || listen(ls, slow ? 1 : 512) != 0) {
        perror("tcp_server: bind/listen");
        return 1;
    }
    printf("listening\n");
    fflush(stdout);
    for (;;) {
        if (slow) {
            struct timespec t = {0, 20 * 1000 * 1000};
            nanosleep(&t, NULL);
        }
        int fd = accept(ls, NULL, NULL);
        if (fd < 0) continue;
        if (slow) {
            char buf[4096];
            size_t have = 0;
            if (read_head(fd, buf, sizeof buf, &have)) {
                write_all(fd, CLOSE_HEAD, sizeof CLOSE_HEAD - 1);
                write_all(fd, BODY, sizeof BODY - 1);
            }
            close(fd);
            continue;
        }
        pthread_t t;
        if (pthread_create(&t, NULL, serve_split, (void *)(long)fd) != 0) {
            close(fd);
            continue;
        }
        pthread_detach(t);
    }
}

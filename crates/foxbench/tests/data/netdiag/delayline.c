/* A wire with a delay, for the netdiag tests: forwards every Ethernet frame between two
 * interfaces (the middle ends of two veth pairs) after DELAY_MS, in both directions. The
 * kernels at both ends see a real path with a round trip of 2 x DELAY_MS; this machine's
 * kernel has no netem.
 *
 *   delayline IF_A IF_B DELAY_MS     prints "ready" once both interfaces are bound.
 *
 * veth leaves TCP checksums to offload: a frame read from a packet socket may carry a
 * partial one, so IPv4 TCP checksums are filled in before a frame moves on.
 * Build: cc -O2 -o delayline delayline.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define QUEUE 1024
#define FRAME 65536

struct frame {
    long long due_us;
    int len;
    unsigned char buf[FRAME];
};

/* One queue per direction: frames read from side s wait there for side 1 - s. */
static struct frame queue[2][QUEUE];
static int head[2], tail[2];

static long long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

static int bind_interface(const char *name, int *index) {
    int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
    if (fd < 0) {
        perror("delayline: socket");
        exit(1);
    }
    *index = (int)if_nametoindex(name);
    struct sockaddr_ll a = {0};
    a.sll_family = AF_PACKET;
    a.sll_protocol = htons(ETH_P_ALL);
    a.sll_ifindex = *index;
    if (*index == 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        perror("delayline: bind");
        exit(1);
    }
    int one = 1;
    setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);
    return fd;
}

static unsigned short checksum(const unsigned char *p, int n, unsigned long sum) {
    for (int i = 0; i + 1 < n; i += 2) sum += (unsigned long)(p[i] << 8 | p[i + 1]);
    if (n & 1) sum += (unsigned long)p[n - 1] << 8;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    return (unsigned short)~sum;
}

/* Fills in the TCP checksum of an IPv4 TCP frame (over the pseudo-header). */
static void fill_tcp_checksum(unsigned char *f, int len) {
    if (len < 34 || f[12] != 0x08 || f[13] != 0x00) return;
    unsigned char *ip = f + 14;
    int ihl = (ip[0] & 15) * 4;
    int total = ip[2] << 8 | ip[3];
    if (ip[9] != 6 || 14 + total > len || total < ihl + 20) return;
    unsigned char *tcp = ip + ihl;
    int tcp_len = total - ihl;
    tcp[16] = tcp[17] = 0;
    unsigned long sum = 6 + (unsigned long)tcp_len;
    for (int i = 12; i < 20; i += 2) sum += (unsigned long)(ip[i] << 8 | ip[i + 1]);
    unsigned short c = checksum(tcp, tcp_len, sum);
    tcp[16] = (unsigned char)(c >> 8);
    tcp[17] = (unsigned char)(c & 255);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: delayline IF_A IF_B DELAY_MS\n");
        return 2;
    }
    int index[2];
    int fd[2] = {bind_interface(argv[1], &index[0]), bind_interface(argv[2], &index[1])};
    long long delay_us = atoll(argv[3]) * 1000;
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        long long now = now_us();
        int timeout_ms = 1000;
        for (int s = 0; s < 2; s++) {
            if (head[s] == tail[s]) continue;
            long long wait = queue[s][head[s]].due_us - now;
            int ms = wait <= 0 ? 0 : (int)((wait + 999) / 1000);
            if (ms < timeout_ms) timeout_ms = ms;
        }
        struct pollfd p[2] = {{fd[0], POLLIN, 0}, {fd[1], POLLIN, 0}};
        poll(p, 2, timeout_ms);
        for (int s = 0; s < 2; s++) {
            if (!(p[s].revents & POLLIN)) continue;
            for (;;) {
                if ((tail[s] + 1) % QUEUE == head[s]) break; /* full: the kernel queues */
                struct frame *f = &queue[s][tail[s]];
                struct sockaddr_ll from;
                socklen_t from_len = sizeof from;
                int n = (int)recvfrom(fd[s], f->buf, FRAME, MSG_DONTWAIT, (struct sockaddr *)&from,
                                      &from_len);
                if (n <= 0) break;
                if (from.sll_pkttype == PACKET_OUTGOING) continue;
                f->len = n;
                f->due_us = now_us() + delay_us;
                tail[s] = (tail[s] + 1) % QUEUE;
            }
        }
        now = now_us();
        for (int s = 0; s < 2; s++) {
            while (head[s] != tail[s] && queue[s][head[s]].due_us <= now) {
                struct frame *f = &queue[s][head[s]];
                struct sockaddr_ll to = {0};
                to.sll_family = AF_PACKET;
                to.sll_ifindex = index[1 - s];
                to.sll_halen = 6;
                memcpy(to.sll_addr, f->buf, 6);
                fill_tcp_checksum(f->buf, f->len);
                sendto(fd[1 - s], f->buf, (size_t)f->len, 0, (struct sockaddr *)&to, sizeof to);
                head[s] = (head[s] + 1) % QUEUE;
            }
        }
    }
}

/*
 * The kernel's best case for the UDP echo rate benchmark (UdpRateBenchmark): one thread on a blocking UDP socket
 * that takes up to BATCH datagrams per system call (recvmmsg, returning as soon as one is there) and sends them all
 * back to their senders with one sendmmsg. A Java DatagramChannel loop spends two system calls on every datagram;
 * this spends two on every batch, so the kernel's side is measured by its stack's work rather than by the calls.
 *
 *   udp_echo_mmsg ADDRESS PORT
 *
 * Prints "echoing" once bound; runs until killed. Exits 2 with one line on a bad argument, 1 when a call fails
 * (a datagram whose echo cannot go, unreachable or out of buffers, is skipped).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define BATCH 64
#define DATAGRAM_MAX 2048

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: udp_echo_mmsg ADDRESS PORT\n");
        return 2;
    }
    struct sockaddr_in bind_to = {.sin_family = AF_INET};
    char *end;
    long port = strtol(argv[2], &end, 10);
    if (inet_pton(AF_INET, argv[1], &bind_to.sin_addr) != 1 || *end != '\0' || port < 1 || port > 65535) {
        fprintf(stderr, "udp_echo_mmsg: want an IPv4 address and a port 1..65535, got '%s' '%s'\n", argv[1], argv[2]);
        return 2;
    }
    bind_to.sin_port = htons((unsigned short) port);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *) &bind_to, sizeof bind_to) != 0) {
        perror("udp_echo_mmsg: socket/bind");
        return 1;
    }
    static char buffers[BATCH][DATAGRAM_MAX];
    static struct sockaddr_in senders[BATCH];
    static struct iovec vectors[BATCH];
    static struct mmsghdr messages[BATCH];
    printf("echoing\n");
    fflush(stdout);
    for (;;) {
        for (int i = 0; i < BATCH; i++) {
            vectors[i].iov_base = buffers[i];
            vectors[i].iov_len = DATAGRAM_MAX;
            memset(&messages[i].msg_hdr, 0, sizeof messages[i].msg_hdr);
            messages[i].msg_hdr.msg_name = &senders[i];
            messages[i].msg_hdr.msg_namelen = sizeof senders[i];
            messages[i].msg_hdr.msg_iov = &vectors[i];
            messages[i].msg_hdr.msg_iovlen = 1;
        }
        int received = recvmmsg(fd, messages, BATCH, MSG_WAITFORONE, NULL);
        if (received < 0) {
            if (errno == EINTR) {
                continue;
            }
            perror("udp_echo_mmsg: recvmmsg");
            return 1;
        }
        for (int i = 0; i < received; i++) {
            vectors[i].iov_len = messages[i].msg_len; /* send back what came, to whom it came from */
        }
        for (int sent = 0; sent < received;) {
            int n = sendmmsg(fd, messages + sent, (unsigned int) (received - sent), 0);
            if (n < 0) {
                if (errno == EINTR) {
                    continue;
                }
                if (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH || errno == ENOBUFS) {
                    sent++; /* this datagram's echo is lost, as a network may lose it; the rest go on */
                    continue;
                }
                perror("udp_echo_mmsg: sendmmsg");
                return 1;
            }
            sent += n;
        }
    }
}

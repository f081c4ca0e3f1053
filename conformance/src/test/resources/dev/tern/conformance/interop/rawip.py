#!/usr/bin/env python3
"""Raw IPv4 for the conformance tests, run by them inside a network namespace they made.

usage: rawip.py WAIT_SECONDS EXPECTED HEX_DATAGRAM...

Sends each datagram (IPv4 header included) from an IPPROTO_RAW socket: the kernel routes it, resolves the next
hop with ARP, fills in the header checksum and adds the Ethernet header. Then prints, one hex line each, the ICMP
datagrams (IPv4 header included) this host receives, until EXPECTED have come or WAIT_SECONDS have passed.
Exits 0 when EXPECTED came, 1 when fewer did.
"""
import select
import socket
import sys
import time


def main(argv):
    wait = float(argv[1])
    expected = int(argv[2])
    datagrams = [bytes.fromhex(text) for text in argv[3:]]
    icmp = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for datagram in datagrams:
        raw.sendto(datagram, (socket.inet_ntoa(datagram[16:20]), 0))
    deadline = time.monotonic() + wait
    received = 0
    while received < expected:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([icmp], [], [], left)
        if not ready:
            break
        print(icmp.recv(65535).hex(), flush=True)
        received += 1
    return 0 if received >= expected else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))

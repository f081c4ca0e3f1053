#!/usr/bin/env python3
"""The kernel's side of the UDP, multicast and TCP interop tests, run by them inside a network namespace they made.

Standard library only. Every subcommand is bounded in time (its TIMEOUT, in seconds) and, where it moves data, in
bytes; it talks only to the addresses it is given (the tests give 198.18.0.0/15 and 2001:db8::/32 addresses only). Results go to
stdout, one line each, for the test to parse; "ready" means the socket is bound (and joined) and listening.

  udp-echo PORT TIMEOUT [BIND]              echo every datagram back to its sender until TIMEOUT (BIND "::": IPv6)
  udp-client HOST PORT TIMEOUT SIZE...      connected socket (IPv6 when HOST has a colon): send one datagram of
                                            each SIZE, wait for its echo;
                                            prints "SIZE ok|mismatch|timeout|refused"
  udp-recv PORT COUNT TIMEOUT [GROUP [SOURCE...]]
                                            receive up to COUNT datagrams (joining GROUP on 198.18.0.1, for
                                            SOURCEs only if given); prints "from ADDR PORT LENGTH HEXDATA"
  udp-send FROM HOST PORT COUNT INTERVAL TEXT
                                            send COUNT datagrams "TEXT-N" from address FROM (multicast leaves
                                            through FROM's interface, TTL 1)
  tcp-sink PORT TIMEOUT REPLY_BYTES [BIND]  accept one connection (BIND "::": over IPv6), read to its end:
                                            "received N SHA256"; then
                                            send REPLY_BYTES and shut down output: "sent N SHA256"; read to the end
  tcp-source HOST PORT BYTES TIMEOUT        connect, send BYTES, shut down output: "sent N SHA256"; meanwhile read
                                            to the end: "received N SHA256"
  tcp-connect HOST PORT TIMEOUT             "connected", or "error ENAME"
  tcp-echo-clients HOST PORT COUNT BYTES TIMEOUT
                                            COUNT connections at once to an echo server, each sending BYTES and
                                            reading them back: "client LOCALPORT ok|mismatch|error ENAME" each, then
                                            "clients COUNT ok N"
  tcp-half-close HOST PORT HOLD             connect, send 10 bytes, shut down output, then read nothing for HOLD s
  tcp-hold-clients HOST PORT COUNT RATE HOLD TIMEOUT
                                            COUNT connections to an echo server, RATE a second, each sending a line
                                            and reading it back, all kept open: "held N of COUNT" once all were
                                            tried, then HOLD s later they close
Failures of a TCP subcommand print "error ENAME" (ECONNREFUSED, ECONNRESET, ETIMEDOUT, ...) and exit 3.
"""
import errno
import hashlib
import os
import select
import signal
import socket
import struct
import sys
import threading
import time

CHUNK = 1 << 20
PATTERN = None


def pattern_chunk(index, length):
    """Bytes for chunk `index` of a TCP stream: slices of an 8 MiB random block at varying offsets (cheap, aperiodic)."""
    global PATTERN
    if PATTERN is None:
        PATTERN = memoryview(os.urandom(8 << 20))
    offset = (index * 1_000_003) % ((8 << 20) - CHUNK)
    return PATTERN[offset:offset + length]


def datagram(size, seed):
    return bytes((i * 7 + seed) & 0xFF for i in range(size))


def on_sigterm(signum, frame):
    raise SystemExit(0)


def say(*words):
    print(*words, flush=True)


def error_name(e):
    if isinstance(e, OSError) and e.errno:
        return errno.errorcode.get(e.errno, str(e.errno))
    return "ETIMEDOUT" if isinstance(e, TimeoutError) else type(e).__name__


def family(address):
    return socket.AF_INET6 if ":" in address else socket.AF_INET


def udp_echo(port, timeout, bind="0.0.0.0"):
    sock = socket.socket(family(bind), socket.SOCK_DGRAM)
    sock.bind((bind, port))
    say("ready")
    deadline = time.monotonic() + timeout
    echoed = 0
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([sock], [], [], left)
            if not ready:
                break
            data, source = sock.recvfrom(65535)
            sock.sendto(data, source)
            echoed += 1
    finally:
        say("echoed", echoed)


def udp_client(host, port, timeout, sizes):
    sock = socket.socket(family(host), socket.SOCK_DGRAM)
    sock.connect((host, port))
    for n, size in enumerate(sizes):
        payload = datagram(size, n)
        try:
            sock.send(payload)
            ready, _, _ = select.select([sock], [], [], timeout)
            if not ready:
                say(size, "timeout")
                continue
            echo = sock.recv(65535)
            say(size, "ok" if echo == payload else "mismatch")
        except ConnectionRefusedError:
            say(size, "refused")


def udp_recv(port, count, timeout, group=None, sources=()):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((group or "0.0.0.0", port))
    local = socket.inet_aton("198.18.0.1")
    if group and sources:
        for source in sources:
            # struct ip_mreq_source: imr_multiaddr, imr_interface, imr_sourceaddr
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_SOURCE_MEMBERSHIP,
                            socket.inet_aton(group) + local + socket.inet_aton(source))
    elif group:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, socket.inet_aton(group) + local)
    say("ready")
    deadline = time.monotonic() + timeout
    received = 0
    while received < count:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ready, _, _ = select.select([sock], [], [], left)
        if not ready:
            break
        data, source = sock.recvfrom(65535)
        say("from", source[0], source[1], len(data), data.hex())
        received += 1
    say("done", received)


def udp_send(source, host, port, count, interval, text):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind((source, 0))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(source))
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 1)
    for n in range(count):
        if n:
            time.sleep(interval)
        sock.sendto(("%s-%d" % (text, n)).encode(), (host, port))
    say("sent", count)


def read_to_end(sock, deadline):
    digest = hashlib.sha256()
    buffer = bytearray(CHUNK)
    view = memoryview(buffer)
    total = 0
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(errno.ETIMEDOUT, "deadline")
        sock.settimeout(left)
        n = sock.recv_into(buffer)
        if n == 0:
            return total, digest.hexdigest()
        digest.update(view[:n])
        total += n


def send_bytes(sock, length, deadline):
    digest = hashlib.sha256()
    sent = 0
    index = 0
    while sent < length:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(errno.ETIMEDOUT, "deadline")
        sock.settimeout(left)
        chunk = pattern_chunk(index, min(CHUNK, length - sent))
        sock.sendall(chunk)
        digest.update(chunk)
        sent += len(chunk)
        index += 1
    return sent, digest.hexdigest()


def tcp_sink(port, timeout, reply, bind="0.0.0.0"):
    deadline = time.monotonic() + timeout
    listener = socket.socket(family(bind), socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((bind, port))
    listener.listen(1)
    say("ready")
    listener.settimeout(timeout)
    sock, _ = listener.accept()
    listener.close()
    say("received", *read_to_end(sock, deadline))
    if reply:
        say("sent", *send_bytes(sock, reply, deadline))
    sock.shutdown(socket.SHUT_WR)
    read_to_end(sock, deadline)
    sock.close()


def tcp_source(host, port, length, timeout):
    """Sends and reads at once (a thread reads), so an echo server never blocks on a full receive buffer."""
    deadline = time.monotonic() + timeout
    sock = socket.create_connection((host, port), timeout=timeout)
    outcome = {}

    def reader():
        try:
            outcome["received"] = read_to_end(sock, deadline)
        except (OSError, TimeoutError) as e:
            outcome["error"] = e

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    sent = send_bytes(sock, length, deadline)
    say("sent", *sent)
    sock.shutdown(socket.SHUT_WR)
    thread.join(max(0.0, deadline - time.monotonic()))
    if "error" in outcome:
        raise outcome["error"]
    if "received" not in outcome:
        raise TimeoutError(errno.ETIMEDOUT, "deadline")
    say("received", *outcome["received"])
    sock.close()


def tcp_connect(host, port, timeout):
    sock = socket.create_connection((host, port), timeout=timeout)
    say("connected")
    sock.close()


def tcp_echo_clients(host, port, count, length, timeout):
    """COUNT connections opened together (each its own thread), so that they are in flight on the server at once."""
    deadline = time.monotonic() + timeout
    results = [None] * count

    def client(index):
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
            local_port = sock.getsockname()[1]
            outcome = {}

            def reader():
                try:
                    outcome["received"] = read_to_end(sock, deadline)
                except (OSError, TimeoutError) as e:
                    outcome["error"] = e

            thread = threading.Thread(target=reader, daemon=True)
            thread.start()
            sent = send_bytes(sock, length, deadline)
            sock.shutdown(socket.SHUT_WR)
            thread.join(max(0.0, deadline - time.monotonic()))
            sock.close()
            if "error" in outcome:
                results[index] = "client %d error %s" % (local_port, error_name(outcome["error"]))
            elif outcome.get("received") == sent:
                results[index] = "client %d ok" % local_port
            else:
                results[index] = "client %d mismatch" % local_port
        except (OSError, TimeoutError) as e:
            results[index] = "client ? error %s" % error_name(e)

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    ok = 0
    for result in results:
        say(result if result is not None else "client ? error ETIMEDOUT")
        ok += 1 if result is not None and result.endswith(" ok") else 0
    say("clients", count, "ok", ok)


def tcp_half_close(host, port, hold):
    sock = socket.create_connection((host, port), timeout=hold)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(b"0123456789")
    sock.shutdown(socket.SHUT_WR)
    say("half-closed")
    time.sleep(hold)
    sock.close()


def tcp_hold_clients(host, port, count, rate, hold, timeout):
    """COUNT persistent connections opened RATE a second, each echoing one line; held open together for HOLD s."""
    deadline = time.monotonic() + timeout
    start = time.monotonic()
    socks = []
    ok = 0
    for i in range(count):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        line = b"hold %d\n" % i
        try:
            sock = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
            socks.append(sock)
            sock.sendall(line)
            got = b""
            while len(got) < len(line):
                part = sock.recv(len(line) - len(got))
                if not part:
                    break
                got += part
            ok += 1 if got == line else 0
        except (OSError, TimeoutError) as e:
            say("client %d error %s" % (i, error_name(e)))
    say("held %d of %d" % (ok, count))
    time.sleep(hold)
    for sock in socks:
        sock.close()


def main(argv):
    signal.signal(signal.SIGTERM, on_sigterm)
    command, args = argv[1], argv[2:]
    try:
        if command == "udp-echo":
            udp_echo(int(args[0]), float(args[1]), *args[2:3])
        elif command == "udp-client":
            udp_client(args[0], int(args[1]), float(args[2]), [int(s) for s in args[3:]])
        elif command == "udp-recv":
            udp_recv(int(args[0]), int(args[1]), float(args[2]), args[3] if len(args) > 3 else None, args[4:])
        elif command == "udp-send":
            udp_send(args[0], args[1], int(args[2]), int(args[3]), float(args[4]), args[5])
        elif command == "tcp-sink":
            tcp_sink(int(args[0]), float(args[1]), int(args[2]), *args[3:4])
        elif command == "tcp-source":
            tcp_source(args[0], int(args[1]), int(args[2]), float(args[3]))
        elif command == "tcp-half-close":
            tcp_half_close(args[0], int(args[1]), float(args[2]))
        elif command == "tcp-echo-clients":
            tcp_echo_clients(args[0], int(args[1]), int(args[2]), int(args[3]), float(args[4]))
        elif command == "tcp-hold-clients":
            tcp_hold_clients(args[0], int(args[1]), int(args[2]), float(args[3]), float(args[4]), float(args[5]))
        elif command == "tcp-connect":
            tcp_connect(args[0], int(args[1]), float(args[2]))
        else:
            print("unknown subcommand " + command, file=sys.stderr)
            return 2
    except (OSError, TimeoutError) as e:
        say("error", error_name(e))
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

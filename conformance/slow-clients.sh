#!/usr/bin/env bash
# Slow clients against `tern serve --http`: SLOW kernel connections each trickle a request head, a byte every 5 s (a
# slow loris: each byte well inside the keep-alive wait), while a normal client fetches a page on a new connection
# every 200 ms. Tern bounds the whole request head (60 s, as nginx's client_header_timeout): each slow connection
# gets a 408 and a FIN within 65 s of its first byte, and the normal client is to be served throughout, each
# response in under 1 s. Over a veth pair between two network namespaces this script makes and removes
# (198.18.0.0/24 only).
#
#   conformance/slow-clients.sh [--slow 200] [--out DIR]
#
# Prints and writes to DIR/slow-clients.txt (default /tmp/tern-slow-clients-DATE-TIME, with `tern stat` at the end in
# DIR/stat.txt): the slow connections opened, how many were closed within 65 s of their first byte and the latest
# close, how many of those closes came with a 408; the normal client's requests, failures, and its slowest and 99th
# percentile response times. Exit 1 when a slow connection outlived 65 s, a normal request failed or took 1 s or more.
#
# Needs root, iproute2, /usr/bin/python3, and the tern command (TERN, default ./tern, which builds itself when needed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TERN="${TERN:-$ROOT/tern}"
SLOW=200
OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --slow) SLOW="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    *) echo "slow-clients: unknown option $1" >&2; exit 2 ;;
  esac
done
die() { echo "slow-clients: $*" >&2; exit 1; }
[[ "$SLOW" =~ ^[0-9]+$ && "$SLOW" -ge 1 && "$SLOW" -le 20000 ]] \
  || { echo "slow-clients: --slow must be 1 to 20000 connections, got $SLOW" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, AF_PACKET)"
command -v ip >/dev/null || die "needs ip (iproute2)"
[[ -x /usr/bin/python3 ]] || die "needs /usr/bin/python3"
"$TERN" help >/dev/null || die "the tern launcher failed to build the command line"

SERVE_PID=""
CLIENT_PID=""
stop_processes() {
  for pid in "$CLIENT_PID" "$SERVE_PID"; do
    if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  done
}
# shellcheck source=veth-pair.sh
source "$ROOT/conformance/veth-pair.sh"
veth_pair slow slow-clients
OUT="${OUT:-/tmp/tern-slow-clients-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT" "$WORK/www" "$WORK/counters"
head -c 4096 /dev/urandom > "$WORK/www/page.bin"

start_tern_serve --http 8080 "$WORK/www" || die "tern serve did not start"

cat > "$WORK/clients.py" <<'PY'
import selectors, socket, sys, threading, time

host, slow_count = sys.argv[1], int(sys.argv[2])
HEAD = b"GET /page.bin HTTP/1.1\r\nHost: tern\r\n" + b"X-Slow: " + b"a" * 200
started = time.monotonic()
sel = selectors.DefaultSelector()
slow = {}          # socket -> [first byte time, bytes sent, closed at, got a 408]
normal = []        # response times of the normal client
normal_failures = []
stop = threading.Event()

def normal_client():
    while not stop.is_set():
        t = time.monotonic()
        try:
            with socket.create_connection((host, 8080), timeout=5) as s:
                s.sendall(b"GET /page.bin HTTP/1.1\r\nHost: tern\r\nConnection: close\r\n\r\n")
                data = bytearray()
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    data += chunk
            if not data.startswith(b"HTTP/1.1 200") or len(data) < 4096:
                normal_failures.append("%.1f s: %d bytes: %r" % (t - started, len(data), bytes(data[:40])))
            else:
                normal.append(time.monotonic() - t)
        except OSError as e:
            normal_failures.append("%.1f s: %s" % (t - started, e))
        time.sleep(max(0.0, 0.2 - (time.monotonic() - t)))

threading.Thread(target=normal_client, daemon=True).start()

# Open the slow connections, a few hundred at a time; each sends its first byte once connected.
pending = list(range(slow_count))
while pending:
    batch, pending = pending[:200], pending[200:]
    for _ in batch:
        s = socket.socket()
        s.setblocking(False)
        s.connect_ex((host, 8080))
        sel.register(s, selectors.EVENT_WRITE)
        slow[s] = [None, 0, None, False]
    time.sleep(0.05)
    events = sel.select(timeout=0)
    for key, mask in events:
        s = key.fileobj
        if slow[s][0] is None and mask & selectors.EVENT_WRITE:
            try:
                s.send(HEAD[:1])
                slow[s][0], slow[s][1] = time.monotonic(), 1
                sel.modify(s, selectors.EVENT_READ)
            except OSError:
                pass

deadline = time.monotonic() + 120
next_trickle = time.monotonic()
while time.monotonic() < deadline and any(v[2] is None for v in slow.values()):
    for key, mask in sel.select(timeout=0.1):
        s = key.fileobj
        state = slow[s]
        if state[0] is None:
            try:
                s.send(HEAD[:1])
                state[0], state[1] = time.monotonic(), 1
                sel.modify(s, selectors.EVENT_READ)
            except OSError:
                pass
            continue
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if data.startswith(b"HTTP/1.1 408"):
            state[3] = True
        if not data or state[3]:
            if not data:
                state[2] = time.monotonic()
                sel.unregister(s)
                s.close()
    now = time.monotonic()
    if now >= next_trickle:
        # Each connection sends its next byte 5 s after the one before, on its own phase (all at once, 10,000
        # connections make bursts that overflow the receive ring: MEASUREMENTS.md has such a run).
        for s, state in slow.items():
            if (state[0] is not None and state[2] is None and state[1] < len(HEAD)
                    and now >= state[0] + 5 * state[1]):
                try:
                    s.send(HEAD[state[1]:state[1] + 1])
                    state[1] += 1
                except OSError:
                    pass
        next_trickle = now + 0.1
stop.set()
time.sleep(0.3)

opened = sum(1 for v in slow.values() if v[0] is not None)
closed = [v[2] - v[0] for v in slow.values() if v[0] is not None and v[2] is not None]
within = sum(1 for c in closed if c <= 65)
with408 = sum(1 for v in slow.values() if v[3])
normal.sort()
p99 = normal[int(0.99 * (len(normal) - 1))] if normal else 0
print("slow opened=%d closed_within_65s=%d latest_close=%.1f s got_408=%d never_connected=%d"
      % (opened, within, max(closed) if closed else -1, with408, slow_count - opened))
print("normal requests=%d failures=%d slowest=%.3f s p99=%.3f s" % (len(normal), len(normal_failures),
      normal[-1] if normal else -1, p99))
for line in normal_failures[:10]:
    print("failure %s" % line)
PY

echo "slow-clients: $SLOW slow connections against tern serve (PID $SERVE_PID); work in $WORK" >&2
ip netns exec "$PEER_NS" bash -c "ulimit -n $(( SLOW + 1024 )); exec /usr/bin/python3 '$WORK/clients.py' 198.18.0.2 $SLOW" \
  > "$WORK/clients.out" 2>&1 &
CLIENT_PID=$!
wait "$CLIENT_PID" || true
CLIENT_PID=""
kill -0 "$SERVE_PID" 2>/dev/null || die "tern serve ended: $(cat "$WORK/serve.out")"
TERN_COUNTERS_DIR="$WORK/counters" "$TERN" stat > "$OUT/stat.txt" 2>&1 || true
cp "$WORK/clients.out" "$OUT/clients.txt"
tee "$OUT/slow-clients.txt" < "$WORK/clients.out"
slow_line=$(grep '^slow' "$WORK/clients.out" || true)
normal_line=$(grep '^normal' "$WORK/clients.out" || true)
[[ -n "$slow_line" && -n "$normal_line" ]] || die "the clients printed no result: $(cat "$WORK/clients.out")"
opened=$(sed -n 's/.*opened=\([0-9]*\).*/\1/p' <<< "$slow_line")
within=$(sed -n 's/.*closed_within_65s=\([0-9]*\).*/\1/p' <<< "$slow_line")
failures=$(sed -n 's/.*failures=\([0-9]*\).*/\1/p' <<< "$normal_line")
slowest=$(sed -n 's/.*slowest=\([0-9.-]*\) s.*/\1/p' <<< "$normal_line")
[[ "$opened" == "$SLOW" && "$within" == "$SLOW" && "$failures" == 0 ]] || exit 1
awk -v s="$slowest" 'BEGIN { exit !(s >= 0 && s < 1) }' || exit 1

#!/usr/bin/env bash
# A soak of `tern serve` against the kernel's clients: for MINUTES, echo and HTTP clients in the peer namespace keep
# `tern serve --echo 7 --http 8080 DIR` busy over AF_PACKET, through random loss of LOSS percent each way (nftables
# numgen on the ingress hooks of a bridge between the two ends, so a packet is lost as on a wire). Every echo and
# every response is checked byte for byte. Every 30 s it samples the resident memory of the `tern serve` process.
#
#   conformance/soak-serve.sh [--minutes 30] [--loss 1] [--out DIR]
#
# The clients (Python, the kernel's TCP): four echo connections, each sending 1 to 32,768 random bytes and reading
# them back every 10 ms, and starting a new connection every 100 round trips; two HTTP clients, each fetching a
# 64 KiB file on a new connection every 20 ms. A socket waits at most 30 s. The result, printed and written to
# DIR/soak.txt (default /tmp/tern-soak-DATE-TIME; the memory samples in DIR/rss.tsv and `tern stat` at the end in DIR/stat.txt): the clients'
# counts, errors, the packets the wire dropped, and resident memory from the fifth minute on against its value
# then. Exit 1 on any client error, or when a sample after the fifth minute leaves +-10 % of the fifth minute's.
#
# Needs root, iproute2, nftables, /usr/bin/python3, and the tern command (TERN, default ./tern, which builds itself
# when needed). Touches no address outside 198.18.0.0/24; the namespaces, the processes it started and its work
# directory are removed at the end, on failure too.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TERN="${TERN:-$ROOT/tern}"
MINUTES=30
LOSS=1
OUT=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) MINUTES="$2"; shift 2 ;;
    --loss) LOSS="$2"; shift 2 ;;
    --out) OUT="$2"; shift 2 ;;
    *) echo "soak-serve: unknown option $1" >&2; exit 2 ;;
  esac
done
die() { echo "soak-serve: $*" >&2; exit 1; }
[[ "$MINUTES" =~ ^[0-9]+$ && "$MINUTES" -ge 1 && "$MINUTES" -le 1440 ]] \
  || { echo "soak-serve: --minutes must be 1 to 1440, got $MINUTES" >&2; exit 2; }
[[ "$LOSS" =~ ^[0-9]+(\.[0-9]{1,2})?$ ]] && awk -v l="$LOSS" 'BEGIN { exit !(l < 100) }' \
  || { echo "soak-serve: --loss must be a percentage below 100 with at most two decimals, got $LOSS" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, AF_PACKET)"
for tool in ip nft; do command -v "$tool" >/dev/null || die "needs $tool"; done
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
veth_wire_pair soak soak
OUT="${OUT:-/tmp/tern-soak-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$OUT" "$WORK/www" "$WORK/counters"
head -c 65536 /dev/urandom > "$WORK/www/page.bin"

# Loss both ways at the bridge's ports: numgen's 0..9999 below LOSS x 100.
DROP_BELOW=$(awk -v l="$LOSS" 'BEGIN { printf "%d", l * 100 + 0.5 }')
ip netns exec "$WIRE_NS" nft -f - <<EOF
table netdev soak {
  chain from_peer { type filter hook ingress device wire-p priority -500; policy accept; counter; numgen random mod 10000 < $DROP_BELOW counter drop; }
  chain from_tern { type filter hook ingress device wire-t priority -500; policy accept; counter; numgen random mod 10000 < $DROP_BELOW counter drop; }
}
EOF

start_tern_serve --echo 7 --http 8080 "$WORK/www" || die "tern serve did not start"
SERVE_JAVA=$(pgrep -P "$SERVE_PID" java || true)
SERVE_JAVA="${SERVE_JAVA:-$SERVE_PID}"

cat > "$WORK/clients.py" <<'PY'
import hashlib, http.client, os, random, socket, sys, threading, time

host, seconds = sys.argv[1], float(sys.argv[2])
page = open(sys.argv[3], "rb").read()
deadline = time.monotonic() + seconds
lock = threading.Lock()
counts = {"echoes": 0, "echo_connections": 0, "responses": 0, "errors": 0}
first_errors = []

def count(name, n=1):
    with lock:
        counts[name] += n

def error(what):
    with lock:
        counts["errors"] += 1
        if len(first_errors) < 20:
            first_errors.append("%.1f s: %s" % (seconds - (deadline - time.monotonic()), what))

def recv_exactly(s, n):
    data = bytearray()
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise OSError("end of stream after %d of %d bytes" % (len(data), n))
        data += chunk
    return bytes(data)

def echo(seed):
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, 7), timeout=30) as s:
                count("echo_connections")
                for _ in range(100):
                    if time.monotonic() >= deadline:
                        break
                    message = rng.randbytes(rng.randint(1, 32768))
                    s.sendall(message)
                    if recv_exactly(s, len(message)) != message:
                        error("echo: bytes differ")
                    else:
                        count("echoes")
                    time.sleep(0.01)
        except OSError as e:
            error("echo: %s" % e)
            time.sleep(0.1)

def fetch():
    expected = hashlib.sha256(page).hexdigest()
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection(host, 8080, timeout=30)
            c.request("GET", "/page.bin", headers={"Connection": "close"})
            r = c.getresponse()
            body = r.read()
            c.close()
            if r.status != 200 or hashlib.sha256(body).hexdigest() != expected:
                error("http: status %d, %d bytes" % (r.status, len(body)))
            else:
                count("responses")
        except (OSError, http.client.HTTPException) as e:
            error("http: %s" % e)
            time.sleep(0.1)
        time.sleep(0.02)

threads = [threading.Thread(target=echo, args=(i,)) for i in range(4)] + [threading.Thread(target=fetch) for _ in range(2)]
for t in threads:
    t.start()
next_report = time.monotonic() + 60
while any(t.is_alive() for t in threads):
    time.sleep(1)
    if time.monotonic() >= next_report:
        with lock:
            print("progress %s" % " ".join("%s=%d" % kv for kv in sorted(counts.items())), flush=True)
        next_report += 60
for t in threads:
    t.join()
print("clients %s" % " ".join("%s=%d" % kv for kv in sorted(counts.items())), flush=True)
for line in first_errors:
    print("error %s" % line, flush=True)
PY

echo "soak-serve: $MINUTES min at $LOSS % loss each way; tern serve is PID $SERVE_JAVA; work in $WORK" >&2
ip netns exec "$PEER_NS" /usr/bin/python3 "$WORK/clients.py" 198.18.0.2 $(( MINUTES * 60 )) "$WORK/www/page.bin" \
  > "$WORK/clients.out" 2>&1 &
CLIENT_PID=$!
printf 'seconds\trss_kib\n' > "$OUT/rss.tsv"
START=$(date +%s)
while kill -0 "$CLIENT_PID" 2>/dev/null; do
  elapsed=$(( $(date +%s) - START ))
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$SERVE_JAVA/status" 2>/dev/null || echo 0)
  printf '%d\t%s\n' "$elapsed" "$rss" >> "$OUT/rss.tsv"
  tail -n 1 "$WORK/clients.out" 2>/dev/null | grep '^progress' >&2 || true
  for _ in $(seq 1 30); do kill -0 "$CLIENT_PID" 2>/dev/null || break; sleep 1; done
done
wait "$CLIENT_PID" || true
CLIENT_PID=""
kill -0 "$SERVE_PID" 2>/dev/null || die "tern serve ended during the soak: $(cat "$WORK/serve.out")"
TERN_COUNTERS_DIR="$WORK/counters" "$TERN" stat > "$OUT/stat.txt" 2>&1 || true
ip netns exec "$WIRE_NS" nft list table netdev soak > "$OUT/nft.txt"
cp "$WORK/clients.out" "$OUT/clients.txt"

clients=$(grep '^clients' "$WORK/clients.out" || echo "clients none")
errors=$(sed -n 's/.*errors=\([0-9]*\).*/\1/p' <<< "$clients")
dropped=$(awk '/drop/ { for (i = 1; i <= NF; i++) if ($i == "packets") s += $(i + 1) } END { print s + 0 }' "$OUT/nft.txt")
# Resident memory from the fifth minute on (the JIT and the heap's first growth come before), against its value then.
memory=$(awk -F'\t' 'NR > 1 && $1 >= 300 { if (base == "") base = $2; if (min == "" || $2 < min) min = $2; if ($2 > max) max = $2; n++ }
  END { if (n == 0) print "fewer than 5 minutes of samples"; else printf "%d KiB at 5 min, %d to %d KiB after (%+.1f %% to %+.1f %%)", base, min, max, (min - base) * 100 / base, (max - base) * 100 / base }' "$OUT/rss.tsv")
flat=$(awk -F'\t' 'NR > 1 && $1 >= 300 { if (base == "") base = $2; if ($2 > base * 1.1 || $2 < base * 0.9) bad = 1 } END { print (base == "" || bad) ? "no" : "yes" }' "$OUT/rss.tsv")
{
  echo "soak-serve: $MINUTES min, $LOSS % loss each way, $dropped packets dropped by the wire"
  echo "soak-serve: $clients"
  grep '^error' "$WORK/clients.out" || true
  echo "soak-serve: resident memory $memory; flat within 10 %: $flat"
} | tee "$OUT/soak.txt"
[[ "$errors" == 0 ]] || exit 1
[[ "$flat" == yes || "$MINUTES" -lt 6 ]] || exit 1

#!/usr/bin/env bash
# Connection scale where users meet it (100,000 connections on one host): `tern serve --http` on AF_PACKET holding
# CONNECTIONS persistent connections from the kernel's clients over a veth pair between two network namespaces this
# script makes and removes (addresses in 198.18.0.0/24 only). Python clients in the peer's namespace (a process per 19,000 or so connections,
# each from its own source address: a process holds no more sockets than its file limit) open them BATCH at a time,
# send one GET of a 1 KiB file on each and read the whole response, then keep every connection open and idle (the
# server's keep-alive timeout raised to a day, so that none is closed while the rest open).
# Prints what `tern serve` holds for them once the idle connections gave their rings back (after a second between
# requests, HttpFileService): the stack's counters (connections established, buffer bytes attached and reserved),
# the Java heap in use after a full GC (jcmd) and the resident memory (VmRSS), before the clients and after.
# --server netty runs Netty 4.2's echo server (nio's NettyEchoServer example, its event loop on Tern's NIO
# provider) under `tern exec` instead: each client sends one line and reads it back, and the provider gives an idle
# connection's rings back after a second without a read or write (TernSelectorProvider.releaseIdleBuffersAfter).
# --server echo runs `tern serve --echo` (RFC 862) with the same clients as netty: an echo connection on which nothing
# arrived for a second gives its rings back (TcpService.releasesIdleBuffers).
#
#   conformance/bench-connections.sh [--connections N] [--batch N] [--buffer-size B] [--server serve|echo|netty]
#       [--release-idle MS]   (netty: tern exec's --release-idle, 1000 by default; 0 keeps every ring)
#       [--shards N]          (the server's stack shards, 1 by default; --max-connections is per shard)
#       [--memory-limit BYTES] (the server's socket buffer budget per shard; the stack's 1 GiB by default)
#
# Needs root, iproute2, /usr/bin/python3, curl, and the tern command (TERN, default ./tern); --server netty also
# Maven (it compiles nio's test classes if they are missing, and asks Maven for Netty's class path).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TERN="${TERN:-$ROOT/tern}"
CONNECTIONS=100000
BATCH=200
BUFFER=4096
SERVER=serve
RELEASE_IDLE=1000
SHARDS=1
MEMORY_LIMIT=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --server) SERVER="$2"; shift 2 ;;
    --release-idle) RELEASE_IDLE="$2"; shift 2 ;;
    --shards) SHARDS="$2"; shift 2 ;;
    --memory-limit) MEMORY_LIMIT=(--memory-limit "$2"); shift 2 ;;
    --connections) CONNECTIONS="$2"; shift 2 ;;
    --batch) BATCH="$2"; shift 2 ;;
    --buffer-size) BUFFER="$2"; shift 2 ;;
    *) echo "bench-connections: unknown option $1" >&2; exit 2 ;;
  esac
done
die() { echo "bench-connections: $*" >&2; exit 1; }
[[ "$CONNECTIONS" =~ ^[0-9]+$ && "$CONNECTIONS" -ge 1 && "$CONNECTIONS" -le 200000 ]] \
  || { echo "bench-connections: --connections must be 1..200000, got $CONNECTIONS" >&2; exit 2; }
[[ "$SERVER" == serve || "$SERVER" == echo || "$SERVER" == netty ]] \
  || { echo "bench-connections: --server must be serve, echo or netty, got $SERVER" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, AF_PACKET)"
command -v /usr/bin/python3 >/dev/null || die "needs /usr/bin/python3"

SERVE_PID=""
CLIENT_PIDS=()
stop_processes() {
  for pid in "${CLIENT_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [[ -n "$SERVE_PID" ]]; then kill "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; fi
}
# shellcheck source=veth-pair.sh
source "$ROOT/conformance/veth-pair.sh"
veth_pair cxb connections
ip netns exec "$PEER_NS" sysctl -q -w net.ipv4.ip_local_port_range="10000 65000"
mkdir -p "$WORK/www" "$WORK/counters"
head -c 1024 /dev/urandom > "$WORK/www/1k.bin"

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
JCMD="$(dirname "$(readlink -f "$(command -v java)")")/jcmd"
[[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/jcmd" ]] && JCMD="$JAVA_HOME/bin/jcmd"
[[ -x /usr/lib/jvm/temurin-25-jdk-amd64/bin/jcmd ]] && JCMD=/usr/lib/jvm/temurin-25-jdk-amd64/bin/jcmd
heap_kib() { # the Java heap in use after a full GC, in KiB
  "$JCMD" "$1" GC.run >/dev/null 2>&1 || true
  "$JCMD" "$1" GC.heap_info 2>/dev/null | awk '/used/ { for (i = 1; i <= NF; i++) if ($i == "used") { v = $(i + 1); sub(/K.*/, "", v); print v; exit } }'
}

answers() { # whether the server answers one request on port 8080 from the peer's namespace
  if [[ "$SERVER" == serve ]]; then
    [[ $(ip netns exec "$PEER_NS" curl -s -o /dev/null -w '%{http_code}' --max-time 1 http://198.18.0.2:8080/1k.bin) == 200 ]]
  else
    ip netns exec "$PEER_NS" /usr/bin/python3 -c 'import socket, sys
s = socket.create_connection(("198.18.0.2", 8080), 1); s.settimeout(1); s.sendall(b"ping\n")
sys.exit(0 if s.recv(16) == b"ping\n" else 1)' 2>/dev/null
  fi
}
if [[ "$SERVER" == serve ]]; then
  TERN_COUNTERS_DIR="$WORK/counters" ip netns exec "$TERN_NS" "$TERN" serve --shards "$SHARDS" --link afpacket:tern0 \
    --ip 198.18.0.2/24 --max-connections $((CONNECTIONS + 10000)) --buffer-size "$BUFFER" "${MEMORY_LIMIT[@]}" \
    --keepalive-timeout 86400 --http 8080 "$WORK/www" > "$WORK/serve.log" 2>&1 &
  SERVE_PID=$!
  WHAT="tern serve --http"
elif [[ "$SERVER" == echo ]]; then
  TERN_COUNTERS_DIR="$WORK/counters" ip netns exec "$TERN_NS" "$TERN" serve --shards "$SHARDS" --link afpacket:tern0 \
    --ip 198.18.0.2/24 --max-connections $((CONNECTIONS + 10000)) --buffer-size "$BUFFER" "${MEMORY_LIMIT[@]}" \
    --echo 8080 > "$WORK/serve.log" 2>&1 &
  SERVE_PID=$!
  WHAT="tern serve --echo"
else
  JDK="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
  [[ -x "$JDK/bin/java" ]] || die "--server netty needs a JDK 25 (set JAVA_HOME)"
  [[ -f "$ROOT/nio/target/test-classes/dev/tern/nio/examples/NettyEchoServer.class" ]] \
    || (cd "$ROOT" && mvn -q -B -ntp -pl nio test-compile) || die "cannot compile nio's test classes"
  (cd "$ROOT" && mvn -q -B -ntp -pl nio dependency:build-classpath -Dmdep.includeScope=test \
    -Dmdep.outputFile="$WORK/netty.classpath") || die "cannot ask Maven for Netty's class path"
  TERN_COUNTERS_DIR="$WORK/counters" ip netns exec "$TERN_NS" "$TERN" exec --shards "$SHARDS" --link afpacket:tern0 \
    --ip 198.18.0.2/24 --max-connections $((CONNECTIONS + 10000)) --buffer-size "$BUFFER" "${MEMORY_LIMIT[@]}" --name netty-echo --release-idle "$RELEASE_IDLE" \
    -- "$JDK/bin/java" -Xmx2g -cp "$ROOT/nio/target/test-classes:$(cat "$WORK/netty.classpath")" \
    dev.tern.nio.examples.NettyEchoServer 8080 > "$WORK/serve.log" 2>&1 &
  SERVE_PID=$!
  WHAT="Netty's echo server under tern exec"
fi
for _ in $(seq 1 600); do
  answers && break
  kill -0 "$SERVE_PID" 2>/dev/null || { cat "$WORK/serve.log"; die "$WHAT did not start"; }
  sleep 0.1
done
answers || { cat "$WORK/serve.log"; die "$WHAT does not answer"; }
# The JVM serving: tern serve's own (the launcher's child), or the program tern exec started (its grandchild).
SERVE_JAVA=$(pgrep -n -f "dev.tern.nio.examples.NettyEchoServer 8080" || pgrep -P "$SERVE_PID" java || echo "$SERVE_PID")
sleep 3
HEAP_BEFORE=$(heap_kib "$SERVE_JAVA")
RSS_BEFORE=$(rss_kib "$SERVE_JAVA")

cat > "$WORK/clients.py" <<'PY'
import resource, selectors, socket, sys, time
import os
total, batch, sources, stop, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(","), sys.argv[4], sys.argv[5]
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
request = b"GET /1k.bin HTTP/1.1\r\nHost: tern\r\n\r\n" if mode == "http" else b"hello tern, one line to echo\n"
def answered(got):
    if mode != "http":
        return got == request
    head, sep, body = got.partition(b"\r\n\r\n")
    return sep and len(body) >= 1024 and head.startswith(b"HTTP/1.1 200")
sel = selectors.DefaultSelector()
held, done, failed = [], 0, 0
reasons = {}   # why connections failed: the error, or "no answer in 60 s"
def fail(why):
    global failed
    failed += 1
    reasons[why] = reasons.get(why, 0) + 1
start = time.time()
def finish_batch(pending):
    global done, failed
    deadline = time.time() + 60
    while pending and time.time() < deadline:
        for key, _ in sel.select(timeout=1):
            s, state = key.fileobj, key.data
            try:
                if state["phase"] == "connect":
                    error = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if error != 0:
                        raise OSError(error, "connect: " + os.strerror(error))
                    s.sendall(request)
                    state["phase"] = "read"
                    sel.modify(s, selectors.EVENT_READ, state)
                else:
                    data = s.recv(65536)
                    if not data:
                        raise OSError("closed")
                    state["got"] += data
                    if answered(state["got"]):
                        sel.unregister(s)
                        pending.discard(s)
                        held.append(s)
                        done += 1
            except OSError as e:
                sel.unregister(s)
                pending.discard(s)
                s.close()
                fail(e.strerror or str(e))
    for s in list(pending):
        phase = sel.get_key(s).data["phase"]
        sel.unregister(s)
        s.close()
        fail("no answer in 60 s (still in " + phase + ")")
for first in range(0, total, batch):
    pending = set()
    for i in range(first, min(total, first + batch)):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((sources[i % len(sources)], 0))
        s.connect_ex(("198.18.0.2", 8080))
        sel.register(s, selectors.EVENT_WRITE, {"phase": "connect", "got": b""})
        pending.add(s)
    finish_batch(pending)
if reasons:
    print("failed: " + ", ".join(f"{n} {why}" for why, n in sorted(reasons.items())), flush=True)
print(f"opened {done} answered connections, {failed} failed, in {time.time() - start:.1f} s", flush=True)
while not os.path.exists(stop):   # hold them until told
    time.sleep(0.2)
for s in held:
    s.close()
print("closed", flush=True)
PY
# A process holds at most its file limit of sockets (20,000 on the machine this was written on, and the hard limit
# cannot be raised there): the clients are split into processes of PER_PROCESS connections, each from its own
# source address (and its own ephemeral ports).
HARD_LIMIT=$(ulimit -Hn)
PER_PROCESS=$(( HARD_LIMIT - 1000 < 25000 ? HARD_LIMIT - 1000 : 25000 ))
PROCESSES=$(( (CONNECTIONS + PER_PROCESS - 1) / PER_PROCESS ))
(( PROCESSES <= 200 )) || die "needs $PROCESSES client processes at $PER_PROCESS connections each: too many"
for (( p = 0; p < PROCESSES; p++ )); do
  source_address="198.18.0.$(( 10 + p ))"
  ip -n "$PEER_NS" addr add "$source_address/24" dev peer0
  share=$(( p < PROCESSES - 1 ? PER_PROCESS : CONNECTIONS - p * PER_PROCESS ))
  ip netns exec "$PEER_NS" /usr/bin/python3 "$WORK/clients.py" "$share" "$BATCH" "$source_address" "$WORK/stop" \
    "$([[ "$SERVER" == serve ]] && echo http || echo echo)" > "$WORK/clients.$p.out" 2>&1 &
  CLIENT_PIDS+=($!)
done
for (( p = 0; p < PROCESSES; p++ )); do
  for _ in $(seq 1 1200); do
    grep -q "^opened" "$WORK/clients.$p.out" && break
    kill -0 "${CLIENT_PIDS[$p]}" 2>/dev/null || break
    sleep 1
  done
done
cat "$WORK"/clients.*.out | awk '/^opened/ { opened += $2; failed += $5 } !/^opened/ { print } END { printf "the clients opened %d answered connections, %d failed\n", opened, failed }'
sleep 4   # past the second (two for NIO's sweep) after which an idle connection gives its rings back
HEAP_AFTER=$(heap_kib "$SERVE_JAVA")
RSS_AFTER=$(rss_kib "$SERVE_JAVA")
STAT=$(TERN_COUNTERS_DIR="$WORK/counters" "$TERN" stat --all 2>/dev/null || true)
# With shards, tern stat prints each shard's counters and then their totals: keep the last section only.
STAT=$(awk '/^stack / { section = "" } { section = section $0 "\n" } END { printf "%s", section }' <<< "$STAT")
counter() { awk -v name="$1" '$1 == name { gsub(",", "", $2); print $2; exit }' <<< "$STAT"; }
ESTABLISHED=$(counter tcp.conn.established)
echo "$WHAT holding the kernel's idle persistent connections (--buffer-size $BUFFER, --shards $SHARDS$([[ "$SERVER" == netty ]] && echo ", --release-idle $RELEASE_IDLE")):"
echo "  connections established (tcp.conn.established)   $ESTABLISHED"
echo "  buffer bytes attached now (tcp.memory.attached_bytes) $(counter tcp.memory.attached_bytes)"
echo "  rings given back while idle (rings_released_idle)  $(counter tcp.memory.rings_released_idle)"
echo "  buffer bytes reserved (tcp.memory.in_use_bytes)    $(counter tcp.memory.in_use_bytes)"
echo "  resident memory of the server's JVM: ${RSS_BEFORE} KiB before, ${RSS_AFTER} KiB holding them"
echo "  Java heap in use after a full GC: ${HEAP_BEFORE:-?} KiB before, ${HEAP_AFTER:-?} KiB holding them"
awk -v b="$RSS_BEFORE" -v a="$RSS_AFTER" -v hb="${HEAP_BEFORE:-0}" -v ha="${HEAP_AFTER:-0}" -v n="$ESTABLISHED" 'BEGIN {
  if (n > 0) printf "  per connection: %.0f bytes resident, %.0f bytes of heap\n", (a - b) * 1024 / n, (ha - hb) * 1024 / n }'
if [[ "$SERVER" == netty ]]; then # what the provider's idle sweeps cost Netty's event loop (nio.idle.*)
  awk -v n="$(counter nio.idle.sweeps)" -v t="$(counter nio.idle.sweep_ns)" -v m="$(counter nio.idle.sweep_max_ns)" \
    'BEGIN { if (n > 0) printf "  idle sweeps of the selector: %d, %.2f ms each on average, %.2f ms the longest\n", n, t / n / 1e6, m / 1e6 }'
fi
echo "  the stack's other counters on the way (tern stat):"
awk '$1 ~ /^(tcp\.(memory|listen|conn|drop|syncookies)|stack\.shed|http\.|nio\.|link\.rx\.kernel_drops)/ && $2 != "0" {
  printf "    %-44s %s\n", $1, $2 }' <<< "$STAT"
touch "$WORK/stop"
wait "${CLIENT_PIDS[@]}" || true

#!/usr/bin/env bash
# Shards (several stacks serving one address): `tern serve --shards 1` against `--shards 2` over a veth pair between
# two network namespaces this script makes and removes (addresses in 198.18.0.0/24 only; offloads as the kernel sets
# them). Two loads from the kernel's side, each run against 1 and then 2 shards in the same run:
#   bulk     16 TCP flows (socat from /dev/zero, writing WRITE_SIZE bytes at a time: 128 KiB by default, iperf3's
#            block; socat's own 8 KiB makes the kernel's frames follow how far each sender falls behind, see
#            docs/MEASUREMENTS.md) into `--discard 9` for SECONDS: bytes Tern received (its counters)
#   connect  ab (apache2-utils), a new connection per request, 16 at a time, REQUESTS requests of a 1 KiB file
#            from `--http 8080`: connections per second
# Efficiency is the work per CPU-second of the whole `tern serve` process (all its threads: shards, JIT, GC; from
# /proc/PID/stat), and the 2-shard/1-shard ratio of it is the figure the shards' goal is set on (>= 0.85). Rates and the
# CPU seconds of each side are printed beside it: the senders' (socat's or ab's user and system time, from bash's
# `times` in the shell that waited for them), the whole machine's busy time (/proc/stat) and the rest. One round; the
# machine's other load shows in the spread. Under "bulk, measured round" it prints where the time went: each
# thread's CPU, the shard threads' user and system time and sleeps, frames received, segments and send calls, and the
# kernel senders' round trip and window halfway.
#
#   conformance/bench-shards.sh [--seconds N] [--requests N] [--write-size BYTES]
#
# Needs root, iproute2, socat, ab, and the tern command (TERN, default ./tern, which builds itself when needed).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TERN="${TERN:-$ROOT/tern}"
SECONDS_BULK=10
REQUESTS=20000
WRITE_SIZE=131072
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) SECONDS_BULK="$2"; shift 2 ;;
    --requests) REQUESTS="$2"; shift 2 ;;
    --write-size) WRITE_SIZE="$2"; shift 2 ;;
    *) echo "bench-shards: unknown option $1" >&2; exit 2 ;;
  esac
done
die() { echo "bench-shards: $*" >&2; exit 1; }
[[ "$WRITE_SIZE" =~ ^[0-9]+$ && "$WRITE_SIZE" -ge 1 && "$WRITE_SIZE" -le 16777216 ]] \
  || { echo "bench-shards: --write-size must be 1 to 16777216 bytes, got $WRITE_SIZE" >&2; exit 2; }
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, AF_PACKET)"
for tool in socat ab ip; do command -v "$tool" >/dev/null || die "needs $tool"; done

SERVE_PID=""
stop_processes() {
  if [[ -n "$SERVE_PID" ]]; then kill "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; fi
}
# shellcheck source=veth-pair.sh
source "$ROOT/conformance/veth-pair.sh"
veth_pair shb shards
mkdir -p "$WORK/www" "$WORK/counters"
head -c 1024 /dev/urandom > "$WORK/www/one-kib.bin"
TICKS=$(getconf CLK_TCK)

machine_busy_ticks() { # CPU time the whole machine spent busy (user, nice, system, irq, softirq; not idle, iowait, steal)
  awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat
}

machine_busy_seconds_since() { # the machine's busy time since machine_busy_ticks printed $1, in seconds
  awk -v a="$(machine_busy_ticks)" -v b="$1" -v t="$TICKS" 'BEGIN { printf "%.3f", (a - b) / t }'
}

children_seconds() { # the children's user + system time in the output of bash's `times` in file $1, in seconds
  # `times` prints the shell's own times on its first line and its waited-for children's on the second ("0m1.234s").
  awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] + 0 } printf "%.3f", t }' "$1"
}

cpu_seconds() { # utime + stime of process $1, in seconds
  awk -v t="$TICKS" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"
}

shard_thread_stats() { # the shards' threads ("main", shard 0, named java, and tern-serve-shard-K):
  # "user_ticks system_ticks voluntary_switches" (sleeps, mostly in poll(2))
  local user=0 system=0 sleeps=0 task comm
  for task in /proc/"$1"/task/*; do
    comm=$(cat "$task/comm" 2>/dev/null || true)
    if [[ "$comm" == java || "$comm" == tern-serve-shar* ]]; then
      user=$(( user + $(awk '{ print $14 }' "$task/stat" 2>/dev/null || echo 0) ))
      system=$(( system + $(awk '{ print $15 }' "$task/stat" 2>/dev/null || echo 0) ))
      sleeps=$(( sleeps + $(awk '/^voluntary_ctxt_switches/ { print $2 }' "$task/status" 2>/dev/null || echo 0) ))
    fi
  done
  echo "$user $system $sleeps"
}

shard_cpu_seconds() { # utime + stime of the shards' threads only, in seconds
  local user system sleeps
  read -r user system sleeps <<< "$(shard_thread_stats "$1")"
  awk -v n="$(( user + system ))" -v t="$TICKS" 'BEGIN { printf "%.3f", n / t }'
}

thread_ticks() { # "TID COMM TICKS" for every thread of process $1 (utime + stime)
  local task
  for task in /proc/"$1"/task/*; do
    printf '%s %s %s\n' "${task##*/}" "$(tr ' ' '_' < "$task/comm" 2>/dev/null)" \
      "$(awk '{ print $14 + $15 }' "$task/stat" 2>/dev/null || echo 0)"
  done
}

stat_to() { # what tern stat prints now, into file $1 (one JVM start for every counter read from it)
  TERN_COUNTERS_DIR="$WORK/counters" "$TERN" stat > "$1"
}

counter_in() { # the last value of counter $2 in tern stat's output $1 (a sharded stack's totals come last)
  # Printed as the digits themselves: awk's %d stops at 2^31 - 1 (mawk), which a byte count passes in seconds.
  awk -v c="$2" '$1 == c { v = $2 } END { gsub(",", "", v); print (v == "" ? 0 : v) }' "$1"
}

start_serve() { # $1 shards
  ip netns exec "$TERN_NS" env TERN_COUNTERS_DIR="$WORK/counters" "$TERN" serve --shards "$1" --discard 9 \
    --http 8080 "$WORK/www" --link afpacket:tern0 --ip 198.18.0.2/24 > "$WORK/serve.out" 2>&1 &
  SERVE_PID=$!
  for _ in $(seq 1 100); do
    grep -q "answering" "$WORK/serve.out" 2>/dev/null && break
    sleep 0.1
  done
  grep -q "answering" "$WORK/serve.out" || die "tern serve did not start: $(cat "$WORK/serve.out")"
  # The launcher may be a shell that runs java as its child: measure the java process.
  local child
  child=$(pgrep -P "$SERVE_PID" java || true)
  [[ -n "$child" ]] && SERVE_JAVA="$child" || SERVE_JAVA="$SERVE_PID"
  ip netns exec "$PEER_NS" ping -c 3 -i 0.2 -q 198.18.0.2 >/dev/null || die "no ping reply from tern serve"
}

stop_serve() {
  kill "$SERVE_PID" 2>/dev/null || true
  wait "$SERVE_PID" 2>/dev/null || true
  SERVE_PID=""
}

bulk() { # prints "bytes cpu_seconds shard_cpu_seconds senders_cpu_seconds machine_cpu_seconds"; appends what the
  # shards did to $WORK/diagnostics
  local before_cpu before_stats started_at before_machine
  stat_to "$WORK/stat.before"
  # The machine's window encloses tern's, so that the rest (machine - tern - senders) is not below 0.
  before_machine=$(machine_busy_ticks)
  before_stats=$(shard_thread_stats "$SERVE_JAVA")
  before_cpu=$(cpu_seconds "$SERVE_JAVA")
  thread_ticks "$SERVE_JAVA" > "$WORK/threads.before"
  started_at=$(ps -o etimes= -p "$SERVE_JAVA" | tr -d ' ')
  local pids=() sender
  rm -f "$WORK"/sender.*.times
  for sender in $(seq 1 16); do
    # Each sender's shell reports its socat's CPU time (user, and system: the kernel's sending side, including the
    # veth hop into Tern's ring) with `times` once it has waited for it.
    ip netns exec "$PEER_NS" bash -c 'timeout "$1" socat -u -b "$2" /dev/zero TCP:198.18.0.2:9 2>/dev/null; times' \
      sender "$SECONDS_BULK" "$WRITE_SIZE" > "$WORK/sender.$sender.times" &
    pids+=($!)
  done
  sleep "$(awk -v s="$SECONDS_BULK" 'BEGIN { print s / 2 }')"
  # The senders' view halfway: the kernel's TCP state of the 16 flows (round trip, window, pacing rate).
  local senders
  senders=$(ip netns exec "$PEER_NS" ss -tin dst 198.18.0.2 2>/dev/null | awk '
    { for (i = 1; i <= NF; i++) {
        if ($i ~ /^rtt:/) { split(substr($i, 5), r, "/"); rtt += r[1]; n++ }
        if ($i ~ /^cwnd:/) cwnd += substr($i, 6)
        if ($i == "pacing_rate") { rate += $(i + 1) + 0; unit = $(i + 1); sub(/^[0-9.]+/, "", unit) }
      } }
    END { if (n) printf "%d flows: rtt %.3f ms, cwnd %.0f, pacing %.0f%s (means)", n, rtt / n, cwnd / n, rate / n, unit }')
  wait "${pids[@]}" 2>/dev/null || true
  echo "$CURRENT_SHARDS shards: the senders halfway: $senders" >> "$WORK/diagnostics"
  sleep 1.5 # counters are refreshed by the shards' own loops; let them catch up
  local u0 s0 v0 u1 s1 v1 after_cpu
  read -r u0 s0 v0 <<< "$before_stats"
  read -r u1 s1 v1 <<< "$(shard_thread_stats "$SERVE_JAVA")"
  after_cpu=$(cpu_seconds "$SERVE_JAVA")
  local machine_seconds senders_seconds
  machine_seconds=$(machine_busy_seconds_since "$before_machine")
  senders_seconds=$(for f in "$WORK"/sender.*.times; do children_seconds "$f"; echo; done | awk '{ t += $1 } END { printf "%.3f", t }')
  thread_ticks "$SERVE_JAVA" > "$WORK/threads.after"
  stat_to "$WORK/stat.after"
  delta() { echo $(( $(counter_in "$WORK/stat.after" "$1") - $(counter_in "$WORK/stat.before" "$1") )); }
  local busiest
  busiest=$(awk -v t="$TICKS" 'NR == FNR { before[$1] = $3; next } { d = $3 - before[$1]; if (d > 0) print d, $2 }' \
    "$WORK/threads.before" "$WORK/threads.after" | sort -rn | head -6 \
    | awk -v t="$TICKS" '{ printf "%s%s %.2f s", (NR > 1 ? ", " : ""), $2, $1 / t }')
  echo "$CURRENT_SHARDS shards: threads by CPU: $busiest (the round ran from ${started_at} s to $(ps -o etimes= -p "$SERVE_JAVA" | tr -d ' ') s of the JVM's life)" >> "$WORK/diagnostics"
  echo "$CURRENT_SHARDS shards: frames received $(delta link.rx.frames), segments sent $(delta tcp.tx.segments), send calls $(delta link.tx.send_calls), shard threads user $(awk -v n=$(( u1 - u0 )) -v t="$TICKS" 'BEGIN { printf "%.2f", n / t }') s, system $(awk -v n=$(( s1 - s0 )) -v t="$TICKS" 'BEGIN { printf "%.2f", n / t }') s, sleeps $(( v1 - v0 ))" >> "$WORK/diagnostics"
  echo "$(delta tcp.rx.bytes) $(awk -v a="$after_cpu" -v b="$before_cpu" 'BEGIN { printf "%.3f", a - b }') $(awk -v n=$(( u1 + s1 - u0 - s0 )) -v t="$TICKS" 'BEGIN { printf "%.3f", n / t }') $senders_seconds $machine_seconds"
}

connect() { # prints "requests_per_second cpu_seconds completed shard_cpu_seconds ab_cpu_seconds machine_cpu_seconds"
  local before_cpu before_shards before_machine out
  before_machine=$(machine_busy_ticks)
  before_cpu=$(cpu_seconds "$SERVE_JAVA")
  before_shards=$(shard_cpu_seconds "$SERVE_JAVA")
  out=$(ip netns exec "$PEER_NS" bash -c 'ab -q -n "$1" -c 16 -s 10 http://198.18.0.2:8080/one-kib.bin 2>&1; times > "$2"' \
    client "$REQUESTS" "$WORK/ab.times" || true)
  local rate completed cpu shards machine_seconds
  cpu=$(awk -v a="$(cpu_seconds "$SERVE_JAVA")" -v b="$before_cpu" 'BEGIN { printf "%.3f", a - b }')
  shards=$(awk -v a="$(shard_cpu_seconds "$SERVE_JAVA")" -v b="$before_shards" 'BEGIN { printf "%.3f", a - b }')
  machine_seconds=$(machine_busy_seconds_since "$before_machine")
  rate=$(echo "$out" | awk '/^Requests per second/ { print $4 }')
  completed=$(echo "$out" | awk '/^Complete requests/ { print $3 }')
  echo "${rate:-0} $cpu ${completed:-0} $shards $(children_seconds "$WORK/ab.times") $machine_seconds"
}

declare -A RESULT
for shards in 1 2; do
  CURRENT_SHARDS=$shards
  start_serve "$shards"
  # Warm up the JIT on both paths before measuring: the HTTP path with ab, the bulk path with one unmeasured round
  # of the same 16 flows. With only a 2 s single-flow warm-up (the script's first form), C2 was still compiling
  # through the measured 8 s (0.9-1.2 CPU-seconds of its thread in them, with 1 shard and with 2), and that time,
  # not the shards, set the ratio; after a full round it is 0.1-0.3 s with one shard but up to 0.9 s with two
  # (uncommon traps at the round's new connections and FINs, recompiled), after two rounds 0.05-0.2 s.
  ip netns exec "$PEER_NS" ab -q -n 2000 -c 8 http://198.18.0.2:8080/one-kib.bin >/dev/null 2>&1 || true
  bulk >/dev/null
  bulk >/dev/null
  : > "$WORK/diagnostics"
  RESULT[bulk_$shards]=$(bulk)
  cat "$WORK/diagnostics" >> "$WORK/diagnostics.all"
  RESULT[connect_$shards]=$(connect)
  stop_serve
done

echo "bulk: 16 senders writing $WRITE_SIZE bytes at a time for $SECONDS_BULK s; connect: $REQUESTS requests"
read -r b1 c1 t1 g1 m1 <<< "${RESULT[bulk_1]}"
read -r b2 c2 t2 g2 m2 <<< "${RESULT[bulk_2]}"
read -r r1 k1 n1 u1 a1 w1 <<< "${RESULT[connect_1]}"
read -r r2 k2 n2 u2 a2 w2 <<< "${RESULT[connect_2]}"
awk -v b1="$b1" -v c1="$c1" -v b2="$b2" -v c2="$c2" -v r1="$r1" -v k1="$k1" -v n1="$n1" -v r2="$r2" -v k2="$k2" \
    -v n2="$n2" -v s="$SECONDS_BULK" -v t1="$t1" -v t2="$t2" -v u1="$u1" -v u2="$u2" -v g1="$g1" -v g2="$g2" \
    -v m1="$m1" -v m2="$m2" -v a1="$a1" -v a2="$a2" -v w1="$w1" -v w2="$w2" 'BEGIN {
  e1 = b1 / c1; e2 = b2 / c2; f1 = n1 / k1; f2 = n2 / k2
  printf "%-34s %14s %14s %8s\n", "", "1 shard", "2 shards", "2/1"
  printf "%-34s %14.2f %14.2f %8.2f\n", "16-flow bulk, Gbit/s", b1 * 8 / s / 1e9, b2 * 8 / s / 1e9, b2 / b1
  printf "%-34s %14.2f %14.2f %8.2f\n", "  tern serve CPU seconds", c1, c2, c2 / c1
  printf "%-34s %14.3f %14.3f %8.2f\n", "  GB per tern CPU-second", e1 / 1e9, e2 / 1e9, e2 / e1
  printf "%-34s %14.2f %14.2f %8.2f\n", "  shard threads, CPU seconds", t1, t2, t2 / t1
  printf "%-34s %14.3f %14.3f %8.2f\n", "  GB per shard-thread CPU-second", b1 / t1 / 1e9, b2 / t2 / 1e9, (b2 / t2) / (b1 / t1)
  printf "%-34s %14.2f %14.2f %8.2f\n", "  senders (socat) CPU seconds", g1, g2, g2 / g1
  printf "%-34s %14.2f %14.2f %8.2f\n", "  machine busy CPU seconds", m1, m2, m2 / m1
  printf "%-34s %14.2f %14.2f %8.2f\n", "  rest (kernel threads, others)", m1 - c1 - g1, m2 - c2 - g2, (m2 - c2 - g2) / (m1 - c1 - g1)
  printf "%-34s %14.3f %14.3f %8.2f\n", "  GB per machine CPU-second", b1 / m1 / 1e9, b2 / m2 / 1e9, (b2 / m2) / (b1 / m1)
  printf "%-34s %14.0f %14.0f %8.2f\n", "connections/s (ab, 1 KiB, -c 16)", r1, r2, r2 / r1
  printf "%-34s %14.2f %14.2f %8.2f\n", "  tern serve CPU seconds", k1, k2, k2 / k1
  printf "%-34s %14.0f %14.0f %8.2f\n", "  connections per tern CPU-second", f1, f2, f2 / f1
  printf "%-34s %14.2f %14.2f %8.2f\n", "  shard threads, CPU seconds", u1, u2, u2 / u1
  printf "%-34s %14.0f %14.0f %8.2f\n", "  connections per shard-thread CPU-s", n1 / u1, n2 / u2, (n2 / u2) / (n1 / u1)
  printf "%-34s %14.2f %14.2f %8.2f\n", "  client (ab) CPU seconds", a1, a2, a2 / a1
  printf "%-34s %14.2f %14.2f %8.2f\n", "  machine busy CPU seconds", w1, w2, w2 / w1
  printf "%-34s %14.2f %14.2f %8.2f\n", "  rest (kernel threads, others)", w1 - k1 - a1, w2 - k2 - a2, (w2 - k2 - a2) / (w1 - k1 - a1)
  printf "%-34s %14.0f %14.0f %8.2f\n", "  connections per machine CPU-second", n1 / w1, n2 / w2, (n2 / w2) / (n1 / w1)
  printf "{\"bulk_bytes_per_cpu_s_ratio\": %.3f, \"connections_per_cpu_s_ratio\": %.3f, \"bulk_gbps_1\": %.3f, \"bulk_gbps_2\": %.3f, \"conn_rate_1\": %.0f, \"conn_rate_2\": %.0f}\n", e2 / e1, f2 / f1, b1 * 8 / s / 1e9, b2 * 8 / s / 1e9, r1, r2
}'
echo "bulk, measured round:"
sed 's/^/  /' "$WORK/diagnostics.all"

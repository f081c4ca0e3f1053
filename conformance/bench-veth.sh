#!/usr/bin/env bash
# The veth benchmark (TCP and UDP against the kernel, TCP through loss, AF_XDP against AF_PACKET): Tern against the
# Linux kernel versus the kernel against itself, over veth pairs in network namespaces this run makes and removes:
# offloads on and off; then TCP over random loss injected by the kernel (nftables on the peer's device, --loss levels
# in percent, offloads off, the kernel on CUBIC), through Tern's API and through the real `./tern nc` against socat. Prints a table and one JSON object (last line).
#
#   conformance/bench-veth.sh [--seconds N] [--rounds N] [--round-trips N] [--offloads on|off|both]
#       [--rx-ring frame|block] [--idle backoff|spin|link] [--congestion-control NAME]
#       [--loss 0,0.1,1,5] [--ce-marks 0,1] [--tern-cc NAME] [--nc-mib 128] [--nc-seconds 20] [--http-requests 40000]
#       [--flood-rate 0] [--flood-generator java|hping3] [--flood-link afpacket|afxdp] [--syn-rates 100000,200000,300000,0]
#       [--only tcp|tcp-tern-to-kernel|tcp-kernel-to-tern|udp-rr|tcp-loss|tcp-ce|nc|http|multicast|flood|udp-rate|syn-rate|ipv6]
# --only ipv6: TCP over IPv6 against TCP over IPv4, Tern against the kernel on one pair in the same run (bulk each way,
# 64-byte round trips), with and without the vnet header (Ipv6Benchmark).
# --ce-marks: TCP bulk through CE marks (nftables' ip ecn set ce on the wire) with ECN on every end (--only tcp-ce);
# --tern-cc: Tern's congestion control in the lossy and marked measurements (the kernel's is --congestion-control).
#
# The SYN floods (--only flood, --only syn-rate) and the UDP echo rate's datagram flood (--only udp-rate) come from
# Java in the peer's namespace (FrameFloodGenerator: frames built once, sent through an AF_PACKET link on peer0 in
# batches); --only udp-rate also builds the kernel's batched echo server (conformance/src/main/c, needs gcc): --flood-rate N paces the flood bench's flood to N SYNs/s
# (0, the default: as fast as it goes); --flood-generator hping3 uses `hping3 -S --flood` instead (needs hping3);
# --flood-link afxdp runs Tern's end of the flood bench on the AF_XDP link (both pairs' peers then send full checksums).
# --syn-rates lists the steps of the SYN -> SYN-ACK measurement in SYNs/s (0: as fast as it goes), --seconds each.
#
# With offloads off, TCP bulk and UDP round trips also run Tern on the AF_XDP link (copy mode on veth), compared with
# AF_PACKET in the same run.
#
# Needs nft (Debian nftables) and socat for the lossy part, nginx and ab (apache2-utils) for the HTTP part (skipped,
# saying so, without them); `./tern` (the launcher) is built first, outside the
# namespaces, so that the nc measurements start the command as a user would.
#
# Needs root (namespaces, AF_PACKET), a JDK 25 and Maven. Builds the conformance module and the modules it depends on
# (mvn package, tests skipped; never install), then runs dev.tern.conformance.bench.VethBenchmark. Set TERN_BENCH_JFR=FILE
# to record a Java Flight Recording of the run (profiling, JDK's default settings), TERN_BENCH_PERFMAP=1 to leave
# /tmp/perf-PID.map for `perf report` (JIT symbols), TERN_BENCH_COUNTERS=1 to print Tern's non-zero counters after
# each threading mode (ring-full events, kernel drops, retransmits). Changes no sysctl outside the
# namespaces it makes, pins nothing, and touches no address outside 198.18.0.0/15.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "bench-veth: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, AF_PACKET): run it with sudo"
if [[ -z "${JAVA_HOME:-}" || ! -x "$JAVA_HOME/bin/java" ]] || ! "$JAVA_HOME/bin/java" -version 2>&1 | grep -qE 'version "(2[5-9]|[3-9][0-9])'; then
  for candidate in /usr/lib/jvm/*; do
    if [[ -x "$candidate/bin/java" ]] && "$candidate/bin/java" -version 2>&1 | grep -qE 'version "(2[5-9]|[3-9][0-9])'; then
      JAVA_HOME="$candidate"
    fi
  done
fi
[[ -n "${JAVA_HOME:-}" && -x "$JAVA_HOME/bin/java" ]] || die "no JDK 25 or newer found (set JAVA_HOME)"
export JAVA_HOME
export MAVEN_OPTS="${MAVEN_OPTS:-} --sun-misc-unsafe-memory-access=allow"
command -v mvn >/dev/null 2>&1 || die "Maven not found (Debian package maven)"
echo "bench-veth: building ..." >&2
(cd "$ROOT" && mvn -B -q -ntp -DskipTests -pl conformance -am package) >&2 || die "build failed"
"$ROOT/tern" help >/dev/null || die "the tern launcher failed to build the command line"
FLAGS=("-Dtern.root=$ROOT" --enable-native-access=ALL-UNNAMED --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -XX:+UseParallelGC -Xms1g -Xmx1g)
if [[ -n "${TERN_BENCH_PERFMAP:-}" ]]; then
  FLAGS+=(-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit)
fi
if [[ -n "${TERN_BENCH_JFR:-}" ]]; then
  FLAGS+=("-XX:StartFlightRecording=filename=$TERN_BENCH_JFR,settings=profile")
fi
exec "$JAVA_HOME/bin/java" "${FLAGS[@]}" -cp "$ROOT/conformance/target/classes:$ROOT/conformance/target/lib/*" \
  dev.tern.conformance.bench.VethBenchmark "$@"

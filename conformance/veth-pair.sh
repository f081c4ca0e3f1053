# Sourced by the benchmark scripts beside it: the veth pair they run over, and its removal.
#
# veth_pair TAG NAME makes two network namespaces, tern-TAG-pPID (the kernel's side: peer0, 198.18.0.1/24) and
# tern-TAG-tPID (Tern's side: tern0 up, no IPv4 address, so the kernel there neither answers nor forwards), joined by
# a veth pair, and a work directory /tmp/tern-bench-NAME.XXXXXX; it sets PEER_NS, TERN_NS and WORK. Its EXIT trap
# calls the script's stop_processes (if it defines one: it ends the processes it started, by their PIDs), then
# removes both namespaces (which removes the pair) and the directory, on success and on failure alike.
veth_pair() {
  PEER_NS="tern-$1-p$$"
  TERN_NS="tern-$1-t$$"
  WORK="$(mktemp -d "/tmp/tern-bench-$2.XXXXXX")"
  trap veth_pair_cleanup EXIT
  ip netns add "$PEER_NS"
  ip netns add "$TERN_NS"
  ip link add peer0 netns "$PEER_NS" type veth peer name tern0 netns "$TERN_NS"
  ip -n "$PEER_NS" addr add 198.18.0.1/24 dev peer0
  ip -n "$PEER_NS" link set lo up
  ip -n "$PEER_NS" link set peer0 up
  ip -n "$TERN_NS" link set tern0 up
}

# veth_wire_pair TAG NAME: the same two namespaces, joined through a third, tern-TAG-wPID (WIRE_NS), that bridges
# two veth pairs (peer0 to wire-p, tern0 to wire-t) on br0. A packet dropped there on a port's ingress hook is lost as
# on a wire: after its sender's device, unseen by its sender (AF_PACKET on tern0 sees frames before tern0's own
# hooks, so a drop meant for Tern has to happen before tern0). The cleanup removes the third namespace too.
veth_wire_pair() {
  PEER_NS="tern-$1-p$$"
  TERN_NS="tern-$1-t$$"
  WIRE_NS="tern-$1-w$$"
  WORK="$(mktemp -d "/tmp/tern-bench-$2.XXXXXX")"
  trap veth_pair_cleanup EXIT
  ip netns add "$PEER_NS"
  ip netns add "$TERN_NS"
  ip netns add "$WIRE_NS"
  ip link add peer0 netns "$PEER_NS" type veth peer name wire-p netns "$WIRE_NS"
  ip link add tern0 netns "$TERN_NS" type veth peer name wire-t netns "$WIRE_NS"
  ip -n "$WIRE_NS" link add br0 type bridge
  ip -n "$WIRE_NS" link set wire-p master br0
  ip -n "$WIRE_NS" link set wire-t master br0
  ip -n "$WIRE_NS" link set wire-p up
  ip -n "$WIRE_NS" link set wire-t up
  ip -n "$WIRE_NS" link set br0 up
  ip -n "$PEER_NS" addr add 198.18.0.1/24 dev peer0
  ip -n "$PEER_NS" link set lo up
  ip -n "$PEER_NS" link set peer0 up
  ip -n "$TERN_NS" link set tern0 up
}

# start_tern_serve ARGS: `$TERN serve ARGS --link afpacket:tern0 --ip 198.18.0.2/24` in TERN_NS, its counters in
# $WORK/counters and its output in $WORK/serve.out; sets SERVE_PID (for the script's stop_processes) and returns once
# it answers, or fails after 30 s saying why.
start_tern_serve() {
  mkdir -p "$WORK/counters"
  ip netns exec "$TERN_NS" env TERN_COUNTERS_DIR="$WORK/counters" "$TERN" serve "$@" \
    --link afpacket:tern0 --ip 198.18.0.2/24 > "$WORK/serve.out" 2>&1 &
  SERVE_PID=$!
  for _ in $(seq 1 300); do
    grep -q "answering" "$WORK/serve.out" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "tern serve did not start: $(cat "$WORK/serve.out")" >&2
  return 1
}

veth_pair_cleanup() {
  if declare -F stop_processes >/dev/null; then stop_processes; fi
  ip netns del "$PEER_NS" 2>/dev/null || true
  ip netns del "$TERN_NS" 2>/dev/null || true
  if [[ -n "${WIRE_NS:-}" ]]; then ip netns del "$WIRE_NS" 2>/dev/null || true; fi
  rm -rf "$WORK"
}

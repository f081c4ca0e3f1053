#!/usr/bin/env bash
# Runs the public packetdrill suites against the live Linux kernel and against Tern, and prints one table.
#
#   conformance/public-suites.sh --packetdrill DIR [--tcp-testsuite DIR] [options] [SCRIPT...]
#
# DIR is a checkout of google/packetdrill with packetdrill built in gtests/net/packetdrill (docs/SUITES.md says how
# to get and build it); the optional --tcp-testsuite is a checkout of freebsd-net/tcp-testsuite. This script fetches
# nothing. For the Linux suite (gtests/net/tcp, IPv4: every file not ending in v6.pkt) each script runs
#   - on the kernel: packetdrill with run_all.py's IPv4 arguments, addresses from 198.18.0.0/15, in a network
#     namespace of its own that is deleted after it (and on any exit), bounded by --timeout;
#   - on Tern: `tern script --profile gtests`, from this worktree's cli build.
# The FreeBSD suite (IPv4: every file not naming ipv6; with --ip-version ipv6 the files naming it) has no kernel
# here: Tern's column only.
#
# Output (under --out, default /tmp/tern-suites): gtests.tsv and freebsd.tsv, one row per script with the columns
# script, linux, tern, linux_error, tern_error, agree (results pass, fail, timeout or skipped, the IPv6 scripts
# skipped on both; an error is the run's first error line, or why it was skipped; agree is yes, no, stale where both
# fail at the same line: the script no longer fits the kernel either, or - where one was skipped); on stdout the
# table `script | Linux | Tern | agree` and the counts. With --classified FILE (docs/SUITES.md) it also lists the
# scripts Tern does not pass that FILE's classification table has no row for.
#
# The kernel's runs need root (namespaces); --skip-linux and --linux-from do not. Nothing leaves the namespaces:
# each holds only packetdrill's tun device, with 198.18.0.1/16 and a route to 198.19.0.0/24 over it.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCAL_IP=198.18.0.1
REMOTE_IP=198.19.0.1
NETMASK=255.255.0.0

usage() {
  sed -n '2,/^set /{/^#/p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  cat <<'EOF'

options:
  --packetdrill DIR       google/packetdrill checkout, packetdrill built (required)
  --tcp-testsuite DIR     freebsd-net/tcp-testsuite checkout: Tern's column for its IPv4 scripts
  --out DIR               where the TSV files and logs go (default /tmp/tern-suites)
  --timeout S             bound on one kernel run, and on each Tern batch (default 120)
  --skip-linux            leave the kernel column out (results: skipped); no root needed
  --linux-from TSV        take the kernel column from an earlier run's gtests.tsv instead of running it (the
                          kernel's results change with the kernel, not with Tern); no root needed
  --skip-tern             leave Tern's column out (results: skipped)
  --tern-input MODE       what Tern reads: stripped (a copy with the suite's shell wrappers rewritten, see below),
                          as-is (the files unchanged), or auto (as-is once Tern's runner reads the wrappers itself,
                          found by a probe; default)
  --linux-cc MODE         route (default): the namespace's route to the remote carries `congctl cubic`, because a
                          namespace other than the host's cannot make cubic its default when the host does not
                          allow it (defaults.sh's sysctl then fails with EPERM); default: leave the kernel's default
  --freebsd-profile NAME  Tern's profile for the FreeBSD suite (default linux)
  --classified FILE       list the non-passing gtests scripts FILE's table lacks (docs/SUITES.md)
  --ip-version V          ipv4 (default) or ipv6: both columns run run_all.py's scripts for V (ipv6: every file not
                          ending in v4.pkt; the kernel's packetdrill with run_all.py's IPv6 arguments on
                          2001:db8:: addresses, Tern's `tern script --ip-version ipv6`); the FreeBSD suite's
                          column runs its IPv6 scripts instead (every file naming ipv6; each has its own
                          --ip_version=ipv6 line)
  SCRIPT...               only these gtests scripts (paths relative to gtests/net/tcp)

The stripped copy changes only the suite's wrappers: the defaults.sh call and the closing sysctl_restore call are
dropped (Tern's gtests profile stands for defaults.sh), set_sysctls.py /proc/sys/net/ipv4/X=V and a sysctl setting
several keys become one `sysctl -q net.ipv4.X=V` line each, a shell block over several lines becomes one line per
command (blank lines keep every other line's number), shell comments are dropped, and --local_ip/--remote_ip lines
are dropped (the runner has its own addresses).
EOF
}

die() { printf 'public-suites: %s\n' "$*" >&2; exit 2; }

PACKETDRILL=""
TESTSUITE=""
OUT=/tmp/tern-suites
TIMEOUT=120
RUN_LINUX=1
RUN_TERN=1
TERN_INPUT=auto
LINUX_CC=route
FREEBSD_PROFILE=linux
CLASSIFIED=""
LINUX_FROM=""
IP_VERSION=ipv4
ONLY=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --packetdrill) PACKETDRILL="${2:?--packetdrill needs a directory}"; shift 2 ;;
    --tcp-testsuite) TESTSUITE="${2:?--tcp-testsuite needs a directory}"; shift 2 ;;
    --out) OUT="${2:?--out needs a directory}"; shift 2 ;;
    --timeout) TIMEOUT="${2:?--timeout needs seconds}"; shift 2 ;;
    --skip-linux) RUN_LINUX=0; shift ;;
    --linux-from) LINUX_FROM="${2:?--linux-from needs a TSV file}"; RUN_LINUX=0; shift 2 ;;
    --skip-tern) RUN_TERN=0; shift ;;
    --tern-input) TERN_INPUT="${2:?--tern-input needs stripped, as-is or auto}"; shift 2 ;;
    --linux-cc) LINUX_CC="${2:?--linux-cc needs route or default}"; shift 2 ;;
    --freebsd-profile) FREEBSD_PROFILE="${2:?--freebsd-profile needs a profile}"; shift 2 ;;
    --classified) CLASSIFIED="${2:?--classified needs a file}"; shift 2 ;;
    --ip-version) IP_VERSION="${2:?--ip-version needs ipv4 or ipv6}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) ONLY+=("$1"); shift ;;
  esac
done
[[ -n "$PACKETDRILL" ]] || die "--packetdrill DIR is required (see --help)"
SUITE="$PACKETDRILL/gtests/net/tcp"
PD_BIN="$PACKETDRILL/gtests/net/packetdrill/packetdrill"
[[ -d "$SUITE" ]] || die "$SUITE: not a packetdrill checkout (no gtests/net/tcp)"
[[ "$TIMEOUT" =~ ^[0-9]+$ && "$TIMEOUT" -gt 0 ]] || die "--timeout takes whole seconds, not '$TIMEOUT'"
case "$TERN_INPUT" in stripped|as-is|auto) ;; *) die "--tern-input takes stripped, as-is or auto, not '$TERN_INPUT'" ;; esac
case "$LINUX_CC" in route|default) ;; *) die "--linux-cc takes route or default, not '$LINUX_CC'" ;; esac
case "$IP_VERSION" in ipv4|ipv6) ;; *) die "--ip-version takes ipv4 or ipv6, not '$IP_VERSION'" ;; esac

if [[ -n "$TESTSUITE" && ! -d "$TESTSUITE" ]]; then die "$TESTSUITE: no such directory"; fi
if [[ -n "$CLASSIFIED" && ! -f "$CLASSIFIED" ]]; then die "$CLASSIFIED: no such file"; fi
if [[ -n "$LINUX_FROM" && ! -f "$LINUX_FROM" ]]; then die "$LINUX_FROM: no such file"; fi
if [[ $RUN_LINUX -eq 1 ]]; then
  [[ $(id -u) -eq 0 ]] || die "the kernel's runs need root (network namespaces); --skip-linux runs Tern's only"
  [[ -x "$PD_BIN" ]] || die "$PD_BIN: not built (cd gtests/net/packetdrill && ./configure && make; needs bison, flex)"
fi
mkdir -p "$OUT" || die "cannot create $OUT"
OUT=$(cd "$OUT" && pwd)

WORK=$(mktemp -d /tmp/tern-suites-work.XXXXXX)
touch "$WORK/started"
NS_PREFIX="tern-suite-$$-"
CURRENT_NS=""
CHILD=""
# A signal ends the run at once: the command running now (a `timeout`, which passes the signal on) is stopped
# first, then the EXIT trap removes what is left.
stop_child() {
  if [[ -n "$CHILD" ]]; then kill -TERM "$CHILD" 2>/dev/null; wait "$CHILD" 2>/dev/null; fi
}
# Runs CMD in DIR with its output in LOG, bounded by --timeout, in the background and waited for, so that a signal
# reaches the traps at once; sets RC to its exit status (124 or 137: it ran out of time).
bounded() {
  local dir="$1" log="$2"
  shift 2
  (cd "$dir" && exec timeout --kill-after=5 "$TIMEOUT" "$@") >"$log" 2>&1 &
  CHILD=$!
  wait "$CHILD"
  RC=$?
  CHILD=""
}
cleanup() {
  if [[ -n "$CURRENT_NS" ]]; then ip netns del "$CURRENT_NS" 2>/dev/null; fi
  local ns
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    if [[ "$ns" == "$NS_PREFIX"* ]]; then ip netns del "$ns" 2>/dev/null; fi
  done
  # The suite's set_sysctls.py leaves its restore scripts in /tmp (the namespaces they restored are gone).
  if [[ -f "$WORK/started" ]]; then
    find /tmp -maxdepth 1 -name 'sysctl_restore_*.sh' -newer "$WORK/started" -delete 2>/dev/null
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'stop_child; exit 130' INT TERM

# The gtests scripts, relative to gtests/net/tcp; those run are IPv4's (run_all.py skips *v6.pkt for IPv4).
if [[ ${#ONLY[@]} -gt 0 ]]; then
  GTESTS=("${ONLY[@]}")
else
  mapfile -t GTESTS < <(cd "$SUITE" && find . -name '*.pkt' | sed 's#^\./##' | LC_ALL=C sort)
fi
[[ ${#GTESTS[@]} -gt 0 ]] || die "no scripts found under $SUITE"
# IPV4 holds the scripts of the run's IP version: IPv4's (not *v6.pkt), or with --ip-version ipv6 IPv6's (not
# *v4.pkt), as run_all.py picks them.
IPV4=()
for rel in "${GTESTS[@]}"; do
  if [[ "$IP_VERSION" == ipv6 ]]; then [[ "$rel" == *v4.pkt ]] || IPV4+=("$rel"); else [[ "$rel" == *v6.pkt ]] || IPV4+=("$rel"); fi
done

# The first error line of a run: packetdrill's and Tern's messages name FILE:LINE; else the first line printed.
first_error() {
  local log="$1" line
  line=$(grep -m1 -E '\.pkt:[0-9]+: ' "$log" || true)
  [[ -n "$line" ]] || line=$(grep -m1 -v '^[[:space:]]*$' "$log" || true)
  line=${line#tern: script: }
  line=${line//$'\t'/ }
  printf '%s' "${line:0:400}"
}

# The line number an error names, for telling a stale script (both fail at the same line).
error_line() { sed -nE 's/^[^ ]*\.pkt:([0-9]+): .*/\1/p' <<<"$1" | head -n 1; }

# --- the kernel ---------------------------------------------------------------------------------------------

# A copy of the suite (its common/ beside it, as the scripts' relative paths expect), with the two addresses the
# mtu_probe script hard-codes in its own shell lines mapped to ours, as the command line maps the rest.
prepare_linux_copy() {
  mkdir -p "$WORK/linux"
  cp -a "$PACKETDRILL/gtests/net/tcp" "$PACKETDRILL/gtests/net/common" "$WORK/linux/"
  grep -rlE '192\.0\.2\.1|192\.168\.0\.[0-9]+' "$WORK/linux/tcp" --include='*.pkt' | while read -r f; do
    sed -i -E '/^--/!{s/192\.0\.2\.1/'"$REMOTE_IP"'/g; s/192\.168\.0\.([0-9]+)/198.18.0.\1/g}' "$f"
  done
  mkdir -p "$WORK/bin"
  if [[ "$LINUX_CC" == route ]]; then
    # packetdrill adds its route with `ip -4 route add PREFIX dev tun0 via GATEWAY`; this `ip`, first on its PATH,
    # adds `congctl cubic` to that one command (a route's congestion control needs no permission in a namespace).
    cat >"$WORK/bin/ip" <<EOF
#!/bin/sh
if { [ "\$1" = "-4" ] || [ "\$1" = "-6" ]; } && [ "\$2" = "route" ] && [ "\$3" = "add" ]; then exec $(command -v ip) "\$@" congctl cubic; fi
exec $(command -v ip) "\$@"
EOF
    chmod +x "$WORK/bin/ip"
  fi
}

# The TFO cookie run_all.py defines for its addresses (192.0.2.1 to 192.168.0.1, defaults.sh's key).
RUN_ALL_COOKIE=3021b9d889017eeb
PD_ARGS=(--send_omit_free --ip_version=ipv4 --local_ip="$LOCAL_IP" --gateway_ip="$LOCAL_IP"
  --netmask_ip="$NETMASK" --remote_ip="$REMOTE_IP" -D CODE=host_unreachable -D CMSG_LEVEL_IP=SOL_IP
  -D CMSG_TYPE_RECVERR=IP_RECVERR)
if [[ "$IP_VERSION" == ipv6 ]]; then
  # run_all.py's IPv6 arguments, its fd3d:: addresses moved into 2001:db8::/32 (RFC 3849), the same shape: the
  # gateway on the local /64's neighbour prefix, the remote off-link. Its cookie is for its own addresses.
  RUN_ALL_COOKIE=c1d1e9742a47a9bc
  PD_ARGS=(--send_omit_free --ip_version=ipv6 --mtu=1520 --local_ip=2001:db8:a0b:17d6::1
    --gateway_ip=2001:db8:a0b:17d6:8888::1 --remote_ip=2001:db8:fa7b:d17d::1 -D CMSG_LEVEL_IP=SOL_IPV6
    -D CMSG_TYPE_RECVERR=IPV6_RECVERR)
fi

# The value of packetdrill's --NAME= argument in PD_ARGS.
pd_arg() {
  local a
  for a in "${PD_ARGS[@]}"; do [[ "$a" == --$1=* ]] && { printf '%s' "${a#--$1=}"; return; }; done
}

# Runs packetdrill on one file (relative to $WORK/linux/tcp) in a fresh namespace; sets RC to its exit status.
run_packetdrill() {
  local rel="$1" log="$2"
  shift 2
  CURRENT_NS="${NS_PREFIX}$RANDOM"
  ip netns add "$CURRENT_NS" || { echo "ip netns add failed" >"$log"; RC=125; return; }
  ip -n "$CURRENT_NS" link set lo up
  bounded "$WORK/linux/tcp/$(dirname "$rel")" "$log" ip netns exec "$CURRENT_NS" env PATH="$WORK/bin:$PATH" \
    "$PD_BIN" "${PD_ARGS[@]}" "$@" "$(basename "$rel")"
  ip netns del "$CURRENT_NS" 2>/dev/null
  CURRENT_NS=""
}

# The TFO cookie the kernel gives a client at REMOTE_IP for defaults.sh's key (run_all.py's constant is for its
# own addresses): a probe offers a wrong cookie and packetdrill's mismatch names the kernel's.
probe_tfo_cookie() {
  local rel=fastopen/server/zz-public-suites-cookie-probe.pkt
  cat >"$WORK/linux/tcp/$rel" <<'EOF'
`../../common/defaults.sh`
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
   +0 bind(3, ..., ...) = 0
   +0 listen(3, 1) = 0
   +0 < S 0:10(10) win 32792 <mss 1460,sackOK,nop,nop,FOEXP aaaaaaaaaaaaaaaa>
   +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,FOEXP 0000000000000000>
EOF
  run_packetdrill "$rel" "$OUT/probe-tfo.log" -D TFO_COOKIE=0
  rm -f "$WORK/linux/tcp/$rel"
  sed -nE 's/.*actual: FOEXP ([0-9a-f]{16}).*/\1/p' "$OUT/probe-tfo.log" | head -n 1
}

# Which congestion control the kernel's connections get in these namespaces, read from `ss` inside one.
probe_congestion_control() {
  local rel=zz-public-suites-cc-probe.pkt
  cat >"$WORK/linux/tcp/$rel" <<EOF
\`common/defaults.sh\`
    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
   +0 bind(3, ..., ...) = 0
   +0 listen(3, 1) = 0
   +0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
   +0 > S. 0:0(0) ack 1 <...>
   +0 < . 1:1(0) ack 1 win 257
   +0 accept(3, ..., ...) = 4
   +0 \`ss -tin state established > $WORK/ss.txt; sysctl -n net.ipv4.tcp_congestion_control > $WORK/sysctl.txt\`
EOF
  run_packetdrill "$rel" "$OUT/probe-cc.log" -D TFO_COOKIE=0
  rm -f "$WORK/linux/tcp/$rel"
  local conn sysctl
  conn=$(grep -owE 'cubic|bbr|reno|dctcp|htcp|vegas|westwood' "$WORK/ss.txt" 2>/dev/null | head -n 1)
  sysctl=$(cat "$WORK/sysctl.txt" 2>/dev/null)
  echo "connections ${conn:-unknown}, namespace default ${sysctl:-unknown}"
}

# A script that writes a module parameter (host-wide, not per namespace) runs only when it writes the value
# already there; prints the reason when it may not run.
host_wide_write() {
  local file="$1" param value
  while read -r value param; do
    if [[ "$(cat "$param" 2>/dev/null)" != "$value" ]]; then
      echo "writes $value to $param (host-wide; it holds $(cat "$param" 2>/dev/null || echo nothing)): not run"
      return
    fi
  done < <(sed -nE 's#.*echo +([^ >]+) *> *(/sys/module/[^ `]+).*#\1 \2#p' "$file")
}

declare -A LINUX_RESULT LINUX_ERROR TERN_RESULT TERN_ERROR

run_linux() {
  prepare_linux_copy
  local cookie cc
  cookie=$(probe_tfo_cookie)
  [[ -n "$cookie" ]] || { echo "public-suites: the TFO cookie probe failed ($OUT/probe-tfo.log); using 0" >&2; cookie=0; }
  # Scripts also write run_all.py's cookie out in full; it is the cookie of run_all.py's addresses, so it is
  # replaced as the addresses are. (Cookies of other keys and addresses, as in fastopen/server/simple*.pkt, stay.)
  grep -rl "$RUN_ALL_COOKIE" "$WORK/linux/tcp" --include='*.pkt' | xargs -r sed -i "s/$RUN_ALL_COOKIE/$cookie/g"
  cc=$(probe_congestion_control)
  {
    echo "kernel $(uname -r); packetdrill $(git -C "$PACKETDRILL" rev-parse HEAD 2>/dev/null || echo unknown)"
    echo "TFO_COOKIE for $(pd_arg remote_ip) -> $(pd_arg local_ip): $cookie (replaces $RUN_ALL_COOKIE in the scripts too)"
    echo "congestion control (--linux-cc $LINUX_CC): $cc"
  } | tee "$OUT/linux-setup.txt" >&2
  mkdir -p "$OUT/linux-logs"
  local rel log rc why n=0
  for rel in "${IPV4[@]}"; do
    n=$((n + 1))
    log="$OUT/linux-logs/${rel//\//__}.log"
    why=$(host_wide_write "$WORK/linux/tcp/$rel")
    if [[ -n "$why" ]]; then
      LINUX_RESULT[$rel]=skipped; LINUX_ERROR[$rel]="$why"; echo "$why" >"$log"
      continue
    fi
    run_packetdrill "$rel" "$log" -D TFO_COOKIE="$cookie"
    rc=$RC
    case "$rc" in
      0) LINUX_RESULT[$rel]=pass; LINUX_ERROR[$rel]="" ;;
      124|137) LINUX_RESULT[$rel]=timeout; LINUX_ERROR[$rel]="no result within $TIMEOUT s" ;;
      *) LINUX_RESULT[$rel]=fail; LINUX_ERROR[$rel]=$(first_error "$log") ;;
    esac
    printf '\rlinux %d/%d' "$n" "${#IPV4[@]}" >&2
  done
  printf '\n' >&2
}

# --- Tern ---------------------------------------------------------------------------------------------------

# The stripped copy's rewrite of one file (see --help).
strip_wrappers() {
  awk '
    function emit_block(   i, j, n, cmd, start, rest, keys, k, out, slot) {
      for (i = 1; i <= nb; i++) out[i] = ""
      i = 1
      while (i <= nb) {
        start = i; cmd = blk[i]
        while (cmd ~ /\\[ \t]*$/ && i < nb) { sub(/\\[ \t]*$/, "", cmd); i++; cmd = cmd " " blk[i] }
        i++
        gsub(/^[ \t]+|[ \t;]+$/, "", cmd)
        if (cmd == "" || cmd ~ /^#/ || cmd ~ /defaults\.sh/ || cmd ~ /sysctl_restore/) continue
        n = 0
        if (cmd ~ /set_sysctls\.py/ || cmd ~ /^sysctl /) {
          rest = cmd
          while (match(rest, /(\/proc\/sys\/|net\.)[A-Za-z0-9_\/.]+=("[^"]*"|[^ \t"]+)/)) {
            k = substr(rest, RSTART, RLENGTH); rest = substr(rest, RSTART + RLENGTH)
            sub(/^\/proc\/sys\//, "", k)
            eq = index(k, "="); name = substr(k, 1, eq - 1); gsub(/\//, ".", name)
            keys[++n] = "`sysctl -q " name substr(k, eq) "`"
          }
        }
        if (n == 0) keys[++n] = "`" cmd "`"
        slot = start
        for (j = 1; j <= n; j++) {
          while (slot < nb && out[slot] != "") slot++
          out[slot] = (out[slot] == "" ? keys[j] : out[slot] "\n" keys[j])
          slot++
          if (slot > nb) slot = nb
        }
      }
      for (i = 1; i <= nb; i++) print out[i]
      nb = 0
    }
    inblk {
      line = $0
      if (index(line, "`") > 0) { sub(/`.*$/, "", line); blk[++nb] = line; inblk = 0; emit_block(); next }
      blk[++nb] = line; next
    }
    /^[ \t]*`/ {
      line = $0; sub(/^[ \t]*`/, "", line)
      if (index(line, "`") > 0) { sub(/`.*$/, "", line); nb = 1; blk[1] = line; emit_block(); next }
      nb = 1; blk[1] = line; inblk = 1; next
    }
    /^--(local_ip|remote_ip)=/ { print ""; next }
    { print }
    END { if (inblk) emit_block() }
  ' "$1"
}

TERN=("$ROOT/tern" script --ip-version "$IP_VERSION")

# Whether Tern's runner reads the suite's wrappers itself: a probe beside the scripts calls defaults.sh.
tern_reads_wrappers() {
  local dir="$1"
  printf '%s\n' '`../common/defaults.sh`' '    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3' >"$dir/zz-wrapper-probe.pkt"
  bounded "$dir" /dev/null "${TERN[@]}" --profile gtests zz-wrapper-probe.pkt
  rm -f "$dir/zz-wrapper-probe.pkt"
  return $RC
}

# Runs Tern on FILES (relative to DIR) in one JVM; on a timeout, file by file. Fills TERN_RESULT/TERN_ERROR[KEY]
# where KEY is PREFIX + the file.
run_tern_batch() {
  local dir="$1" profile="$2" prefix="$3" log="$4"; shift 4
  local rc f line
  bounded "$dir" "$log" "${TERN[@]}" --profile "$profile" "$@"
  rc=$RC
  if [[ $rc -eq 124 || $rc -eq 137 ]]; then
    for f in "$@"; do
      bounded "$dir" "$log.one" "${TERN[@]}" --profile "$profile" "$f"
      rc=$RC
      if [[ $rc -eq 124 || $rc -eq 137 ]]; then
        TERN_RESULT[$prefix$f]=timeout; TERN_ERROR[$prefix$f]="no result within $TIMEOUT s"
      elif [[ $rc -eq 0 ]]; then
        TERN_RESULT[$prefix$f]=pass; TERN_ERROR[$prefix$f]=""
      else
        TERN_RESULT[$prefix$f]=fail; TERN_ERROR[$prefix$f]=$(first_error "$log.one")
      fi
    done
    rm -f "$log.one"
    return
  fi
  for f in "$@"; do TERN_RESULT[$prefix$f]=pass; TERN_ERROR[$prefix$f]=""; done
  while IFS= read -r line; do
    line=${line#tern: script: }
    f=${line%%:[0-9]*}
    if [[ -n "${TERN_RESULT[$prefix$f]+set}" && "${TERN_RESULT[$prefix$f]}" == pass ]]; then
      TERN_RESULT[$prefix$f]=fail; TERN_ERROR[$prefix$f]="${line//$'\t'/ }"
    fi
  done < <(grep '^tern: script: ' "$log")
  # A non-zero exit with no file named is the command's own failure: no file passed.
  if [[ $rc -ne 0 ]] && ! grep -q '^tern: script: ' "$log"; then
    for f in "$@"; do TERN_RESULT[$prefix$f]=fail; TERN_ERROR[$prefix$f]=$(first_error "$log"); done
  fi
}

run_tern() {
  mkdir -p "$WORK/tern"
  cp -a "$PACKETDRILL/gtests/net/tcp" "$PACKETDRILL/gtests/net/common" "$WORK/tern/"
  local mode="$TERN_INPUT"
  if [[ "$mode" == auto ]]; then
    if tern_reads_wrappers "$WORK/tern/tcp"; then mode=as-is; else mode=stripped; fi
  fi
  if [[ "$mode" == stripped ]]; then
    local rel
    for rel in "${IPV4[@]}"; do
      strip_wrappers "$PACKETDRILL/gtests/net/tcp/$rel" >"$WORK/tern/tcp/$rel"
    done
  fi
  echo "tern input: $mode; $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null)" | tee "$OUT/tern-setup.txt" >&2
  run_tern_batch "$WORK/tern/tcp" gtests "" "$OUT/tern-gtests.log" "${IPV4[@]}"
  if [[ -n "$TESTSUITE" ]]; then
    local files
    local family=(! -iname '*ipv6*')
    [[ "$IP_VERSION" == ipv6 ]] && family=(-iname '*ipv6*')
    mapfile -t files < <(cd "$TESTSUITE" && find . -name '*.pkt' "${family[@]}" | sed 's#^\./##' | LC_ALL=C sort)
    run_tern_batch "$TESTSUITE" "$FREEBSD_PROFILE" "freebsd:" "$OUT/tern-freebsd.log" "${files[@]}"
    FREEBSD=("${files[@]}")
  fi
}

# --- the table ----------------------------------------------------------------------------------------------

agree() {
  local linux="$1" tern="$2" le="$3" te="$4"
  if [[ "$linux" == skipped || "$tern" == skipped ]]; then echo "-"; return; fi
  if [[ "$linux" == pass && "$tern" == pass ]]; then echo yes; return; fi
  if [[ "$linux" != pass && "$tern" != pass ]]; then
    local a b; a=$(error_line "$le"); b=$(error_line "$te")
    if [[ -n "$a" && "$a" == "$b" ]]; then echo stale; else echo yes; fi
    return
  fi
  echo no
}

# The kernel's column of an earlier run.
read_linux_results() {
  local script linux tern le rest
  while IFS=$'\t' read -r script linux tern le rest; do
    [[ "$script" == script ]] && continue
    LINUX_RESULT[$script]="$linux"; LINUX_ERROR[$script]="$le"
  done <"$LINUX_FROM"
  cp "$(dirname "$LINUX_FROM")/linux-setup.txt" "$OUT/linux-setup.txt" 2>/dev/null || true
  echo "linux: from $LINUX_FROM" >&2
}

FREEBSD=()
if [[ $RUN_LINUX -eq 1 ]]; then run_linux; fi
if [[ -n "$LINUX_FROM" ]]; then read_linux_results; fi
if [[ $RUN_TERN -eq 1 ]]; then run_tern; fi
for rel in "${GTESTS[@]}"; do
  if [[ "$IP_VERSION" == ipv4 && "$rel" == *v6.pkt ]]; then
    LINUX_RESULT[$rel]=skipped; LINUX_ERROR[$rel]="IPv6 only: the run is IPv4's"
    TERN_RESULT[$rel]=skipped; TERN_ERROR[$rel]="IPv6 only: the run is IPv4's"
  elif [[ "$IP_VERSION" == ipv6 && "$rel" == *v4.pkt ]]; then
    LINUX_RESULT[$rel]=skipped; LINUX_ERROR[$rel]="IPv4 only: the run is IPv6's"
    TERN_RESULT[$rel]=skipped; TERN_ERROR[$rel]="IPv4 only: the run is IPv6's"
  fi
done

TSV="$OUT/gtests.tsv"
printf 'script\tlinux\ttern\tlinux_error\ttern_error\tagree\n' >"$TSV"
printf '%-60s | %-7s | %-7s | %s\n' script Linux Tern agree
linux_pass=0; tern_pass=0; agreed=0; both_pass=0; stale=0
for rel in "${GTESTS[@]}"; do
  l=${LINUX_RESULT[$rel]:-skipped}; t=${TERN_RESULT[$rel]:-skipped}
  le=${LINUX_ERROR[$rel]:-}; te=${TERN_ERROR[$rel]:-}
  a=$(agree "$l" "$t" "$le" "$te")
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$rel" "$l" "$t" "$le" "$te" "$a" >>"$TSV"
  printf '%-60s | %-7s | %-7s | %s\n' "$rel" "$l" "$t" "$a"
  [[ "$l" == pass ]] && linux_pass=$((linux_pass + 1))
  [[ "$t" == pass ]] && tern_pass=$((tern_pass + 1))
  [[ "$l" == pass && "$t" == pass ]] && both_pass=$((both_pass + 1))
  [[ "$a" == yes || "$a" == stale ]] && agreed=$((agreed + 1))
  [[ "$a" == stale ]] && stale=$((stale + 1))
done
echo
echo "gtests: ${#GTESTS[@]} scripts (${#IPV4[@]} run over ${IP_VERSION/ipv/IPv}); Linux passes $linux_pass, Tern passes $tern_pass; they agree on $agreed" \
  "($stale of them stale: both fail at the same line); of the $linux_pass the kernel passes, Tern passes $both_pass"

if [[ ${#FREEBSD[@]} -gt 0 ]]; then
  FTSV="$OUT/freebsd.tsv"
  printf 'script\tlinux\ttern\tlinux_error\ttern_error\tagree\n' >"$FTSV"
  fb_pass=0
  for rel in "${FREEBSD[@]}"; do
    t=${TERN_RESULT[freebsd:$rel]:-skipped}
    printf '%s\t-\t%s\t-\t%s\t-\n' "$rel" "$t" "${TERN_ERROR[freebsd:$rel]:-}" >>"$FTSV"
    printf '%-60s | %-7s | %-7s | %s\n' "freebsd:$rel" - "$t" -
    [[ "$t" == pass ]] && fb_pass=$((fb_pass + 1))
  done
  echo "tcp-testsuite (${IP_VERSION/ipv/IPv}, profile $FREEBSD_PROFILE): ${#FREEBSD[@]} scripts; Tern passes $fb_pass"
fi

if [[ -n "$CLASSIFIED" ]]; then
  missing=0
  for rel in "${GTESTS[@]}"; do
    t=${TERN_RESULT[$rel]:-skipped}
    [[ "$t" == pass ]] && continue
    if ! grep -qF "| \`$rel\` |" "$CLASSIFIED"; then
      [[ $missing -eq 0 ]] && echo "not classified in $CLASSIFIED:"
      echo "  $rel: ${TERN_ERROR[$rel]:-}"
      missing=$((missing + 1))
    fi
  done
  [[ $missing -eq 0 ]] && echo "every non-passing script has a row in $CLASSIFIED"
fi
echo "results: $TSV${FREEBSD:+ and $OUT/freebsd.tsv}"

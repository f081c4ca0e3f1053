#!/usr/bin/env bash
# Start-up of `tern nc --help` with the hand-written parser against a picocli model of the same commands
# (PicoTern.java): median wall time of 10 runs each, alternating. Usage: measure.sh [noaot|aot]
# Needs cli/target built (./tern or mvn -pl cli -am package) and picocli 4.7.7 in ~/.m2 (mvn dependency:get
# -Dartifact=info.picocli:picocli:4.7.7). Figures and the decision: docs/COMMANDS.md.
set -u
R=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
JAVA=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}/bin/java
F=(--enable-native-access=ALL-UNNAMED --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow)
CP="$R/cli/target/tern-cli.jar:$R/cli/target/lib/*"
PJ=$HOME/.m2/repository/info/picocli/picocli/4.7.7/picocli-4.7.7.jar
W=$(mktemp -d)
"${JAVA%java}javac" -d "$W/classes" -cp "$PJ" "$R/docs/measurements/picocli/PicoTern.java"
"${JAVA%java}jar" cf "$W/picotern.jar" -C "$W/classes" .   # an AOT cache takes jars only
PCP="$W/picotern.jar:$PJ:$CP"
AOT_A=(); AOT_B=()
if [[ ${1:-noaot} == aot ]]; then
  Q=(-Xlog:aot=off -Xlog:cds=off)
  $JAVA "${F[@]}" -XX:AOTCacheOutput="$W/a.aot" "${Q[@]}" -cp "$CP" dev.tern.cli.Tern nc --help >/dev/null 2>&1
  $JAVA "${F[@]}" -XX:AOTCacheOutput="$W/b.aot" "${Q[@]}" -cp "$PCP" PicoTern nc --help >/dev/null 2>&1
  AOT_A=(-XX:AOTCache="$W/a.aot" "${Q[@]}"); AOT_B=(-XX:AOTCache="$W/b.aot" "${Q[@]}")
fi
ms() { local s; s=$(date +%s%N); "$@" >/dev/null 2>&1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
A=(); B=()
for _ in $(seq 10); do
  A+=("$(ms "$JAVA" "${F[@]}" "${AOT_A[@]}" -cp "$CP" dev.tern.cli.Tern nc --help)")
  B+=("$(ms "$JAVA" "${F[@]}" "${AOT_B[@]}" -cp "$PCP" PicoTern nc --help)")
done
med() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (a[5]+a[6])/2}'; }
echo "${1:-noaot} hand-written: ${A[*]} ms, median $(med "${A[@]}") ms"
echo "${1:-noaot} picocli:      ${B[*]} ms, median $(med "${B[@]}") ms"
rm -rf "$W"

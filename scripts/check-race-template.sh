#!/usr/bin/env bash
# Runs the fenced-resource template's meta-tests N times in a row (default 50), each in a fresh working
# directory so that no jqwik database replays an earlier failing sample, while two busy loops keep both
# cores loaded. A run passes when the template caught every broken writer (unfenced, check-then-write,
# hard delete, forgetful delete of an absent id) and passed every correct one. Prints one line a run and a
# summary; exits non-zero on any miss or false alarm.
#   usage: scripts/check-race-template.sh [runs]      (FG_NO_BUILD=1: skip the build step)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-50}"
# FG_NO_BUILD=1 reuses the classes and class path of an earlier run.
[ "${FG_NO_BUILD:-0}" = 1 ] || ./mvnw -B -q -pl fence-guard-testkit -am test-compile dependency:build-classpath \
  -Dmdep.outputFile=target/test-classpath.txt -Dmdep.includeScope=test
set +u; . .mvn/select-jdk.sh; set -u
java_bin="${JAVA_HOME:+$JAVA_HOME/bin/}java"
root="$(pwd)"
cp="$root/fence-guard-testkit/target/test-classes:$root/fence-guard-testkit/target/classes:$(cat fence-guard-testkit/target/test-classpath.txt)"

busy=()
for _ in 1 2; do (while :; do :; done) & busy+=($!); done
trap 'kill "${busy[@]}" 2>/dev/null || true' EXIT

ok=0; bad=0
for i in $(seq 1 "$runs"); do
  work="$(mktemp -d)"
  if out="$(cd "$work" && "$java_bin" -cp "$cp" dev.fenceguard.testkit.RaceTemplateCheck 2>&1)"; then
    ok=$((ok + 1)); echo "run $i: ok ($(grep '^meta-tests:' <<<"$out"))"
  else
    bad=$((bad + 1)); echo "run $i: MISS OR FALSE ALARM"; grep -E '^(FAILED|meta-tests:)' <<<"$out" || tail -20 <<<"$out"
  fi
  rm -rf "$work"
done
echo "race template: runs=$runs passed=$ok failed=$bad (each run: fresh jqwik database, both cores busy)"
[ "$bad" -eq 0 ]

# Sourced by ./mvnw before anything else. fence-guard compiles with `release 21`, so Maven must run
# on a JDK 21 or newer. Machines of this project's kind default to Java 17 and carry a newer JDK
# under /usr/lib/jvm, so when JAVA_HOME (or the `java` on PATH) is older than 21 we pick the newest
# JDK >= 21 found in the usual install folders. An explicit JAVA_HOME that is new enough always wins.
fg_java_major() {
  # Prints the feature version of the JDK at $1 (reads its `release` file; no JVM start).
  [ -r "$1/release" ] || return 1
  sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" | head -n 1
}

fg_current_home=${JAVA_HOME:-}
if [ -z "$fg_current_home" ] && command -v java >/dev/null 2>&1; then
  fg_java=$(readlink -f "$(command -v java)" 2>/dev/null || true)
  fg_current_home=${fg_java%/bin/java}
fi
fg_current_major=$(fg_java_major "$fg_current_home" 2>/dev/null || true)

if [ "${fg_current_major:-0}" -lt 21 ] 2>/dev/null; then
  # ./mvnw runs under `set -f`; the JDK scan below needs globbing for a moment.
  case $- in *f*) fg_noglob=1; set +f ;; *) fg_noglob=0 ;; esac
  fg_best_home=""
  fg_best_major=0
  for fg_candidate in /usr/lib/jvm/* /opt/java/* /opt/jdk* "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/*; do
    [ -x "$fg_candidate/bin/javac" ] || continue
    fg_major=$(fg_java_major "$fg_candidate" 2>/dev/null || true)
    if [ "${fg_major:-0}" -ge 21 ] 2>/dev/null && [ "$fg_major" -gt "$fg_best_major" ]; then
      fg_best_home=$fg_candidate
      fg_best_major=$fg_major
    fi
  done
  [ "$fg_noglob" = 1 ] && set -f
  if [ -n "$fg_best_home" ]; then
    JAVA_HOME=$fg_best_home
    export JAVA_HOME
  else
    echo "fence-guard needs a JDK 21 or newer; found ${fg_current_major:-no} JDK at '${fg_current_home:-?}'." >&2
    echo "Install one (e.g. apt-get install openjdk-21-jdk) or set JAVA_HOME to it." >&2
  fi
fi
unset fg_noglob fg_current_home fg_current_major fg_best_home fg_best_major fg_candidate fg_major fg_java

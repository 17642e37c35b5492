#!/usr/bin/env bash
# gpukit.runner: scripts/gpu-check.sh's part runner on a fake tree (no GPU, no root needed):
# --list with expected minutes, --part by number and by name, a part we do not know by name still
# runs, a part that overruns GT_PART_LIMIT_S is stopped and reported as FAIL, a part that exits
# non-zero without a line is a FAIL, and what comes back under $OUT is at most 3 files a part,
# with files too large for the archive listed in files-left-out.txt.
#
#   bash tests/gpukit/runner_test.sh
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/gtrace-runner-test-XXXXXX)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# A kit-shaped tree: bin/gtrace (a stand-in that prints a version), lib/libgtrace.so, the real runner
# and common.bash, and fake parts.
mkdir -p "$T/kit/bin" "$T/kit/lib" "$T/kit/scripts/gpu-check.d"
printf '#!/bin/sh\necho "gtrace 9.9.9 (test stand-in)"\n' >"$T/kit/bin/gtrace"
chmod +x "$T/kit/bin/gtrace"
: >"$T/kit/lib/libgtrace.so"
cp "$SRC/scripts/gpu-check.sh" "$T/kit/scripts/"
cp "$SRC/scripts/gpu-check.d/common.bash" "$T/kit/scripts/gpu-check.d/"
D=$T/kit/scripts/gpu-check.d
cat >"$D/00-first.sh" <<'SH'
#!/usr/bin/env bash
# 00-first: passes, and keeps a big file that does not fit the archive
# expected-minutes: 1
set -u
. "$GT_SRC/scripts/gpu-check.d/common.bash"
echo "PASS 00-first: ok" >>"$GT_RESULTS"
echo small >"$OUT/kept.txt"
head -c $((9 * 1024 * 1024)) /dev/zero >"$GT_WORK/too-big.bin"
SH
cat >"$D/15-unknown.sh" <<'SH'
#!/usr/bin/env bash
# 15-unknown: a part added by someone else, without an expected-minutes line
echo "SKIP 15-unknown: no GPU (stand-in)" >>"$GT_RESULTS"
SH
cat >"$D/20-slow.sh" <<'SH'
#!/usr/bin/env bash
# 20-slow: overruns its own limit (2 s, below GT_PART_LIMIT_S)
# expected-minutes: 0.1
# limit-seconds: 2
. "$GT_SRC/scripts/gpu-check.d/common.bash"
echo "PASS 20-slow: before the hang" >>"$GT_RESULTS"
gt_timeout 600 sleep 60
echo "PASS 20-slow: after the hang (must not appear)" >>"$GT_RESULTS"
SH
cat >"$D/30-silent.sh" <<'SH'
#!/usr/bin/env bash
# 30-silent: exits 3 and says nothing
exit 3
SH
cp "$D/00-first.sh" "$D/00-first.sh.orig"  # not a part (*.sh only)
run() { (cd "$T" && env TMPDIR="$T" GT_PART_LIMIT_S=3 "$@"); }

list=$(run bash kit/scripts/gpu-check.sh --list) || fail "--list exited $?"
echo "$list"
echo "$list" | grep -qE '^00-first +1 +3s +passes' || fail "--list: no '00-first 1 3s passes...' line"
echo "$list" | grep -qE '^20-slow +0.1 +2s +overruns' || fail "--list: 20-slow's own limit (2 s) not shown"
echo "$list" | grep -qE '^15-unknown +\? ' || fail "--list: 15-unknown should show '?' minutes"
[ "$(echo "$list" | grep -cE '^[0-9]{2}-')" = 4 ] || fail "--list: want 4 parts"

run bash kit/scripts/gpu-check.sh --part 99 >/dev/null 2>"$T/err"
[ $? = 2 ] && grep -q "no part '99'" "$T/err" || fail "--part 99 should exit 2 with 'no part'"

# --part 0 (number) and --part unknown (name without its number), one call, with OUT.
mkdir "$T/out1"
run env OUT="$T/out1" bash kit/scripts/gpu-check.sh --part 0 --part unknown >"$T/run1.txt" 2>&1 ||
  { cat "$T/run1.txt"; fail "parts 0 and unknown should pass (exit 0)"; }
grep -q '^PASS 00-first: ok$' "$T/out1/summary.txt" || fail "summary lacks 00-first's line"
grep -q '^SKIP 15-unknown: ' "$T/out1/summary.txt" || fail "summary lacks 15-unknown's line"
grep -qE '^== 00-first used [0-9]+ s of GPU-machine time$' "$T/out1/summary.txt" || fail "no time line for 00-first"
grep -q 'gtrace 9.9.9' "$T/out1/summary.txt" || fail "summary lacks the gtrace version"
files=$(cd "$T/out1" && ls | sort | tr '\n' ' ')
[ "$files" = "00-first-files.tar.gz 00-first.log 15-unknown-files.tar.gz 15-unknown.log summary.txt " ] ||
  fail "OUT holds '$files'"
tar -tzf "$T/out1/00-first-files.tar.gz" >"$T/tar1.txt" || fail "archive unreadable"
grep -qx 'out/kept.txt' "$T/tar1.txt" || fail "the part's \$OUT file is not in the archive: $(cat "$T/tar1.txt")"
grep -qx 'too-big.bin' "$T/tar1.txt" && fail "a 9 MiB file went into the archive (8 MiB a file at most)"
tar -xzOf "$T/out1/00-first-files.tar.gz" files-left-out.txt | grep -q 'too-big.bin' ||
  fail "files-left-out.txt does not name too-big.bin"

# --part slow: stopped at its own limit (2 s), a FAIL line, exit 1, the line before the hang kept.
start=$(date +%s)
run env OUT="$T/out2" bash kit/scripts/gpu-check.sh --part slow >"$T/run2.txt" 2>&1
rc=$?
took=$(($(date +%s) - start))
cat "$T/run2.txt"
[ "$rc" = 1 ] || fail "an overrunning part should make the run exit 1, got $rc"
[ "$took" -lt 25 ] || fail "the overrunning part was not stopped in time ($took s)"
grep -q '^FAIL 20-slow: timed out after 2 s' "$T/out2/summary.txt" || fail "no timeout FAIL line after 2 s"
grep -q '^PASS 20-slow: before the hang$' "$T/out2/summary.txt" || fail "the line before the hang is lost"
grep -q 'must not appear' "$T/out2/summary.txt" && fail "the part went on after its limit"

# --part 30-silent (full name): exit 3 without a line is a FAIL.
run bash kit/scripts/gpu-check.sh --part 30-silent >"$T/run3.txt" 2>&1 && fail "a silent non-zero exit must fail the run"
grep -q '^FAIL 30-silent: exited 3 without a result line' "$T/run3.txt" || { cat "$T/run3.txt"; fail "no FAIL line for 30-silent"; }

# A kit without a runnable gtrace: FAIL kit, no part runs.
printf '#!/bin/sh\necho "error while loading shared libraries: libprotobuf.so.32" >&2; exit 127\n' >"$T/kit/bin/gtrace"
run bash kit/scripts/gpu-check.sh --part 0 >"$T/run4.txt" 2>&1 && fail "a broken gtrace must fail the run"
grep -q '^FAIL kit: .*libprotobuf' "$T/run4.txt" || { cat "$T/run4.txt"; fail "no FAIL kit line"; }
grep -q '00-first: ok' "$T/run4.txt" && fail "a part ran with a broken gtrace"
echo "runner: ok"

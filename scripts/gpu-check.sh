#!/usr/bin/env bash
# gpu-check.sh: the GPU half of gtrace's proof, in parts that each end within 8 minutes (the lent
# GPU machine allows 10 minutes a command). Every scripts/gpu-check.d/*.sh is one part, named by its
# file name (00-quick, 10-cuda, ...; a part added later is run and listed like the others).
#
#   bash scripts/gpu-check.sh --list                        parts, expected minutes, what each checks
#   bash scripts/gpu-check.sh [--build DIR] --part N|NAME [--part ...]
#                                  N: the number (0 = 00-quick); NAME: 00-quick or quick
#   bash scripts/gpu-check.sh [--build DIR]                 every part in order
#   bash scripts/gpu-check.sh BUILD_DIR                     (older form of --build)
#
# In the GPU kit (scripts/gpu-kit.sh) the kit is both build and source: `bash gpu-kit/gpu-check.sh
# --part 0`. Outside a kit the build dir defaults to build/ and is built when it lacks gtrace.
# Each part runs under `timeout` (GT_PART_LIMIT_S, default 450 s, or its own shorter
# `# limit-seconds: N` header line) and gets GT_PART_DEADLINE (epoch
# seconds) for its own per-command timeouts (gpu-check.d/common.bash: gt_timeout).
# Contract with a part: $GT_BUILD (dir with bin/gtrace, lib/libgtrace.so, bin/<samples>), $GT_SRC
# (dir with scripts/ and samples/: the repository or the kit), $GT_WORK (this part's scratch dir),
# $GT_RESULTS (append "PASS|FAIL|SKIP <name>: <detail>"), $OUT (a dir inside $GT_WORK for files the
# part wants kept). A part that exits non-zero without writing a line, or times out, is a FAIL.
# A machine without a GPU: every part ends as "SKIP <name>: no GPU ...".
# With $OUT set (the device tool brings back at most 8 files): $OUT/summary.txt (results and the
# time each part used), $OUT/<part>.log, $OUT/<part>-files.tar.gz (the part's logs, reports and
# small databases, at most 15 MiB). Exit status 0 when no FAIL line was written.
set -u
GT_SRC=$(cd "$(dirname "$0")/.." && pwd)
build_arg="" parts_arg=() list=0
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build_arg=${2:?--build needs a directory}; shift 2 ;;
    --part) parts_arg+=("${2:?--part needs a number or name}"); shift 2 ;;
    --part=*) parts_arg+=("${1#--part=}"); shift ;;
    --list) list=1; shift ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    -*) echo "gpu-check: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) build_arg=$1; shift ;;
  esac
done
limit_s=${GT_PART_LIMIT_S:-450}

# Parts: every *.sh in gpu-check.d, in name order. Header lines a part may carry:
#   # expected-minutes: 3      (GPU-machine minutes it is expected to take)
#   # limit-seconds: 290       (stop it sooner than GT_PART_LIMIT_S)
all_parts=()
for f in "$GT_SRC"/scripts/gpu-check.d/*.sh; do [ -e "$f" ] && all_parts+=("$(basename "$f" .sh)"); done
expected_min() { local m; m=$(grep -m1 -oE '^# expected-minutes: [0-9.]+' "$GT_SRC/scripts/gpu-check.d/$1.sh" | awk '{print $3}'); echo "${m:-?}"; }
part_limit() { local l; l=$(grep -m1 -oE '^# limit-seconds: [0-9]+' "$GT_SRC/scripts/gpu-check.d/$1.sh" | awk '{print $3}')
  if [ -n "$l" ] && [ "$l" -lt "$limit_s" ]; then echo "$l"; else echo "$limit_s"; fi; }
describe() { sed -n '2p' "$GT_SRC/scripts/gpu-check.d/$1.sh" | sed -E 's/^# *//; s/^[0-9]+-[a-z0-9-]+: *//' | cut -c1-90; }

if [ "$list" = 1 ]; then
  printf '%-16s %-8s %-6s %s\n' part minutes limit what
  for p in "${all_parts[@]}"; do
    printf '%-16s %-8s %-6s %s\n' "$p" "$(expected_min "$p")" "$(part_limit "$p")s" "$(describe "$p")"
  done
  echo "(limit: a part is stopped after that many seconds; at most 3 parts a device command)"
  exit 0
fi

# --part N|NAME -> part names.
selected=()
for want in "${parts_arg[@]}"; do
  hit=""
  for p in "${all_parts[@]}"; do
    num=${p%%-*} rest=${p#*-}
    if [ "$want" = "$p" ] || [ "$want" = "$rest" ] ||
       { [[ "$want" =~ ^[0-9]+$ ]] && [[ "$num" =~ ^[0-9]+$ ]] && [ "$((10#$want))" = "$((10#$num))" ]; }; then
      hit=$p
      break
    fi
  done
  if [ -z "$hit" ]; then
    echo "gpu-check: no part '$want'; parts: ${all_parts[*]}" >&2
    exit 2
  fi
  selected+=("$hit")
done
[ ${#selected[@]} -gt 0 ] || selected=("${all_parts[@]}")

if [ -n "$build_arg" ]; then
  mkdir -p "$build_arg"
  GT_BUILD=$(cd "$build_arg" && pwd)
elif [ -x "$GT_SRC/bin/gtrace" ]; then
  GT_BUILD=$GT_SRC  # a kit
else
  mkdir -p "$GT_SRC/build"
  GT_BUILD=$GT_SRC/build
fi
export GT_SRC GT_BUILD
base=$(mktemp -d "${TMPDIR:-/tmp}/gtrace-gpu-check-XXXXXX")
export GT_RESULTS=$base/results.txt
: >"$GT_RESULTS"
real_out=${OUT:-}
[ -n "$real_out" ] && mkdir -p "$real_out"
if [ -n "$real_out" ] && [ ${#selected[@]} -gt 3 ]; then
  echo "== note: ${#selected[@]} parts write $((1 + 2 * ${#selected[@]})) files to \$OUT; the device tool brings back 8 (3 parts a call)"
fi
summary=$base/summary.txt

{
  echo "== gpu-check: $(date -u +%FT%TZ) on $(hostname); parts: ${selected[*]}"
  echo "== kit/build: $GT_BUILD"
  [ -f "$GT_BUILD/KIT.txt" ] && head -2 "$GT_BUILD/KIT.txt" | sed 's/^/== /'
  if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/== GPU: /'
  else
    echo "== no nvidia-smi: no NVIDIA driver here; every part will SKIP (no GPU)"
  fi
  command -v python3 >/dev/null && echo "== $(python3 --version 2>&1)" || echo "== no python3"
  command -v ncu >/dev/null && echo "== ncu: $(ncu --version 2>/dev/null | tail -1)"
} | tee "$summary"

if [ ! -x "$GT_BUILD/bin/gtrace" ] || [ ! -f "$GT_BUILD/lib/libgtrace.so" ]; then
  if [ -f "$GT_SRC/CMakeLists.txt" ] && command -v cmake >/dev/null; then
    echo "== building in $GT_BUILD"
    (cmake -S "$GT_SRC" -B "$GT_BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGT_BUILD_TESTS=OFF >/dev/null &&
     cmake --build "$GT_BUILD" -j"$(nproc)" >"$base/build.log" 2>&1) || {
      echo "FAIL build: see $base/build.log"; tail -30 "$base/build.log"; exit 1; }
  else
    echo "FAIL kit: $GT_BUILD has no bin/gtrace and lib/libgtrace.so, and nothing to build them with" | tee -a "$GT_RESULTS"
    exit 1
  fi
fi
# The kit's own binaries must run here before any part means anything (a missing library is gtrace's fault).
if ! v=$("$GT_BUILD/bin/gtrace" --version 2>&1); then
  echo "FAIL kit: $GT_BUILD/bin/gtrace does not run here: $v" | tee -a "$GT_RESULTS" "$summary"
  [ -n "$real_out" ] && cp "$summary" "$real_out/summary.txt"
  exit 1
fi
echo "== $v" | tee -a "$summary"

# pack_part NAME: the part's scratch files, smallest first, up to 15 MiB (8 MiB a file) into
# $OUT/NAME-files.tar.gz; what did not fit is listed in files-left-out.txt inside it.
pack_part() {
  local dir=$base/$1 list=$base/$1.files budget=$((15 * 1024 * 1024)) used=0 size path
  : >"$list"
  : >"$dir/files-left-out.txt"
  while IFS=' ' read -r size path; do
    if [ "$size" -le $((8 * 1024 * 1024)) ] && [ $((used + size)) -le "$budget" ]; then
      echo "$path" >>"$list"
      used=$((used + size))
    else
      echo "$size $path" >>"$dir/files-left-out.txt"
    fi
  done < <(cd "$dir" && find . -type f ! -name files-left-out.txt -printf '%s %P\n' | sort -n)
  echo "files-left-out.txt" >>"$list"
  tar -C "$dir" -czf "$real_out/$1-files.tar.gz" -T "$list" 2>/dev/null ||
    echo "== could not pack $dir into $real_out/$1-files.tar.gz"
}

for name in "${selected[@]}"; do
  check=$GT_SRC/scripts/gpu-check.d/$name.sh
  export GT_WORK=$base/$name
  mkdir -p "$GT_WORK/out"
  start=$(date +%s)
  limit=$(part_limit "$name")
  export GT_PART_DEADLINE=$((start + limit - 15))
  echo "== $name (expected $(expected_min "$name") min, stopped after ${limit} s)" | tee -a "$summary"
  before=$(wc -l <"$GT_RESULTS")
  # The part's own $OUT is inside its scratch dir: everything it keeps comes back in one archive.
  OUT=$GT_WORK/out timeout -k 10 "$limit" bash "$check" 2>&1 | tee "$base/$name.log"
  rc=${PIPESTATUS[0]}
  elapsed=$(($(date +%s) - start))
  after=$(wc -l <"$GT_RESULTS")
  if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "FAIL $name: timed out after ${limit} s (the lines above it finished; log: $name.log)" >>"$GT_RESULTS"
  elif [ "$rc" -ne 0 ] && [ "$after" -eq "$before" ]; then
    echo "FAIL $name: exited $rc without a result line (log: $name.log)" >>"$GT_RESULTS"
  fi
  sed -n "$((before + 1)),\$p" "$GT_RESULTS" >>"$summary"
  echo "== $name used ${elapsed} s of GPU-machine time" | tee -a "$summary"
  cp "$base/$name.log" "$GT_WORK/part.log" 2>/dev/null
  if [ -n "$real_out" ]; then  # after every part: a command stopped later still brings this back
    cp "$base/$name.log" "$real_out/$name.log"
    pack_part "$name"
    cp "$summary" "$real_out/summary.txt"
  fi
done

pass=$(grep -c '^PASS' "$GT_RESULTS"); fail=$(grep -c '^FAIL' "$GT_RESULTS"); skip=$(grep -c '^SKIP' "$GT_RESULTS")
{
  echo
  echo "== summary"
  cat "$GT_RESULTS"
  echo "== $pass passed, $fail failed, $skip skipped"
} | tee -a "$base/final.txt"
cat "$base/final.txt" >>"$summary"
[ -n "$real_out" ] && cp "$summary" "$real_out/summary.txt"
echo "== scratch: $base"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# Benchmark of what a user's test build spends compiling the `probtest` crate itself: the crate
# as a user depends on it (default features, dev profile, no `_cli`), built from scratch with its
# dependencies already built, beside the same build of another checkout.
#
# Usage: BENCH_BASE=<another checkout of probtest> bash scripts/bench-runtime-build.sh
#
# Each checkout builds into a target directory of its own (target/bench-build/{this,base}), so
# that their dependencies are built once each and never rebuilt. Then, BENCH_REPS times (default
# 5), in alternating order: `cargo clean -p probtest`, and `cargo build -p probtest` timed, with
# CARGO_INCREMENTAL=0 so that the whole crate is compiled each time. Prints the median wall and
# CPU (user + system) seconds of each checkout and their ratio; the CPU figure moves less with
# the machine's load.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BENCH_BASE:?set BENCH_BASE to another checkout of probtest}"
REPS="${BENCH_REPS:-5}"
ROOT="$PWD/target/bench-build"
mkdir -p "$ROOT"

build() { # checkout, target dir, output file
    (cd "$1" && CARGO_TARGET_DIR="$2" CARGO_INCREMENTAL=0 cargo clean -q -p probtest \
        && /usr/bin/time -f "%e %U %S" -o "$3" env CARGO_TARGET_DIR="$2" CARGO_INCREMENTAL=0 \
            cargo build -q -p probtest)
}

for side in this base; do
    dir=$([ "$side" = this ] && echo "$PWD" || echo "$BENCH_BASE")
    (cd "$dir" && CARGO_TARGET_DIR="$ROOT/$side" CARGO_INCREMENTAL=0 cargo build -q -p probtest)
done
: >"$ROOT/this.times"
: >"$ROOT/base.times"
for rep in $(seq 1 "$REPS"); do
    order=$([ $((rep % 2)) = 1 ] && echo "this base" || echo "base this")
    for side in $order; do
        dir=$([ "$side" = this ] && echo "$PWD" || echo "$BENCH_BASE")
        build "$dir" "$ROOT/$side" "$ROOT/one.time"
        cat "$ROOT/one.time" >>"$ROOT/$side.times"
    done
done
python3 - "$ROOT" <<'PY'
import statistics, sys
root = sys.argv[1]
def read(side):
    rows = [line.split() for line in open(f"{root}/{side}.times") if line.strip()]
    return [float(r[0]) for r in rows], [float(r[1]) + float(r[2]) for r in rows]
this_wall, this_cpu = read("this")
base_wall, base_cpu = read("base")
med = statistics.median
print(f"probtest crate, from scratch ({len(this_wall)} builds each, medians):")
print(f"  this: {med(this_wall):6.2f} s wall  {med(this_cpu):6.2f} s CPU")
print(f"  base: {med(base_wall):6.2f} s wall  {med(base_cpu):6.2f} s CPU")
print(f"  this/base: {med(this_wall)/med(base_wall):.2f}x wall  {med(this_cpu)/med(base_cpu):.2f}x CPU")
PY

# Benchmark of cases from a data file: 10,000 rows of `cases(...)` vs the same 10,000 cases
# written in `params(...)`, build time, run time and binary size side by side.
#
# Usage: bash scripts/bench-dataset.sh   (from the repo root; nothing to install)
#
# What it does:
#   1. Generates two standalone fixture crates under target/bench-dataset/ (each with an empty
#      [workspace] table, probtest as a path dev-dependency) with one function of BENCH_ROWS
#      cases and one run each, the same body, the same ids, the same argument types:
#        params:  #[probability(params((text, expected) = [("ticket 1 ...", 1) => "r1", ...]))]
#        dataset: #[probability(cases((text, expected) = "data/rows.jsonl", id = "id"))]
#                 with data/rows.jsonl holding {"id": "r1", "text": "ticket 1 ...", "expected": 1}
#      Both build with the dev profile into one shared CARGO_TARGET_DIR
#      (target/bench-dataset/target), so dependencies are compiled once.
#   2. Build time: `touch tests/bench.rs`, then `cargo build --tests` with CARGO_INCREMENTAL=0
#      (expansion, type checking, codegen and linking of the whole test crate); median of
#      BENCH_BUILD_REPS builds, the two crates alternating, after one untimed build each.
#   3. Run time: the built test binaries run directly from their crate directories, default
#      --test-threads, output to /dev/null; median of BENCH_RUN_REPS runs after one warm-up.
#      Each binary must first report "test result: ok. <rows> passed". A dataset run also reads
#      its row (serde_json into `String` and `u32`); the difference per run is that cost.
#
# Knobs (environment): BENCH_ROWS (default 10000), BENCH_BUILD_REPS (default 3),
# BENCH_RUN_REPS (default 5).
set -euo pipefail
shopt -s inherit_errexit

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

# Settings of the environment must not change what is built or run.
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep '^PROB_' || true)
unset RUST_BACKTRACE RUST_LIB_BACKTRACE RUST_TEST_THREADS CARGO_BUILD_TARGET_DIR || true

ROWS=${BENCH_ROWS:-10000}
BUILD_REPS=${BENCH_BUILD_REPS:-3}
RUN_REPS=${BENCH_RUN_REPS:-5}

WORK="$ROOT/target/bench-dataset"
export CARGO_TARGET_DIR="$WORK/target"
export CARGO_INCREMENTAL=0
mkdir -p "$WORK"

log() { printf '[bench-dataset] %s\n' "$*" >&2; }

BODY='assert!(!text.is_empty()); assert!(expected >= 1);'

# ---------------------------------------------------------------- fixtures

manifest() {
  cat <<EOF
[package]
name = "bench-dataset-$1"
version = "0.0.0"
edition = "2021"
publish = false

[[test]]
name = "bench"
path = "tests/bench.rs"

[dev-dependencies]
probtest = { path = "$ROOT/runtime" }

[workspace]
EOF
}

write_fixtures() {
  for kind in params dataset; do
    mkdir -p "$WORK/$kind/tests" "$WORK/$kind/src"
    manifest "$kind" > "$WORK/$kind/Cargo.toml"
    : > "$WORK/$kind/src/lib.rs"
    cp "$ROOT/Cargo.lock" "$WORK/$kind/Cargo.lock"
  done
  mkdir -p "$WORK/dataset/data"
  awk -v rows="$ROWS" 'BEGIN {
    for (i = 1; i <= rows; i++)
      printf "{\"id\": \"r%d\", \"text\": \"ticket %d: where is my parcel?\", \"expected\": %d}\n", i, i, i % 7 + 1
  }' > "$WORK/dataset/data/rows.jsonl"
  {
    echo 'use probtest::probability;'
    echo
    echo '#[probability(cases((text, expected) = "data/rows.jsonl", id = "id"))]'
    echo "fn bench_rows(text: &str, expected: u32) { $BODY }"
  } > "$WORK/dataset/tests/bench.rs"
  {
    echo 'use probtest::probability;'
    echo
    echo '#[probability(params((text, expected) = ['
    awk -v rows="$ROWS" 'BEGIN {
      for (i = 1; i <= rows; i++)
        printf "    (\"ticket %d: where is my parcel?\", %d) => \"r%d\",\n", i, i % 7 + 1, i
    }'
    echo ']))]'
    echo "fn bench_rows(text: &str, expected: u32) { $BODY }"
  } > "$WORK/params/tests/bench.rs"
}

# ---------------------------------------------------------------- measuring

now() { date +%s.%N; }

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

build() {
  touch "$WORK/$1/tests/bench.rs"
  cargo build --quiet --tests --manifest-path "$WORK/$1/Cargo.toml"
}

binary() {
  cargo test --no-run --message-format=json --manifest-path "$WORK/$1/Cargo.toml" 2>/dev/null \
    | grep '"kind":\["test"\]' | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1
}

time_build() {
  local start end
  start=$(now)
  build "$1"
  end=$(now)
  echo "$end - $start" | bc -l
}

time_run() {
  local start end
  start=$(now)
  (cd "$WORK/$1" && "$2" > /dev/null 2>&1)
  end=$(now)
  echo "$end - $start" | bc -l
}

# ---------------------------------------------------------------- main

log "writing fixtures with $ROWS rows"
write_fixtures

for kind in params dataset; do
  log "first build of $kind (dependencies included, not timed)"
  build "$kind"
done

declare -A BUILD RUN BIN SIZE
for kind in params dataset; do BUILD[$kind]=""; RUN[$kind]=""; done
for rep in $(seq "$BUILD_REPS"); do
  for kind in params dataset; do
    log "build $rep/$BUILD_REPS: $kind"
    seconds=$(time_build "$kind")
    log "  ${seconds}s"
    BUILD[$kind]+="$seconds"$'\n'
  done
done

for kind in params dataset; do
  BIN[$kind]=$(binary "$kind")
  SIZE[$kind]=$(stat -c %s "${BIN[$kind]}")
  out=$(cd "$WORK/$kind" && "${BIN[$kind]}" 2>&1 || true)
  if ! grep -q "test result: ok. $ROWS passed" <<< "$out"; then
    echo "$kind: the binary did not pass $ROWS tests:" >&2
    tail -n 20 <<< "$out" >&2
    exit 1
  fi
done
for rep in $(seq "$RUN_REPS"); do
  for kind in params dataset; do
    log "run $rep/$RUN_REPS: $kind"
    RUN[$kind]+="$(time_run "$kind" "${BIN[$kind]}")"$'\n'
  done
done

build_p=$(printf '%s' "${BUILD[params]}" | median)
build_d=$(printf '%s' "${BUILD[dataset]}" | median)
run_p=$(printf '%s' "${RUN[params]}" | median)
run_d=$(printf '%s' "${RUN[dataset]}" | median)

printf '\n%s rows x 1 run, dev profile, %s builds / %s runs (medians)\n\n' "$ROWS" "$BUILD_REPS" "$RUN_REPS"
printf '| %-27s | %12s | %12s | %7s |\n' "" "params(...)" "cases(...)" "ratio"
printf '|%s|%s|%s|%s|\n' "-----------------------------" "--------------" "--------------" "---------"
printf '| %-27s | %10.2f s | %10.2f s | %7.2f |\n' "build (cargo build --tests)" "$build_p" "$build_d" "$(echo "$build_d / $build_p" | bc -l)"
printf '| %-27s | %10.2f s | %10.2f s | %7.2f |\n' "run (whole binary)" "$run_p" "$run_d" "$(echo "$run_d / $run_p" | bc -l)"
printf '| %-27s | %9.1f us | %9.1f us | %7.2f |\n' "run, per item" "$(echo "$run_p * 1000000 / $ROWS" | bc -l)" "$(echo "$run_d * 1000000 / $ROWS" | bc -l)" "$(echo "$run_d / $run_p" | bc -l)"
printf '| %-27s | %9.1f MB | %9.1f MB | %7.2f |\n' "test binary" "$(echo "${SIZE[params]} / 1000000" | bc -l)" "$(echo "${SIZE[dataset]} / 1000000" | bc -l)" "$(echo "${SIZE[dataset]} / ${SIZE[params]}" | bc -l)"

#!/usr/bin/env bash
# Benchmark of the flaky-test doctor's wall time: `cargo probtest doctor` on a hash-order flake
# (tests/fixtures/doctor/entropy.rs) side by side with pytest-flakedoctor on the same flake in
# Python (a set's iteration order leaking into an assertion, decided by PYTHONHASHSEED).
#
# Usage: bash scripts/bench-doctor.sh   (from the repo root)
#
# Both tools are timed from the command to the printed report, after the Rust test binary is
# built (the doctor's own `cargo test --no-run` finds it up to date, as a second diagnosis in a
# real project would), taking turns so that drift hits both alike; medians over BENCH_REPS runs
# (default 5), and the diagnosis each reached. pytest-flakedoctor is installed into
# target/peer-venv when missing (network needed once); without Python the peer is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
REPS=${BENCH_REPS:-5}
WORK=$ROOT/target/bench-doctor
mkdir -p "$WORK/rust/src" "$WORK/rust/tests" "$WORK/python"

cat >"$WORK/rust/Cargo.toml" <<'TOML'
[package]
name = "bench-doctor"
version = "0.0.0"
edition = "2021"
publish = false

[workspace]
TOML
echo '//! Nothing: the flake is in tests/entropy.rs.' >"$WORK/rust/src/lib.rs"
cp "$ROOT/tests/fixtures/doctor/entropy.rs" "$WORK/rust/tests/entropy.rs"
cat >"$WORK/python/test_tags.py" <<'PY'
def distinct_tags(tags):
    return list(set(tags))


def test_hash_order_victim():
    assert distinct_tags(["a", "b", "a"]) == ["a", "b"], "distinct tags out of order"
PY

echo "[bench] building cargo-probtest (release) and the fixture" >&2
cargo build -q --release -p cargo-probtest
DOCTOR=$ROOT/target/release/cargo-probtest
(cd "$WORK/rust" && cargo test -q --no-run --test entropy 2>/dev/null)

VENV=$ROOT/target/peer-venv
PEER=""
if [ -x "$VENV/bin/flakedoctor" ]; then
    PEER=$VENV/bin/flakedoctor
elif command -v python3 >/dev/null; then
    echo "[bench] installing pytest-flakedoctor into $VENV" >&2
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    if "$VENV/bin/pip" install -q --disable-pip-version-check pytest-flakedoctor; then
        PEER=$VENV/bin/flakedoctor
    fi
fi
[ -n "$PEER" ] || echo "[bench] pytest-flakedoctor unavailable: the peer's column is skipped" >&2

TIMES=$WORK/times.tsv
: >"$TIMES"
for rep in $(seq 1 "$REPS"); do
    for tool in rust python; do
        [ "$tool" = python ] && [ -z "$PEER" ] && continue
        start=$(date +%s.%N)
        if [ "$tool" = rust ]; then
            verdict=$(cd "$WORK/rust" && "$DOCTOR" probtest doctor hash_order_victim --test entropy \
                --json "$WORK/rust-$rep.json" 2>/dev/null >/dev/null || true
                python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['verdict'])" "$WORK/rust-$rep.json")
        else
            verdict=$(cd "$WORK/python" && "$PEER" test_tags.py::test_hash_order_victim 2>&1 \
                | grep -o 'DIAGNOSIS  .*' | head -1 || true)
        fi
        end=$(date +%s.%N)
        printf '%s\t%s\t%s\n' "$tool" "$(echo "$end - $start" | bc)" "$verdict" >>"$TIMES"
    done
done

python3 - "$TIMES" "$REPS" <<'PY'
import statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.strip()]
by = {}
for tool, seconds, verdict in rows:
    by.setdefault(tool, []).append((float(seconds), verdict))
print(f"doctor benchmark: a hash-order flake, {sys.argv[2]} diagnoses each, wall time from command to report")
rust = statistics.median(s for s, _ in by["rust"])
for tool, label in [("rust", "cargo probtest doctor (release)"), ("python", "pytest-flakedoctor")]:
    if tool not in by:
        continue
    times = sorted(s for s, _ in by[tool])
    verdicts = sorted({v for _, v in by[tool]})
    median = statistics.median(times)
    print(f"  {label:<34} {median:7.2f} s  [{times[0]:.2f}, {times[-1]:.2f}]  {median / rust:6.1f}x   {'; '.join(verdicts)}")
PY

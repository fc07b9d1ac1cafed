#!/usr/bin/env python3
"""What probtest adds to each test process, measured process by process.

Part of scripts/bench-sessions.sh. A whole `cargo nextest run` takes seconds, and on a shared
machine its speed drifts by more than the few percent being measured, even between two suites
timed back to back. Here the suites' test binaries are run directly, one test per process as
nextest runs them (its environment variables, `NEXTEST_TEST_NAME` included, so that the run starts
before `main` as under nextest; `--exact <name> --nocapture`), taking turns
process by process in a rotating order. Drift then hits every kind alike, and the paired
difference per process is steady to a few microseconds.

Usage: bench_processes.py PROCESSES PER_TEST_CPU_US OUT_DIR KIND=DIR[:record] ...
(the first kind is the baseline; PER_TEST_CPU_US is nextest's own CPU time per test, measured
on the whole suite, or 0)

Runs PROCESSES processes of each kind and prints one line per kind: its median wall and CPU
time per process, its extra CPU time per process over the baseline (median of paired
differences, with quartiles), and that as a share of nextest's CPU time per test. With
":record" the runs write to the session store and to a report (PROB_JSON), one session per
pass over the suite's tests.
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import time


def list_tests(directory):
    """The test binary of a fixture crate and the names of its tests that are not ignored."""
    listing = subprocess.run(
        ["cargo", "nextest", "list", "--message-format", "json"],
        cwd=directory,
        check=True,
        capture_output=True,
        text=True,
    )
    for suite in json.loads(listing.stdout)["rust-suites"].values():
        names = [name for name, case in sorted(suite["testcases"].items()) if not case["ignored"]]
        if names:
            return suite["binary-path"], names
    sys.exit(f"bench_processes: no test found in {directory}")


def run_once(binary, name, env, devnull):
    """Wall and CPU (user + system) time of one test process, in microseconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter_ns()
    pid = os.posix_spawn(
        binary,
        [binary, "--exact", name, "--nocapture"],
        env,
        file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)],
    )
    _, status = os.waitpid(pid, 0)
    wall = (time.perf_counter_ns() - start) / 1e3
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if status != 0:
        sys.exit(f"bench_processes: {binary} --exact {name} failed ({status})")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1e6
    return wall, cpu


def quartiles(values):
    if len(values) < 2:
        return values[0], values[0], values[0]
    low, median, high = statistics.quantiles(values, n=4)
    return low, median, high


def main():
    processes, per_test, out_dir = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
    specs = sys.argv[4:]
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PROB_", "NEXTEST_"))}
    base.update(
        NEXTEST="1",
        NEXTEST_EXECUTION_MODE="process-per-test",
        NEXTEST_ATTEMPT="1",
        NEXTEST_TEST_PHASE="run",
    )
    kinds = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        directory, _, flag = rest.partition(":")
        binary, names = list_tests(directory)
        kinds.append((name, binary, names, flag == "record"))
    devnull = os.open(os.devnull, os.O_WRONLY)
    times = {name: [] for name, *_ in kinds}
    stamp = time.time_ns()
    # Binaries just written by the linker are dirty in the page cache until written back, and
    # run slower meanwhile: flush them. How a binary's pages sit in the page cache depends on how
    # it got there (written by the linker, copied, read back), and that alone moved one binary's
    # time per process by 100 us or more: drop the cache where allowed, so that every kind is
    # read back from disk the same way, then run each once before timing.
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as knob:
            knob.write("3\n")
    except OSError as error:
        print(f"bench_processes: page cache not dropped ({error.strerror}); kinds built at "
              "different times may differ by how their pages are cached", file=sys.stderr)
    for name, binary, names, record in kinds:
        env = dict(base, NEXTEST_RUN_ID=f"bench-{name}-{stamp}-warmup", NEXTEST_TEST_NAME=names[0])
        if record:
            env["PROB_JSON"] = os.path.join(out_dir, f"bench-{name}-{stamp}-warmup.json")
        run_once(binary, names[0], env, devnull)
    for turn in range(processes):
        rotation = turn % len(kinds)
        for name, binary, names, record in kinds[rotation:] + kinds[:rotation]:
            session = f"bench-{name}-{stamp}-{turn // len(names)}"
            test = names[turn % len(names)]
            env = dict(base, NEXTEST_RUN_ID=session, NEXTEST_TEST_NAME=test)
            if record:
                env["PROB_JSON"] = os.path.join(out_dir, f"{session}.json")
            times[name].append(run_once(binary, test, env, devnull))
    baseline = kinds[0][0]
    print(f"{'kind':<9} {'wall':>9} {'cpu':>9} {'extra cpu':>10} {'quartiles':>16} {'share':>6}")
    for name, *_ in kinds:
        walls = [wall for wall, _ in times[name]]
        cpus = [cpu for _, cpu in times[name]]
        extra = [cpu - base_cpu for (_, cpu), (_, base_cpu) in zip(times[name], times[baseline])]
        low, median, high = quartiles(extra)
        share = f"{100 * median / per_test:.1f}%" if per_test > 0 else "?"
        print(
            f"{name:<9} {statistics.median(walls):>7.0f}us {statistics.median(cpus):>7.0f}us "
            f"{median:>8.0f}us {f'{low:.0f}..{high:.0f}us':>16} {share:>6}"
        )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Runs the failure matrix: failure_matrix (tests/outside/failure_matrix.cpp) once per cell of
{abort, propagate} x {fault} x {teardown} x {executor} x {ranks}, each as its own job, and
checks how each ended: within the time limit, with the program's own exit code (3 under
propagate; under abort the job's: 1 for a failure, 2 for the watchdog, 3 where the failure
reaches every rank as data), and a report naming what is missing. Under abort the job ends
at the fault, so the teardown does not apply there. Prints one line per cell that did not
end as expected, and the counts; exits 1 when any cell failed.

  run_failure_matrix.py --program PATH --launcher "mpiexec --oversubscribe" [--ranks 1,2,3,4]
                        [--policies ...] [--faults ...] [--teardowns ...] [--executors ...]
                        [--jobs N] [--timeout S] [--watchdog S] [--env NAME=VALUE ...]
                        [--part K/N]

--part K/N keeps the cells whose place in the full product of policy, fault, teardown and
executor (the same place at every rank count) is K modulo N: CTest's default suite runs
part R-1 of 4 at R ranks (R = 1-4), so each cell runs once; scripts/run-failure-matrix.sh
runs every cell at 1-4 ranks.
"""
import argparse
import concurrent.futures
import itertools
import os
import subprocess
import sys
import time

FAULTS = ["missing_list", "never_started", "task_exception", "usage_error", "remote_failure"]
TEARDOWNS = ["objects_then_context", "context_first", "waitall_first", "more_cycles", "new_context"]
EXECUTORS = ["serial", "threaded", "foreign"]
POLICIES = ["abort", "propagate"]

# What each fault's job prints under FailurePolicy::abort before it ends, and its exit code.
ABORT_EXPECT = {
    "missing_list": (2, "missing lists: 1"),
    "never_started": (2, "'aux'"),
    "task_exception": (1, "injected fault: block 0 cannot advance"),
    "usage_error": (1, "contributed twice"),
    "remote_failure": (3, "'energy'"),
}


def cells(args):
    part, parts = args.part
    for policy, fault, executor, ranks in itertools.product(args.policies, args.faults,
                                                            args.executors, args.ranks):
        teardowns = args.teardowns if policy == "propagate" or fault == "remote_failure" \
            else ["objects_then_context"]
        for teardown in teardowns:
            place = (((POLICIES.index(policy) * len(FAULTS) + FAULTS.index(fault)) *
                      len(TEARDOWNS) + TEARDOWNS.index(teardown)) * len(EXECUTORS) +
                     EXECUTORS.index(executor))
            if place % parts == part:
                yield policy, fault, teardown, executor, ranks


def run(cell, args):
    policy, fault, teardown, executor, ranks = cell
    command = args.launcher.split() + ["-n", str(ranks), args.program, f"--policy={policy}",
                                       f"--fault={fault}", f"--teardown={teardown}",
                                       f"--executor={executor}", f"--watchdog={args.watchdog}"]
    env = dict(os.environ)
    for kv in args.env:
        name, _, value = kv.partition("=")
        env[name] = value
    start = time.monotonic()
    try:
        p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=args.timeout, env=env)
        out, code = p.stdout.decode(errors="replace"), p.returncode
    except subprocess.TimeoutExpired as e:
        out, code = (e.stdout or b"").decode(errors="replace"), None
    seconds = time.monotonic() - start
    problem = judge(cell, code, out)
    return cell, seconds, code, problem, out


def judge(cell, code, out):
    policy, fault, teardown, executor, ranks = cell
    if code is None:
        return "did not end in time (a hang)"
    if code < 0 or code > 128 or "Segmentation fault" in out or "signal" in out.lower():
        return f"crashed (exit {code})"
    if "UNEXPECTED" in out:
        return "the program saw something unexpected: " + next(
            line for line in out.splitlines() if "UNEXPECTED" in line)
    if "AddressSanitizer" in out or "LeakSanitizer" in out or "runtime error:" in out:
        return "a sanitizer reported an error"
    if policy == "propagate" or fault == "remote_failure":
        if code != 3:
            return f"exit {code}, expected the program's own 3"
        if f"failure_matrix: rank {ranks - 1}: exit 3" not in out:
            return "the last rank did not reach its own exit"
        return None
    want_code, want_text = ABORT_EXPECT[fault]
    if code != want_code:
        return f"exit {code}, expected MPI_Abort's {want_code}"
    if want_text not in out:
        return f"the report does not name {want_text!r}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", required=True)
    ap.add_argument("--launcher", required=True, help="the launcher and its flags, without -n")
    ap.add_argument("--ranks", default="1,2,3,4")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--faults", default=",".join(FAULTS))
    ap.add_argument("--teardowns", default=",".join(TEARDOWNS))
    ap.add_argument("--executors", default=",".join(EXECUTORS))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--watchdog", type=float, default=1.0)
    ap.add_argument("--env", action="append", default=[], help="NAME=VALUE for every cell")
    ap.add_argument("--show", action="store_true", help="print the output of failed cells")
    ap.add_argument("--part", default="0/1", help="K/N: the cells whose place is K modulo N")
    args = ap.parse_args()
    args.part = tuple(int(x) for x in args.part.split("/"))
    if len(args.part) != 2 or not 0 <= args.part[0] < args.part[1]:
        ap.error(f"--part wants K/N with 0 <= K < N, not {args.part}")
    args.ranks = [int(r) for r in args.ranks.split(",")]
    for name in ("policies", "faults", "teardowns", "executors"):
        setattr(args, name, getattr(args, name).split(","))
    todo = list(cells(args))
    failed, slowest = 0, 0.0
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for cell, seconds, code, problem, out in pool.map(lambda c: run(c, args), todo):
            slowest = max(slowest, seconds)
            if problem:
                failed += 1
                print(f"FAILED {'/'.join(map(str, cell))}: {problem}", flush=True)
                if args.show:
                    print(out, flush=True)
    print(f"failure matrix: {len(todo) - failed} of {len(todo)} cells ended as expected "
          f"(ranks {','.join(map(str, args.ranks))}, part {args.part[0]}/{args.part[1]}; slowest cell {slowest:.1f} s; "
          f"{time.monotonic() - start:.0f} s in all)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

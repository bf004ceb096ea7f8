#!/usr/bin/env bash
# Where a reduction cycle's instructions go, step by step (docs/performance.md, "The cycle
# on the MPI library's schedule"): runs bench/core/cycle_steps at 2 ranks under callgrind
# (both ranks, so that both are slowed alike) for the raw MPI_Iallreduce + MPI_Test loop,
# the task-engine cycle on the MPI library's schedule and on the tree's, and prints rank 0's
# instructions per cycle in each step. Instruction counts do not depend on the machine's
# load; how many polls a cycle makes does (each waits for the other rank), so the table
# gives the cost of one poll and the polls per cycle apart.
#
#   scripts/profile-cycle.sh [--cycles N] [--build DIR] [--keep DIR] [--length]
#     (default: 5000 cycles, build/default; --keep writes the callgrind files there)
#   --length: instead, the cost of the length check of DebugLevel::basic on the MPI
#     library's schedule (cycle_steps length-none and length-basic: a StartReduce +
#     CheckReduce loop of one element, docs/performance.md, "Reductions at 2 ranks")
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
cycles=5000
build="$root/build/default"
keep=""
variants="raw library tree"
while (($#)); do
  case "$1" in
    --cycles) cycles="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    --length) variants="length-none length-basic"; shift ;;
    *) echo "usage: scripts/profile-cycle.sh [--cycles N] [--build DIR] [--keep DIR] [--length]" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "profile-cycle.sh: needs valgrind" >&2; exit 2; }
export TRIBUTARY_BUILD="$build"
source "$here/common.sh"
cmake --build "$build" -j "${TRIBUTARY_JOBS:-2}" --target cycle_steps >/dev/null
tributary_launcher 2
out="${keep:-$(mktemp -d "${TMPDIR:-/tmp}/tributary-profile.XXXXXX")}"
mkdir -p "$out"
[[ -n "$keep" ]] || trap 'rm -rf "$out"' EXIT
for v in $variants; do
  # Each rank's file by its rank (Open MPI or MPICH names it in the environment).
  "${TRIBUTARY_LAUNCH[@]}" sh -c 'exec valgrind --tool=callgrind \
    --callgrind-out-file="$0.${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" "$@"' "$out/$v" \
    "$build/bench/core/cycle_steps" "$v" "$cycles" 2>/dev/null | grep cycle_steps
  callgrind_annotate --inclusive=yes --tree=caller --threshold=100 "$out/$v.0" >"$out/$v.txt" 2>/dev/null
done
python3 - "$out" "$cycles" "$variants" <<'EOF'
import re, sys
out, cycles, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()

def functions(path):
    """Inclusive instructions and calls per function of a callgrind_annotate --tree=caller file."""
    found = {}
    for block in open(path).read().split("\n\n"):
        lines = [l for l in block.split("\n") if l.strip()]
        star = [l for l in lines if "*  " in l]
        if not star:
            continue
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+\*\s+(.*)", star[0])
        if not m:
            continue
        calls = 0
        for l in lines:
            c = re.search(r"\(([\d,]+)x\)", l)
            if "<" in l and c:
                calls += int(c.group(1).replace(",", ""))
        found[m.group(2)] = (int(m.group(1).replace(",", "")), calls)
    return found

def pick(found, *parts):
    """Instructions and calls of the function whose names hold every part (callgrind lists
    a function under its source file and under its object; the calls are on one of them)."""
    best = (0, 0)
    for name, v in found.items():
        if all(p in name for p in parts):
            best = (max(best[0], v[0]), max(best[1], v[1]))
    return best

if variants[0].startswith("length"):
    # Launch and checks, Tributary's part (the library's start and tests taken out): what
    # basic adds at the launch does not depend on the machine's load; the checks do, through
    # the polls per cycle, so their cost per check is given too.
    got = {}
    for v in variants:
        f = functions(f"{out}/{v}.txt")
        test, start = pick(f, "PMPI_Test"), pick(f, "PMPI_Start")
        launch, check = pick(f, "ReductionCore::Launch("), pick(f, "ReductionCore::Check()")
        got[v] = [("launch, Tributary's part", (launch[0] - start[0]) / cycles),
                  ("checks, Tributary's part", (check[0] - test[0]) / cycles),
                  ("checks per cycle", check[1] / cycles),
                  ("Tributary's part per check", (check[0] - test[0]) / max(check[1], 1))]
    print(f"\n### The length check on the MPI library's schedule: instructions per cycle "
          f"(rank 0 of 2, callgrind, {cycles} cycles)\n")
    print("| step | none | basic | basic - none |\n|---|---:|---:|---:|")
    for k, (name, a) in enumerate(got["length-none"]):
        b = got["length-basic"][k][1]
        fmt = "{:,.2f}" if "per cycle" in name else "{:,.0f}"
        print(f"| {name} | {fmt.format(a)} | {fmt.format(b)} | {fmt.format(b - a)} |")
    sys.exit(0)

rows = []
for v in ["raw", "library", "tree"]:
    f = functions(f"{out}/{v}.txt")
    per = lambda x: x / cycles
    test = pick(f, "PMPI_Test")
    iar = pick(f, "PMPI_Iallreduce")  # called by the loop or by the library's schedule
    start = pick(f, "PMPI_Start")  # the persistent request's start (library's schedule)
    iar = (iar[0] + start[0], iar[1] + start[1])
    if v == "raw":
        rows.append((v, [("MPI_Iallreduce", per(iar[0])), ("MPI_Test (all polls)", per(test[0])),
                         ("polls per cycle", per(test[1])),
                         ("instructions per poll", test[0] / max(test[1], 1))]))
        continue
    execute = pick(f, "tributary::Context::Execute(")
    expect = pick(f, "ReductionCore::Arm(")
    contribute = pick(f, "TypedReduction<double>::CombineAndLaunch()")
    launch = pick(f, "ReductionCore::Launch(")
    check = pick(f, "ReductionCore::Check()")
    hooks = pick(f, "TaskEngine::CallHooks()")
    finish = pick(f, "ReductionCore::Finish()")
    steps = [("arm (Expect)", per(expect[0])),
             ("contribute: combine and launch", per(contribute[0] - launch[0])),
             ("launch, Tributary's part", per(launch[0] - (iar[0] if v == "library" else 0))),
             ("MPI_Iallreduce or MPI_Start" if v == "library" else "schedule start and posts", per(iar[0]) if v == "library" else 0),
             ("checks (CheckReduce), Tributary's part", per(check[0] - test[0] - finish[0])),
             ("MPI_Test (all polls)", per(test[0])),
             ("finish", per(finish[0])),
             ("idle sweeps' hooks (Context::Progress)", per(hooks[0])),
             ("executor, the rest", per(execute[0] - contribute[0] - check[0] - hooks[0])),
             ("checks per cycle", per(check[1])),
             ("polls (MPI_Test) per cycle", per(test[1])),
             ("instructions per poll", test[0] / max(test[1], 1))]
    rows.append((v, steps))
print(f"\n### Instructions per cycle by step (rank 0 of 2, callgrind, {cycles} cycles)\n")
for v, steps in rows:
    print(f"\n{v}:\n\n| step | instructions |\n|---|---:|")
    for name, x in steps:
        print(f"| {name} | {x:,.1f} |" if "per cycle" in name else f"| {name} | {x:,.0f} |")
EOF

#!/bin/sh
# bench/mnist_ranks.sh [build-dir] [rounds]: issue 16's MNIST target (2 ranks
# >= 1.8x one rank), examples/chainermn/mnist/train_mnist.lua --epoch 1 with
# per-phase timers (bench/mnist_phases.lua), one OpenMP thread per rank,
# rounds of the kinds in $KINDS (default "1rank 2ranks 2ranks-noexchange"):
#   1rank               one process
#   2ranks              mpirun -np 2, the gradient mean as chosen by default
#   2ranks-mpi          the same, the mean forced through MPI_Allreduce
#   2ranks-shm          the same, the mean forced through shared memory
#                       (CHAINERMN_MEAN_GRAD, lua/chainermn/_shm_mean.lua)
#   2ranks-noexchange   no gradient exchange at all (BENCH_NO_EXCHANGE=1:
#                       the ceiling that sharing the machine allows)
# BENCH_SKEW=1 (passed on) adds a timed barrier before every exchange
# (bench/mnist_phases.lua).  Prints per kind the median [min - max]
# elapsed_time (the trainer's), the speed-ups of the medians, and the
# medians of rank 0's process CPU time (trainer:run) and of its exchange
# (mean_grad, and skew with BENCH_SKEW=1) per update, wall and CPU: these
# move less than wall time when the machine is shared.  The raw output is
# kept in $OUT (default /tmp/mnist_ranks.txt).
set -e
BUILD=${1:-build}
ROUNDS=${2:-3}
OUT=${OUT:-/tmp/mnist_ranks.txt}
KINDS=${KINDS:-1rank 2ranks 2ranks-noexchange}
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 CHAINLUA_ADAPTIVE_THREADS=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CHAINER_DATASET_ROOT=${CHAINER_DATASET_ROOT:-/work/shared/data}
export BENCH_SKEW=${BENCH_SKEW:-0}
: > "$OUT"
ARGS="--epoch 1 --update-interval 100000"
MPIRUN="mpirun -np 2 --oversubscribe -x BENCH_SKEW -x CHAINERMN_MEAN_GRAD -x BENCH_NO_EXCHANGE"
for r in $(seq "$ROUNDS"); do
  for kind in $KINDS; do
    dir=$(mktemp -d)
    echo "### round $r $kind load: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT"
    export CHAINERMN_MEAN_GRAD=auto BENCH_NO_EXCHANGE=0
    case $kind in
      1rank) "$BUILD/chainlua" bench/mnist_phases.lua $ARGS --out "$dir" >> "$OUT" 2>&1 ;;
      2ranks) $MPIRUN "$BUILD/chainlua" bench/mnist_phases.lua $ARGS --out "$dir" >> "$OUT" 2>&1 ;;
      2ranks-mpi|2ranks-shm) CHAINERMN_MEAN_GRAD=${kind#2ranks-}
        $MPIRUN "$BUILD/chainlua" bench/mnist_phases.lua $ARGS --out "$dir" >> "$OUT" 2>&1 ;;
      2ranks-noexchange) BENCH_NO_EXCHANGE=1
        $MPIRUN "$BUILD/chainlua" bench/mnist_phases.lua $ARGS --out "$dir" >> "$OUT" 2>&1 ;;
      *) echo "mnist_ranks.sh: unknown kind $kind" >&2; exit 2 ;;
    esac
    rm -rf "$dir"
  done
done
# per run (kind): elapsed_time (the last column of the PrintReport line that
# starts with the epoch), rank 0's trainer:run CPU, its mean_grad and skew
# wall and CPU per update (ms)
sed 's/\x1b\[J//' "$OUT" | awk '
  function flush() { if (kind != "") print kind, el, cpu, mw, mc, sw, sc; el = cpu = mw = mc = sw = sc = 0 }
  /^### round/ { flush(); kind = $4 }
  /^1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ *$/ { el = $NF }
  /^rank 0 trainer:run/ { cpu = $5 }
  /^rank 0 mean_grad/ { mw = 1000 * $4 / $6; mc = 1000 * $5 / $6 }
  /^rank 0 skew/ { sw = 1000 * $5 / $7; sc = 1000 * $6 / $7 }
  END { flush() }' | awk '
  function sorted(s, a,   n, i, j, x) {   # a[1..n] := the numbers in s, ascending (mawk has no asort)
    n = split(substr(s, 2), a, " ")
    for (i = 2; i <= n; i++) { x = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return n }
  function median(s,   a, n) { n = sorted(s, a); return a[int((n + 1) / 2)] }
  { k = $1; if (!(k in n)) order[++nk] = k; n[k]++
    el[k] = el[k] " " $2; cpu[k] = cpu[k] " " $3; mw[k] = mw[k] " " $4; mc[k] = mc[k] " " $5; sw[k] = sw[k] " " $6; sc[k] = sc[k] " " $7 }
  END {
    printf "%-18s %8s %15s %9s %19s %19s\n", "kind", "median", "[min - max]", "cpu s", "mean_grad ms/upd", "skew ms/upd"
    printf "%-18s %8s %15s %9s %19s %19s\n", "", "elapsed", "", "rank 0", "wall / cpu", "wall / cpu"
    for (i = 1; i <= nk; i++) {
      k = order[i]; m = sorted(el[k], a); med[k] = median(el[k])
      printf "%-18s %8.2f %7.2f - %5.2f %9.2f %9.2f / %7.2f %9.2f / %7.2f  (%d runs)\n", k, med[k], a[1], a[m],
        median(cpu[k]), median(mw[k]), median(mc[k]), median(sw[k]), median(sc[k]), n[k]
    }
    for (i = 1; i <= nk; i++) if (order[i] != "1rank" && med["1rank"] > 0)
      printf "speed-up %s / 1rank: %.2fx\n", order[i], med["1rank"] / med[order[i]]
  }'
echo "raw output and per-phase tables: $OUT"

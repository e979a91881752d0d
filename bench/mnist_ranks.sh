#!/bin/sh
# bench/mnist_ranks.sh [build-dir] [rounds]: issue 16's MNIST target (2 ranks
# >= 1.8x one rank), examples/chainermn/mnist/train_mnist.lua --epoch 1 with
# per-phase timers (bench/mnist_phases.lua), one OpenMP thread per rank,
# rounds of: 1 rank, 2 ranks, 2 ranks without the gradient exchange
# (BENCH_NO_EXCHANGE=1: the ceiling that sharing the machine allows).  Prints
# each run's elapsed_time (the trainer's) and phases, then per kind the
# median [min - max] elapsed_time and the speed-ups of the medians.  The raw
# output is kept in $OUT (default /tmp/mnist_ranks.txt).
set -e
BUILD=${1:-build}
ROUNDS=${2:-3}
OUT=${OUT:-/tmp/mnist_ranks.txt}
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 CHAINLUA_ADAPTIVE_THREADS=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CHAINER_DATASET_ROOT=${CHAINER_DATASET_ROOT:-/work/shared/data}
: > "$OUT"
ARGS="--epoch 1 --update-interval 100000"
for r in $(seq "$ROUNDS"); do
  for kind in 1rank 2ranks 2ranks-noexchange; do
    dir=$(mktemp -d)
    echo "### round $r $kind load: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$OUT"
    case $kind in
      1rank) "$BUILD/chainlua" bench/mnist_phases.lua $ARGS --out "$dir" >> "$OUT" 2>&1 ;;
      2ranks) mpirun -np 2 --oversubscribe "$BUILD/chainlua" bench/mnist_phases.lua $ARGS --out "$dir" >> "$OUT" 2>&1 ;;
      2ranks-noexchange) BENCH_NO_EXCHANGE=1 mpirun -np 2 --oversubscribe -x BENCH_NO_EXCHANGE \
        "$BUILD/chainlua" bench/mnist_phases.lua $ARGS --out "$dir" >> "$OUT" 2>&1 ;;
    esac
    rm -rf "$dir"
  done
done
# elapsed_time is the last column of the PrintReport line that starts with the epoch
awk '/^### round/ { kind = $4 } /^.?.?.?1 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ *$/ { print kind, $NF }' "$OUT" |
  sed 's/\x1b\[J//' | sort -k1,1 -k2,2n | awk '
  { v[$1] = v[$1] " " $2; n[$1]++ }
  END {
    for (k in v) {
      split(substr(v[k], 2), a, " "); m = a[int((n[k] + 1) / 2)]; med[k] = m
      printf "%-18s median %7.2f s [%.2f - %.2f] (%d runs)\n", k, m, a[1], a[n[k]], n[k]
    }
    if (med["2ranks"] > 0) printf "speed-up 2 ranks / 1 rank: %.2fx\n", med["1rank"] / med["2ranks"]
    if (med["2ranks-noexchange"] > 0) printf "ceiling without the exchange: %.2fx\n", med["1rank"] / med["2ranks-noexchange"]
  }'
echo "raw output and per-phase tables: $OUT"

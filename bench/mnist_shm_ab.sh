#!/bin/sh
# bench/mnist_shm_ab.sh [build-dir] [rounds]: the before/after of the
# shared-memory gradient mean (lua/chainermn/_shm_mean.lua) on 2-rank MNIST,
# in one command: bench/mnist_ranks.sh with alternating rounds of one rank,
# two ranks with the mean through MPI_Allreduce (before), two ranks through
# shared memory (after), and two ranks without any exchange (the ceiling),
# each exchange preceded by a timed barrier (BENCH_SKEW=1) so that the
# table splits it into the wait for the other rank and the mean itself.
# Raw output in $OUT (default /tmp/mnist_shm_ab.txt).
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/mnist_shm_ab.txt} BENCH_SKEW=${BENCH_SKEW:-1} \
  KINDS="1rank 2ranks-mpi 2ranks-shm 2ranks-noexchange" exec sh bench/mnist_ranks.sh "${1:-build}" "${2:-3}"

#!/bin/sh
# bench/mpi_allreduce.sh [build-dir]: chainermn's allreduce against Open
# MPI's MPI_Allreduce from C, 2 ranks, 1 KiB to 64 MiB; prints both tables
# and the ratio (chainlua's bandwidth / Open MPI's).  One OpenMP thread per
# rank; as root Open MPI's run-as-root variables are set.
set -e
BUILD=${1:-build}
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EXE=$(mktemp)
mpicc -O2 -o "$EXE" bench/mpi_allreduce_c.c
C_OUT=$(mpirun -np 2 --oversubscribe "$EXE")
LUA_OUT=$(mpirun -np 2 --oversubscribe "$BUILD/chainlua" bench/mpi_allreduce.lua flat)
rm -f "$EXE"
echo "$C_OUT" > /tmp/mpi_allreduce_c.txt
echo "$LUA_OUT" > /tmp/mpi_allreduce_lua.txt
printf '%10s %14s %14s %7s\n' bytes 'MPI_Allreduce' 'comm:allreduce' ratio
paste -d' ' /tmp/mpi_allreduce_c.txt /tmp/mpi_allreduce_lua.txt |
  awk '{ printf "%10d %9.1f MB/s %9.1f MB/s %6.2f\n", $2, $6, $14, $14 / $6 }'

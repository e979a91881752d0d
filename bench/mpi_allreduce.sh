#!/bin/sh
# bench/mpi_allreduce.sh [build-dir]: chainermn's allreduce against Open
# MPI's MPI_Allreduce, 2 ranks, 1 KiB to 64 MiB: first MPI_Allreduce from a
# C program, then bench/mpi_allreduce.lua (MPI_Allreduce through the FFI and
# comm:allreduce, alternating, and their ratio).  One OpenMP thread per
# rank; as root Open MPI's run-as-root variables are set.
set -e
BUILD=${1:-build}
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
EXE=$(mktemp)
mpicc -O2 -o "$EXE" bench/mpi_allreduce_c.c
echo "MPI_Allreduce from C:"
mpirun -np 2 --oversubscribe "$EXE"
rm -f "$EXE"
echo "chainlua (ratio: comm:allreduce's bandwidth / MPI_Allreduce's in the same run):"
mpirun -np 2 --oversubscribe "$BUILD/chainlua" bench/mpi_allreduce.lua flat

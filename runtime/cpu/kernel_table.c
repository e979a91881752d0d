/*
 * kernel_table.c -- the CPU's kernel table.  The CPU implements every
 * kernel of the list (core/kernels.h), as ch_cpu_<name> in the family's
 * file under runtime/cpu/, so its table is written by the list itself: a
 * kernel added to the list without its CPU version fails to link.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#define CPU_DECLARE(name) ch_##name##_kernel ch_cpu_##name;
CH_KERNEL_LIST(CPU_DECLARE)

#define CPU_ENTRY(name) .name = ch_cpu_##name,
const ch_kernel_table ch_cpu_kernels = {CH_KERNEL_LIST(CPU_ENTRY)};

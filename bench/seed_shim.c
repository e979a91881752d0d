/* bench/seed_shim.c: an LD_PRELOAD shim that makes LuaJIT's random seed
 * (read with syscall(SYS_getrandom)) come from the environment variable
 * LUAJIT_SEED, so that its randomised trace penalties repeat from run to
 * run.  bench/icount_rounds builds and uses it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>

long syscall(long nr, ...) {
  va_list ap;
  long a[6];
  va_start(ap, nr);
  for (int i = 0; i < 6; i++) a[i] = va_arg(ap, long);
  va_end(ap);
  if (nr == SYS_getrandom) {
    const char *s = getenv("LUAJIT_SEED");
    uint64_t x = (s ? strtoull(s, 0, 10) : 0) * 0x9E3779B97F4A7C15ull + 1;
    unsigned char *p = (unsigned char *)a[0];
    for (size_t i = 0; i < (size_t)a[1]; i++) {   /* xorshift64 */
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      p[i] = (unsigned char)x;
    }
    return a[1];
  }
  long (*real)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
  return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

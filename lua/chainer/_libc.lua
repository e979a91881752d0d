-- _libc.lua: every C library function the Lua layer calls through the FFI,
-- declared once, here (internal; not exported).
--
-- The runtime's own functions are in _ffi.lua (generated from chainlua.h);
-- this module holds the rest: libc (files, process, terminal, clock) and
-- libm (the math the user-kernel compiler's generated code calls), and
-- zlib's uncompress (the SVHN reader; zlib is loaded on first use).  Other
-- modules require it and use `libc.C.<name>`, so no module declares a libc
-- function of its own and no declaration hides behind pcall.
--
-- Our own struct names (chainlua_timespec) keep these declarations from
-- clashing with a script that declares `struct timespec` itself; a script
-- that declares one of the functions below before loading chainer should
-- use an __asm__ alias, as bench/lib/bench.lua does.
local ffi = require 'ffi'

ffi.cdef [[
typedef struct chainlua_timespec { long tv_sec; long tv_nsec; } chainlua_timespec;
int clock_gettime(int clk_id, chainlua_timespec *tp);

int isatty(int fd);
int getpid(void);
int kill(int pid, int sig);
int setenv(const char *name, const char *value, int overwrite);
int unsetenv(const char *name);

/* processes: the snapshot writers, the iterators' worker processes */
int fork(void);
int getppid(void);
void _exit(int status);
int pipe(int fds[2]);
long read(int fd, void *buf, size_t count);
long write(int fd, const void *buf, size_t count);
int close(int fd);
int waitpid(int pid, int *status, int options);
int fcntl(int fd, int cmd, ...);
typedef struct chainlua_pollfd { int fd; short events; short revents; } chainlua_pollfd;
int poll(chainlua_pollfd *fds, unsigned long nfds, int timeout);
int prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5);
void *mmap(void *addr, size_t length, int prot, int flags, int fd, long offset);
int munmap(void *addr, size_t length);
typedef void (*chainlua_sighandler)(int);
chainlua_sighandler signal(int sig, chainlua_sighandler handler);
long sysconf(int name);

int mkdir(const char *path, unsigned int mode);
char *strerror(int errnum);
void *opendir(const char *path);
int closedir(void *dir);

double erf(double); double erfc(double); double lgamma(double); double tgamma(double);
double cbrt(double); double expm1(double); double log1p(double); double log2(double);
double hypot(double, double); double round(double); double trunc(double); double rint(double);
double copysign(double, double); double fmin(double, double); double fmax(double, double);

int uncompress(uint8_t *dest, unsigned long *destLen, const uint8_t *source, unsigned long sourceLen);
]]

local C = ffi.C
local M = { C = C }

local CLOCK_MONOTONIC = 1   -- Linux's value
local ts = ffi.new('chainlua_timespec')

-- Seconds from a monotonic clock (for durations, not dates).
function M.monotonic()
  C.clock_gettime(CLOCK_MONOTONIC, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) * 1e-9
end

-- True when the file descriptor (0, 1, 2) is a terminal.
function M.isatty(fd) return C.isatty(fd) == 1 end

function M.getpid() return tonumber(C.getpid()) end

-- Whether process `pid` exists (signal 0 probes without sending; EPERM
-- means it exists but belongs to another user).
local EPERM = 1
function M.process_exists(pid)
  if type(pid) ~= 'number' or pid <= 0 or pid ~= math.floor(pid) or pid > 2 ^ 31 - 1 then return false end
  if C.kill(pid, 0) == 0 then return true end
  return ffi.errno() == EPERM
end

-- setenv(name, value) / setenv(name, nil) to unset: the process
-- environment that os.getenv and child processes see.
function M.setenv(name, value)
  if value == nil then return C.unsetenv(name) == 0 end
  return C.setenv(name, tostring(value), 1) == 0
end

-- zlib (for uncompress), or nil when the system has none.
local zlib
function M.zlib()
  if zlib == nil then
    local ok, lib = pcall(ffi.load, 'z')
    if not ok then ok, lib = pcall(ffi.load, 'libz.so.1') end
    zlib = ok and lib or false
  end
  return zlib or nil
end

return M

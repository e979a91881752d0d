/*
 * host_internal.h -- what the chainlua executable (main.c), the REPL
 * (repl.c) and the embedding API (host.c) share.  Not installed.
 */
#ifndef CHAINLUA_HOST_INTERNAL_H
#define CHAINLUA_HOST_INTERNAL_H

#include <stdio.h>

#include <lua.h>

/* A bare state: standard libraries and package.path/cpath set up to find
 * the chainer modules (nothing required yet).  NULL when it cannot be
 * made, with *why (when why is not NULL) saying why. */
lua_State *chainlua_host_newstate(const char **why);

/* An empty Lua state on chainlua's allocator for Lua objects (lua_heap.c;
 * LuaJIT's own with CHAINLUA_LUA_HEAP=luajit).  NULL when out of memory or
 * when that variable holds anything else, with *why saying which. */
lua_State *chainlua_host_lua_state(const char **why);

/* Sets package.path/cpath: $LUA_PATH/$LUA_CPATH (or Lua's defaults) first
 * when set, with chainlua's directories appended; without them, ours go
 * first so the matching chainer modules win over stray system copies. */
void chainlua_host_setup_paths(lua_State *L);

/* The directory holding chainer/init.lua that this process uses, or NULL. */
const char *chainlua_host_luadir(void);

/* Calls the function below `narg` arguments on the stack in protected mode
 * with a traceback handler and Ctrl-C turned into the Lua error
 * "interrupted".  Leaves nres results (or LUA_MULTRET) or the message. */
int chainlua_host_pcall(lua_State *L, int narg, int nres);

/* Reports the message at the top of the stack (if any) on stderr with the
 * program name, and pops it.  Returns status unchanged. */
int chainlua_host_report(lua_State *L, int status, const char *progname);

/* The program is ending with an uncaught error: calls the functions of the
 * registry table "chainlua.on_error_exit" (Lua modules add to it; chainermn
 * aborts the MPI job there, so that the other ranks do not wait forever),
 * ignoring their own errors.  Called before lua_close. */
void chainlua_host_error_exit(lua_State *L);

/* Ctrl-C handling.  While `armed`, SIGINT sets a hook that raises
 * "interrupted" in L; otherwise it only records the interrupt, which
 * chainlua_host_take_interrupt() reads and clears. */
void chainlua_host_signals(lua_State *L);
void chainlua_host_arm_interrupt(int armed);
int chainlua_host_take_interrupt(void);

/* Sets the globals the REPL and -e share (chainer, F, L, optimizers, help:
 * chainer.repl.preload); a loading error is printed.  Returns 0. */
int chainlua_preload(lua_State *L);

/* Runs the REPL on L until end of input; returns the exit status. */
int chainlua_repl(lua_State *L, int banner);

/* Prints version information (-v). */
void chainlua_print_version(FILE *f);

#endif

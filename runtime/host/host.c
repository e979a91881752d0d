/*
 * host.c -- the embedding API (chainlua_host.h) and the pieces the
 * executable shares with it: Lua path setup, protected calls with a
 * traceback, Ctrl-C handling.
 *
 * Tensors cross between C and Lua through two tiny Lua functions kept in
 * the registry (see HELPERS): they use ffi casts of a lightuserdata, so the
 * host never depends on how LuaJIT lays out cdata objects.
 */
#define _GNU_SOURCE
#include "chainlua_host.h"
#include "host_internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <lualib.h>

#ifndef CHAINLUA_SOURCE_LUADIR
#define CHAINLUA_SOURCE_LUADIR ""
#endif
#ifndef CHAINLUA_INSTALL_LUADIR
#define CHAINLUA_INSTALL_LUADIR ""
#endif
#ifndef CHAINLUA_BUILD_DIR
#define CHAINLUA_BUILD_DIR ""
#endif

/* ---- finding the chainer modules ---------------------------------------- */

static int has_chainer(const char *dir) {
    char p[2 * PATH_MAX];
    if (!dir || !*dir)
        return 0;
    snprintf(p, sizeof p, "%s/chainer/init.lua", dir);
    return access(p, R_OK) == 0;
}

/* Directory of a file path (in place); "" when there is none. */
static void dirname_inplace(char *p) {
    char *s = strrchr(p, '/');
    if (s)
        *s = '\0';
    else
        p[0] = '\0';
}

static int same_dir(const char *a, const char *b) {
    char ra[PATH_MAX], rb[PATH_MAX];
    if (!*a || !*b || !realpath(a, ra) || !realpath(b, rb))
        return 0;
    return strcmp(ra, rb) == 0;
}

static char luadir[2 * PATH_MAX];
static char cpathdir[2 * PATH_MAX];
static int luadir_done;

/* Candidates, first match wins:
 *  1. a program running from the build tree uses the source tree's lua/
 *     (edits to the modules take effect without reinstalling);
 *  2. relative to the executable: PREFIX/bin -> PREFIX/share/lua/5.1
 *     (make install, and luarocks trees, which move files after cmake);
 *  3. relative to libchainlua: PREFIX/lib or a luarocks TREE/lib/lua/5.1;
 *  4. the configured install LUADIR, then the source tree. */
static void find_luadir(void) {
    char exe[PATH_MAX], cand[PATH_MAX + 64];
    ssize_t n;
    if (luadir_done)
        return;
    luadir_done = 1;
    exe[0] = '\0';
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        dirname_inplace(exe);
    } else {
        exe[0] = '\0';
    }
    if (exe[0] && same_dir(exe, CHAINLUA_BUILD_DIR) && has_chainer(CHAINLUA_SOURCE_LUADIR)) {
        snprintf(luadir, sizeof luadir, "%s", CHAINLUA_SOURCE_LUADIR);
        return;
    }
    if (exe[0]) {
        snprintf(cand, sizeof cand, "%s/../share/lua/5.1", exe);
        if (has_chainer(cand)) {
            snprintf(luadir, sizeof luadir, "%s", cand);
            snprintf(cand, sizeof cand, "%s/../lib/lua/5.1", exe);
            if (access(cand, X_OK) == 0)
                snprintf(cpathdir, sizeof cpathdir, "%s", cand);
            return;
        }
    }
    Dl_info info;
    if (dladdr((void *)ch_version, &info) && info.dli_fname) {
        char lib[PATH_MAX];
        snprintf(lib, sizeof lib, "%s", info.dli_fname);
        dirname_inplace(lib);
        const char *ups[] = {"/../share/lua/5.1", "/../../../share/lua/5.1"};
        for (int i = 0; i < 2; i++) {
            snprintf(cand, sizeof cand, "%s%s", lib, ups[i]);
            if (lib[0] && has_chainer(cand)) {
                snprintf(luadir, sizeof luadir, "%s", cand);
                return;
            }
        }
    }
    if (has_chainer(CHAINLUA_INSTALL_LUADIR))
        snprintf(luadir, sizeof luadir, "%s", CHAINLUA_INSTALL_LUADIR);
    else if (has_chainer(CHAINLUA_SOURCE_LUADIR))
        snprintf(luadir, sizeof luadir, "%s", CHAINLUA_SOURCE_LUADIR);
}

const char *chainlua_host_luadir(void) {
    find_luadir();
    return luadir[0] ? luadir : NULL;
}

/* package[field] = env set ? current .. ";" .. ours : ours .. ";" .. current */
static void set_path(lua_State *L, const char *field, const char *env, const char *ours) {
    lua_getglobal(L, "package");
    lua_getfield(L, -1, field);
    const char *cur = lua_tostring(L, -1);
    if (!cur)
        cur = "";
    size_t n = strlen(cur);
    while (n > 0 && cur[n - 1] == ';')   /* LUA_PATH="x;;" leaves a trailing ';' */
        n--;
    const char *e = getenv(env);
    if (e && *e) {
        lua_pushlstring(L, cur, n);
        lua_pushfstring(L, ";%s", ours);
        lua_concat(L, 2);
    } else {
        lua_pushfstring(L, "%s;", ours);
        lua_pushlstring(L, cur, n);
        lua_concat(L, 2);
    }
    lua_setfield(L, -3, field);
    lua_pop(L, 2);
}

void chainlua_host_setup_paths(lua_State *L) {
    const char *dir = chainlua_host_luadir();
    if (dir) {
        lua_pushfstring(L, "%s/?.lua;%s/?/init.lua", dir, dir);
        set_path(L, "path", "LUA_PATH", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    if (cpathdir[0]) {
        lua_pushfstring(L, "%s/?.so", cpathdir);
        set_path(L, "cpath", "LUA_CPATH", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
}

lua_State *chainlua_host_newstate(const char **why) {
    lua_State *L = chainlua_host_lua_state(why);
    if (!L)
        return NULL;
    lua_gc(L, LUA_GCSTOP, 0);   /* as luajit does: no collections while loading the libraries */
    luaL_openlibs(L);
    lua_gc(L, LUA_GCRESTART, -1);
    chainlua_host_setup_paths(L);
    return L;
}

/* ---- Ctrl-C -------------------------------------------------------------- */

static lua_State *volatile sig_L;
static volatile sig_atomic_t sig_armed, sig_pending, hook_pending;

static void interrupt_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    hook_pending = 0;
    lua_sethook(L, NULL, 0, 0);
    luaL_error(L, "interrupted");
}

/* Only async-signal-safe work here: lua_sethook just stores the hook (this
 * is how lua.c and luajit.c interrupt a running chunk).  Code running inside
 * a JIT-compiled trace does not look at hooks, so a tight compiled loop only
 * sees the interrupt when it leaves its trace; if a second Ctrl-C comes
 * before the first one was delivered, we give up and end the process. */
static void on_sigint(int sig) {
    sig_pending = 1;
    if (sig_armed && sig_L) {
        if (hook_pending) {
            static const char msg[] = "\nchainlua: interrupted twice while a compiled loop was running; exiting\n";
            ssize_t w = write(2, msg, sizeof msg - 1);
            (void)w;
            signal(sig, SIG_DFL);
            raise(sig);
            return;
        }
        hook_pending = 1;
        lua_sethook(sig_L, interrupt_hook, LUA_MASKCALL | LUA_MASKRET | LUA_MASKCOUNT, 1);
    }
}

void chainlua_host_signals(lua_State *L) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;   /* no SA_RESTART: a blocking read at the prompt returns */
    sig_L = L;
    sigaction(SIGINT, &sa, NULL);
}

void chainlua_host_arm_interrupt(int armed) {
    sig_armed = armed;
    hook_pending = 0;
    if (!armed && sig_L)
        lua_sethook(sig_L, NULL, 0, 0);   /* a signal that came too late to fire */
}

int chainlua_host_take_interrupt(void) {
    int p = sig_pending;
    sig_pending = 0;
    return p;
}

/* ---- protected calls ---------------------------------------------------- */

static int meta_tostring(lua_State *L) {
    if (!luaL_callmeta(L, 1, "__tostring"))
        lua_pushnil(L);
    return 1;
}

static int traceback(lua_State *L) {
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        /* protected: an error inside __tostring would otherwise turn into
         * a bare "error in error handling" */
        lua_pushcfunction(L, meta_tostring);
        lua_pushvalue(L, 1);
        if (lua_pcall(L, 1, 1, 0) == 0 && lua_type(L, -1) == LUA_TSTRING)
            msg = lua_tostring(L, -1);
        else
            msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

int chainlua_host_pcall(lua_State *L, int narg, int nres) {
    int base = lua_gettop(L) - narg;
    lua_pushcfunction(L, traceback);
    lua_insert(L, base);
    if (sig_L == L) {
        sig_pending = 0;
        chainlua_host_arm_interrupt(1);
    }
    int status = lua_pcall(L, narg, nres, base);
    if (sig_L == L)
        chainlua_host_arm_interrupt(0);
    lua_remove(L, base);
    if (status == LUA_ERRERR) {
        /* traceback cannot fail by itself, but after a stack overflow (Lua
         * or C) libluajit leaves it no stack to run in, and all we get is
         * "error in error handling"; say what really happened. */
        lua_pop(L, 1);
        lua_pushliteral(L, "stack overflow (runaway recursion?); no traceback: the error handler had no stack "
                           "left to run");
    }
    if (status != 0)
        lua_gc(L, LUA_GCCOLLECT, 0);   /* a failed chunk may leave big tensors behind */
    return status;
}

int chainlua_host_report(lua_State *L, int status, const char *progname) {
    if (status != 0 && !lua_isnil(L, -1)) {
        const char *msg = lua_tostring(L, -1);
        if (!msg)
            msg = "(error object is not a string)";
        fflush(stdout);
        if (progname)
            fprintf(stderr, "%s: %s\n", progname, msg);
        else
            fprintf(stderr, "%s\n", msg);
        fflush(stderr);
        lua_pop(L, 1);
    }
    return status;
}

void chainlua_host_error_exit(lua_State *L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "chainlua.on_error_exit");
    if (lua_istable(L, -1)) {
        int n = (int)lua_objlen(L, -1);
        for (int i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, i);
            if (lua_pcall(L, 0, 0, 0) != 0)
                lua_pop(L, 1);
        }
    }
    lua_pop(L, 1);
}

void chainlua_print_version(FILE *f) {
    int have_gpu = ch_cuda_load(NULL);
    fprintf(f, "chainlua %s -- Chainer for LuaJIT\n", ch_version());
    fprintf(f, "%s\n", LUAJIT_VERSION);
    fprintf(f, "BLAS: %s, %d threads\n", ch_blas_info(), ch_get_num_threads());
    fprintf(f, "CUDA: %s%s\n", ch_cuda_info(), have_gpu ? "" : " (running on the CPU)");
}

/* ---- the embedding API --------------------------------------------------- */

struct chainlua_state {
    lua_State *L;
    char *err;      /* last failure, malloc'd; NULL after a success */
};

static _Thread_local char open_error[2048];

static const char HELPERS[] =
    "local ffi = require 'ffi'\n"
    "local T = require 'chainer.tensor'\n"
    "local C = T.C\n"
    "local function push(p)\n"
    "  return T.from_pointer(ffi.cast('ch_tensor*', p))\n"
    "end\n"
    "local function get(v, slot)\n"
    "  if type(v) == 'table' and T.is_tensor(rawget(v, 'array') or rawget(v, 'data')) then\n"
    "    v = rawget(v, 'array') or rawget(v, 'data')   -- a chainer.Variable\n"
    "  end\n"
    "  if not T.is_tensor(v) then return type(v) end\n"
    "  C.ch_tensor_retain(v.ptr)\n"
    "  ffi.cast('ch_tensor**', slot)[0] = v.ptr\n"
    "  return nil\n"
    "end\n"
    "return push, get\n";

static const char *KEY_PUSH = "chainlua.host.push";
static const char *KEY_GET = "chainlua.host.get";

static void set_error(chainlua_state *S, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_error(chainlua_state *S, const char *fmt, ...) {
    va_list ap;
    char buf[1024];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(S->err);
    S->err = strdup(buf);
}

/* Takes the error message from the top of the stack. */
static int fail_from_stack(chainlua_state *S) {
    const char *msg = lua_tostring(S->L, -1);
    free(S->err);
    S->err = strdup(msg ? msg : "(error object is not a string)");
    lua_pop(S->L, 1);
    return -1;
}

static void clear_error(chainlua_state *S) {
    free(S->err);
    S->err = NULL;
}

chainlua_state *chainlua_open(void) {
    open_error[0] = '\0';
    chainlua_state *S = calloc(1, sizeof *S);
    if (!S) {
        snprintf(open_error, sizeof open_error, "chainlua_open: out of memory");
        return NULL;
    }
    const char *why = NULL;
    S->L = chainlua_host_newstate(&why);
    if (!S->L) {
        free(S);
        snprintf(open_error, sizeof open_error, "chainlua_open: cannot create the Lua state (%s)", why);
        return NULL;
    }
    lua_State *L = S->L;
    lua_getglobal(L, "require");
    lua_pushstring(L, "chainer");
    if (chainlua_host_pcall(L, 1, 1) != 0)
        goto fail;
    lua_setglobal(L, "chainer");
    if (luaL_loadbuffer(L, HELPERS, sizeof HELPERS - 1, "=chainlua_host") != 0 ||
        chainlua_host_pcall(L, 0, 2) != 0)
        goto fail;
    lua_setfield(L, LUA_REGISTRYINDEX, KEY_GET);
    lua_setfield(L, LUA_REGISTRYINDEX, KEY_PUSH);
    return S;
fail:
    snprintf(open_error, sizeof open_error, "chainlua_open: cannot load chainer: %s",
             lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
    lua_close(L);
    free(S);
    return NULL;
}

void chainlua_close(chainlua_state *S) {
    if (!S)
        return;
    lua_close(S->L);
    free(S->err);
    free(S);
}

const char *chainlua_error(const chainlua_state *S) {
    if (!S)
        return open_error[0] ? open_error : NULL;
    return S->err;
}

lua_State *chainlua_lua(chainlua_state *S) { return S ? S->L : NULL; }

const char *chainlua_version(void) { return CHAINLUA_VERSION; }

int chainlua_dostring(chainlua_state *S, const char *code, const char *chunkname) {
    if (!S)
        return -1;
    clear_error(S);
    if (!code) {
        set_error(S, "chainlua_dostring: code is NULL");
        return -1;
    }
    if (luaL_loadbuffer(S->L, code, strlen(code), chunkname ? chunkname : "=(embedded)") != 0 ||
        chainlua_host_pcall(S->L, 0, 0) != 0)
        return fail_from_stack(S);
    return 0;
}

int chainlua_dofile(chainlua_state *S, const char *path) {
    if (!S)
        return -1;
    clear_error(S);
    if (!path) {
        set_error(S, "chainlua_dofile: path is NULL");
        return -1;
    }
    if (luaL_loadfile(S->L, path) != 0 || chainlua_host_pcall(S->L, 0, 0) != 0)
        return fail_from_stack(S);
    return 0;
}

static int check_tensor_arg(chainlua_state *S, const ch_tensor *t, const char *fn) {
    if (!t) {
        set_error(S, "%s: tensor is NULL", fn);
        return -1;
    }
    if (t->refcount <= 0) {
        set_error(S, "%s: tensor was already released (refcount %d)", fn, (int)t->refcount);
        return -1;
    }
    return 0;
}

int chainlua_push_tensor(chainlua_state *S, ch_tensor *t) {
    if (!S)
        return -1;
    clear_error(S);
    if (check_tensor_arg(S, t, "chainlua_push_tensor") != 0)
        return -1;
    lua_State *L = S->L;
    lua_getfield(L, LUA_REGISTRYINDEX, KEY_PUSH);
    lua_pushlightuserdata(L, t);
    if (chainlua_host_pcall(L, 1, 1) != 0)
        return fail_from_stack(S);
    return 0;
}

int chainlua_set_global_tensor(chainlua_state *S, const char *name, ch_tensor *t) {
    if (!S)
        return -1;
    if (!name) {
        clear_error(S);
        set_error(S, "chainlua_set_global_tensor: name is NULL");
        return -1;
    }
    if (chainlua_push_tensor(S, t) != 0)
        return -1;
    lua_setglobal(S->L, name);
    return 0;
}

ch_tensor *chainlua_to_tensor(chainlua_state *S, int idx) {
    if (!S)
        return NULL;
    clear_error(S);
    lua_State *L = S->L;
    if (idx < 0 && idx > LUA_REGISTRYINDEX)
        idx = lua_gettop(L) + idx + 1;   /* absolute, before we push */
    if (idx < 1 || idx > lua_gettop(L)) {
        set_error(S, "chainlua_to_tensor: stack index %d is not valid (stack has %d values)", idx, lua_gettop(L));
        return NULL;
    }
    ch_tensor *slot = NULL;
    lua_getfield(L, LUA_REGISTRYINDEX, KEY_GET);
    lua_pushvalue(L, idx);
    lua_pushlightuserdata(L, &slot);
    if (chainlua_host_pcall(L, 2, 1) != 0) {
        fail_from_stack(S);
        return NULL;
    }
    if (!slot) {
        set_error(S, "chainlua_to_tensor: the value at stack index %d is a %s (expected a tensor)", idx,
                  lua_tostring(L, -1) ? lua_tostring(L, -1) : "?");
        lua_pop(L, 1);
        return NULL;
    }
    lua_pop(L, 1);
    return slot;
}

ch_tensor *chainlua_get_global_tensor(chainlua_state *S, const char *name) {
    if (!S)
        return NULL;
    clear_error(S);
    if (!name) {
        set_error(S, "chainlua_get_global_tensor: name is NULL");
        return NULL;
    }
    lua_State *L = S->L;
    lua_getglobal(L, name);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        set_error(S, "chainlua_get_global_tensor: global '%s' is nil (expected a tensor)", name);
        return NULL;
    }
    ch_tensor *t = chainlua_to_tensor(S, -1);
    if (!t && S->err && strncmp(S->err, "chainlua_to_tensor: the value", 29) == 0) {
        const char *is = strstr(S->err, " is a ");
        char kind[64] = "?";
        if (is)
            sscanf(is + 6, "%63s", kind);
        set_error(S, "chainlua_get_global_tensor: global '%s' is a %s (expected a tensor)", name, kind);
    }
    lua_pop(L, 1);
    return t;
}

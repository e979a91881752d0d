/*
 * main.c -- the chainlua executable: runs scripts like `luajit` does (same
 * options, same `arg` table), and opens the REPL (repl.c) when asked or
 * when there is nothing else to do.
 */
#include "chainlua_host.h"
#include "host_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

static const char *progname = "chainlua";

static void usage(FILE *f) {
    fprintf(f,
            "usage: %s [options] [script [args...]]\n"
            "Runs a Lua script with chainer on the module path; without a script, opens the REPL.\n"
            "  -e code      run the Lua code (with the REPL's globals: chainer, F, L, optimizers, help)\n"
            "  -l name      require the module `name` (and set the global of that name)\n"
            "  -i           open the REPL after running the script\n"
            "  -v, --version  print chainlua, LuaJIT, BLAS and CUDA versions\n"
            "  -h, --help   print this help\n"
            "  --           stop handling options\n"
            "  -            run the script read from standard input\n"
            "The global `arg` is set as luajit sets it: arg[0] is the script, arg[1..] its\n"
            "arguments, negative indices the interpreter and the options before the script.\n",
            progname);
}

enum { F_INTERACTIVE = 1, F_VERSION = 2, F_EXEC = 4, F_HELP = 8 };

/* Returns the index of the script in argv (argc when there is none), or -1
 * for a bad option; luajit's rules. */
static int collect_args(int argc, char **argv, int *flags) {
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-')
            return i;
        if (strcmp(a, "--help") == 0) {
            *flags |= F_HELP;
            continue;
        }
        if (strcmp(a, "--version") == 0) {
            *flags |= F_VERSION;
            continue;
        }
        switch (a[1]) {
        case '-':
            if (a[2] != '\0') {
                fprintf(stderr, "%s: unrecognized option '%s'\n", progname, a);
                return -1;
            }
            return i + 1;
        case '\0':
            return i;   /* "-": stdin */
        case 'i':
            if (a[2]) goto bad;
            *flags |= F_INTERACTIVE;
            break;
        case 'v':
            if (a[2]) goto bad;
            *flags |= F_VERSION;
            break;
        case 'h':
            if (a[2]) goto bad;
            *flags |= F_HELP;
            break;
        case 'e':
            *flags |= F_EXEC;
            /* fallthrough */
        case 'l':
            if (a[2] == '\0') {
                i++;
                if (i >= argc) {
                    fprintf(stderr, "%s: '%s' needs an argument\n", progname, a);
                    return -1;
                }
            }
            break;
        default:
        bad:
            fprintf(stderr, "%s: unrecognized option '%s'\n", progname, a);
            return -1;
        }
    }
    return i;
}

/* arg[i - script] = argv[i], so arg[0] is the script and the interpreter
 * and its options get negative indices (exactly luajit's table). */
static void create_arg_table(lua_State *L, int argc, char **argv, int script) {
    lua_createtable(L, argc - script, script);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

static int valid_global_name(const char *s) {
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

static int run_string(lua_State *L, const char *code) {
    int st = luaL_loadbuffer(L, code, strlen(code), "=(command line)");
    if (st == 0)
        st = chainlua_host_pcall(L, 0, 0);
    return chainlua_host_report(L, st, progname);
}

static int run_require(lua_State *L, const char *name) {
    lua_getglobal(L, "require");
    lua_pushstring(L, name);
    int st = chainlua_host_pcall(L, 1, 1);
    if (st == 0) {
        if (valid_global_name(name) && !lua_isnil(L, -1))
            lua_setglobal(L, name);
        else
            lua_pop(L, 1);
    }
    return chainlua_host_report(L, st, progname);
}

/* -e and -l in command-line order. */
static int run_options(lua_State *L, char **argv, int script) {
    for (int i = 1; i < script; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || (a[1] != 'e' && a[1] != 'l'))
            continue;
        const char *val = a[2] ? a + 2 : argv[++i];
        int st = a[1] == 'e' ? run_string(L, val) : run_require(L, val);
        if (st != 0)
            return st;
    }
    return 0;
}

static int run_script(lua_State *L, int argc, char **argv, int script) {
    const char *fname = argv[script];
    if (strcmp(fname, "-") == 0 && strcmp(argv[script - 1], "--") != 0)
        fname = NULL;   /* stdin */
    int st = luaL_loadfile(L, fname);
    if (st == 0) {
        int n = argc - script - 1;
        luaL_checkstack(L, n + 3, "too many arguments to script");
        for (int i = script + 1; i < argc; i++)
            lua_pushstring(L, argv[i]);
        st = chainlua_host_pcall(L, n, 0);
    }
    return chainlua_host_report(L, st, progname);
}

int main(int argc, char **argv) {
    int flags = 0;
    int script = collect_args(argc, argv, &flags);
    if (script < 0) {
        usage(stderr);
        return 1;
    }
    if (flags & F_HELP) {
        usage(stdout);
        return 0;
    }
    const char *why = NULL;
    lua_State *L = chainlua_host_newstate(&why);
    if (!L) {
        fprintf(stderr, "%s: cannot create the Lua state (%s)\n", progname, why);
        return 1;
    }
    chainlua_host_signals(L);
    int status = 0;
    int interactive_only = script == argc && !(flags & (F_EXEC | F_VERSION));
    if (flags & F_VERSION)
        chainlua_print_version(stdout);
    create_arg_table(L, argc, argv, script);
    if (flags & F_EXEC)   /* -e code sees the REPL's globals (chainer, F, L, ...) */
        chainlua_preload(L);
    status = run_options(L, argv, script);
    if (status == 0 && script < argc)
        status = run_script(L, argc, argv, script);
    if (status == 0 && ((flags & F_INTERACTIVE) || interactive_only))
        status = chainlua_repl(L, isatty(0));
    fflush(stdout);
    if (status != 0)
        chainlua_host_error_exit(L);
    lua_close(L);
    return status == 0 ? 0 : 1;
}

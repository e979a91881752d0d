/*
 * repl.c -- chainlua's interactive loop.
 *
 * A line is first compiled as `return <line>` (spelled `return select(1,
 * <line>)`, see compile) so plain expressions print
 * their values (as the LuaJIT 2.1 and Lua 5.3 REPLs do); if that fails it is
 * compiled as statements.  A chunk whose syntax error is at '<eof>' is
 * incomplete: the loop keeps reading with the `>>` prompt.  Every error is
 * printed with its traceback and the loop goes on.
 *
 * On a terminal, lines come from libedit (history in ~/.chainlua_history);
 * otherwise plain reads without prompts, so pipes can drive it.
 *
 * What the REPL does with a line lives in Lua, in chainer.repl (specs call
 * it without a terminal): the preloaded globals, `?obj` (help), how values
 * print, and what Tab offers.  This file only calls it: when the module
 * cannot be loaded, the loop still runs with plain print and no completion.
 */
#define _GNU_SOURCE
#include "chainlua_host.h"
#include "host_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <editline/readline.h>
#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>

#define PROMPT1 "> "
#define PROMPT2 ">> "
#define HISTORY_MAX 1000

/* The globals of the REPL and of -e (chainer.repl.preload).  Without the
 * module (chainer not on the path) there is nothing to preload. */
static const char PRELOAD[] =
    "local ok, repl = pcall(require, 'chainer.repl')\n"
    "if ok then repl.preload() return end\n"
    "if not tostring(repl):find(\"module 'chainer.repl' not found\", 1, true) then\n"
    "  io.stderr:write('chainlua: cannot load chainer.repl: ', tostring(repl), '\\n')\n"
    "end\n";

int chainlua_preload(lua_State *L) {
    if (luaL_loadbuffer(L, PRELOAD, sizeof PRELOAD - 1, "=chainlua_preload") == 0)
        return chainlua_host_report(L, chainlua_host_pcall(L, 0, 0), NULL);
    return chainlua_host_report(L, 1, NULL);
}

/* The chainer.repl module (a registry reference), or LUA_NOREF. */
static int repl_module = LUA_NOREF;
static lua_State *completion_state;

/* Pushes chainer.repl's function `name`; 0 (nothing pushed) without it. */
static int push_repl_function(lua_State *L, const char *name) {
    if (repl_module == LUA_NOREF || repl_module == LUA_REFNIL)
        return 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, repl_module);
    lua_getfield(L, -1, name);
    lua_remove(L, -2);
    if (lua_isfunction(L, -1))
        return 1;
    lua_pop(L, 1);
    return 0;
}

static void load_repl_module(lua_State *L) {
    lua_getglobal(L, "package");
    lua_getfield(L, -1, "loaded");
    lua_getfield(L, -1, "chainer.repl");
    repl_module = lua_istable(L, -1) ? luaL_ref(L, LUA_REGISTRYINDEX) : (lua_pop(L, 1), LUA_NOREF);
    lua_pop(L, 2);
}

/* libedit's Tab: chainer.repl.complete(line up to the cursor, start of the
 * word) gives the replacements of the word; matches[0] is their longest
 * common prefix, as readline expects.  Any Lua error just means no
 * completion: Tab must never break the prompt. */
static char **complete(const char *text, int start, int end) {
    lua_State *L = completion_state;
    rl_attempted_completion_over = 1;   /* no fallback to file names */
    rl_completion_append_character = '\0';
    if (!L || end < start || !push_repl_function(L, "complete"))
        return NULL;
    int top = lua_gettop(L) - 1;
    lua_pushlstring(L, rl_line_buffer, (size_t)end);
    lua_pushinteger(L, start);
    char **matches = NULL;
    if (lua_pcall(L, 2, 1, 0) == 0 && lua_istable(L, -1)) {
        int n = (int)lua_objlen(L, -1);
        matches = n > 0 ? calloc((size_t)n + 2, sizeof *matches) : NULL;
        size_t common = 0;
        for (int i = 1; matches && i <= n; i++) {
            lua_rawgeti(L, -1, i);
            const char *m = lua_tostring(L, -1);
            matches[i] = strdup(m ? m : "");
            lua_pop(L, 1);
            if (i == 1) {
                common = strlen(matches[1]);
            } else {
                size_t k = 0;
                while (k < common && matches[i][k] == matches[1][k])
                    k++;
                common = k;
            }
        }
        if (matches) {
            if (n == 1) {   /* one match: it is the completion, no list */
                matches[0] = matches[1];
                matches[1] = NULL;
            } else {
                matches[0] = strndup(matches[1], common);
            }
        }
    }
    lua_settop(L, top);
    (void)text;
    return matches;
}

/* `?obj` asks for help: chainer.repl.rewrite turns the chunk into Lua.
 * Replaces *chunk (malloc'd) when it changes. */
static void rewrite(lua_State *L, char **chunk, size_t *len) {
    const char *p = *chunk + strspn(*chunk, " \t");
    if (*p != '?' || !push_repl_function(L, "rewrite"))
        return;
    lua_pushlstring(L, *chunk, *len);
    if (lua_pcall(L, 1, 1, 0) == 0 && lua_isstring(L, -1)) {
        size_t n;
        const char *s = lua_tolstring(L, -1, &n);
        char *c = malloc(n + 1);
        if (c) {
            memcpy(c, s, n + 1);
            free(*chunk);
            *chunk = c;
            *len = n;
        }
    }
    lua_pop(L, 1);
}

typedef struct {
    int tty;
    char history[PATH_MAX];   /* "" when history is not kept */
    char *line;               /* getline buffer (non-tty) */
    size_t cap;
} repl_io;

static void history_setup(repl_io *io) {
    io->history[0] = '\0';
    const char *home = getenv("HOME");
    if (!io->tty || !home || !*home)
        return;
    snprintf(io->history, sizeof io->history, "%s/.chainlua_history", home);
    if (access(io->history, F_OK) == 0 ? access(io->history, R_OK | W_OK) != 0 : access(home, W_OK) != 0) {
        io->history[0] = '\0';   /* not writable: keep no history */
        return;
    }
    using_history();
    stifle_history(HISTORY_MAX);
    read_history(io->history);
}

static void history_save(repl_io *io) {
    if (io->history[0])
        write_history(io->history);
}

/* One line without its newline, malloc'd; NULL at end of input.  *intr is
 * set when Ctrl-C cancelled the line at the prompt. */
static char *read_line(repl_io *io, const char *prompt, int *intr) {
    *intr = 0;
    if (io->tty) {
        chainlua_host_take_interrupt();
        for (;;) {
            errno = 0;
            char *s = readline(prompt);
            if (chainlua_host_take_interrupt()) {
                free(s);
                *intr = 1;
                return NULL;
            }
            if (s || errno != EINTR)
                return s;
        }
    }
    ssize_t n = getline(&io->line, &io->cap, stdin);
    if (n < 0) {
        if (chainlua_host_take_interrupt()) {
            clearerr(stdin);
            *intr = 1;
        }
        return NULL;
    }
    if (n > 0 && io->line[n - 1] == '\n')
        io->line[--n] = '\0';
    return strdup(io->line);
}

/* Lua reports an unfinished chunk as a syntax error near '<eof>'. */
static int incomplete(lua_State *L, int status) {
    if (status != LUA_ERRSYNTAX)
        return 0;
    size_t len;
    const char *msg = lua_tolstring(L, -1, &len);
    static const char mark[] = "'<eof>'";
    size_t ml = sizeof mark - 1;
    return msg && len >= ml && strcmp(msg + len - ml, mark) == 0;
}

/* Compiles the chunk in buf: 0 and the function on the stack, 1 when it is
 * incomplete (nothing pushed), or the syntax error status with the
 * message on the stack. */
static int compile(lua_State *L, const char *buf, size_t len) {
    if (buf[0] == '=') {   /* "=expr" is "return expr" (Lua 5.1 habit) */
        lua_pushfstring(L, "return select(1, %s\n)", buf + 1);
        int st = luaL_loadbuffer(L, lua_tostring(L, -1), lua_objlen(L, -1), "=stdin");
        lua_remove(L, -2);
        if (incomplete(L, st)) {
            lua_pop(L, 1);
            return 1;
        }
        return st;
    }
    /* select(1, ...) keeps every value but is not a tail call, so an error
     * raised by the expression still names "stdin:1:" */
    lua_pushfstring(L, "return select(1, %s\n)", buf);
    int st = luaL_loadbuffer(L, lua_tostring(L, -1), lua_objlen(L, -1), "=stdin");
    lua_remove(L, -2);
    if (st == 0)
        return 0;
    lua_pop(L, 1);
    st = luaL_loadbuffer(L, buf, len, "=stdin");
    if (incomplete(L, st)) {
        lua_pop(L, 1);
        return 1;
    }
    return st;
}

/* Prints the n values on top of the stack with chainer.repl.print
 * (tab-separated; tensors pretty-print, tables read as Lua), or the global
 * print without it. */
static void print_values(lua_State *L, int n) {
    if (n <= 0)
        return;
    if (!push_repl_function(L, "print"))
        lua_getglobal(L, "print");
    lua_insert(L, -n - 1);
    chainlua_host_report(L, chainlua_host_pcall(L, n, 0), NULL);
}

int chainlua_repl(lua_State *L, int banner) {
    repl_io io = {0};
    io.tty = isatty(0);
    if (banner && io.tty) {
        printf("chainlua %s (%s) -- Chainer for LuaJIT.  Ctrl-D exits, Ctrl-C interrupts.\n", ch_version(),
               LUAJIT_VERSION);
        fflush(stdout);
    }
    chainlua_preload(L);
    load_repl_module(L);
    if (io.tty) {
        completion_state = L;
        rl_attempted_completion_function = complete;
        /* words end at operators and separators: Tab after `x:re` or
         * `"data/tr` completes the part after the last one (complete.lua
         * sees the whole line and lines its candidates up with it) */
        rl_basic_word_break_characters = " \t\n\"\\'`@$><=;|&{(,+-*/%^#~[]).:";
    }
    history_setup(&io);

    char *chunk = NULL;
    size_t chunk_len = 0;
    for (;;) {
        int intr;
        char *line = read_line(&io, chunk ? PROMPT2 : PROMPT1, &intr);
        if (intr) {   /* Ctrl-C at the prompt: drop what was typed */
            if (io.tty)
                fputs("\n", stdout);
            free(chunk);
            chunk = NULL;
            chunk_len = 0;
            continue;
        }
        if (!line) {
            if (io.tty)
                fputs("\n", stdout);
            break;
        }
        if (io.history[0] && line[strspn(line, " \t")] != '\0')
            add_history(line);
        size_t ll = strlen(line);
        if (!chunk) {
            if (line[strspn(line, " \t")] == '\0') {
                free(line);
                continue;
            }
            chunk = line;
            chunk_len = ll;
        } else {
            char *c = realloc(chunk, chunk_len + ll + 2);
            if (!c) {
                free(line);
                fprintf(stderr, "chainlua: out of memory\n");
                break;
            }
            chunk = c;
            chunk[chunk_len++] = '\n';
            memcpy(chunk + chunk_len, line, ll + 1);
            chunk_len += ll;
            free(line);
        }
        int top = lua_gettop(L);
        rewrite(L, &chunk, &chunk_len);
        int st = compile(L, chunk, chunk_len);
        if (st == 1)
            continue;   /* incomplete: read more */
        free(chunk);
        chunk = NULL;
        chunk_len = 0;
        if (st == 0)
            st = chainlua_host_pcall(L, 0, LUA_MULTRET);
        if (st == 0)
            print_values(L, lua_gettop(L) - top);
        else
            chainlua_host_report(L, st, NULL);
        lua_settop(L, top);
        fflush(stdout);
    }
    free(chunk);
    free(io.line);
    history_save(&io);
    completion_state = NULL;
    if (repl_module != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, repl_module);
    repl_module = LUA_NOREF;
    return 0;
}

/*
 * chainlua_host.h -- embedding chainlua (LuaJIT + the chainer modules) in a
 * C program.  Link against the static library `chainlua_host` (which pulls
 * in libchainlua, LuaJIT and libedit); see docs/embedding.md and
 * examples/embed/host.c.
 *
 * Ownership rules (the whole contract in one place)
 *  - chainlua_open() returns a state the caller owns; chainlua_close() frees
 *    it.  Every Lua value (and every tensor reference held by Lua) dies with
 *    the state; tensors the host still holds references to stay valid.
 *  - Tensors cross the boundary by reference counting, never by transfer:
 *      chainlua_push_tensor / chainlua_set_global_tensor: Lua takes its OWN
 *        reference; the host's reference is untouched (release it whenever
 *        you like, before or after Lua is done).
 *      chainlua_get_global_tensor / chainlua_to_tensor: return a NEW
 *        reference that the host must release with ch_tensor_release().
 *    Views made in Lua share storage with the host's tensor, exactly as
 *    views made in C do: writes through either are seen by both.
 *  - Strings returned by chainlua_error() belong to the state and stay valid
 *    until the next chainlua_* call on that state.
 *
 * Errors: functions returning int give 0 on success and -1 on failure;
 * functions returning a pointer give NULL on failure.  In both cases
 * chainlua_error(S) has the message (with a Lua traceback where a chunk
 * failed).  Nothing here exits or aborts the process.
 *
 * A state is not thread-safe: use one state per thread, or lock around it.
 */
#ifndef CHAINLUA_HOST_H
#define CHAINLUA_HOST_H

#include "chainlua.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct chainlua_state chainlua_state;
struct lua_State;

/* A new Lua state with the standard libraries, package.path set up to find
 * the chainer modules, `chainer` required and stored in the global
 * `chainer`.  NULL on failure: chainlua_error(NULL) then tells why (the
 * message is per thread, valid until the next chainlua_open on it). */
chainlua_state *chainlua_open(void);

/* Closes the Lua state (releasing every tensor Lua still holds) and frees
 * S.  NULL is fine. */
void chainlua_close(chainlua_state *S);

/* Runs a chunk of Lua source / a Lua file; results are discarded.
 * chunkname may be NULL (then "=(embedded)"). */
int chainlua_dostring(chainlua_state *S, const char *code, const char *chunkname);
int chainlua_dofile(chainlua_state *S, const char *path);

/* The message of the last failing call on S (NULL when the last call
 * succeeded).  S == NULL: the last chainlua_open failure on this thread. */
const char *chainlua_error(const chainlua_state *S);

/* Pushes t as a chainer tensor onto S's Lua stack; Lua takes its own
 * reference.  t must be a live tensor (not NULL, not freed). */
int chainlua_push_tensor(chainlua_state *S, ch_tensor *t);

/* Sets the global `name` to t (Lua takes its own reference). */
int chainlua_set_global_tensor(chainlua_state *S, const char *name, ch_tensor *t);

/* The tensor in the global `name`, as a NEW reference (release it with
 * ch_tensor_release).  NULL with an error when the global is not a tensor. */
ch_tensor *chainlua_get_global_tensor(chainlua_state *S, const char *name);

/* The tensor at Lua stack index idx, as a NEW reference; NULL with an error
 * when that value is not a tensor.  The stack is left as it was. */
ch_tensor *chainlua_to_tensor(chainlua_state *S, int idx);

/* The underlying lua_State, for hosts that use the Lua C API directly
 * (lua_pushnumber, lua_pcall, ...).  Owned by S. */
struct lua_State *chainlua_lua(chainlua_state *S);

/* The chainlua version ("0.1.0"). */
const char *chainlua_version(void);

#ifdef __cplusplus
}
#endif
#endif /* CHAINLUA_HOST_H */

/* chainlua_gc.c: the tensor handle's finalizer as a Lua C function.
 *
 * A Lua tensor is an FFI struct { ch_tensor *ptr }.  LuaJIT calls a cdata
 * finalizer that is itself a cdata function (C.ch_tensor_release) through
 * the cdata __call path of the interpreted FFI: ~1,000 instructions per
 * dead tensor.  A lua_CFunction is called directly.  This small module
 * (built separately from libchainlua, never linked against LuaJIT: the Lua
 * API resolves from the host process, as for any Lua C module) provides
 * that finalizer; chainer/tensor/core.lua loads it with package.loadlib and
 * uses it only after chainlua_gc_probe showed that lua_topointer returns
 * the address of a cdata's payload (true of LuaJIT 2.1).  Otherwise the
 * FFI finalizer stays.
 *
 * The release function comes from the libchainlua the Lua side loaded
 * (chainlua_gc_set_release), so the module needs no link to it and can
 * never call into a second copy of the runtime. */
#include <stdint.h>
#include <lua.h>
#include <lauxlib.h>

#define CHAINLUA_GC_API __attribute__((visibility("default")))

typedef void (*release_fn)(void *tensor);
static release_fn release;

/* chainlua_gc_probe(cdata) -> address lua_topointer gives, pointer stored
 * there (both as numbers, for the Lua side to compare with what the FFI
 * sees; user-space addresses fit a double exactly). */
CHAINLUA_GC_API int chainlua_gc_probe(lua_State *L) {
    const void *p = lua_topointer(L, 1);
    lua_pushnumber(L, (lua_Number)(uintptr_t)p);
    lua_pushnumber(L, p ? (lua_Number)(uintptr_t) * (void *const *)p : 0);
    return 2;
}

/* chainlua_gc_set_release(box): box is a void *[1] cdata holding the
 * address of ch_tensor_release (read the way the probe verified). */
CHAINLUA_GC_API int chainlua_gc_set_release(lua_State *L) {
    void *const *box = (void *const *)lua_topointer(L, 1);
    if (box == NULL || *box == NULL)
        return luaL_error(L, "chainlua_gc_set_release: expected a void *[1] cdata holding the release function");
    release = (release_fn)(uintptr_t)*box;
    return 0;
}

/* __gc of the tensor handle: releases the C reference it holds. */
CHAINLUA_GC_API int chainlua_gc_release(lua_State *L) {
    void *const *slot = (void *const *)lua_topointer(L, 1);
    if (slot != NULL && *slot != NULL && release != NULL)
        release(*slot);
    return 0;
}

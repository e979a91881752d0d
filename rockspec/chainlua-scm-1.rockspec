-- luarocks make rockspec/chainlua-scm-1.rockspec [--tree DIR]
-- Builds libchainlua, the chainlua executable and installs the chainer Lua
-- modules with CMake (see docs/install.md).  System packages first:
-- scripts/install-deps (OpenBLAS-OpenMP, zlib, HDF5, libedit, LuaJIT).
rockspec_format = "3.0"
package = "chainlua"
version = "scm-1"
source = {
  url = "git+https://github.com/chainlua/chainlua.git",
}
description = {
  summary = "Chainer's define-by-run deep learning framework for LuaJIT",
  detailed = [[
chainlua brings Chainer's programming model (Variable, functions, links,
optimizers, datasets, trainer) to LuaJIT, on a C11 runtime with OpenBLAS and
OpenMP, and an optional CUDA/cuDNN backend loaded at run time.
]],
  license = "MIT",
  labels = { "deep-learning", "neural-networks", "luajit" },
}
dependencies = {
  "lua == 5.1",   -- LuaJIT (the FFI is required)
}
build = {
  type = "cmake",
  variables = {
    CMAKE_BUILD_TYPE = "Release",
    CMAKE_INSTALL_PREFIX = "$(PREFIX)",
    -- luarocks moves these into the tree after cmake's install step:
    -- LUADIR -> TREE/share/lua/5.1, LIBDIR -> TREE/lib/lua/5.1, BINDIR -> TREE/bin
    LUADIR = "$(LUADIR)",
    LIBDIR = "$(LIBDIR)",
    BINDIR = "$(BINDIR)",
    CHAINLUA_VERSIONED_LIB = "OFF",   -- luarocks copies plain files, not symlinks
    CHAINLUA_BUILD_TESTS = "OFF",
  },
}

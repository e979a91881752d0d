-- `cmake --install BUILD --prefix X` puts everything under X (not under the
-- prefix of the configure), including what an embedding program needs:
-- the headers, libchainlua, libchainlua_host.a and chainlua.pc; a C
-- program then builds with `cc host.c $(pkg-config --cflags --libs chainlua)`
-- and runs against the installed tree alone.
local U = require 'host.util'
local q = U.quote

local has_tools = os.execute('command -v cmake > /dev/null 2>&1 && command -v pkg-config > /dev/null 2>&1 ' ..
  '&& command -v cc > /dev/null 2>&1') == 0

describe('install into a prefix', function()
  if not has_tools or not U.exists(U.build .. '/cmake_install.cmake') then
    pending('needs cmake, pkg-config, cc and a CMake build folder (CHAINLUA_BUILD)')
    return
  end
  if (U.read(U.build .. '/CMakeCache.txt') or ''):find('CHAINLUA_SANITIZE:BOOL=ON', 1, true) then
    pending('a sanitizer build: a program linking it needs -fsanitize too (make asan)')
    return
  end
  local prefix = os.tmpname()
  os.remove(prefix)
  prefix = prefix .. '-prefix'
  local work = prefix .. '-work'
  -- nothing from the build or source tree may leak into the installed tree's runs
  local clean_env = 'env -u LUA_PATH -u LUA_CPATH -u CHAINLUA_LIB -u CHAINLUA_BUILD PKG_CONFIG_PATH=' ..
    q(prefix .. '/lib/pkgconfig')

  setup(function()
    os.execute('mkdir -p ' .. q(work))
    -- a build configured with absolute install folders would write outside X
    -- (into /usr/local): refuse rather than install there
    local cache = U.read(U.build .. '/CMakeCache.txt') or ''
    for _, var in ipairs { 'LUADIR', 'LIBDIR', 'BINDIR', 'INCLUDEDIR' } do
      local v = cache:match('\n' .. var .. ':[%w]+=([^\n]*)')
      assert.is_truthy(v, U.build .. ' has no ' .. var .. ' in its cache')
      assert.is_nil(v:match('^/'), U.build .. ' installs ' .. var .. ' to the absolute ' .. v ..
        ', which --prefix cannot move')
    end
    local _, err, st = U.run('cmake --install ' .. q(U.build) .. ' --prefix ' .. q(prefix))
    assert.are.equal(0, st, err)
  end)
  teardown(function()
    os.execute('rm -rf ' .. q(prefix) .. ' ' .. q(work))
  end)

  it('installs the executable, the Lua modules, both libraries, the headers and chainlua.pc under X', function()
    for _, f in ipairs { 'bin/chainlua', 'share/lua/5.1/chainer/init.lua', 'share/lua/5.1/chainermn/init.lua',
      'lib/libchainlua.so',
      'lib/libchainlua_host.a', 'include/chainlua.h', 'include/chainlua_ops.h',
      'include/chainlua_host.h', 'lib/pkgconfig/chainlua.pc' } do
      assert.is_true(U.exists(prefix .. '/' .. f), 'missing ' .. prefix .. '/' .. f)
    end
    local out, err, st = U.run(clean_env .. ' ' .. q(prefix .. '/bin/chainlua') ..
      [[ -e "io.write(package.searchpath('chainer', package.path))"]])
    assert.are.equal(0, st, err)
    assert.are.equal(prefix .. '/bin/../share/lua/5.1/chainer/init.lua', out)
  end)

  it('builds an embedding program with pkg-config that uses the installed tree', function()
    U.write(work .. '/host.c', [[
#include <stdio.h>
#include "chainlua_host.h"
int main(void) {
    chainlua_state *S = chainlua_open();
    if (!S) { fprintf(stderr, "%s\n", chainlua_error(NULL)); return 1; }
    if (chainlua_dostring(S, "local T = require('chainer').tensor\n"
                             "io.write(package.searchpath('chainer', package.path), '\\n')\n"
                             "io.write(tostring(T.arange(6):reshape{2, 3}:sum()), '\\n')", "check") != 0) {
        fprintf(stderr, "%s\n", chainlua_error(S));
        return 1;
    }
    chainlua_close(S);
    return 0;
}
]])
    local cmd = string.format('cd %s && %s sh -c %s', q(work), clean_env,
      q('cc host.c -o host $(pkg-config --cflags --libs chainlua)'))
    local _, err, st = U.run(cmd)
    assert.are.equal(0, st, err)
    local out
    out, err, st = U.run('cd / && ' .. clean_env .. ' ' .. q(work .. '/host'))
    assert.are.equal(0, st, err)
    local modules, sum = out:match('^([^\n]*)\n([^\n]*)\n$')
    assert.matches('^' .. prefix:gsub('%p', '%%%0') .. '/lib/.*/share/lua/5%.1/chainer/init%.lua$', modules)
    assert.are.equal('tensor(15, dtype=int64)', sum)
    -- the example program of docs/embedding.md builds the same way
    _, err, st = U.run(string.format('cd %s && %s sh -c %s', q(work), clean_env,
      q('cc ' .. U.root .. '/examples/embed/host.c -o embed $(pkg-config --cflags --libs chainlua) && ./embed')))
    assert.are.equal(0, st, err)
  end)
end)

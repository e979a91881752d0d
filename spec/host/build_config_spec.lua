-- The first build: a plain configure builds the CUDA backend only on a
-- machine with an NVIDIA driver, installs relative to the prefix, and what
-- the builds leave in the source tree is ignored by git.
local U = require 'host.util'
local q = U.quote

local has_cmake = os.execute('command -v cmake > /dev/null 2>&1') == 0

-- whether this machine has an NVIDIA driver, by the CMakeLists' own rule
local function gpu_driver()
  if U.exists('/proc/driver/nvidia/version') then return true end
  local p = io.popen('PATH="$PATH:/sbin:/usr/sbin" ldconfig -p 2>/dev/null')
  local out = p:read('*a')
  p:close()
  return out:find('libcuda%.so%.1 ') ~= nil
end

describe('a plain configure', function()
  if not has_cmake then
    pending('cmake is not installed')
    return
  end
  local dir, log

  setup(function()
    dir = os.tmpname()
    os.remove(dir)
    -- only the configure: nothing is compiled
    log = U.run(string.format('cd %s && env -u CHAINLUA_CUDA cmake -S . -B %s 2>&1', q(U.root), q(dir)))
  end)
  teardown(function() os.execute('rm -rf ' .. q(dir)) end)

  it('builds the CUDA backend only where an NVIDIA driver is', function()
    local line = log:match('%-%- (CUDA backend:[^\n]*)')
    assert.is_truthy(line, log)
    if not gpu_driver() then
      assert.are.equal('CUDA backend: not built (no NVIDIA driver on this machine; CHAINLUA_CUDA=ON builds it anyway)',
        line)
      assert.is_nil(U.read(dir .. '/CMakeCache.txt'):find('CMAKE_CUDA_COMPILER:', 1, true))
    else
      assert.is_nil(line:find('no NVIDIA driver', 1, true))
    end
  end)

  it('keeps the install folders relative to the prefix', function()
    local cache = U.read(dir .. '/CMakeCache.txt')
    assert.matches('\nLUADIR:STRING=share/lua/5%.1\n', cache)
    assert.matches('\nLIBDIR:STRING=lib\n', cache)
    assert.matches('\nBINDIR:STRING=bin\n', cache)
    assert.matches('\nINCLUDEDIR:STRING=include\n', cache)
  end)
end)

describe('the source tree after builds', function()
  it('ignores what make and luarocks make leave there', function()
    for _, path in ipairs { 'build.luarocks/CMakeCache.txt', 'build.build.log', 'build.configure.log',
      'result/glance/log' } do
      local _, _, st = U.run('cd ' .. q(U.root) .. ' && git check-ignore -q ' .. q(path))
      assert.are.equal(0, st, path .. ' is not ignored by git')
    end
  end)
end)

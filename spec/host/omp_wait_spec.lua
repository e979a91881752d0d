-- How OpenMP's idle threads wait (docs/threads.md): chainlua starts libgomp
-- with GOMP_SPINCOUNT=1000 when the user set neither OMP_WAIT_POLICY nor
-- GOMP_SPINCOUNT, never overrides what the user set, and leaves the
-- environment of scripts (and their children) as the user gave it.
-- libgomp's OMP_DISPLAY_ENV=verbose report shows what it actually uses.
local U = require 'host.util'
local q = U.quote

-- the spin count libgomp reports last (the chainlua executable starts
-- twice, so its first report shows libgomp's own default)
local function spincount(stderr)
  local last
  for v in stderr:gmatch("GOMP_SPINCOUNT = '(%d+)'") do last = v end
  return last
end

local show = 'print(tostring(os.getenv("GOMP_SPINCOUNT")) .. " " .. tostring(os.getenv("OMP_WAIT_POLICY"))'
  .. ' .. " " .. tostring(os.getenv("CHAINLUA_OMP_SPIN_DEFAULTED")))'

local launchers = {
  { name = 'the chainlua executable', cmd = function() return q(U.exe) .. ' -e ' .. q(show) end },
  { name = 'luajit with require "chainer"',
    -- the project's modules and library, whatever the environment of the specs
    cmd = function()
      return 'LUA_PATH=' .. q(U.root .. '/lua/?.lua;' .. U.root .. '/lua/?/init.lua;;') .. ' CHAINLUA_LIB='
        .. q(os.getenv('CHAINLUA_LIB') or (U.build .. '/libchainlua.so')) .. ' luajit -e ' .. q('require "chainer"; ' .. show)
    end },
}

local function run(cmd, env)
  return U.run('env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY -u CHAINLUA_OMP_SPIN_DEFAULTED OMP_DISPLAY_ENV=verbose '
    .. (env or '') .. ' ' .. cmd)
end

for _, l in ipairs(launchers) do
  describe('OpenMP wait default, ' .. l.name, function()
    it('spins 1000 times when the user set nothing, and leaves the environment unset', function()
      local out, err, st = run(l.cmd())
      assert.are.equal(0, st, err)
      assert.are.equal('1000', spincount(err), err)
      assert.are.equal('nil nil nil\n', out)
    end)

    it('keeps the user\'s GOMP_SPINCOUNT', function()
      local out, err, st = run(l.cmd(), 'GOMP_SPINCOUNT=50')
      assert.are.equal(0, st, err)
      assert.are.equal('50', spincount(err), err)
      assert.are.equal('50 nil nil\n', out)
    end)

    it('keeps the user\'s OMP_WAIT_POLICY', function()
      local out, err, st = run(l.cmd(), 'OMP_WAIT_POLICY=passive')
      assert.are.equal(0, st, err)
      assert.are.equal('0', spincount(err), err)   -- passive: no spinning
      assert.are.equal('nil passive nil\n', out)
      out, err, st = run(l.cmd(), 'OMP_WAIT_POLICY=active')
      assert.are.equal(0, st, err)
      assert.is_true(tonumber(spincount(err)) > 300000, err)
      assert.are.equal('nil active nil\n', out)
    end)
  end)
end

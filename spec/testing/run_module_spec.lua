-- chainer.testing.run_module: a spec file started as a script runs busted
-- on itself and exits with busted's status.
local chainer = require 'chainer'
local testing = chainer.testing
local helpers = require 'helpers'
local H = require 'examples.helpers'
local err_of = helpers.err_of

-- A spec file that runs itself; `body` is its test.
local function write_spec(dir, name, body)
  local path = dir .. '/' .. name
  local f = assert(io.open(path, 'w'))
  f:write(string.format([[
require('chainer').testing.run_module(arg and arg[0], %q)
describe('self-running', function()
  it('first', function() %s end)
  it('second', function() assert.are.equal(2, 1 + 1) end)
end)
]], path, body))
  f:close()
  return path
end

local function run_script(path, extra)
  return H.run(string.format("LUA_PATH='%s' %s '%s' %s", package.path, helpers.lua_interpreter(), path, extra or ''))
end

describe('testing.run_module', function()
  local dir
  setup(function() dir = helpers.tmpdir() end)
  teardown(function() helpers.rmdir(dir) end)

  it('runs busted on the file when it is the script, and exits 0 when every test passes', function()
    local out, code = run_script(write_spec(dir, 'passing_spec.lua', 'assert.is_true(true)'))
    assert.are.equal(0, code, out)
    assert.matches('2 successes / 0 failures / 0 errors', out)
  end)

  it('exits with busted\'s status when a test fails (the same as busted run on the file)', function()
    local path = write_spec(dir, 'failing_spec.lua', 'assert.are.equal(1, 2)')
    local out, code = run_script(path)
    assert.matches('1 success / 1 failure', out)
    local direct_out, direct = H.run(string.format("LUA_PATH='%s' %s /usr/bin/busted '%s'", package.path,
      helpers.lua_interpreter(), path))
    assert.are_not.equal(0, code)
    assert.are.equal(direct, code, direct_out)
  end)

  it('passes the script\'s own arguments on to busted', function()
    local out, code = run_script(write_spec(dir, 'filtered_spec.lua', 'assert.is_true(false)'), '--filter=second')
    assert.are.equal(0, code, out)
    assert.matches('1 success / 0 failures', out)
  end)

  it('does nothing when the file is not the script (under busted, arg[0] is busted)', function()
    assert.is_nil(testing.run_module(arg and arg[0], 'spec/testing/run_module_spec.lua'))
    assert.is_nil(testing.run_module('other_spec.lua', 'spec/testing/run_module_spec.lua'))
    assert.is_nil(testing.run_module(nil, 'x_spec.lua'))
  end)

  it('returns the status instead of exiting with exit = false', function()
    local path = write_spec(dir, 'status_spec.lua', 'assert.is_true(true)')
    local saved = _G.arg   -- (the spec's own environment has a copy)
    _G.arg = { [0] = path, [-1] = helpers.lua_interpreter() }   -- as when the file is the script
    local ok, status = pcall(testing.run_module, path, path, { exit = false, args = { '--output=TAP' } })
    _G.arg = saved
    assert.is_true(ok, tostring(status))
    assert.are.equal(0, status)
  end)

  it('names bad arguments', function()
    assert.matches('run_module: file must be the spec file\'s path, a string %(got nil%)',
      err_of(function() testing.run_module('a') end))
    assert.matches('run_module: name must be the running script\'s path %(arg%[0%]%) or nil %(got number%)',
      err_of(function() testing.run_module(1, 'a') end))
    assert.matches("run_module: unknown option 'verbose'", err_of(function() testing.run_module('a', 'b', { verbose = true }) end))
  end)
end)

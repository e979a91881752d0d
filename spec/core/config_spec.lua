-- Specs for chainer.config, scoped configuration and environment overrides.
local chainer = require 'chainer'
local T = chainer.tensor

local helpers = require 'helpers'
local err_of = helpers.err_of

local function luajit_with_env(env, code)
  local lib = os.getenv('CHAINLUA_LIB') or ''
  local cmd = string.format("%s CHAINLUA_LIB='%s' LUA_PATH='lua/?.lua;lua/?/init.lua;;' %s -e \"%s\" 2>&1",
    env, lib, helpers.lua_interpreter(), code)
  local p = io.popen(cmd)
  local out = p:read('*a')
  p:close()
  return out
end

describe('chainer.config', function()
  it('has Chainer defaults', function()
    local c = chainer.config
    assert.is_true(c.train)
    assert.is_true(c.enable_backprop)
    assert.is_true(c.type_check)
    assert.is_false(c.debug)
    assert.are.equal('auto', c.use_cudnn)
    assert.is_false(c.cudnn_deterministic)
    assert.are.equal('float32', c.dtype)
    assert.is_false(c.keep_graph_on_report)
  end)

  it('mirrors the cuDNN settings into the C runtime (what the GPU convolutions read)', function()
    local ffi = require 'ffi'
    local v = ffi.new('int[3]')
    local function c_side()
      T.C.ch_get_cudnn_config(v, v + 1, v + 2)
      return { v[0], v[1], v[2] }
    end
    assert.are.same({ 0, 1, 0 }, c_side())
    assert.are.equal('auto', chainer.config.use_cudnn_tensor_core)
    assert.is_false(chainer.config.autotune)
    chainer.using_config('cudnn_deterministic', true, function()
      assert.is_true(chainer.config.cudnn_deterministic)
      assert.are.same({ 1, 1, 0 }, c_side())
      chainer.using_config('use_cudnn_tensor_core', 'never', function()
        chainer.using_config('autotune', true, function() assert.are.same({ 1, 0, 1 }, c_side()) end)
      end)
      chainer.config.use_cudnn_tensor_core = 'always'
      assert.are.same({ 1, 2, 0 }, c_side())
      chainer.config.use_cudnn_tensor_core = 'auto'
    end)
    assert.is_false(chainer.config.cudnn_deterministic)
    assert.are.same({ 0, 1, 0 }, c_side())
  end)

  it('using_config sets a value for the scope, returns results and restores on error', function()
    local a, b = chainer.using_config('train', false, function() return chainer.config.train, 7 end)
    assert.is_false(a)
    assert.are.equal(7, b)
    assert.is_true(chainer.config.train)
    local e = err_of(chainer.using_config, 'train', false, function() error('inner failure', 0) end)
    assert.are.equal('inner failure', e)
    assert.is_true(chainer.config.train)
    assert.truthy(err_of(chainer.using_config, 'train', false):find('pass the scope as a function', 1, true))
    -- nested scopes
    chainer.using_config('train', false, function()
      chainer.using_config('train', true, function() assert.is_true(chainer.config.train) end)
      assert.is_false(chainer.config.train)
    end)
  end)

  it('no_backprop_mode restores enable_backprop even on error', function()
    pcall(chainer.no_backprop_mode, function() error('x') end)
    assert.is_true(chainer.config.enable_backprop)
  end)

  it('dtype sets the tensor default float and is validated', function()
    chainer.using_config('dtype', 'float64', function()
      assert.are.equal('float64', T.default_float)
      assert.are.equal('float64', T.array({ 1.5 }).dtype)
      assert.are.equal('float64', chainer.get_dtype())
    end)
    assert.are.equal('float32', T.default_float)
    assert.truthy(err_of(function() chainer.config.dtype = 'int32' end):find("config.dtype: expected 'float16', 'float32', 'float64' or 'mixed16' (got int32)", 1, true))
    assert.truthy(err_of(function() chainer.config.use_cudnn = 'sometimes' end):find("config.use_cudnn", 1, true))
  end)

  it('is_debug / set_debug', function()
    assert.is_false(chainer.is_debug())
    chainer.set_debug(true)
    assert.is_true(chainer.is_debug())
    chainer.set_debug(false)
    assert.is_false(chainer.config.debug)
  end)

  it('reads CHAINER_TYPE_CHECK, CHAINER_DEBUG, CHAINER_DTYPE and CHAINER_SEED', function()
    local out = luajit_with_env('CHAINER_TYPE_CHECK=0 CHAINER_DEBUG=1 CHAINER_DTYPE=float64',
      "local c = require('chainer'); io.write(tostring(c.config.type_check), ' ', tostring(c.config.debug), ' ', c.tensor.default_float)")
    assert.are.equal('false true float64', out)
    local code = "local c = require('chainer'); local t = c.tensor.empty({4}); c.tensor.C.ch_random_uniform(t.ptr, 0, 1); io.write(table.concat(t:totable(), ','))"
    local a = luajit_with_env('CHAINER_SEED=123', code)
    local b = luajit_with_env('CHAINER_SEED=123', code)
    local c = luajit_with_env('CHAINER_SEED=124', code)
    assert.are.equal(a, b)
    assert.are_not.equal(a, c)
  end)
end)

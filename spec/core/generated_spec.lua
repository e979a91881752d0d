-- Generated files: lua/chainer/_ffi.lua and lua/chainer/_ops.lua are written
-- by scripts/gen-ffi.lua from runtime/include/chainlua.h and chainlua_ops.h.
-- This spec fails when either committed file differs from what the headers
-- give today (run `make ffi`), and checks that the op tables agree with the
-- C enums the FFI sees.
local ffi = require 'ffi'
require 'chainer'
local ops = require 'chainer._ops'

local function sh(cmd)
  local p = assert(io.popen(cmd .. ' 2>&1; echo "rc=$?"'))
  local out = p:read('*a')
  p:close()
  return out:match('rc=(%d+)%s*$'), out
end

describe('generated files', function()
  it('are what scripts/gen-ffi.lua writes from the headers today', function()
    local rc, out = sh('luajit scripts/gen-ffi.lua runtime/include/chainlua.h lua/chainer --check')
    assert.are.equal('0', rc, out)
  end)

  it('--check notices a stale file', function()
    local dir = os.tmpname()
    os.remove(dir)
    assert(os.execute('mkdir -p ' .. dir) == 0 or true)
    sh('cp lua/chainer/_ffi.lua lua/chainer/_ops.lua ' .. dir)
    local f = assert(io.open(dir .. '/_ops.lua', 'ab'))
    f:write('-- edited by hand\n')
    f:close()
    local rc, out = sh('luajit scripts/gen-ffi.lua runtime/include/chainlua.h ' .. dir .. ' --check')
    sh('rm -rf ' .. dir)
    assert.are.equal('1', rc)
    assert.matches('_ops.lua', out)
  end)
end)

describe('the op tables', function()
  local C = ffi.C
  local lib = require('chainer.tensor').C
  local lists = {
    { 'dtype', 'CH_', { bool = 'BOOL', float32 = 'FLOAT32', float64 = 'FLOAT64' }, 'CH_NDTYPES' },
    { 'unary_op', 'CH_', { neg = 'NEG', isfinite = 'ISFINITE', sigmoid = 'SIGMOID' }, 'CH_NUNARY' },
    { 'binary_op', 'CH_', { add = 'ADD', logical_xor = 'LOGICAL_XOR' }, 'CH_NBINARY' },
    { 'reduce_op', 'CH_', { sum = 'SUM', count_nonzero = 'COUNT_NONZERO' }, 'CH_NREDUCE' },
    { 'pad_mode', 'CH_PAD_', { constant = 'CONSTANT', reflect = 'REFLECT' }, 'CH_NPAD_MODES' },
    { 'act_grad_op', 'CH_ACT_', { relu = 'RELU', tanh = 'TANH' }, 'CH_NACT_GRAD' },
  }
  for _, l in ipairs(lists) do
    local key, prefix, samples, count = l[1], l[2], l[3], l[4]
    it(key .. ' matches the C enum', function()
      for name, id in pairs(samples) do
        assert.are.equal(tonumber(lib[prefix .. id]), ops[key][name], key .. '.' .. name)
      end
      assert.are.equal(tonumber(lib[count]), ops[key .. '_count'])
      for code = 0, ops[key .. '_count'] - 1 do
        assert.are.equal(code, ops[key][ops[key .. '_names'][code]])
      end
    end)
  end
  it('the C name tables agree with the list (dtype names round-trip)', function()
    for code = 0, ops.dtype_count - 1 do
      assert.are.equal(ops.dtype_names[code], ffi.string(lib.ch_dtype_name(code)))
    end
  end)
end)

-- CHAINLUA_CPU (runtime/core/cpu_cap.c) caps the hand-vectorised kernels
-- below what the CPU has.  On a machine with AVX-512 that is how the
-- portable paths (AVX2, and the x86-64-v2 baseline) get tested at all: the
-- Winograd transforms of both tile sizes, the small-map gathers' fallbacks,
-- batch normalization, the batch-1 rows and the float32 products.  Each
-- cap runs in a child process (the cap is read once per process) that
-- compares float32 results with float64 and prints the worst error of each.
local H = require 'helpers'

local CHILD = [==[
package.path = 'lua/?.lua;lua/?/init.lua;' .. package.path
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local lib = require 'chainer._lib'
local function rel(a, ref)
  return T.max(T.abs(a:astype('float64') - ref)):item() / math.max(T.max(T.abs(ref)):item(), 1e-30)
end
local function both(f, inputs)
  local out = {}
  for _, dt in ipairs({ 'float32', 'float64' }) do
    local vs = {}
    for i, x in ipairs(inputs) do vs[i] = chainer.Variable(x:astype(dt)) end
    local y = f(unpack(vs))
    T.random.seed(7)
    y.grad = T.random.uniform(-1, 1, y.shape, dt)
    y:backward()
    local r = { y.array }
    for i, v in ipairs(vs) do r[i + 1] = v.grad end
    out[dt] = r
  end
  local worst = 0
  for i = 1, #out.float32 do worst = math.max(worst, rel(out.float32[i], out.float64[i])) end
  return worst
end
T.random.seed(1)
local U = function(shape) return T.random.uniform(-1, 1, shape, 'float32') end
local conv = function(pad) return function(x, W, b) return F.convolution_2d(x, W, b, { pad = pad }) end end
local cases = {
  -- Winograd F(4x4): rows of 8 tiles, rows of 3, maps of 2 tiles (the gathers on AVX-512)
  { 'winograd_f44_rows8', conv(1), { U { 2, 32, 32, 32 }, U { 32, 32, 3, 3 }, U { 32 } }, 5e-5 },
  { 'winograd_f44_ragged', conv(1), { U { 2, 32, 13, 11 }, U { 40, 32, 3, 3 }, U { 40 } }, 5e-5 },
  { 'winograd_f44_small', conv(1), { U { 5, 48, 8, 8 }, U { 48, 48, 3, 3 }, U { 48 } }, 5e-5 },
  -- Winograd F(2x2)
  { 'winograd_f22', conv(1), { U { 5, 32, 4, 6 }, U { 36, 32, 3, 3 }, U { 36 } }, 1e-5 },
  { 'batch_norm', function(x, g, b) return F.batch_normalization(x, g, b) end,
    { U { 8, 20, 9, 7 }, U { 20 }, U { 20 } }, 1e-5 },
  { 'linear_batch1', function(x, W, b) return F.linear(x, W, b) end, { U { 1, 300 }, U { 70, 300 }, U { 70 } }, 1e-5 },
  { 'matmul', function(a, b) return F.matmul(a, b) end, { U { 67, 130 }, U { 130, 51 } }, 1e-5 },
}
for _, c in ipairs(cases) do
  print(string.format('%s %.3e %.0e', c[1], both(c[2], c[3]), c[4]))
end
print('blas ' .. lib.ffi.string(lib.C.ch_blas_info()))
-- batch normalization rounds alike on every path (and on the GPU): its
-- float32 y and gx as bits
do
  T.random.seed(3)
  local x = chainer.Variable(U { 6, 10, 5, 7 })
  local y = F.batch_normalization(x, chainer.Variable(U { 10 }), chainer.Variable(U { 10 }))
  y.grad = U(y.shape)
  y:backward()
  local h = 2166136261ULL
  for _, t in ipairs({ y.array, x.grad }) do
    local c = t:copy()
    local p = lib.ffi.cast('const uint32_t *', lib.C.ch_tensor_ptr(c.ptr))
    for i = 0, c.size - 1 do h = (h * 16777619ULL + p[i]) % 4294967296ULL end
  end
  print('bn_bits ' .. tostring(h):gsub('ULL$', ''))
end
-- so do the optimizer updates (AVX-512 and baseline loops): the parameters
-- and states after 3 updates, above the parallel grain with a ragged tail
do
  local O = chainer.optimizers
  local h = 2166136261ULL
  local function hash(t)
    local c = t:copy()
    local words = c.size * (c.dtype == 'float64' and 2 or 1)
    local p = lib.ffi.cast('const uint32_t *', lib.C.ch_tensor_ptr(c.ptr))
    for i = 0, words - 1 do h = (h * 16777619ULL + p[i]) % 4294967296ULL end
  end
  for _, dt in ipairs({ 'float32', 'float64' }) do
    for _, make in ipairs({
      function() return O.Adam() end, function() return O.AMSBound() end,
      function() return O.AdamW({ weight_decay_rate = 0.01 }) end, function() return O.RMSprop() end,
      function() return O.RMSpropGraves() end, function() return O.AdaDelta() end,
      function() return O.AdaGrad() end, function() return O.SMORMS3() end, function() return O.MSVAG() end,
    }) do
      local n = 70001
      local link = chainer.Link()
      link:add_param('w', chainer.Parameter(T.arange(n, dt) * 0.001 - 0.02))
      local opt = make():setup(link)
      for step = 1, 3 do
        link.w.grad = T.sin(T.arange(n, dt) * (0.37 * step)) * 0.1
        opt:update()
      end
      hash(link.w.array)
      local state, keys = opt.target.w.update_rule.state, {}
      for k in pairs(state) do keys[#keys + 1] = k end
      table.sort(keys)
      for _, k in ipairs(keys) do hash(state[k]) end
    end
  end
  print('opt_bits ' .. tostring(h):gsub('ULL$', ''))
end
]==]

describe('CHAINLUA_CPU caps the kernels', function()
  local script
  setup(function()
    script = os.tmpname() .. '.lua'
    local f = assert(io.open(script, 'w'))
    f:write(CHILD)
    f:close()
  end)
  teardown(function() os.remove(script) end)

  local function run(cap)
    local p = io.popen('CHAINLUA_CPU=' .. cap .. ' ' .. H.lua_interpreter() .. ' ' .. script .. ' 2>&1')
    local out = p:read('*a')
    p:close()
    return out
  end

  for _, cap in ipairs({ 'baseline', 'avx2', 'native' }) do
    it('gives float32 results within their bounds: CHAINLUA_CPU=' .. cap, function()
      local out = run(cap)
      local n = 0
      for line in out:gmatch('[^\n]+') do
        local name, err, bound = line:match('^(%S+) (%S+) (%S+)$')
        if name and name ~= 'blas' then
          n = n + 1
          assert.is_true(tonumber(err) < tonumber(bound), cap .. ': ' .. line)
        end
      end
      assert.are.equal(7, n, out)
      if cap ~= 'native' then -- our AVX-512 product kernel is not used below AVX-512
        assert.is_nil(out:match('blas [^\n]*AVX%-512 kernel'), out)
      end
    end)
  end

  it('gives batch normalization and the optimizer updates the same bits under every cap', function()
    local outs = {}
    for _, cap in ipairs({ 'baseline', 'avx2', 'native' }) do outs[cap] = run(cap) end
    for _, key in ipairs({ 'bn_bits', 'opt_bits' }) do
      local native = assert(outs.native:match(key .. ' (%d+)'), key .. ' native')
      assert.are.equal(native, outs.baseline:match(key .. ' (%d+)'), key .. ' baseline')
      assert.are.equal(native, outs.avx2:match(key .. ' (%d+)'), key .. ' avx2')
    end
  end)

  it('warns once about a value it does not know, and runs as native', function()
    local out = run('avx3')
    assert.truthy(out:find("CHAINLUA_CPU=avx3 ignored (expected 'native', 'avx2' or 'baseline')", 1, true), out)
    local n = 0
    for _ in out:gmatch('ignored') do n = n + 1 end
    assert.are.equal(1, n, out)
  end)
end)

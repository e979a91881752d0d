-- Robustness: regressions for crashes and undefined behaviour found with
-- AddressSanitizer/UBSan and fuzzing (see docs/robustness.md), and a short
-- fixed-seed fuzz of tensor ops and autograd over odd shapes (0-d, empty,
-- size-1, non-contiguous, every dtype).  Run it under ASan with
--   LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0:detect_odr_violation=0 \
--   CHAINLUA_LIB=$PWD/build-asan/libchainlua.so luajit /usr/bin/busted spec/robustness_spec.lua
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

local helpers = require 'helpers'
local err_of = helpers.err_of

describe('robustness regressions', function()
  it('reductions whose output is empty return it (a zero tile width divided by zero: SIGFPE)', function()
    local r = T.ones({ 1, 0, 0, 5 }):logsumexp{ axis = 1 }
    assert.are.same({ 1, 0, 5 }, r.shape)
    assert.are.same({ 1, 0, 5 }, T.ones({ 1, 0, 0, 5 }):sum{ axis = 1 }.shape)
    assert.are.same({ 2, 0 }, T.ones({ 2, 70000, 0 }):sum{ axis = 1 }.shape)
    assert.are.same({ 0, 3, 2 }, T.ones({ 0, 3, 2 }):cumsum(1).shape)
    assert.are.same({ 3, 0, 2 }, T.ones({ 3, 0, 2 }):cumsum(0).shape)
    -- the zero-size axis itself reduced: sums are 0, logsumexp -inf
    assert.are.same({ 0, 0 }, T.ones({ 2, 0 }):sum{ axis = 1 }:totable())
    assert.are.same({ -math.huge, -math.huge }, T.ones({ 2, 0 }):logsumexp{ axis = 1 }:totable())
    assert.matches('max: cannot reduce over a zero%-size axis', err_of(function() return T.ones({ 2, 0, 3 }):max{ axis = 1 } end))
  end)

  it('shapes whose size overflows 64 bits are errors, not UB and a garbage allocation', function()
    assert.matches('empty: shape %(1000000000000, 1000000000000%) is too big', err_of(T.zeros, { 1e12, 1e12 }))
    assert.matches('empty: shape %(0, 1000000000000, 1000000000000%) is too big', err_of(T.zeros, { 0, 1e12, 1e12 }))
    assert.matches('broadcast_to: shape %(1000000000000, 1000000000000%) is too big',
      err_of(function() return T.ones({ 1 }):broadcast_to{ 1e12, 1e12 } end))
    assert.matches('broadcast_to: negative dimension %-5 at axis 0',
      err_of(function() return T.ones({ 1 }):broadcast_to{ -5 } end))
    assert.matches('reshape: cannot reshape a tensor of shape %(1,%)',
      err_of(function() return T.ones({ 1 }):reshape{ 1e12, 1e12, -1 } end))
    -- large but representable empty shapes still work
    assert.are.same({ 0, 1e9 }, T.zeros({ 0, 1e9 }).shape)
  end)

  it('a freed tensor raises errors everywhere instead of being read through NULL', function()
    local t = T.ones({ 2, 3 })
    t:free()
    assert.matches('totable: the tensor was freed', err_of(t.totable, t))
    assert.matches("sum: argument 'x' was freed", err_of(t.sum, t))
    assert.matches("get: argument 't' was freed", err_of(t.get, t, 0, 0))
    assert.matches("relu: argument 'x' was freed", err_of(F.relu, t))
    assert.matches('tensor%(<.*totable: the tensor was freed.*>, dtype=float32%)', tostring(t))
    local one = T.ones({ 1 })
    one:free()
    assert.matches("get: argument 't' was freed", err_of(one.item, one))
  end)

  it('savez_compressed errors carry its whole name', function()
    local t = T.ones({ 2 })
    t:free()
    local p = os.tmpname()
    assert.matches("^savez_compressed: argument 'a' was freed", err_of(T.savez_compressed, p, { a = t }))
    os.remove(p)
  end)
end)

-- Random ops over random tensors: every call returns or raises an error
-- that starts with a function name; nothing crashes.  Under ASan/UBSan this
-- also proves there is no out-of-bounds access or UB on these paths.
describe('robustness fuzz', function()
  local R
  local dtypes = { 'float32', 'float64', 'int32', 'int64', 'bool', 'float16', 'uint8', 'int8', 'int16' }
  local function rshape()
    local s = {}
    for i = 1, R(0, 4) do s[i] = ({ 0, 1, 1, 2, 3, 5 })[R(1, 6)] end
    return s
  end
  local function rtensor(dtype)
    local s = rshape()
    local t = T.random.uniform(-3, 3, s, 'float64'):astype(dtype or dtypes[R(1, #dtypes)])
    local k = R(1, 4)
    if k == 1 and #s >= 2 then t = t:transpose() end
    if k == 2 and #s >= 1 and s[1] > 1 then t = t:slice({ nil, nil, -1 }) end
    return t
  end
  local function check_error(e, what)
    local m = tostring(e):gsub('^[^:]*:%d+: ', '')
    assert.is_truthy(m:match('^[%w_%.]+[:%s]'), what .. ': unclear error: ' .. m)
  end

  it('300 tensor ops on odd shapes and dtypes', function()
    local rng = math.random
    math.randomseed(11)
    R = rng
    local ops = {
      function(a, b) return a + b end, function(a, b) return a * b end, function(a, b) return a / b end,
      function(a, b) return a % b end, function(a, b) return a ^ b end,
      function(a) return a:sum{ axis = R(-3, 3) } end, function(a) return a:max{ axis = R(-3, 3) } end,
      function(a) return a:argmax{ axis = R(-3, 3) } end, function(a) return a:logsumexp{ axis = R(-3, 3) } end,
      function(a) return a:cumsum(R(-3, 3)) end, function(a) return a:prod{ axis = R(-3, 3) } end,
      function(a) return a:sort{ axis = R(-3, 3) } end, function(a) return a:argsort{ axis = R(-3, 3) } end,
      function(a, b) return T.concatenate({ a, b }, R(-3, 3)) end, function(a, b) return T.stack({ a, b }, R(-3, 3)) end,
      function(a, b) return a:matmul(b) end, function(a) return a:exp() end, function(a) return a:flip(R(-3, 3)) end,
      function(a) return a:expand_dims(R(-3, 3)) end, function(a, b) return T.where(a, a, b) end,
      function(a) return a:take(T.array({ 0, -1 }, 'int64'), R(-2, 2)) end, function(a) return a:clip(-1, 1) end,
      function(a) return tostring(a) end, function(a) return a:astype('float16'):totable() end,
      function(a) return F.softmax(a:astype('float32'), R(-3, 3)) end,
      function(a) return F.max_pooling_2d(a:astype('float32'), R(1, 3)) end,
      function(a, b) return F.linear(a:astype('float32'), b:astype('float32')) end,
      function(a, b) return F.softmax_cross_entropy(a:astype('float32'), b:astype('int32')) end,
      function(a) return F.split_axis(a, 2, R(-2, 2)) end, function(a) return F.get_item(a, { R(-2, 2) }) end,
    }
    local errors = 0
    for _ = 1, 300 do
      local k = R(1, #ops)
      local ok, e = pcall(ops[k], rtensor(), rtensor())
      if not ok then
        errors = errors + 1
        check_error(e, 'op ' .. k)
      end
    end
    assert.is_true(errors < 250, 'most calls succeed')
  end)

  it('150 forward/backward passes on odd shapes', function()
    math.randomseed(12)
    R = math.random
    local ops = {
      function(x) return F.relu(x) end, function(x) return F.softmax(x, R(-2, 2)) end,
      function(x) return F.sum(x, { axis = R(-2, 2) }) end, function(x) return F.max(x, { axis = R(-2, 2) }) end,
      function(x) return F.logsumexp(x, { axis = R(-2, 2) }) end, function(x, y) return x * y end,
      function(x, y) return F.matmul(x, y) end, function(x, y) return F.concat({ x, y }, R(-2, 2)) end,
      function(x) return F.get_item(x, { R(-1, 1) }) end, function(x) return F.transpose(x) end,
      function(x) return F.max_pooling_2d(x, R(1, 3), R(1, 2), R(0, 1)) end,
      function(x) return F.average_pooling_2d(x, R(1, 3), R(1, 2), R(0, 1)) end,
      function(x) return F.local_response_normalization(x) end, function(x) return F.prod(x, { axis = R(-2, 2) }) end,
      function(x) return F.softmax_cross_entropy(x, T.zeros({ x.shape[1] or 1 }, 'int32')) end,
      function(x) return F.broadcast_to(x, { 2, 3 }) end, function(x) return F.cumsum(x, R(-2, 2)) end,
    }
    local backwards = 0
    for _ = 1, 150 do
      local k = R(1, #ops)
      local dt = ({ 'float32', 'float64', 'float16' })[R(1, 3)]
      local x = chainer.Variable(rtensor(dt))
      local y = chainer.Variable(R(1, 2) == 1 and rtensor(dt) or T.random.uniform(-2, 2, x.shape, dt))
      local ok, e = pcall(function() F.sum(ops[k](x, y)):backward() end)
      if ok then
        backwards = backwards + 1
        assert.are.same(x.shape, x.grad.shape)
      else
        check_error(e, 'op ' .. k)
      end
    end
    assert.is_true(backwards > 50, 'backwards ' .. backwards)
  end)
end)

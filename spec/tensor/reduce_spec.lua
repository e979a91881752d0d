-- Specs for tensor/reduce.lua and runtime/cpu/reduce.c.
-- Expected values were computed with NumPy 1.24.
local chainer = require 'chainer'
local T = chainer.tensor

local function flat(t) return t:reshape(-1):totable() end

local function assert_close(t, expected, tol)
  tol = tol or 1e-6
  local got = flat(t)
  assert.are.equal(#expected, #got)
  for i = 1, #expected do
    local e, g = expected[i], got[i]
    if e ~= e then
      assert(g ~= g, string.format('element %d: expected NaN, got %s', i, tostring(g)))
    elseif e == math.huge or e == -math.huge then
      assert.are.equal(e, g)
    else
      assert(math.abs(g - e) <= tol * math.max(1, math.abs(e)),
        string.format('element %d: expected %.17g, got %.17g', i, e, g))
    end
  end
end

local function assert_values(t, expected) assert.are.same(expected, flat(t)) end

local function err_of(f, ...)
  local ok, msg = pcall(f, ...)
  assert.is_false(ok)
  return tostring(msg)
end

local x = T.arange(24, nil, nil, 'float64'):reshape(2, 3, 4)

describe('sum / mean / prod', function()
  it('reduce everything to a 0-d tensor', function()
    local s = x:sum()
    assert.are.same({}, s.shape)
    assert.are.equal(276, s:item())
    assert.are.equal(11.5, x:mean():item())
    assert.are.equal(720, T.arange(1, 7):prod():item())
  end)

  it('reduce single axes, axis lists and negative axes', function()
    assert_values(x:sum(1), { 12, 15, 18, 21, 48, 51, 54, 57 })
    assert.are.same({ 2, 4 }, x:sum(1).shape)
    assert_values(x:sum{ axis = { 0, 2 } }, { 60, 92, 124 })
    assert_values(x:sum({ 0, 2 }), { 60, 92, 124 })
    assert_values(x:sum(-2), flat(x:sum(1)))
    assert_values(T.sum(x, { axis = { -1, 0 } }), { 60, 92, 124 })
    assert.are.same({ 0, 13, 28, 45, 64, 85 }, { unpack(flat(x:prod(0)), 1, 6) })
    assert_values(x:mean{ axis = 2 }, { 1.5, 5.5, 9.5, 13.5, 17.5, 21.5 })
  end)

  it('keepdims keeps reduced axes as size 1', function()
    assert.are.same({ 1, 3, 1 }, x:sum{ axis = { 0, 2 }, keepdims = true }.shape)
    assert.are.same({ 1, 1, 1 }, x:sum{ keepdims = true }.shape)
    assert.are.same({ 2, 1, 4 }, x:max{ axis = 1, keepdims = true }.shape)
  end)

  it('works on non-contiguous and negative-stride inputs', function()
    local t = x:transpose({ 2, 0, 1 })   -- (4, 2, 3)
    assert_values(t:sum{ axis = { 0, 1 } }, { 60, 92, 124 })
    assert_values(x:flip(1):sum(1), { 12, 15, 18, 21, 48, 51, 54, 57 })
    assert_values(x:slice('..., ::-2'):sum(2), { 4, 12, 20, 28, 36, 44 })
  end)

  it('uses NumPy result dtypes', function()
    local i8 = T.array({ 100, 100 }, 'int8')
    assert.are.equal('int64', i8:sum().dtype)
    assert.are.equal(200, i8:sum():item())
    assert.are.equal('int64', T.array({ 2, 3 }, 'int32'):prod().dtype)
    assert.are.equal('int64', T.array({ true, true, false }):sum().dtype)
    assert.are.equal(2, T.array({ true, true, false }):sum():item())
    assert.are.equal('float64', T.array({ 1, 2 }, 'int32'):mean().dtype)
    assert.are.equal(1.5, T.array({ 1, 2 }, 'int32'):mean():item())
    assert.are.equal('float32', T.ones({ 3 }):sum().dtype)
    local h = T.array({ 1, 2, 4 }, 'float16')
    assert.are.equal('float16', h:sum().dtype)
    assert.are.equal('float16', h:mean().dtype)
    assert_close(h:mean(), { 2.333984375 }, 0)
  end)

  it('sums of empty axes are 0 (prod 1); mean of nothing is NaN', function()
    assert_values(T.zeros({ 0, 3 }):sum(0), { 0, 0, 0 })
    assert_values(T.zeros({ 0, 3 }):prod(0), { 1, 1, 1 })
    assert.are.same({ 0 }, T.zeros({ 0, 3 }):sum(1).shape)
    assert.are.equal(0, T.zeros({ 0 }):sum():item())
    local m = T.zeros({ 0 }):mean():item()
    assert(m ~= m)
  end)

  it('0-d and size-1 inputs', function()
    local z = T.full({}, 7)
    assert.are.equal(7, z:sum():item())
    assert.are.same({}, z:sum().shape)
    assert.are.equal(7, z:max():item())
    assert.are.equal(0, z:argmax():item())
    assert_values(T.ones({ 3, 1 }):sum(1), { 1, 1, 1 })
    assert_values(T.ones({ 3, 1 }):argmax(1), { 0, 0, 0 })
    assert_values(x:sum{ axis = {} }, flat(x))   -- no axes: nothing reduced
  end)
end)

describe('float32 summation accuracy and determinism', function()
  it('is pairwise (accurate) for long runs and along axis 0', function()
    local n = 1000000
    local v = T.full({ n }, 0.1)
    -- naive float32 accumulation drifts to ~100958; pairwise stays at 1e5
    assert_close(v:sum(), { 100000 }, 1e-6)
    assert_close(v:reshape(n, 1):sum(0), { 100000 }, 1e-6)
    assert_close(v:reshape(10000, 100):sum(0):sum(), { 100000 }, 1e-6)
    assert_close(v:reshape(100, 10000):sum(1):sum(), { 100000 }, 1e-6)
  end)

  it('gives bitwise-equal sums for 1 and 2 threads', function()
    local n = 3000017
    local v = T.arange(n, nil, nil, 'float32'):mul_(1e-3):sin_()
    local m = v:slice({ 0, 3000000 }):reshape(3000, 1000)
    local old = chainer.get_num_threads()
    local res = {}
    for _, th in ipairs({ 1, 2 }) do
      chainer.set_num_threads(th)
      res[th] = { v:sum():item(), flat(m:sum(0)), flat(m:sum(1)), v:mean():item(), flat(m:transpose():sum(1)) }
    end
    chainer.set_num_threads(old)
    assert.are.equal(res[1][1], res[2][1])
    assert.are.same(res[1][2], res[2][2])
    assert.are.same(res[1][3], res[2][3])
    assert.are.equal(res[1][4], res[2][4])
    assert.are.same(res[1][5], res[2][5])
  end)

  it('tall axis-0 reductions (several fixed row pieces) are correct', function()
    local m = T.arange(10000 * 3, nil, nil, 'float64'):reshape(10000, 3)
    -- column j sums j + 3k for k < 10000
    assert_values(m:sum(0), { 149985000, 149995000, 150005000 })
    assert_values(m:max(0), { 29997, 29998, 29999 })
    assert_values(m:argmin(0), { 0, 0, 0 })
    assert_values(m:argmax(0), { 9999, 9999, 9999 })
    local long = T.arange(200000, nil, nil, 'float64')
    assert.are.equal(199999 * 200000 / 2, long:sum():item())
    assert.are.equal(199999, long:argmax():item())
    assert.are.equal(0, long:flip(0):argmax():item())
  end)
end)

describe('max / min / argmax / argmin', function()
  it('values and first-occurrence positions', function()
    assert_values(x:max{ axis = { 0, 2 } }, { 15, 19, 23 })
    assert_values(x:argmax(1), { 2, 2, 2, 2, 2, 2, 2, 2 })
    local y = T.array({ { 3, 1, 3 }, { 0, 5, 5 } })
    assert_values(y:argmax(1), { 0, 1 })
    assert_values(y:argmin(1), { 1, 0 })
    assert_values(y:argmax(0), { 0, 1, 1 })
    assert.are.equal(4, y:argmax():item())   -- over the flattened tensor
    assert.are.equal('int64', y:argmax().dtype)
    assert_values(y:amax(1), { 3, 5 })
    assert_values(y:amin(0), { 0, 1, 3 })
    assert.are.equal('int32', T.array({ 1, 9 }, 'int32'):max().dtype)
    assert.are.equal(9, T.array({ 1, 9 }, 'int32'):max():item())
    assert.are.same({ 1, 1 }, y:argmax{ keepdims = true }.shape)
  end)

  it('propagate NaN; argmax/argmin point at the first NaN', function()
    local v = T.array({ 1, 0 / 0, 3, 0 / 0 })
    local m = v:max():item()
    assert(m ~= m)
    local n = v:min():item()
    assert(n ~= n)
    assert.are.equal(1, v:argmax():item())
    assert.are.equal(1, v:argmin():item())
    local cols = T.array({ { 1, 0 / 0 }, { 0 / 0, 2 }, { 5, 7 } })
    assert_values(cols:argmax(0), { 1, 0 })
    assert_close(cols:max(0), { 0 / 0, 0 / 0 })
  end)

  it('of an empty axis is an error', function()
    assert.matches('max: cannot reduce over a zero%-size axis of a tensor of shape %(0, 3%)',
      err_of(function() return T.zeros({ 0, 3 }):max(0) end))
    assert.matches('argmin: cannot reduce over a zero%-size axis',
      err_of(function() return T.zeros({ 0 }):argmin() end))
    assert.are.same({ 0 }, T.zeros({ 0, 3 }):max(1).shape)
  end)

  it('argmax takes a single axis', function()
    assert.matches('argmax: takes a single axis', err_of(function() return x:argmax({ 0, 1 }) end))
  end)
end)

describe('var / std / logsumexp', function()
  it('var and std with ddof', function()
    assert_values(x:var{ axis = { 0, 2 } }, { 37.25, 37.25, 37.25 })
    assert_values(x:std{ axis = 1, ddof = 1 }, { 4, 4, 4, 4, 4, 4, 4, 4 })
    local a = T.array({ { 1, 2, 3 }, { 4, 5, 6 } })
    assert_close(a:var(), { 2.9166667 }, 1e-7)
    assert_close(a:std{ ddof = 1 }, { 1.8708287 }, 1e-7)
    assert.are.equal('float32', a:var().dtype)
    assert.are.equal('float64', T.array({ 1, 2 }, 'int32'):var().dtype)
    assert.are.equal(0.25, T.array({ 1, 2 }, 'int32'):var():item())
    local v1 = T.array({ 1 }, 'float64'):var{ ddof = 1 }:item()
    assert(v1 ~= v1 or v1 == math.huge)   -- n - ddof = 0
  end)

  it('logsumexp is stable and handles -inf', function()
    assert_close(x:logsumexp(2), { 3.4401896985611953, 7.440189698561195, 11.440189698561195,
      15.440189698561195, 19.440189698561195, 23.440189698561195 }, 1e-15)
    assert_close(T.array({ 1000, 1000 }, 'float64'):logsumexp(), { 1000 + math.log(2) }, 1e-15)
    assert_close(T.array({ -1000, -1000 }):logsumexp(), { -1000 + math.log(2) }, 1e-6)
    assert_close(T.array({ -math.huge, -math.huge }):logsumexp(), { -math.huge })
    assert_close(T.array({ 0, math.huge }):logsumexp(), { math.huge })
    assert_close(T.zeros({ 0 }):logsumexp(), { -math.huge })
    assert.are.same({ 2, 1, 4 }, x:logsumexp{ axis = 1, keepdims = true }.shape)
  end)
end)

describe('all / any / count_nonzero', function()
  it('test truthiness', function()
    local b = T.array({ { 1, 0, 2 }, { 0, 0, 3 } })
    assert_values(b:all(0), { false, false, true })
    assert_values(b:any(1), { true, true })
    assert.are.equal(3, b:count_nonzero():item())
    assert_values(b:count_nonzero(0), { 1, 0, 2 })
    assert.are.equal(false, b:all():item())
    assert.are.equal(true, b:any():item())
    assert.are.equal(true, T.array({ 0 / 0 }):all():item())
    assert.are.equal(true, T.zeros({ 0 }):all():item())
    assert.are.equal(false, T.zeros({ 0 }):any():item())
    assert.are.equal(true, T.array({ -5, 3 }, 'int32'):all():item())
  end)
end)

describe('cumsum / cumprod', function()
  it('along an axis and flattened', function()
    assert_values(x:cumsum(1):select(1), { 12, 13, 14, 15, 28, 30, 32, 34, 48, 51, 54, 57 })
    assert_values(T.arange(1, 7):reshape(2, 3):cumprod(1), { 1, 2, 6, 4, 20, 120 })
    assert_values(T.arange(1, 7):reshape(2, 3):cumsum(), { 1, 3, 6, 10, 15, 21 })
    assert_values(T.arange(1, 7):reshape(2, 3):cumsum(0), { 1, 2, 3, 5, 7, 9 })
    assert_values(T.arange(1, 7):reshape(2, 3):transpose():cumsum(0), { 1, 4, 3, 9, 6, 15 })
  end)
  it('uses int64 for integers and keeps float dtypes', function()
    local c = T.array({ { 1, 2 }, { 3, 4 } }, 'int8'):cumsum(0)
    assert.are.equal('int64', c.dtype)
    assert_values(c, { 1, 2, 4, 6 })
    assert.are.equal('int64', T.array({ true, true }):cumsum().dtype)
    assert.are.equal('float16', T.array({ 1 }, 'float16'):cumsum().dtype)
    assert.are.same({ 0, 2 }, T.zeros({ 0, 2 }):cumsum(0).shape)
  end)
  it('rejects a bad axis', function()
    assert.matches('cumsum: axis 2 is out of range for a 2%-d tensor', err_of(function() return T.ones({ 2, 2 }):cumsum(2) end))
  end)
end)

describe('sum_to', function()
  it('inverts broadcasting', function()
    local g = T.ones({ 4, 2, 3 })
    assert_values(g:sum_to({ 3 }), { 8, 8, 8 })
    assert_values(g:sum_to({ 2, 1 }), { 12, 12 })
    assert.are.same({ 1, 2, 1 }, g:sum_to({ 1, 2, 1 }).shape)
    assert_values(g:sum_to({}), { 24 })
    assert.are.same({}, g:sum_to({}).shape)
    assert.are.equal(g, g:sum_to({ 4, 2, 3 }))   -- same shape: x itself
    assert_values(T.arange(6):reshape(2, 3):transpose():sum_to({ 3, 1 }), { 3, 5, 7 })
  end)
  it('keeps the dtype', function()
    assert.are.equal('int32', T.ones({ 2, 3 }, 'int32'):sum_to({ 3 }).dtype)
    assert.are.equal('float16', T.ones({ 2, 3 }, 'float16'):sum_to({ 1, 3 }).dtype)
  end)
  it('names both shapes when they do not fit', function()
    assert.matches('sum_to: cannot sum a tensor of shape %(2, 3%) to shape %(2,%)',
      err_of(function() return T.ones({ 2, 3 }):sum_to({ 2 }) end))
    assert.matches('sum_to: cannot sum a tensor of shape %(3,%)',
      err_of(function() return T.ones({ 3 }):sum_to({ 1, 3 }) end))
  end)
end)

describe('reduction errors', function()
  it('bad axes', function()
    assert.matches('sum: axis 3 is out of range for a 3%-d tensor %(expected %-3..2%)', err_of(function() return x:sum(3) end))
    assert.matches('mean: axis %-2 is given twice', err_of(function() return x:mean({ 1, -2 }) end))
    assert.matches('sum: axis 0 is out of range for a 0%-d tensor', err_of(function() return T.full({}, 1):sum(0) end))
    assert.matches('sum: opts must be', err_of(function() return x:sum('a') end))
  end)
  it('freed tensors', function()
    local a = T.ones({ 3 })
    a:free()
    assert.matches("sum: argument 'x' was freed", err_of(function() return a:sum() end))
  end)
end)

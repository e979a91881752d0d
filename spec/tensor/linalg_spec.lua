-- Specs for tensor/linalg.lua: matmul, gemm, dot, tensordot, outer, trace,
-- inv, det, solve.  Expected values computed by hand or with NumPy 1.24.
local T = require 'chainer.tensor'

local function close(actual, expected, tol, path)
  tol = tol or 1e-5
  path = path or 'value'
  if type(expected) == 'table' then
    assert(type(actual) == 'table', path .. ': expected a table, got ' .. tostring(actual))
    assert(#actual == #expected, string.format('%s: length %d, expected %d', path, #actual, #expected))
    for i = 1, #expected do close(actual[i], expected[i], tol, path .. '[' .. i .. ']') end
  else
    local ok = math.abs(actual - expected) <= tol * (1 + math.abs(expected))
    assert(ok, string.format('%s: got %s, expected %s', path, tostring(actual), tostring(expected)))
  end
end

local helpers = require 'helpers'
local errors_with = helpers.errors_with

local function arange(n, shape, dtype)
  return T.arange(0, n, 1, dtype or 'float64'):reshape(shape)
end

describe('tensor.matmul', function()
  it('multiplies 2-D matrices (float32)', function()
    local a = T.array { { 1, 2, 3 }, { 4, 5, 6 } }
    local b = T.array { { 1, 0 }, { 0, 1 }, { 2, 2 } }
    local c = T.matmul(a, b)
    assert.equal('float32', c.dtype)
    close(c:totable(), { { 7, 8 }, { 16, 17 } })
    close(a:matmul(b):totable(), { { 7, 8 }, { 16, 17 } })
  end)

  it('honours transa and transb without copying the operand', function()
    local a = T.array { { 1, 2, 3 }, { 4, 5, 6 } }
    close(T.matmul(a, a, { transb = true }):totable(), { { 14, 32 }, { 32, 77 } })
    close(T.matmul(a, a, { transa = true }):totable(),
      { { 17, 22, 27 }, { 22, 29, 36 }, { 27, 36, 45 } })
    -- a transposed view with transb: (a^T)(a^T)^T = a^T a
    local at = a:transpose()
    close(T.matmul(at, at, { transb = true }):totable(),
      { { 17, 22, 27 }, { 22, 29, 36 }, { 27, 36, 45 } })
    close(T.matmul(at, at, { transa = true }):totable(), { { 14, 32 }, { 32, 77 } })
  end)

  it('handles strided, negative-stride and transposed views', function()
    local m = arange(12, { 3, 4 })
    -- m[::-1].T @ m[:, ::2]
    local a = m:slice({ nil, nil, -1 }):transpose()
    local b = m:slice({ nil, nil }, { nil, nil, 2 })
    close(T.matmul(a, b):totable(), { { 16, 40 }, { 28, 58 }, { 40, 76 }, { 52, 94 } })
    -- m[:, ::2].T @ m
    close(T.matmul(b:transpose(), m):totable(),
      { { 80, 92, 104, 116 }, { 104, 122, 140, 158 } })
  end)

  it('promotes 1-D operands like NumPy', function()
    local m = arange(12, { 3, 4 })
    local v = T.matmul(arange(3, { 3 }), m)
    assert.same({ 4 }, v.shape)
    close(v:totable(), { 20, 23, 26, 29 })
    local w = T.matmul(m, arange(4, { 4 }))
    assert.same({ 3 }, w.shape)
    close(w:totable(), { 14, 38, 62 })
    local s = T.matmul(T.array { 1, 2, 3 }, T.array { 4, 5, 6 })
    assert.same({}, s.shape)
    close(s:item(), 32)
    -- 1-D against a batch
    close(T.matmul(arange(4, { 4 }), arange(24, { 2, 4, 3 })):totable(),
      { { 42, 48, 54 }, { 114, 120, 126 } })
    close(T.matmul(arange(24, { 2, 3, 4 }), arange(4, { 4 })):totable(),
      { { 14, 38, 62 }, { 86, 110, 134 } })
  end)

  it('broadcasts batch axes', function()
    local a = arange(24, { 2, 3, 4 })
    -- shared 2-D right operand (folded into one tall product)
    local b = arange(8, { 4, 2 }) - 3
    close(T.matmul(a, b):totable(), { { { 10, 16 }, { 10, 32 }, { 10, 48 } },
      { { 10, 64 }, { 10, 80 }, { 10, 96 } } })
    -- one right operand per batch
    local c = arange(16, { 2, 4, 2 }) * 0.5
    close(T.matmul(a, c):totable(), { { { 14, 17 }, { 38, 49 }, { 62, 81 } },
      { { 302, 329 }, { 390, 425 }, { 478, 521 } } })
    -- (3, 1, 2, 2) @ (4, 2, 3) -> (3, 4, 2, 3)
    local e = arange(12, { 3, 1, 2, 2 })
    local f = arange(24, { 4, 2, 3 }) - 5
    local r = T.matmul(e, f)
    assert.same({ 3, 4, 2, 3 }, r.shape)
    close(r:slice(2, 3):totable(), { { 248, 265, 282 }, { 306, 327, 348 } })
    close(r:slice(0, 1):totable(), { { 4, 5, 6 }, { 14, 19, 24 } })
    -- transa on a batch
    close(T.matmul(a, a, { transa = true }):slice(1):totable(),
      { { 800, 848, 896, 944 }, { 848, 899, 950, 1001 }, { 896, 950, 1004, 1058 }, { 944, 1001, 1058, 1115 } })
  end)

  it('routes one-row products (batch 1) through gemv with the same result', function()
    local x = arange(6, { 1, 6 }, 'float32')
    local w = arange(18, { 6, 3 }, 'float32')
    close(T.matmul(x, w):totable(), { { 165, 180, 195 } })
    close(T.matmul(x, w:transpose():contiguous(), { transb = true }):totable(), { { 165, 180, 195 } })
    -- one column
    close(T.matmul(w:transpose(), T.array { { 1 }, { 1 }, { 1 }, { 1 }, { 1 }, { 1 } }):totable(),
      { { 45 }, { 51 }, { 57 } })
  end)

  it('computes integer products exactly in integer dtypes', function()
    local a = T.array({ { 1, 2 }, { 3, 4 } }, 'int32')
    local b = T.array({ { 1, 0 }, { 2, 1 } }, 'int64')
    local c = T.matmul(a, b)
    assert.equal('int64', c.dtype)
    assert.same({ { 5, 2 }, { 11, 4 } }, c:totable())
    local d = T.matmul(a, a)
    assert.equal('int32', d.dtype)
    assert.same({ { 7, 10 }, { 15, 22 } }, d:totable())
    -- int64 beyond 2^53 stays exact
    local big = T.array({ { 2 ^ 40 } }, 'int64')
    assert.equal(2 ^ 40 * 3, T.matmul(big, T.array({ { 3 } }, 'int64')):item())
  end)

  it('promotes mixed dtypes and keeps float16 in float16', function()
    local a = T.array({ { 1, 2 } }, 'float32')
    local b = T.array({ { 3 }, { 4 } }, 'float64')
    local c = T.matmul(a, b)
    assert.equal('float64', c.dtype)
    close(c:totable(), { { 11 } })
    local h = T.array({ { 1, 2 }, { 3, 4 } }, 'float16')
    local hh = T.matmul(h, h)
    assert.equal('float16', hh.dtype)
    close(hh:totable(), { { 7, 10 }, { 15, 22 } })
    local m = T.matmul(T.array({ { 1, 2 } }, 'int32'), T.array({ { 0.5 }, { 0.25 } }, 'float32'))
    assert.equal('float64', m.dtype)
    close(m:totable(), { { 1 } })
  end)

  it('handles empty operands', function()
    local z = T.matmul(T.zeros { 2, 0 }, T.zeros { 0, 3 })
    assert.same({ 2, 3 }, z.shape)
    close(z:totable(), { { 0, 0, 0 }, { 0, 0, 0 } })
    assert.same({ 0, 3 }, T.matmul(T.zeros { 0, 4 }, T.zeros { 4, 3 }).shape)
    assert.same({ 0, 2, 3 }, T.matmul(T.zeros { 0, 2, 4 }, T.zeros { 4, 3 }).shape)
  end)

  it('reports shape errors with both shapes', function()
    errors_with(function() T.matmul(T.zeros { 2, 3 }, T.zeros { 4, 5 }) end, 'matmul', '(2, 3)', '(4, 5)')
    errors_with(function() T.matmul(T.zeros { 2, 3 }, T.zeros { 3, 2 }, { transa = true }) end,
      'matmul', 'transposed')
    errors_with(function() T.matmul(T.zeros { 2, 2, 3 }, T.zeros { 3, 3, 2 }) end, 'matmul', 'broadcast')
    errors_with(function() T.matmul(T.array(2), T.zeros { 2 }) end, 'matmul', '0-d')
  end)
end)

describe('tensor.gemm', function()
  it('accumulates alpha*op(a)@op(b) + beta*c in place', function()
    local a = T.array { { 1, 2 }, { 3, 4 } }
    local b = T.array { { 1, 0 }, { 0, 1 } }
    local c = T.ones { 2, 2 }
    local r = T.gemm(c, a, b, { alpha = 2, beta = 1 })
    assert.equal(c, r)
    close(c:totable(), { { 3, 5 }, { 7, 9 } })
    T.gemm(c, a, b, { transa = true }) -- beta defaults to 0
    close(c:totable(), { { 1, 3 }, { 2, 4 } })
    T.gemm(c, a, a, { transb = true, beta = 0.5 })
    close(c:totable(), { { 5.5, 12.5 }, { 12, 27 } })
  end)

  it('writes one-row products (gemv path) and transposed c views', function()
    local x = T.array { { 1, 2, 3 } }
    local w = T.array { { 1, 0 }, { 0, 1 }, { 1, 1 } }
    local y = T.full({ 1, 2 }, 10)
    T.gemm(y, x, w, { beta = 1 })
    close(y:totable(), { { 14, 15 } })
    -- c is a transposed (column-major) view: c^T is updated
    local base = T.zeros { 2, 2 }
    T.gemm(base:transpose(), T.array { { 1, 2 }, { 3, 4 } }, T.array { { 1, 0 }, { 0, 1 } })
    close(base:totable(), { { 1, 3 }, { 2, 4 } })
    -- a strided c (every other column)
    local wide = T.zeros { 2, 4 }
    T.gemm(wide:slice({ nil, nil }, { nil, nil, 2 }), T.array { { 1, 2 }, { 3, 4 } }, T.array { { 1, 0 }, { 0, 1 } })
    close(wide:totable(), { { 1, 0, 2, 0 }, { 3, 0, 4, 0 } })
  end)

  it('rejects bad shapes and dtypes', function()
    errors_with(function() T.gemm(T.zeros { 2, 2 }, T.zeros { 2, 3 }, T.zeros { 2, 2 }) end, 'gemm', '(2, 3)')
    errors_with(function() T.gemm(T.zeros({ 2, 2 }, 'int32'), T.zeros { 2, 2 }, T.zeros { 2, 2 }) end,
      'gemm', 'int32')
    errors_with(function() T.gemm(T.zeros { 2 }, T.zeros { 2, 2 }, T.zeros { 2, 2 }) end, 'gemm', '2-d')
  end)
end)

describe('tensor.dot / tensordot / outer / trace', function()
  it('dot follows numpy.dot', function()
    close(T.dot(T.array { 1, 2 }, T.array { 3, 4 }):item(), 11)
    close(T.dot(T.array { { 1, 2 }, { 3, 4 } }, T.array { 1, 1 }):totable(), { 3, 7 })
    -- 2-D . 3-D sums over the second-to-last axis of b
    local r = T.dot(arange(6, { 2, 3 }), arange(12, { 2, 3, 2 }))
    assert.same({ 2, 2, 2 }, r.shape)
    close(r:totable(), { { { 10, 13 }, { 28, 31 } }, { { 28, 40 }, { 100, 112 } } })
    -- a 0-d operand scales
    close(T.dot(T.array(2), T.array { 1, 2 }):totable(), { 2, 4 })
    close(T.array { { 1, 2 } }:dot(T.array { 3, 4 }):totable(), { 11 })
    errors_with(function() T.dot(T.zeros { 2, 3 }, T.zeros { 2 }) end, 'dot', 'not aligned')
  end)

  it('tensordot with explicit and integer axes', function()
    close(T.tensordot(arange(24, { 2, 3, 4 }), arange(12, { 3, 4, 1 }), { { 1, 2 }, { 0, 1 } }):totable(),
      { { 506 }, { 1298 } })
    close(T.tensordot(arange(24, { 2, 3, 4 }), arange(12, { 4, 3 }), { { 1, 2 }, { 1, 0 } }):totable(),
      { 440, 1232 })
    close(T.tensordot(arange(24, { 2, 3, 4 }), arange(12, { 3, 4, 1 }), 2):totable(), { { 506 }, { 1298 } })
    -- axes = 0 is the outer product
    assert.same({ 2, 3 }, T.tensordot(T.array { 1, 2 }, T.array { 1, 2, 3 }, 0).shape)
    errors_with(function() T.tensordot(T.zeros { 2, 3 }, T.zeros { 4, 3 }, { { 0 }, { 0 } }) end,
      'tensordot', 'axis 0')
  end)

  it('outer flattens its inputs', function()
    close(T.outer(T.array { 1, 2 }, T.array { 3, 4, 5 }):totable(), { { 3, 4, 5 }, { 6, 8, 10 } })
    assert.same({ 4, 2 }, T.outer(T.ones { 2, 2 }, T.ones { 2 }).shape)
  end)

  it('trace sums the diagonal over the first two axes', function()
    close(T.trace(T.array { { 1, 2, 3 }, { 4, 5, 6 } }):item(), 6)
    local t = T.trace(arange(24, { 2, 3, 4 }, 'int32'))
    assert.equal('int64', t.dtype)
    assert.same({ 16, 18, 20, 22 }, t:totable())
    errors_with(function() T.trace(T.zeros { 3 }) end, 'trace', '2-d')
  end)
end)

describe('tensor.inv / det / solve', function()
  local A = { { 2, 1, 1 }, { 1, 3, 2 }, { 1, 0, 0 } }

  it('inverts matrices and batches of them', function()
    close(T.inv(T.array(A, 'float64')):totable(), { { 0, 0, 1 }, { -2, 1, 3 }, { 3, -1, -5 } }, 1e-12)
    local f = T.inv(T.array(A))
    assert.equal('float32', f.dtype)
    close(f:totable(), { { 0, 0, 1 }, { -2, 1, 3 }, { 3, -1, -5 } }, 1e-5)
    local B = T.array({ { { 1, 2 }, { 3, 4 } }, { { 0, 1 }, { 1, 0 } } }, 'float64')
    close(T.inv(B):totable(), { { { -2, 1 }, { 1.5, -0.5 } }, { { 0, 1 }, { 1, 0 } } }, 1e-12)
    -- integers compute in float64; transposed input
    local i = T.inv(T.array({ { 1, 2 }, { 3, 4 } }, 'int32'):transpose())
    assert.equal('float64', i.dtype)
    close(i:totable(), { { -2, 1.5 }, { 1, -0.5 } }, 1e-12)
  end)

  it('computes determinants with the pivot sign', function()
    close(T.det(T.array(A, 'float64')):item(), -1, 1e-12)
    close(T.det(T.array({ { 0, 1 }, { 1, 0 } }, 'float64')):item(), -1)
    close(T.det(T.array({ { { 1, 2 }, { 3, 4 } }, { { 2, 0 }, { 0, 3 } } }, 'float64')):totable(), { -2, 6 }, 1e-12)
    close(T.det(T.array { { 1, 2 }, { 2, 4 } }):item(), 0) -- singular: 0, no error
    close(T.det(T.zeros { 0, 0 }):item(), 1)
  end)

  it('solves for vectors and matrices', function()
    close(T.solve(T.array(A, 'float64'), T.array({ 4, 5, 6 }, 'float64')):totable(), { 6, 15, -23 }, 1e-12)
    close(T.solve(T.array(A, 'float64'), T.array({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, 'float64')):totable(),
      { { 5, 6 }, { 16, 18 }, { -25, -28 } }, 1e-12)
    close(T.solve(T.array { { 3, 1 }, { 1, 2 } }, T.array { 9, 8 }):totable(), { 2, 3 })
    -- batched a, shared b broadcast
    local a = T.array({ { { 2, 0 }, { 0, 4 } }, { { 1, 0 }, { 0, 1 } } }, 'float64')
    close(T.solve(a, T.array({ { 2, 4 }, { 2, 4 } }, 'float64')):totable(), { { 1, 1 }, { 2, 4 } })
  end)

  it('names the function when a matrix is singular or not square', function()
    errors_with(function() T.inv(T.array { { 1, 2 }, { 2, 4 } }) end, 'inv', 'singular')
    errors_with(function() T.inv(T.array { { { 1, 0 }, { 0, 1 } }, { { 0, 0 }, { 0, 0 } } }) end,
      'inv', 'singular', '[1]')
    errors_with(function() T.solve(T.array { { 1, 2 }, { 2, 4 } }, T.array { 1, 1 }) end, 'solve', 'singular')
    errors_with(function() T.inv(T.zeros { 2, 3 }) end, 'inv', 'square', '(2, 3)')
    errors_with(function() T.det(T.zeros { 3 }) end, 'det', '2-d')
    errors_with(function() T.solve(T.eye(2), T.ones { 3 }) end, 'solve', '(3,)')
  end)
end)

-- cuda.fuse on CPU tensors: the traced function runs as one elementwise
-- kernel (the CPU translation), and must give what the same expression
-- written with tensor ops gives: values, shapes (broadcasting) and dtypes.
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'
local fz = cuda.fusion
local err_of = require('helpers').err_of

-- same dtype and shape, values within tol (0: exactly)
local function agree(got, want, tol)
  assert.are.equal(want.dtype, got.dtype)
  assert.are.same(want.shape, got.shape)
  local a, b = got:astype('float64'):flatten():totable(), want:astype('float64'):flatten():totable()
  for j = 1, #b do
    local ok = (a[j] ~= a[j] and b[j] ~= b[j]) or math.abs(a[j] - b[j]) <= (tol or 0) * (1 + math.abs(b[j]))
    assert(ok, string.format('element %d: fused %s, tensor ops %s', j, a[j], b[j]))
  end
end

describe('cuda.fuse', function()
  local x = (T.arange(12, 'float32'):reshape(3, 4) - 5) / 3
  local y = T.array({ 0.5, -2, 3, 1.25 }, 'float32')

  it('fuses arithmetic with broadcasting and Lua constants', function()
    local f = cuda.fuse(function(a, b) return a * b + 1 - a / (b * b) end)
    agree(f(x, y), x * y + 1 - x / (y * y), 1e-6)
    agree(f(x:astype('float64'), y:astype('float64')), (x * y + 1 - x / (y * y)):astype('float64'), 1e-6)
  end)

  it('follows the tensor ops for dtypes: weak scalars, int / int, mixed kinds', function()
    local xi = T.array({ -7, -3, 0, 2, 9 }, 'int32')
    local f = cuda.fuse(function(a) return a * 2, a * 2.5, a / 2, a % 4, a ^ 2, -a end)
    local r = { f(xi) }
    agree(r[1], xi * 2)
    agree(r[2], xi * 2.5)
    agree(r[3], xi / 2)
    agree(r[4], T.mod(xi, 4))
    agree(r[5], T.pow(xi, 2))
    agree(r[6], -xi)
    assert.are.same({ 'int32', 'float64', 'float64', 'int32', 'int32', 'int32' },
      { r[1].dtype, r[2].dtype, r[3].dtype, r[4].dtype, r[5].dtype, r[6].dtype })
    local g = cuda.fuse(function(a, b) return a + b end)
    agree(g(y, xi:reshape(5, 1)), y + xi:reshape(5, 1), 1e-7)         -- float32 + int32
    agree(g(T.array({ 1, 2 }, 'int8'), T.array({ 3, 4 }, 'int16')), T.array({ 4, 6 }, 'int16'))
  end)

  it('floors the modulo as the tensor op, also for negative operands and 0', function()
    local f = cuda.fuse(function(a, b) return a % b end)
    local a, b = T.array({ -7, 7, -7, 7, 5 }, 'int64'), T.array({ 3, -3, -3, 3, 0 }, 'int64')
    agree(f(a, b), T.mod(a, b))
    local af, bf = T.array({ -7.5, 7.5, -7.5, 7.5 }), T.array({ 2, -2, -2, 2 })
    agree(f(af, bf), T.mod(af, bf), 1e-7)
  end)

  it('returns several outputs from one kernel', function()
    local f = cuda.fuse(function(a, b)
      local d = a - b
      return d * d, fz.sqrt(fz.absolute(d)), fz.less(a, b)
    end)
    local sq, rt, lt = f(x, y)
    local d = x - y
    agree(sq, d * d, 1e-6)
    agree(rt, T.sqrt(T.abs(d)), 1e-6)
    agree(lt, T.lt(x, y))
    assert.are.equal('bool', lt.dtype)
  end)

  it('computes cuda.fusion functions as the tensor ops do', function()
    local f = cuda.fuse(function(a, b)
      return fz.exp(a), fz.tanh(a), fz.sigmoid(a), fz.maximum(a, b), fz.minimum(a, 0),
        fz.where(fz.greater(a, 0), a, b * 2), fz.log1p(fz.square(a)), fz.arctan2(a, b),
        fz.sign(a), fz.floor(a), fz.astype(a, 'int32'), fz.logical_and(fz.greater(a, -1), fz.less(a, 1))
    end)
    local r = { f(x, y) }
    local want = { T.exp(x), T.tanh(x), T.sigmoid(x), T.maximum(x, y), T.minimum(x, 0),
      T.where(T.gt(x, 0), x, y * 2), T.log1p(T.square(x)), T.arctan2(x, y), T.sign(x), T.floor(x),
      x:astype('int32'), T.logical_and(T.gt(x, -1), T.lt(x, 1)) }
    assert.are.equal(#want, #r)
    for j = 1, #want do agree(r[j], want[j], 1e-6) end
  end)

  it('propagates NaN through maximum and minimum, as the tensor ops', function()
    local f = cuda.fuse(function(a, b) return fz.maximum(a, b), fz.minimum(a, b) end)
    local a, b = T.array({ 0 / 0, 1, 2 }), T.array({ 1, 0 / 0, 1 })
    local mx, mn = f(a, b)
    agree(mx, T.maximum(a, b))
    agree(mn, T.minimum(a, b))
  end)

  it('takes scalars as arguments: integral and fractional numbers are traced apart', function()
    local traces = 0
    local f = cuda.fuse(function(a, s)
      traces = traces + 1
      return a * s
    end)
    local xi = T.array({ 1, 2, 3 }, 'int32')
    agree(f(xi, 3), xi * 3)
    agree(f(xi, 4), xi * 4)
    assert.are.equal(1, traces)                      -- same signature: one trace, one kernel
    agree(f(xi, 0.5), xi * 0.5)
    assert.are.equal(2, traces)
    assert.are.equal('float64', f(xi, 0.5).dtype)
    agree(f(x, 3), x * 3, 1e-7)                      -- float32 array: another signature
    assert.are.equal(3, traces)
    local g = cuda.fuse(function(a, flag) return fz.where(flag, a, -a) end)
    agree(g(xi, true), xi)
    agree(g(xi, false), -xi)
  end)

  it('runs float16 inputs computing in float32', function()
    local h = x:astype('float16')
    local f = cuda.fuse(function(a) return a * 0.5 + 1 end)
    agree(f(h), h * 0.5 + 1, 2e-3)
  end)

  it('names its kernel and shows the generated body', function()
    local f = cuda.fuse(function(a, b) return a * b end, { kernel_name = 'my_mul' })
    assert.matches('out1 = _v1;', f:body(x, y), 1, true)
    assert.matches('float32 _v1 = %(float32%)%(in1%) %* %(float32%)%(in2%);', f:body(x, y))
    assert.are.equal('my_mul', f:kernel_for(x, y).name)
    assert.matches("cuda.fuse: unknown option 'name'", err_of(cuda.fuse, function(a) return a end, { name = 'k' }))
    assert.matches('kernel_name must be an identifier', err_of(cuda.fuse, function(a) return a end,
      { kernel_name = 'a b' }))
    assert.matches('cuda.fuse: expected a function %(got number%)', err_of(cuda.fuse, 3))
  end)

  it('refuses what cannot be fused, naming it', function()
    local branch = cuda.fuse(function(a) if a > 0 then return a end return -a end, { kernel_name = 'branchy' })
    assert.matches('fuse branchy: comparing a traced value with <, <=, > or >= cannot be fused.*fusion.less',
      err_of(branch, x))
    local both = cuda.fuse(function(a, b) return a < b and a or b end)
    assert.matches('comparing with <, <=, > or >= on a traced value cannot be fused', err_of(both, x, y))
    local red = cuda.fuse(function(a) return a:sum() end)
    assert.matches('fuse fused_kernel: sum is a reduction', err_of(red, x))
    local field = cuda.fuse(function(a) return a.shape end)
    assert.matches("no field or method 'shape'", err_of(field, x))
    local unknown = cuda.fuse(function(a) return fz.softmax(a) end)
    assert.matches("cuda.fusion has no function 'softmax'", err_of(unknown, x))
    local libm = cuda.fuse(function(a) return math.exp(a) end)
    assert.matches('the function failed while being traced', err_of(libm, x))
    assert.matches('bad argument #1 .*got table.*not math%.%* or tensor ops', err_of(libm, x))
    local tensor_op = cuda.fuse(function(a) return a + T.ones(3) end)
    assert.matches('fusion.add: argument 2 must be a traced value or a number %(got a tensor', err_of(tensor_op, x))
    local nothing = cuda.fuse(function() end)
    assert.matches('the function returned nothing', err_of(nothing, x))
    local bad_dtype = cuda.fuse(function(a) return -a end)
    assert.matches('fusion.negative:', err_of(bad_dtype, T.array({ true, false }, 'bool')))
    local arity = cuda.fuse(function(a) return fz.exp(a, a) end)
    assert.matches('fusion.exp takes 1 argument %(got 2%)', err_of(arity, x))
    assert.matches('cuda.fusion.exp: only inside a function being fused', err_of(fz.exp, 1))
  end)

  it('checks the call: a tensor is needed, Variables and strings are refused', function()
    local f = cuda.fuse(function(a, b) return a + b end)
    assert.matches('needs at least one tensor argument', err_of(f, 1, 2))
    assert.matches('argument 1 must be a tensor, a number or a boolean %(got a Variable',
      err_of(f, require('chainer').Variable(x), y))
    assert.matches('argument 2 must be a tensor, a number or a boolean %(got string%)', err_of(f, x, 'y'))
    assert.matches('cannot be broadcast', err_of(f, x, T.ones(5)))
  end)

  it('generates CUDA source that NVRTC compiles (when the backend and NVRTC are present)', function()
    local KC = require 'chainer.user_kernel.cuda_backend'
    local newest = KC.nvrtc_arch()
    if newest == 0 then pending('no CUDA backend or NVRTC here: ' .. cuda.info()) return end
    local f = cuda.fuse(function(a, b, s)
      local d = a - b * s
      return d * d + 1, fz.where(fz.greater(a, b), fz.exp(a), fz.tanh(b)), a % 3, fz.maximum(a, b) / 2,
        fz.sign(a), fz.isnan(a / b), fz.astype(a, 'int8'), fz.power(a, 2), -a, fz.logical_not(fz.less(a, 0))
    end, { kernel_name = 'ptx_fused' })
    for _, dt in ipairs { 'float16', 'float32', 'float64', 'int32', 'int64', 'int8' } do
      local a, b = T.ones({ 2, 3 }, dt), T.ones(3, dt)
      local ptx = KC.compile(f:kernel_for(a, b, 2):cuda_source(a, b, 2), 'ptx_fused', 'compute_' .. newest)
      assert.matches('.entry ptx_fused(', ptx, 1, true)
    end
  end)
end)

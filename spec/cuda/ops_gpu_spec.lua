-- Tensor ops on a real GPU (issue 7): elementwise unary/binary/clip with
-- broadcasting, reductions, matmul, and the errors for mixed devices.
-- Tagged `gpu`: scripts/run-tests excludes it when chainer.cuda.available is
-- false, and run directly it reports one pending line instead.
--
-- Every GPU result is compared with the CPU's result for the same input,
-- the CPU being the reference: exactly for integer and bool results, within
-- a dtype-dependent tolerance for floats (GPU math functions and summation
-- orders differ from the CPU's in the last bits).
--
-- NOTE: these specs were written without access to a GPU and have not yet
-- run on one; they were checked by reading and by loading them here.
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'

local G = require 'cuda.helpers'
local dev, agree, rand = G.dev, G.agree, G.rand
local R = T.random

-- Runs f on the CPU operands and g on their GPU copies: both succeed and
-- agree, or both fail with the same message (the dtype rules are shared).
local function compare(g, f, msg, scale)
  local ok, c = pcall(f)
  local gok, gr = pcall(g)
  if ok then
    assert(gok, msg .. ': the CPU succeeded but the GPU failed: ' .. tostring(gr))
    agree(gr, c, msg, scale)
  else
    assert(not gok, msg .. ': the CPU failed (' .. tostring(c) .. ') but the GPU did not')
    assert.are.equal(c:match(': (.*)$'), gr:match(': (.*)$'), msg)
  end
end

local FLOATS = { 'float16', 'float32', 'float64' }
local DTYPES = { 'float16', 'float32', 'float64', 'int32', 'int64', 'uint8', 'bool' }
local BINARY = { 'add', 'sub', 'mul', 'div', 'floor_divide', 'mod', 'fmod', 'pow', 'maximum', 'minimum',
  'arctan2', 'hypot', 'zeta', 'polygamma', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'logical_and', 'logical_or', 'logical_xor' }

-- inputs on which a binary op is defined on both devices
local function binary_inputs(op, dt, sa, sb)
  if op == 'pow' then
    if dt == 'bool' then return rand(dt, sa), rand(dt, sb) end
    return rand(dt, sa, 0.5, 3), rand(dt, sb, 0, 4)   -- integer exponents >= 0
  end
  if op == 'zeta' then return rand(dt, sa, 1.5, 5), rand(dt, sb, 0.5, 5) end
  if op == 'polygamma' then return rand(dt, sa, 0, 4), rand(dt, sb, 0.5, 5) end
  return rand(dt, sa, -20, 20), rand(dt, sb, -20, 20)
end

-- unary ops with an input range inside their domain
local UNARY = {
  neg = { -5, 5 }, abs = { -5, 5 }, sign = { -5, 5 }, reciprocal = { 0.5, 4 }, exp = { -5, 5 },
  expm1 = { -2, 2 }, exp2 = { -5, 5 }, log = { 0.1, 10 }, log1p = { -0.5, 10 }, log2 = { 0.1, 10 },
  log10 = { 0.1, 10 }, sqrt = { 0, 10 }, rsqrt = { 0.1, 10 }, square = { -5, 5 }, cbrt = { -8, 8 },
  sin = { -3, 3 }, cos = { -3, 3 }, tan = { -1.2, 1.2 }, arcsin = { -0.99, 0.99 }, arccos = { -0.99, 0.99 },
  arctan = { -5, 5 }, sinh = { -3, 3 }, cosh = { -3, 3 }, tanh = { -3, 3 }, arcsinh = { -5, 5 },
  arccosh = { 1.01, 5 }, arctanh = { -0.9, 0.9 }, erf = { -2, 2 }, erfc = { -2, 2 }, floor = { -5, 5 },
  ceil = { -5, 5 }, trunc = { -5, 5 }, rint = { -5, 5 }, sigmoid = { -6, 6 }, relu = { -5, 5 },
  softplus = { -5, 5 }, lgamma = { 0.1, 6 }, digamma = { 0.1, 6 }, erfinv = { -0.9, 0.9 }, ndtr = { -3, 3 },
  ndtri = { 0.05, 0.95 }, log_ndtr = { -30, 5 }, erfcinv = { 0.05, 1.95 }, erfcx = { -3, 30 },
  logical_not = { -1, 1 }, isnan = { -1, 1 }, isinf = { -1, 1 }, isfinite = { -1, 1 },
}
-- ops that keep integer dtypes (the others compute integers in float64)
local INT_UNARY = { 'neg', 'abs', 'sign', 'square', 'logical_not', 'isnan', 'isinf', 'isfinite', 'exp', 'sqrt' }

describe('tensor ops on a GPU #gpu', function()
  if G.without_gpu('tensor-op') then return end

  before_each(function() R.seed(7) end)

  describe('binary ops', function()
    it('agree with the CPU for every op and dtype, broadcasting', function()
      for _, dt in ipairs(DTYPES) do
        for _, op in ipairs(BINARY) do
          local a, b = binary_inputs(op, dt, { 4, 1, 5 }, { 3, 5 })
          local ga, gb = a:to_gpu(), b:to_gpu()
          -- (sub of bools is refused on both devices)
          compare(function() return T[op](ga, gb) end, function() return T[op](a, b) end, op .. ' ' .. dt,
            dt == 'float16' and 2 or 1)
        end
      end
    end)

    it('agree on mixed dtypes (promotion happens before the GPU)', function()
      local pairs_ = { { 'int32', 'float32' }, { 'uint8', 'int64' }, { 'float16', 'float64' }, { 'bool', 'int32' },
        { 'int64', 'float16' } }
      for _, p in ipairs(pairs_) do
        local a, b = rand(p[1], { 6, 7 }, -9, 9), rand(p[2], { 7 }, -9, 9)
        for _, op in ipairs({ 'add', 'mul', 'div', 'maximum', 'lt', 'floor_divide' }) do
          agree(T[op](a:to_gpu(), b:to_gpu()), T[op](a, b), op .. ' ' .. p[1] .. ' ' .. p[2])
        end
      end
    end)

    it('agree on non-contiguous views: transposed, stepped, flipped', function()
      for _, dt in ipairs({ 'float32', 'int64', 'float16' }) do
        local base_a, base_b = rand(dt, { 6, 8 }, -9, 9), rand(dt, { 8, 6 }, -9, 9)
        local ga, gb = base_a:to_gpu(), base_b:to_gpu()
        local views = {
          function(x, y) return x:transpose(), y end,                       -- (8, 6) strided
          function(x, y) return x:slice(':, ::2'), y:transpose():slice(':, ::2') end,
          function(x, y) return x:flip(1), y:transpose():flip(0) end,
        }
        for k, v in ipairs(views) do
          local ca, cb = v(base_a, base_b)
          local xa, xb = v(ga, gb)
          for _, op in ipairs({ 'add', 'mul', 'sub', 'maximum', 'ge' }) do
            agree(T[op](xa, xb), T[op](ca, cb), op .. ' view ' .. k .. ' ' .. dt)
          end
        end
      end
    end)

    it('agree with weak scalars on either side', function()
      for _, dt in ipairs(DTYPES) do
        local x = rand(dt, { 5, 3 }, 1, 9)
        local g = x:to_gpu()
        for _, s in ipairs({ 2, -3, 2.5, 0.1 }) do
          for _, op in ipairs({ 'add', 'mul', 'div', 'maximum', 'eq', 'lt', 'mod' }) do
            local msg = op .. ' ' .. dt .. ' s=' .. s
            compare(function() return T[op](g, s) end, function() return T[op](x, s) end, msg)
            compare(function() return T[op](s, g) end, function() return T[op](s, x) end, msg .. ' first')
          end
        end
        if dt ~= 'bool' then agree(T.pow(g, 2), T.pow(x, 2), 'pow ' .. dt) end
      end
    end)

    it('write in place into a GPU output, including aliasing views', function()
      local x, y = rand('float32', { 4, 5 }, -3, 3), rand('float32', { 5 }, -3, 3)
      local gx, gy = x:to_gpu(), y:to_gpu()
      gx:add_(gy)
      x:add_(y)
      agree(gx, x, 'add_')
      -- an input that is a shifted view of the output is read before written
      local cx, cg = x:copy(), gx:copy()
      T.mul(cx:slice('::-1'), cx, cx)
      T.mul(cg:slice('::-1'), cg, cg)
      agree(cg, cx, 'mul into a flipped alias')
    end)

    it('refuse negative integer exponents on the GPU too', function()
      local base, e = T.array({ 2, 3 }, 'int32'):to_gpu(), T.array({ 1, -1 }, 'int32'):to_gpu()
      local ok, err = pcall(T.pow, base, e)
      assert.is_false(ok)
      assert.matches('negative integer powers', err, 1, true)
    end)
  end)

  describe('unary ops', function()
    it('agree with the CPU for every op on float dtypes', function()
      for _, dt in ipairs(FLOATS) do
        for op, range in pairs(UNARY) do
          local x = rand(dt, { 3, 17 }, range[1], range[2])
          agree(T[op](x:to_gpu()), T[op](x), op .. ' ' .. dt, dt == 'float16' and 2 or 8)
        end
      end
    end)

    it('agree on integer and bool inputs, on views, and at NaN and infinities', function()
      for _, dt in ipairs({ 'int32', 'int64', 'uint8', 'bool' }) do
        local x = rand(dt, { 4, 6 }, -9, 9)
        local g = x:to_gpu()
        for _, op in ipairs(INT_UNARY) do
          compare(function() return T[op](g) end, function() return T[op](x) end, op .. ' ' .. dt)
        end
      end
      local special = T.array({ 0 / 0, 1 / 0, -1 / 0, 0, -0.0, 1e-40, 65504, 70000 }, 'float32')
      for _, dt in ipairs(FLOATS) do
        local x = special:astype(dt)
        for _, op in ipairs({ 'isnan', 'isinf', 'isfinite', 'sign', 'relu', 'abs', 'sigmoid', 'exp', 'floor' }) do
          agree(T[op](x:to_gpu()), T[op](x), op .. ' special ' .. dt)
        end
      end
      local x = rand('float64', { 5, 7 }, -2, 2)
      agree(T.tanh(x:to_gpu():transpose()), T.tanh(x:transpose()), 'tanh of a transposed view')
    end)

    it('clip like the CPU, with NaN (no) bounds and integer inputs', function()
      for _, dt in ipairs({ 'float32', 'float16', 'float64', 'int32', 'int64', 'uint8' }) do
        local x = rand(dt, { 3, 8 }, -9, 9)
        for _, b in ipairs({ { -2, 3 }, { 0 / 0, 1 }, { -1, 0 / 0 }, { -2.5, 2.5 }, { 5, -5 } }) do
          agree(T.clip(x:to_gpu(), b[1], b[2]), T.clip(x, b[1], b[2]),
            string.format('clip %s [%s, %s]', dt, tostring(b[1]), tostring(b[2])))
        end
      end
    end)
  end)

  describe('reductions', function()
    local OPS = { 'sum', 'mean', 'prod', 'max', 'min', 'argmax', 'argmin', 'var', 'std', 'all', 'any',
      'count_nonzero' }
    local AXES = { false, 0, 1, -1, { 0, 2 }, { 1, 2 }, { 0, 1, 2 } }

    it('agree with the CPU over axes, keepdims and dtypes', function()
      for _, dt in ipairs({ 'float32', 'float64', 'float16', 'int32', 'int64', 'bool' }) do
        -- near 1 so that products stay finite; small integers make ties for arg*
        local x = dt:match('^float') and rand(dt, { 3, 4, 5 }, 0.5, 1.5) or rand(dt, { 3, 4, 5 }, -3, 3)
        local g = x:to_gpu()
        for _, op in ipairs(OPS) do
          for _, axis in ipairs(AXES) do
            local arg = op == 'argmax' or op == 'argmin'
            if not (arg and type(axis) == 'table') then
              for _, keep in ipairs({ false, true }) do
                local opts = { keepdims = keep }
                if axis then opts.axis = axis end
                local msg = string.format('%s %s axis=%s keepdims=%s', op, dt,
                  type(axis) == 'table' and table.concat(axis, ',') or tostring(axis), tostring(keep))
                agree(T[op](g, opts), T[op](x, opts), msg, 4)
              end
            end
          end
        end
      end
    end)

    it('agree on long rows, non-contiguous inputs, NaN and empty axes', function()
      -- rows longer than 1024 get a block each; positive values: no cancellation
      local x = rand('float32', { 3, 5000 }, 0, 1)
      for _, op in ipairs({ 'sum', 'max', 'argmin', 'mean' }) do
        agree(T[op](x:to_gpu(), 1), T[op](x, 1), op .. ' long rows', 50)
        agree(T[op](x:to_gpu(), 0), T[op](x, 0), op .. ' short columns')
      end
      local y = rand('float64', { 6, 4, 5 }, -1, 1)
      local gy = y:to_gpu()
      for _, perm in ipairs({ { 2, 0, 1 }, { 1, 2, 0 } }) do
        for _, axis in ipairs({ 0, 2, { 0, 2 } }) do
          agree(T.sum(gy:transpose(perm), axis), T.sum(y:transpose(perm), axis), 'sum of a permuted view')
          if type(axis) == 'number' then
            agree(T.argmax(gy:transpose(perm), axis), T.argmax(y:transpose(perm), axis), 'argmax of a permuted view')
          end
        end
      end
      local n = T.array({ { 1, 0 / 0, 3 }, { 4, 5, 0 / 0 }, { 2, 1, 0 } }, 'float32')
      for _, op in ipairs({ 'max', 'min', 'argmax', 'argmin', 'sum' }) do
        agree(T[op](n:to_gpu(), 1), T[op](n, 1), op .. ' with NaN')
        agree(T[op](n:to_gpu()), T[op](n), op .. ' with NaN, flattened')
      end
      local e = T.zeros({ 3, 0 }, 'float32')
      agree(T.sum(e:to_gpu(), 1), T.sum(e, 1), 'sum over an empty axis')
      agree(T.prod(e:to_gpu(), 1), T.prod(e, 1), 'prod over an empty axis')
      local ok, err = pcall(T.max, e:to_gpu(), 1)
      assert.is_false(ok)
      assert.matches('zero-size axis', err, 1, true)
      -- integer sums wrap as on the CPU
      local big = T.full({ 4 }, 2 ^ 62, 'int64')
      agree(T.sum(big:to_gpu()), T.sum(big), 'int64 sum wrap')
    end)

    it('runs logsumexp and cumsum only on the CPU, saying so', function()
      local g = T.ones({ 2, 3 }, 'float32', dev)
      for _, f in ipairs({ function() return T.logsumexp(g, 1) end, function() return T.cumsum(g, 1) end }) do
        local ok, err = pcall(f)
        assert.is_false(ok)
        assert.matches('runs only on the CPU', err, 1, true)
      end
    end)
  end)

  describe('matmul', function()
    local CASES = {
      { { 3, 4 }, { 4, 5 } },
      { { 4 }, { 4, 5 } },
      { { 3, 4 }, { 4 } },
      { { 4 }, { 4 } },
      { { 2, 3, 4 }, { 4, 5 } },
      { { 2, 3, 4 }, { 2, 4, 5 } },
      { { 2, 1, 3, 4 }, { 5, 4, 6 } },
      { { 1, 4 }, { 4, 1 } },
      { { 3, 0 }, { 0, 4 } },
      { { 0, 3 }, { 3, 2 } },
    }
    -- K (up to 64 here) terms summed in another order
    local SCALE = { float16 = 5, float32 = 20, float64 = 100 }

    it('agrees with the CPU for each float dtype, batched and broadcast', function()
      for _, dt in ipairs(FLOATS) do
        for _, c in ipairs(CASES) do
          local a, b = rand(dt, c[1], -1, 1), rand(dt, c[2], -1, 1)
          local msg = string.format('%s (%s) @ (%s)', dt, table.concat(c[1], ','), table.concat(c[2], ','))
          agree(T.matmul(a:to_gpu(), b:to_gpu()), T.matmul(a, b), msg, SCALE[dt])
        end
      end
    end)

    it('agrees with transa/transb, transposed and stepped views, and a big product', function()
      for _, dt in ipairs(FLOATS) do
        local a, b = rand(dt, { 2, 4, 3 }, -1, 1), rand(dt, { 2, 5, 4 }, -1, 1)
        local ga, gb = a:to_gpu(), b:to_gpu()
        local o = { transa = true, transb = true }
        agree(T.matmul(ga, gb, o), T.matmul(a, b, o), dt .. ' transa transb', SCALE[dt])
        -- views: column-major (a transposed view), stepped (fits no BLAS layout:
        -- packed first), a batch axis that does not merge
        local x, y = rand(dt, { 6, 8 }, -1, 1), rand(dt, { 8, 6 }, -1, 1)
        local gx, gy = x:to_gpu(), y:to_gpu()
        agree(T.matmul(gx:transpose(), gy:transpose()), T.matmul(x:transpose(), y:transpose()), dt .. ' T@T', SCALE[dt])
        agree(T.matmul(gx:slice(':, ::2'), gy:slice('::2, :')), T.matmul(x:slice(':, ::2'), y:slice('::2, :')),
          dt .. ' stepped', SCALE[dt])
        local p = rand(dt, { 3, 4, 2, 5 }, -1, 1)
        local q = rand(dt, { 3, 5, 6 }, -1, 1)
        agree(T.matmul(p:to_gpu():transpose({ 2, 0, 1, 3 }), q:to_gpu()),
          T.matmul(p:transpose({ 2, 0, 1, 3 }), q), dt .. ' permuted batch', SCALE[dt])
      end
      local a, b = rand('float32', { 96, 300 }, -1, 1), rand('float32', { 300, 70 }, -1, 1)
      agree(T.matmul(a:to_gpu(), b:to_gpu()), T.matmul(a, b), 'float32 96x300x70', 200)
    end)

    it('promotes mixed float dtypes and refuses integer products', function()
      local a, b = rand('float16', { 3, 4 }, -1, 1), rand('float32', { 4, 2 }, -1, 1)
      agree(T.matmul(a:to_gpu(), b:to_gpu()), T.matmul(a, b), 'float16 @ float32', 20)
      local ok, err = pcall(T.matmul, T.ones({ 2, 2 }, 'int32', dev), T.ones({ 2, 2 }, 'int32', dev))
      assert.is_false(ok)
      assert.matches('matmul: int32 @ int32 on cuda:0: integer and bool products run only on the CPU', err, 1, true)
    end)
  end)

  describe('device errors', function()
    it('name the function, the arguments and both devices for mixed operands', function()
      local c, g = T.ones({ 2, 3 }, 'float32'), T.ones({ 2, 3 }, 'float32', dev)
      local checks = {
        { function() return T.add(c, g) end, "add: argument 'a' is on the CPU but argument 'b' is on cuda:0" },
        { function() return T.mul(g, c) end, "mul: argument 'a' is on cuda:0 but argument 'b' is on the CPU" },
        { function() return T.matmul(g, c:transpose()) end,
          "matmul: argument 'a' is on cuda:0 but argument 'b' is on the CPU" },
        { function() return T.exp(g, c) end, "exp: argument 'x' is on cuda:0 but argument 'out' is on the CPU" },
        { function() return g:add_(c) end, "add: argument 'a' is on cuda:0 but argument 'b' is on the CPU" },
        { function() return c:add_(g) end, "add: argument 'a' is on the CPU but argument 'b' is on cuda:0" },
      }
      for _, k in ipairs(checks) do
        local ok, err = pcall(k[1])
        assert.is_false(ok)
        assert.matches(k[2], err, 1, true)
      end
    end)

    it('name both GPUs for operands on two devices', function()
      if cuda.device_count() < 2 then
        pending('one GPU only')
        return
      end
      local ok, err = pcall(T.add, T.ones({ 2 }, 'float32', 'cuda:0'), T.ones({ 2 }, 'float32', 'cuda:1'))
      assert.is_false(ok)
      assert.matches("add: argument 'a' is on cuda:0 but argument 'b' is on cuda:1", err, 1, true)
    end)

    it('keep the CPU-only message for ops not ported yet', function()
      local g = T.ones({ 2, 3 }, 'float32', dev)
      local ok, err = pcall(T.cumsum, g, 0)
      assert.is_false(ok)
      assert.matches("cumsum: argument 'x' is on cuda:0, but this operation runs only on the CPU", err, 1, true)
    end)
  end)
end)

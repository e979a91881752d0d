-- chainer.tensor.random: Philox4x32-10 streams, samplers and their statistics.
local T = require 'chainer.tensor'
local R = T.random
local err_of = require('helpers').err_of
local ffi, C = T.ffi, T.C

-- Flat Lua list of a tensor's elements (numbers; bools as 0/1).
local function flat(t)
  local c = t:contiguous():astype('float64')
  local p = ffi.cast('double*', C.ch_tensor_ptr(c.ptr))
  local out = {}
  for i = 0, c.size - 1 do out[i + 1] = p[i] end
  return out
end

local function same_bytes(a, b)
  if a.size ~= b.size or a.dtype ~= b.dtype then return false end
  a, b = a:contiguous(), b:contiguous()
  return ffi.string(C.ch_tensor_ptr(a.ptr), a.nbytes) == ffi.string(C.ch_tensor_ptr(b.ptr), b.nbytes)
end

local function mean_var(t)
  local c = t:contiguous():astype('float64')
  local p = ffi.cast('double*', C.ch_tensor_ptr(c.ptr))
  local n, s, ss = c.size, 0, 0
  for i = 0, n - 1 do s = s + p[i] end
  local m = s / n
  for i = 0, n - 1 do local d = p[i] - m; ss = ss + d * d end
  return m, ss / n
end

describe('tensor.random', function()
  it('is reachable as chainer.tensor.random and M.random', function()
    assert.are.equal(R, require('chainer.tensor.random'))
    assert.is_function(R.uniform)
  end)

  describe('seeding and state', function()
    it('gives the same numbers for the same seed', function()
      R.seed(42)
      local a, b, c = R.rand({3, 4}), R.randn({5}, 'float64'), R.randint(0, 100, { 7 })
      local p, ch = R.permutation(9), R.choice(10, 6, { replace = false })
      R.seed(42)
      assert.is_true(same_bytes(a, R.rand({3, 4})))
      assert.is_true(same_bytes(b, R.randn({5}, 'float64')))
      assert.is_true(same_bytes(c, R.randint(0, 100, { 7 })))
      assert.is_true(same_bytes(p, R.permutation(9)))
      assert.is_true(same_bytes(ch, R.choice(10, 6, { replace = false })))
    end)

    it('gives different numbers for different seeds and successive draws', function()
      R.seed(1)
      local a = R.rand(100)
      local b = R.rand(100)
      R.seed(2)
      local c = R.rand(100)
      assert.is_false(same_bytes(a, b))
      assert.is_false(same_bytes(a, c))
    end)

    it('pins the stream (regression values for seed 0)', function()
      -- element i of a draw is Philox4x32-10(ctr = {offset + i, 0, 0, 0}, key = {seed, 0});
      -- float64 uniform = ((w0 >> 5) * 2^26 + (w1 >> 6)) / 2^53.  The generator
      -- itself is checked against Random123's known answers in tests/c/test_rng_philox.c.
      R.seed(0)
      local u = flat(R.rand({3}, 'float64'))
      -- ctr {0,0,0,0}, key {0,0} -> 6627e8d5 e169c58d ...: (0x6627e8d5 >> 5) * 2^26 + (0xe169c58d >> 6)
      local w0, w1 = 0x6627e8d5, 0xe169c58d
      local expect0 = (math.floor(w0 / 32) * 2 ^ 26 + math.floor(w1 / 64)) / 2 ^ 53
      assert.are.equal(expect0, u[1])
      local f = flat(R.rand({1}, 'float32'))  -- counter 3 now
      assert.is_true(f[1] >= 0 and f[1] < 1)
    end)

    it('advances the offset by the number of elements drawn', function()
      R.seed(5)
      assert.are.same({ seed = 5, offset = 0 }, R.get_state())
      R.rand({2, 3})
      assert.are.equal(6, R.get_state().offset)
      R.randn(10)
      assert.are.equal(16, R.get_state().offset)
      R.permutation(4)
      assert.are.equal(20, R.get_state().offset)
    end)

    it('restores a stream with set_state', function()
      R.seed(9)
      R.rand(13)
      local s = R.get_state()
      local a = R.randn({4, 4})
      R.rand(100)
      R.set_state(s)
      assert.is_true(same_bytes(a, R.randn({4, 4})))
      -- a state in the middle of a draw continues it element by element
      R.seed(3)
      local whole = flat(R.rand(10, 'float64'))
      R.set_state({ seed = 3, offset = 4 })
      local tail = flat(R.rand(6, 'float64'))
      for i = 1, 6 do assert.are.equal(whole[i + 4], tail[i]) end
    end)

    it('gives the same numbers for every thread count', function()
      local saved = C.ch_get_num_threads()
      local results = {}
      for _, threads in ipairs({ 1, 2, 3 }) do
        C.ch_set_num_threads(threads)
        R.seed(77)
        results[threads] = { R.rand(50000), R.randn(40000, 'float64'), R.randint(-5, 5, 30000),
          R.bernoulli(0.3, 20000, 'bool'), R.choice(7, 20000) }
      end
      C.ch_set_num_threads(saved)
      for k = 1, 5 do
        assert.is_true(same_bytes(results[1][k], results[2][k]))
        assert.is_true(same_bytes(results[1][k], results[3][k]))
      end
    end)

    it('seeds from CHAINER_SEED at load', function()
      local lib = os.getenv('CHAINLUA_LIB') or ''
      local cmd = string.format(
        "CHAINLUA_LIB=%q CHAINER_SEED=1234 %s -e \"package.path='lua/?.lua;lua/?/init.lua;'..package.path; " ..
        "local R = require('chainer.tensor').random; io.write(R.get_state().seed, ' ', string.format('%%.17g', R.rand(1, 'float64'):item()))\"",
        lib, require('helpers').lua_interpreter())
      local out = io.popen(cmd):read('*a')
      R.seed(1234)
      local want = R.rand(1, 'float64'):item()
      local seed, v = out:match('^(%d+) (%S+)$')
      assert.are.equal('1234', seed)
      assert.are.equal(want, tonumber(v))
    end)

    it('rejects bad seeds and states', function()
      assert.has_error(function() R.seed(-1) end, 'seed: n must be >= 0 (got -1)')
      assert.has_error(function() R.seed(1.5) end, 'seed: n must be an integer (got 1.5)')
      assert.has_error(function() R.set_state(3) end)
    end)
  end)

  describe('uniform', function()
    it('stays in [low, high) with the requested dtype and shape', function()
      R.seed(11)
      local t = R.uniform(-2, 3, { 100, 50 })
      assert.are.same({ 100, 50 }, t.shape)
      assert.are.equal('float32', t.dtype)
      local m, v = mean_var(t)
      for _, x in ipairs(flat(t)) do assert.is_true(x >= -2 and x < 3) end
      assert.is_true(math.abs(m - 0.5) < 0.05)             -- mean 0.5
      assert.is_true(math.abs(v - 25 / 12) < 0.05)        -- variance (b-a)^2/12
      local d = R.rand({ 10 }, 'float64')
      assert.are.equal('float64', d.dtype)
      local h = R.uniform(0, 1, { 1000 }, 'float16')
      for _, x in ipairs(flat(h)) do assert.is_true(x >= 0 and x < 1) end
    end)

    it('never returns high even when float32 rounding would', function()
      -- low + (high - low) * u rounds up to high for u near 1 when high is large
      R.seed(0)
      local t = R.uniform(1e8, 1e8 + 8, { 100000 })
      for _, x in ipairs(flat(t)) do assert.is_true(x < 1e8 + 8) end
    end)

    it('handles 0-d and empty shapes', function()
      local z = R.rand({})
      assert.are.equal(0, z.ndim)
      local e = R.rand({ 0, 3 })
      assert.are.same({ 0, 3 }, e.shape)
      local s = R.get_state().offset
      R.rand({ 0 })
      assert.are.equal(s, R.get_state().offset)
    end)

    it('fills non-contiguous views in logical order (t:uniform_)', function()
      R.seed(21)
      local want = flat(R.rand({ 3, 4 }, 'float64'))
      local base = T.zeros({ 4, 3 }, 'float64')
      R.seed(21)
      local view = base:transpose()
      assert.is_false(view.is_contiguous)
      assert.are.equal(view, view:uniform_(0, 1))
      local got = flat(view)
      for i = 1, 12 do assert.are.equal(want[i], got[i]) end
    end)

    it('rejects integer dtypes and bad bounds', function()
      assert.has_error(function() R.uniform(0, 1, { 2 }, 'int32') end,
        'uniform: dtype must be float16, float32 or float64 (got int32)')
      assert.has_error(function() R.uniform(1, 0, { 2 }) end)
      assert.matches('uniform: need finite low <= high', err_of(R.uniform, 1, 0, { 2 }))
      assert.matches("uniform: argument 'out' has dtype int32",
        err_of(function() T.zeros({ 2 }, 'int32'):uniform_(0, 1) end))
    end)
  end)

  describe('normal', function()
    it('has the right mean and variance over 10^6 draws', function()
      R.seed(123)
      local t = R.randn({ 1000, 1000 }, 'float64')
      local m, v = mean_var(t)
      -- standard errors: 1e-3 for the mean, 1.4e-3 for the variance
      assert.is_true(math.abs(m) < 5e-3, 'mean ' .. m)
      assert.is_true(math.abs(v - 1) < 7e-3, 'var ' .. v)
      local s = R.normal(3, 0.5, { 1000, 1000 })
      assert.are.equal('float32', s.dtype)
      m, v = mean_var(s)
      assert.is_true(math.abs(m - 3) < 5e-3, 'mean ' .. m)
      assert.is_true(math.abs(v - 0.25) < 2e-3, 'var ' .. v)
    end)

    it('has Gaussian tails (fraction beyond 2 sigma ~ 4.55%)', function()
      R.seed(5)
      local n, beyond = 200000, 0
      for _, x in ipairs(flat(R.randn(n, 'float64'))) do if math.abs(x) > 2 then beyond = beyond + 1 end end
      assert.is_true(math.abs(beyond / n - 0.0455) < 0.003)
    end)

    it('fills in place and rejects a negative std', function()
      local t = T.zeros({ 2, 2 })
      assert.are.equal(t, t:normal_(0, 1))
      assert.matches('normal: need a finite mean and std >= 0', err_of(R.normal, 0, -1, { 2 }))
    end)
  end)

  describe('bernoulli', function()
    it('gives 0/1 with probability p in the requested dtype', function()
      R.seed(8)
      local b = R.bernoulli(0.3, { 100000 }, 'bool')
      assert.are.equal('bool', b.dtype)
      local ones = 0
      for _, x in ipairs(flat(b)) do
        assert.is_true(x == 0 or x == 1)
        ones = ones + x
      end
      assert.is_true(math.abs(ones / 100000 - 0.3) < 0.006)
      local f = R.bernoulli(0.5, { 10 })
      assert.are.equal('float32', f.dtype)
      for _, x in ipairs(flat(R.bernoulli(0, { 100 }))) do assert.are.equal(0, x) end
      for _, x in ipairs(flat(R.bernoulli(1, { 100 }, 'int32'))) do assert.are.equal(1, x) end
      local t = T.zeros({ 3 }, 'bool')
      assert.are.equal(t, t:bernoulli_(1))
      assert.are.same({ true, true, true }, t:totable())
    end)

    it('rejects p outside [0, 1]', function()
      assert.matches('bernoulli: p must be in %[0, 1%] %(got 1.5%)', err_of(R.bernoulli, 1.5, { 2 }))
    end)
  end)

  describe('randint', function()
    it('covers [low, high) uniformly as int64 by default', function()
      R.seed(4)
      local t = R.randint(-3, 4, { 70000 })
      assert.are.equal('int64', t.dtype)
      local counts = {}
      for _, x in ipairs(flat(t)) do
        assert.is_true(x >= -3 and x < 4 and x == math.floor(x))
        counts[x] = (counts[x] or 0) + 1
      end
      for v = -3, 3 do assert.is_true(math.abs(counts[v] - 10000) < 450, 'count of ' .. v) end
    end)

    it('is unbiased for a range that does not divide 2^32', function()
      -- range 3 * 2^30: modulo reduction would give 0..2^30-1 a 4/3 higher chance
      R.seed(6)
      local r = 3 * 2 ^ 30
      local t = R.randint(0, r, { 60000 })
      local low = 0
      for _, x in ipairs(flat(t)) do if x < 2 ^ 30 then low = low + 1 end end
      assert.is_true(math.abs(low / 60000 - 1 / 3) < 0.01)
    end)

    it('handles ranges wider than 2^32 and other dtypes', function()
      R.seed(2)
      local t = R.randint(0, 2 ^ 40, { 1000 })
      local big = 0
      for _, x in ipairs(flat(t)) do if x >= 2 ^ 39 then big = big + 1 end end
      assert.is_true(big > 400 and big < 600)
      local u = R.randint(250, 256, { 100 }, 'uint8')
      for _, x in ipairs(flat(u)) do assert.is_true(x >= 250 and x <= 255) end
      local i = R.randint(-10, 10, { 3, 3 }, 'int32')
      assert.are.equal('int32', i.dtype)
    end)

    it('rejects empty ranges and ranges that do not fit the dtype', function()
      assert.matches('randint: need low < high', err_of(R.randint, 5, 5, { 2 }))
      assert.matches('randint: %[0, 300%) does not fit dtype uint8', err_of(R.randint, 0, 300, { 2 }, 'uint8'))
    end)
  end)

  describe('permutation and shuffle', function()
    it('returns a permutation of 0..n-1', function()
      R.seed(10)
      local p = R.permutation(1000)
      assert.are.equal('int64', p.dtype)
      local seen = {}
      for _, x in ipairs(flat(p)) do
        assert.is_nil(seen[x])
        seen[x] = true
      end
      for i = 0, 999 do assert.is_true(seen[i]) end
      assert.are.same({ 0 }, R.permutation(0).shape)
      assert.are.same({ 0 }, R.permutation(1):totable())
    end)

    it('puts every element in every position equally often', function()
      R.seed(12)
      local counts = {}
      for _ = 1, 3000 do
        local p = R.permutation(3):totable()
        local key = table.concat(p, ',')
        counts[key] = (counts[key] or 0) + 1
      end
      local n = 0
      for _, c in pairs(counts) do
        n = n + 1
        assert.is_true(math.abs(c - 500) < 100)
      end
      assert.are.equal(6, n)
    end)

    it('shuffles rows in place along axis 0', function()
      R.seed(13)
      local t = T.arange(20):reshape(10, 2)
      assert.are.equal(t, R.shuffle(t))
      local rows, seen, moved = t:totable(), {}, false
      for i, r in ipairs(rows) do
        assert.are.equal(r[1] + 1, r[2])            -- rows stay intact
        seen[r[1]] = true
        if r[1] ~= 2 * (i - 1) then moved = true end
      end
      for i = 0, 18, 2 do assert.is_true(seen[i]) end
      assert.is_true(moved)
      local ok, err = pcall(R.shuffle, T.array(1))
      assert.matches('shuffle: cannot shuffle a 0%-d tensor', err)
    end)
  end)

  describe('choice', function()
    it('draws uniformly with replacement', function()
      R.seed(14)
      local c = R.choice(4, 40000)
      local counts = {}
      for _, x in ipairs(flat(c)) do counts[x] = (counts[x] or 0) + 1 end
      for v = 0, 3 do assert.is_true(math.abs(counts[v] - 10000) < 400) end
    end)

    it('follows the probabilities p and never picks p = 0', function()
      R.seed(15)
      local p = T.array({ 0.1, 0.0, 0.2, 0.3, 0.4 })
      local c = R.choice(5, 100000, { p = p })
      local counts = { [0] = 0, 0, 0, 0, 0 }
      for _, x in ipairs(flat(c)) do counts[x] = counts[x] + 1 end
      assert.are.equal(0, counts[1])
      local want = { [0] = 0.1, 0, 0.2, 0.3, 0.4 }
      for v = 0, 4 do assert.is_true(math.abs(counts[v] / 100000 - want[v]) < 0.006) end
    end)

    it('draws distinct values without replacement', function()
      R.seed(16)
      local c = R.choice(10, 10, { replace = false })
      local seen = {}
      for _, x in ipairs(flat(c)) do
        assert.is_nil(seen[x])
        seen[x] = true
      end
      -- weighted, without replacement: distinct, only non-zero entries
      local first = { [0] = 0, 0, 0 }
      for _ = 1, 2000 do
        local w = R.choice(4, 2, { replace = false, p = { 0.6, 0.3, 0.1, 0 } }):totable()
        assert.are_not.equal(w[1], w[2])
        assert.is_true(w[1] ~= 3 and w[2] ~= 3)
        first[w[1]] = first[w[1]] + 1
      end
      -- the first pick follows p
      assert.is_true(math.abs(first[0] / 2000 - 0.6) < 0.05)
      assert.is_true(math.abs(first[2] / 2000 - 0.1) < 0.03)
    end)

    it('rejects impossible requests', function()
      local ok, err = pcall(R.choice, 3, 5, { replace = false })
      assert.matches('choice: cannot take 5 samples from 3 without replacement', err)
      assert.matches('choice: probabilities p sum to 0.9', err_of(R.choice, 3, 2, { p = { 0.5, 0.2, 0.2 } }))
      assert.matches('choice: p must be 1%-d with 3 entries', err_of(R.choice, 3, 2, { p = { 0.5, 0.5 } }))
      assert.matches('choice: only 2 entries of p are non%-zero',
        err_of(R.choice, 3, 3, { replace = false, p = { 0.5, 0.5, 0 } }))
      assert.matches('choice: cannot take 1 samples from an empty population', err_of(R.choice, 0, 1))
      assert.are.same({ 0 }, R.choice(0, 0).shape)
    end)
  end)
end)

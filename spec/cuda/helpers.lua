-- Shared by the GPU specs (require 'cuda.helpers'): the device they run on,
-- random CPU inputs, and the comparison of a GPU result with the CPU's, the
-- CPU being the reference.
local assert = require 'luassert'
local T = require 'chainer.tensor'

local H = {}
local R = T.random

H.dev = 'cuda:0'

-- Inside a describe block: without a usable GPU, one pending line saying
-- which specs did not run, and true, so the block returns:
--   if H.without_gpu('sort') then return end
-- (busted's `it` and `pending` live in the calling spec's environment.)
function H.without_gpu(what)
  local cuda = require 'chainer.cuda'
  if cuda.available then return false end
  local spec = getfenv(2)
  spec.it('need a GPU', function()
    spec.pending('no usable GPU here, ' .. what .. ' GPU specs not run: ' .. cuda.info())
  end)
  return true
end

-- The bytes of a CPU tensor in C order.
function H.bytes(t)
  local lib = require 'chainer._lib'
  local c = t:contiguous()
  return lib.ffi.string(lib.C.ch_tensor_ptr(c.ptr), c.nbytes)
end

-- relative and absolute tolerance per result dtype
H.TOL = { float16 = { 2e-3, 2e-3 }, float32 = { 2e-5, 1e-6 }, float64 = { 1e-12, 1e-14 } }

-- GPU tensor g agrees with CPU tensor c: device, shape, dtype and values
-- (exactly for integer and bool results or when `exact`, else within TOL
-- scaled by `scale`: GPU math functions and summation orders differ from
-- the CPU's in the last bits).
function H.agree(g, c, msg, scale, exact)
  msg = msg or ''
  assert.are.equal(H.dev, g.device, msg)
  assert.are.same(c.shape, g.shape, msg)
  assert.are.equal(c.dtype, g.dtype, msg)
  local gv = g:to_cpu():astype('float64'):flatten():tolist()
  local cv = c:astype('float64'):flatten():tolist()
  local tol = (not exact and H.TOL[c.dtype]) or { 0, 0 }
  local rtol, atol = tol[1] * (scale or 1), tol[2] * (scale or 1)
  for i = 1, #cv do
    local a, b = gv[i], cv[i]
    if b ~= b then
      assert(a ~= a, string.format('%s [%d]: NaN expected, got %.17g', msg, i, a))
    elseif b == math.huge or b == -math.huge or rtol == 0 then
      assert(a == b, string.format('%s [%d]: %.17g expected, got %.17g', msg, i, b, a))
    else
      assert(math.abs(a - b) <= atol + rtol * math.abs(b),
        string.format('%s [%d]: %.17g expected, got %.17g', msg, i, b, a))
    end
  end
end

-- Random CPU tensor of a dtype: floats uniform in [lo, hi) (default -1, 1),
-- integers in [lo, hi) (default -9, 9; shifted to start at 0 for uint8),
-- bools half true.
function H.rand(dtype, shape, lo, hi)
  if dtype == 'bool' then return R.uniform(0, 1, shape, 'float32'):lt(0.5) end
  if dtype == 'float16' or dtype == 'float32' or dtype == 'float64' then
    return R.uniform(lo or -1, hi or 1, shape, dtype)
  end
  lo, hi = lo or -9, hi or 9
  if dtype == 'uint8' and lo < 0 then lo, hi = 0, hi - lo end
  return R.randint(math.floor(lo), math.ceil(hi), shape, dtype)
end

-- n = 3 steps of step(p, g, states) on both devices from one start, then
-- the parameter and states agree (opts.exact, opts.scale as in agree); the
-- states start as zeros, or uniform in [opts.state_lo[j], 1) where given.
function H.update_steps(dt, nstate, step, msg, opts)
  opts = opts or {}
  local lo = opts.state_lo or {}
  local p, sts = H.rand(dt, { 40, 7 }), {}
  for j = 1, nstate do sts[j] = lo[j] and H.rand(dt, { 40, 7 }, lo[j], 1) or T.zeros({ 40, 7 }, dt) end
  local gp, gsts = p:to_gpu(), {}
  for j = 1, nstate do gsts[j] = sts[j]:to_gpu() end
  for _ = 1, 3 do
    local g = H.rand(dt, { 40, 7 })
    step(p, g, sts)
    step(gp, g:to_gpu(), gsts)
  end
  H.agree(gp, p, msg .. ' param', opts.scale, opts.exact)
  for j = 1, nstate do H.agree(gsts[j], sts[j], msg .. ' state ' .. j, opts.scale, opts.exact) end
end

return H

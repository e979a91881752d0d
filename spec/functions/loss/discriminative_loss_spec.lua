-- F.discriminative_margin_based_clustering_loss
--
-- The expected numbers come from an independent numpy reference that loops
-- over instances, pixels and pairs as the paper defines the terms
-- (run with /usr/bin/python3):
--
--   import numpy as np
--   def ref(e, lab, dv, dd, C, p, a, b, g):
--       B, E, H, W = e.shape
--       nrm = (lambda v: np.abs(v).sum()) if p == 1 else (lambda v: np.sqrt((v ** 2).sum()))
--       m = np.zeros((C, B, E))
--       for c in range(C):
--           for i in range(B):
--               sel = lab[i] == c + 1
--               if sel.any(): m[c, i] = e[i][:, sel].mean(axis=1)
--       var = 0.0
--       for c in range(C):
--           tot, n = 0.0, 0
--           for i in range(B):
--               for h in range(H):
--                   for w in range(W):
--                       if lab[i, h, w] == c + 1:
--                           tot += max(nrm(m[c, i] - e[i, :, h, w]) - dv, 0) ** 2; n += 1
--           var += tot / max(n, 1)
--       var /= C
--       dist, cnt = 0.0, 0
--       for ca in range(C):
--           for cb in range(ca + 1, C):
--               for i in range(B): dist += max(2 * dd - nrm(m[ca, i] - m[cb, i]), 0) ** 2
--               cnt += 1
--       dist /= max(cnt * B, 1)
--       reg = sum(nrm(m[c]) for c in range(C)) / (C * B)
--       return a * var, b * dist, g * reg
--   B, E, H, W = 2, 3, 3, 4
--   e = np.fromfunction(lambda b, k, h, w: ((b * 7 + k * 5 + h * 3 + w * 11) % 13) / 6.0 - 1, (B, E, H, W))
--   lab = np.fromfunction(lambda b, h, w: (b * 3 + h * 2 + w) % 5, (B, H, W)).astype(int)
--   for p in (1, 2): print(repr(ref(e, lab, 0.3, 0.8, 3, p, 0.7, 1.3, 0.01)))
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'

local dmbcl = F.discriminative_margin_based_clustering_loss

-- The formula case of the script above.
local function formula_inputs(dt)
  local B, E, H, W = 2, 3, 3, 4
  local e, l = {}, {}
  for b = 0, B - 1 do
    for k = 0, E - 1 do
      for h = 0, H - 1 do
        for w = 0, W - 1 do e[#e + 1] = ((b * 7 + k * 5 + h * 3 + w * 11) % 13) / 6 - 1 end
      end
    end
    for h = 0, H - 1 do
      for w = 0, W - 1 do l[#l + 1] = (b * 3 + h * 2 + w) % 5 end
    end
  end
  return T.array(e, dt):reshape({ B, E, H, W }), T.array(l, 'int32'):reshape({ B, H, W })
end

local function close(got, want, tol)
  local v = got.array:item()
  assert.is_true(math.abs(v - want) <= tol * math.max(1, math.abs(want)),
    string.format('got %.17g, want %.17g', v, want))
end

describe('F.discriminative_margin_based_clustering_loss', function()
  it('computes a hand-checked case (L1 and L2)', function()
    -- one image, 2-d embeddings of 3 pixels: instance 1 = pixels (0, 0) and (2, 0),
    -- mean (1, 0); instance 2 = pixel (0, 1).  Variance: each pixel of instance 1 is
    -- 1 from its mean (both norms): relu(1 - 0.5)^2 = 0.25, twice, / 2 pixels, / 2
    -- instances = 0.125.  Distance: |(1, 0) - (0, 1)| is 2 (L1) or sqrt 2 (L2):
    -- relu(3 - 2)^2 = 1, (3 - sqrt 2)^2 = 2.5147186...  Regulariser: (1 + 1) / 2 * 0.001.
    local e = T.array({ 0, 2, 0, 0, 0, 1 }, 'float64'):reshape({ 1, 2, 1, 3 })
    local l = T.array({ 1, 1, 2 }, 'int32'):reshape({ 1, 1, 3 })
    local v, d, r = dmbcl(e, l, 0.5, 1.5, 2)
    close(v, 0.125, 1e-15); close(d, 1.0, 1e-15); close(r, 0.001, 1e-15)
    v, d, r = dmbcl(e, l, 0.5, 1.5, 2, { norm = 2 })
    close(v, 0.125, 1e-15); close(d, (3 - math.sqrt(2)) ^ 2, 1e-15); close(r, 0.001, 1e-15)
    assert.are.same({}, v.shape)
  end)

  it('matches the numpy reference, background and absent labels included', function()
    for _, dt in ipairs({ 'float64', 'float32' }) do
      local tol = dt == 'float64' and 1e-12 or 1e-5
      local e, l = formula_inputs(dt)
      local v, d, r = dmbcl(e, l, 0.3, 0.8, 3, 1, 0.7, 1.3, 0.01)
      assert.are.equal(dt, v.dtype)
      close(v, 1.0651306584362141, tol); close(d, 0.15979166666666675, tol); close(r, 0.009166666666666667, tol)
      v, d, r = dmbcl(e, l, { delta_v = 0.3, delta_d = 0.8, max_embedding_dim = 3, norm = 2, alpha = 0.7,
        beta = 1.3, gamma = 0.01 })
      close(v, 0.2886405961445464, tol); close(d, 0.6437173189451872, tol); close(r, 0.004164640262931967, tol)
    end
  end)

  it('defaults norm = 1, alpha = beta = 1, gamma = 0.001', function()
    local e, l = formula_inputs('float64')
    local a = { dmbcl(e, l, 0.3, 0.8, 3) }
    local b = { dmbcl(e, l, 0.3, 0.8, 3, 1, 1.0, 1.0, 0.001) }
    for i = 1, 3 do assert.are.equal(b[i].array:item(), a[i].array:item()) end
    close(a[1], 1.0651306584362141 / 0.7, 1e-12)
  end)

  it('with one instance the distance term is a constant 0', function()
    local e = chainer.Variable(T.random.uniform(-1, 1, { 2, 1, 2, 2 }, 'float64'))
    local v, d, r = dmbcl(e, T.ones({ 2, 2, 2 }, 'int32'), 0.1, 1, 1)
    assert.are.equal(0, d.array:item())
    F.sum(v + d + r):backward()
    assert.are.same({ 2, 1, 2, 2 }, e.grad.shape)
  end)

  it('gives finite L2 gradients where pixels sit on their mean (Chainer: NaN)', function()
    local e = chainer.Variable(T.array({ 0, 2, 0, 0, 0, 1 }, 'float64'):reshape({ 1, 2, 1, 3 }))
    local v, d, r = dmbcl(e, T.array({ 1, 1, 2 }, 'int32'):reshape({ 1, 1, 3 }), 0.5, 1.5, 2, { norm = 2 })
    F.sum(v + d + r):backward()
    for _, g in ipairs(e.grad:reshape({ -1 }):totable()) do assert.is_true(g == g and math.abs(g) < 1e3) end
  end)

  it('rejects bad input naming the argument', function()
    local e, l = formula_inputs('float64')
    local function err(pattern, ...)
      local ok, msg = pcall(dmbcl, ...)
      assert.is_false(ok)
      assert.is_truthy(tostring(msg):find(pattern, 1, true), tostring(msg))
    end
    local fn = 'discriminative_margin_based_clustering_loss: '
    err(fn .. 'max_embedding_dim 4 must equal embeddings.shape[1] (got 3', e, l, 0.5, 1.5, 4)
    err(fn .. 'max_embedding_dim is required', e, l, 0.5, 1.5)
    err(fn .. 'max_embedding_dim must be a positive integer (got 2.5)', e, l, 0.5, 1.5, 2.5)
    err(fn .. 'norm must be 1 or 2 (got 3)', e, l, 0.5, 1.5, 3, 3)
    err(fn .. 'delta_v must be a number (got x)', e, l, 'x', 1.5, 3)
    err(fn .. "unknown option 'max_embedding_instance'", e, l, 0.5, 1.5, { max_embedding_instance = 3 })
    err(fn .. 'labels must have shape (2, 3, 4)', e, T.zeros({ 2, 3 }, 'int32'), 0.5, 1.5, 3)
    err(fn .. 'labels must be an integer tensor', e, T.zeros({ 2, 3, 4 }), 0.5, 1.5, 3)
    err(fn .. 'embeddings must be 4-d', T.zeros({ 2, 3 }), l, 0.5, 1.5, 3)
    err(fn .. 'embeddings must be a float tensor', e:astype('int32'), l, 0.5, 1.5, 3)
  end)
end)

-- Gradients (and their gradients) against finite differences, both norms.
-- Random embeddings keep every pixel away from the kinks of |.| and relu
-- with probability 1; the labels hold background (0), absent instance 3 and
-- a single-pixel instance.
function_spec.describe('F.discriminative_margin_based_clustering_loss gradients', {
  fn = function(e, l, o)
    local v, d, r = dmbcl(e, l, 0.2, 0.6, 3, { norm = o.norm, gamma = 0.5 })
    return { v, d, r }
  end,
  inputs = function(dt)
    return { T.random.uniform(-1, 1, { 2, 3, 2, 3 }, dt),
      T.array({ 1, 1, 0, 2, 2, 1, 2, 2, 2, 0, 1, 2 }, 'int32'):reshape({ 2, 2, 3 }) }
  end,
  double_backward = true,
  cases = { { name = 'L1', opts = { norm = 1 } }, { name = 'L2', opts = { norm = 2 } } },
})

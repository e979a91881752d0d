-- Shared checks for the distribution specs.
local chainer = require 'chainer'
local F = chainer.functions
local T = chainer.tensor

local M = {}

-- The per-element values of a Variable or tensor as a flat Lua list.
function M.values(v)
  local t = T.is_tensor(v) and v or v.array
  return t:astype('float64'):reshape({ -1 }):totable()
end

-- Elementwise closeness against a list (or a number for every element).
function M.near(got, want, tol, what)
  got = M.values(got)
  for i = 1, #got do
    local w = type(want) == 'table' and want[i] or want
    assert(got[i] == w or math.abs(got[i] - w) <= tol * math.max(1, math.abs(w)),
      string.format('%s[%d]: got %.10g, want %.10g', what or 'value', i, got[i], w))
  end
end

-- Sample moments of draws (n along axis 0) against the true mean and
-- variance.  The mean's tolerance is k standard errors, sqrt(var / n); the
-- variance's is rel_var (relative), which the caller sizes from the
-- distribution's kurtosis.  The seed is fixed, so a pass is reproducible.
function M.moments(samples, mean, var, opts)
  opts = opts or {}
  local x = (T.is_tensor(samples) and samples or samples.array):astype('float64')
  local n = x.shape[1]
  local m = M.values(T.mean(x, { axis = 0 }))
  local v = M.values(T.var(x, { axis = 0 }))
  local k, rel = opts.k or 5, opts.rel_var or 0.05
  for i = 1, #m do
    local mu = type(mean) == 'table' and mean[i] or mean
    local s2 = type(var) == 'table' and var[i] or var
    local se = math.sqrt(s2 / n)
    assert(math.abs(m[i] - mu) <= k * se,
      string.format('sample mean[%d] = %.6g, want %.6g within %.3g', i, m[i], mu, k * se))
    assert(math.abs(v[i] - s2) <= rel * s2,
      string.format('sample variance[%d] = %.6g, want %.6g within %g%%', i, v[i], s2, rel * 100))
  end
end

-- Monte Carlo KL(p || q) = E_p[log p(x) - log q(x)] from n draws of p, as a
-- list, with its standard error per element.
function M.mc_kl(p, q, n)
  local x = p:sample(n)
  local d = (p:log_prob(x) - q:log_prob(x)).array:astype('float64')
  local mean = M.values(T.mean(d, { axis = 0 }))
  local sd = M.values(T.std(d, { axis = 0 }))
  local se = {}
  for i = 1, #sd do se[i] = sd[i] / math.sqrt(n) end
  return mean, se
end

function M.check_kl_mc(p, q, n)
  local kl = M.values(chainer.kl_divergence(p, q))
  local mean, se = M.mc_kl(p, q, n)
  for i = 1, #kl do
    assert(math.abs(kl[i] - mean[i]) <= 5 * se[i] + 1e-4,
      string.format('KL[%d] = %.6g, Monte Carlo %.6g +- %.3g', i, kl[i], mean[i], se[i]))
  end
end

-- The properties of a distribution (read as fields); its other methods
-- take points.
local PROPERTIES = { mean = true, variance = true, stddev = true, entropy = true, mode = true }

-- function_spec cases (a list of {title, spec}; the spec file passes each to
-- function_spec.describe, which must be called from a spec file) checking a
-- distribution's methods and properties against closed forms, with
-- gradients w.r.t. its parameters by finite differences:
--   c.name, c.make(...) (the distribution from the parameters), c.inputs
--   (dtype -> the parameters), c.refs[method](params..., [points]);
--   c.x: the points of log_prob, cdf, ...; c.q: icdf's probabilities;
--   c.eps: the finite-difference step; c.coarse[method]: no double backward
--   (second differences too coarse at the step).
function M.closed_form_specs(c)
  local specs = {}
  for method, ref in pairs(c.refs) do
    local is_property = PROPERTIES[method]
    local function points(dtype) return (method == 'icdf' and c.q or c.x):astype(dtype) end
    specs[#specs + 1] = { c.name .. (is_property and '.' or ':') .. method, {
      double_backward = not (c.coarse and c.coarse[method]),
      eps = c.eps,
      inputs = c.inputs,
      fn = function(...)
        local d = c.make(...)
        if is_property then return F.identity(d[method]) end
        return d[method](d, points((...).dtype))
      end,
      reference = function(...)
        local a = { ... }
        if not is_property then a[#a + 1] = points(a[1].dtype) end
        return ref(unpack(a))
      end,
    } }
  end
  return specs
end

-- Checks that fn() raises an error whose message contains every fragment.
function M.raises(fn, ...)
  local ok, err = pcall(fn)
  assert(not ok, 'expected an error')
  for _, frag in ipairs({ ... }) do
    assert(tostring(err):find(frag, 1, true), string.format('error %q lacks %q', tostring(err), frag))
  end
end

return M

-- Real-Chainer reference vectors (../shared/oracle/vectors-v2) for the
-- operators and the two small graphs: forward, input gradients and the
-- double-backprop entries, in float32 and float64.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor

local function find_dir()
  for _, d in ipairs({ '../shared/oracle/vectors-v2', '/work/shared/oracle/vectors-v2' }) do
    local f = io.open(d .. '/index.json', 'rb')
    if f then f:close() return d end
  end
end
local dir = find_dir()

-- |got - want| <= atol + rtol * |want|, elementwise
local function check_close(got, want, tol, what)
  assert(got ~= nil, what .. ': no value')
  local g = (got._is_variable and got.array or got):astype('float64'):tolist()
  local w = want:astype('float64'):tolist()
  assert(#g == #w, string.format('%s: %d elements, expected %d', what, #g, #w))
  local gs, ws = T.shape_str((got._is_variable and got.array or got).shape), T.shape_str(want.shape)
  assert(gs == ws, string.format('%s: shape %s, expected %s', what, gs, ws))
  for i = 1, #w do
    local err = math.abs(g[i] - w[i])
    assert(err <= tol.atol + tol.rtol * math.abs(w[i]),
      string.format('%s: element %d is %.17g, expected %.17g', what, i - 1, g[i], w[i]))
  end
end

-- y = softmax_cross_entropy(linear(tanh(linear(x, W1, b1)), W2, b2), t),
-- composed from the core FunctionNodes
local function linear(x, W, b)
  local y = F.matmul(x, W, { transb = true })
  return y + F.broadcast_to(b, y.shape)
end
local function tanh(z)
  local e = F.exp(z * -2)
  return (1 - e) / (1 + e)
end
local function softmax_cross_entropy(z, t)
  local n, k = z.shape[1], z.shape[2]
  local onehot = T.zeros({ n, k }, z.dtype)
  for i = 0, n - 1 do onehot:set(i, t:get(i), 1) end
  local lse = F.log(F.sum(F.exp(z), { axis = 1 }))
  local picked = F.sum(z * onehot, { axis = 1 })
  return F.sum(lse - picked) / n
end

local calls = {
  ['add/basic'] = function(v) return v.a + v.b end,
  ['add/broadcast'] = function(v) return v.a + v.b end,
  ['add/three'] = function(v) return F.add(v.a, v.b, v.c) end,
  ['add/scalar'] = function(v) return v.a + 2.5 end,
  ['sub/basic'] = function(v) return v.a - v.b end,
  ['sub/rsub_scalar'] = function(v) return 2.5 - v.a end,
  ['mul/basic'] = function(v) return v.a * v.b end,
  ['mul/broadcast'] = function(v) return v.a * v.b end,
  ['mul/scalar'] = function(v) return v.a * -1.5 end,
  ['div/basic'] = function(v) return v.a / v.b end,
  ['div/rdiv_scalar'] = function(v) return 2.0 / v.a end,
  ['neg/basic'] = function(v) return -v.a end,
  ['pow/basic'] = function(v) return v.a ^ v.b end,
  ['pow/const_exp'] = function(v) return v.a ^ 3.0 end,
  ['pow/rpow'] = function(v) return 2.0 ^ v.a end,
  ['graph_reuse/x_used_thrice'] = function(v) return F.sum(v.x * v.x + F.exp(v.x)) end,
  ['graph_mlp/softmax_ce'] = function(v)
    return softmax_cross_entropy(linear(tanh(linear(v.x, v.W1, v.b1)), v.W2, v.b2), v.t.array)
  end,
  ['sum/all'] = function(v) return F.sum(v.x) end,
  ['sum/axis1'] = function(v) return F.sum(v.x, { axis = 1 }) end,
  ['sum/axis02_keepdims'] = function(v) return F.sum(v.x, { axis = { 0, 2 }, keepdims = true }) end,
  ['exp/basic'] = function(v) return F.exp(v.x) end,
  ['log/basic'] = function(v) return F.log(v.x) end,
  ['matmul/basic'] = function(v) return F.matmul(v.a, v.b) end,
  ['matmul/transa'] = function(v) return F.matmul(v.a, v.b, { transa = true }) end,
  ['matmul/transb'] = function(v) return F.matmul(v.a, v.b, { transb = true }) end,
  ['matmul/batched'] = function(v) return F.matmul(v.a, v.b) end,
  ['matmul/operator'] = function(v) return v.a:matmul(v.b) end,
  ['reshape/to_2x6'] = function(v) return F.reshape(v.x, { 2, 6 }) end,
  ['reshape/minus1'] = function(v) return F.reshape(v.x, { 4, -1 }) end,
  ['broadcast_to/row'] = function(v) return F.broadcast_to(v.x, { 3, 4 }) end,
  ['broadcast_to/to3d'] = function(v) return F.broadcast_to(v.x, { 2, 3, 5 }) end,
  ['sum_to/basic'] = function(v) return F.sum_to(v.x, { 3, 1 }) end,
  ['identity/two'] = function(v) return F.identity(v.a, v.b) end,
}

local wanted = {
  add = true, sub = true, mul = true, div = true, neg = true, pow = true, graph_mlp = true, graph_reuse = true,
  sum = true, exp = true, log = true, matmul = true, reshape = true, broadcast_to = true, sum_to = true,
  identity = true,
}

describe('oracle vectors (real Chainer 7.8.1)', function()
  if not dir then
    pending('../shared/oracle/vectors-v2 not found')
    return
  end
  local json = require 'chainer.utils.json'
  local index = json.read_file(dir .. '/index.json')
  local files = {}
  local function npz(name)
    files[name] = files[name] or T.load_npz(dir .. '/' .. name)
    return files[name]
  end

  local count = 0
  for _, case in ipairs(index.cases) do
    if wanted[case['function']] then
      local key = case['function'] .. '/' .. case.variant
      local call = calls[key]
      it(case.id, function()
        assert(call, 'no translation for ' .. key)
        local data = npz(case.file)
        local vars, inputs = {}, {}
        for _, inp in ipairs(case.inputs) do
          local v = chainer.Variable(data[inp.key], { requires_grad = inp.requires_grad })
          vars[inp.name] = v
          inputs[#inputs + 1] = v
        end
        local ys = { call(vars) }
        local tol = case.tolerance
        for j, o in ipairs(case.outputs) do
          check_close(ys[j], data[o.key], tol.forward, case.id .. ' output ' .. (j - 1))
        end
        if case.forward_only then return end
        -- first-order gradients
        local gouts = {}
        for j, g in ipairs(case.grad_outputs) do gouts[j] = chainer.Variable(data[g.key]) end
        local wrt = {}
        for _, v in ipairs(inputs) do if v.requires_grad then wrt[#wrt + 1] = v end end
        local db = case.double_backprop
        local gx = chainer.grad(ys, wrt, { grad_outputs = gouts, enable_double_backprop = db ~= nil })
        local k = 0
        for _, gi in ipairs(case.grad_inputs) do
          k = k + 1
          if gi.key ~= nil and gi.key ~= json.null then
            check_close(gx[k], data[gi.key], tol.backward, case.id .. ' gradient of ' .. gi.name)
          else
            assert.is_nil(gx[k])
          end
        end
        if db then
          -- second order: grad(gx, inputs + grad_outputs, ggx)
          local ggx = {}
          for j, g in ipairs(db.ggx) do ggx[j] = chainer.Variable(data[g.key]) end
          local outs, seeds = {}, {}
          for j = 1, #wrt do
            if gx[j] ~= nil then outs[#outs + 1] = gx[j] seeds[#seeds + 1] = ggx[j] end
          end
          local targets = {}
          for _, v in ipairs(wrt) do targets[#targets + 1] = v end
          for _, g in ipairs(gouts) do targets[#targets + 1] = g end
          local gg = chainer.grad(outs, targets, { grad_outputs = seeds })
          for j, g in ipairs(db.grads) do
            if g.key ~= nil and g.key ~= json.null then
              check_close(gg[j], data[g.key], tol.backward, case.id .. ' second-order gradient of ' .. g.name)
            elseif gg[j] ~= nil then
              -- Chainer returned no gradient: ours must be absent or zero
              check_close(gg[j], T.zeros_like(gg[j].array), tol.backward, case.id .. ' ' .. g.name)
            end
          end
        end
      end)
      count = count + 1
    end
  end

  it('covers every case of the core functions in both dtypes', function()
    assert.is_true(count >= 60, 'only ' .. count .. ' cases')
  end)
end)

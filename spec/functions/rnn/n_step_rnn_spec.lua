-- F.n_step_rnn/birnn/lstm/bilstm/gru/bigru against a step-by-step reference
-- built from tensor ops (variable lengths, several layers, both directions),
-- gradients by finite differences, options and errors.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local T = chainer.tensor
local function_spec = require 'chainer.testing.function_spec'
local testing = require 'chainer.testing'
local U = T.random.uniform

local NW = { lstm = 8, gru = 6, tanh = 2, relu = 2 }

---------------------------------------------------------------------------
-- reference
---------------------------------------------------------------------------
local function lin(x, w, b) return T.matmul(x, w:transpose()) + b end

local function cell(kind, x, h, c, w, b)
  if kind == 'lstm' then
    local i = T.sigmoid(lin(x, w[1], b[1]) + lin(h, w[5], b[5]))
    local f = T.sigmoid(lin(x, w[2], b[2]) + lin(h, w[6], b[6]))
    local a = T.tanh(lin(x, w[3], b[3]) + lin(h, w[7], b[7]))
    local o = T.sigmoid(lin(x, w[4], b[4]) + lin(h, w[8], b[8]))
    local c2 = a * i + f * c
    return o * T.tanh(c2), c2
  elseif kind == 'gru' then
    local r = T.sigmoid(lin(x, w[1], b[1]) + lin(h, w[4], b[4]))
    local z = T.sigmoid(lin(x, w[2], b[2]) + lin(h, w[5], b[5]))
    local hb = T.tanh(lin(x, w[3], b[3]) + r * lin(h, w[6], b[6]))
    return (1 - z) * hb + z * h
  elseif kind == 'tanh' then
    return T.tanh(lin(x, w[1], b[1]) + lin(h, w[2], b[2]))
  else
    return T.maximum(lin(x, w[1], b[1]) + lin(h, w[2], b[2]), 0)
  end
end

local function reference(kind, bi, L, hx, cx, ws, bs, xs)
  local D = bi and 2 or 1
  local nT, B = #xs, xs[1].shape[1]
  local cur = xs
  local hys, cys = {}, {}
  for layer = 0, L - 1 do
    local outs = {}
    for di = 0, D - 1 do
      local k = D * layer + di + 1
      local h = hx:select(k - 1):copy()
      local c = cx and cx:select(k - 1):copy()
      local out = {}
      for s = 1, nT do
        local t = di == 0 and s or nT + 1 - s
        local Bt = cur[t].shape[1]
        local hn, cn = cell(kind, cur[t], h:slice({ 0, Bt }), c and c:slice({ 0, Bt }), ws[k], bs[k])
        out[t] = hn
        h = Bt < B and T.concat({ hn, h:slice({ Bt, B }) }, 0) or hn
        if c then c = Bt < B and T.concat({ cn, c:slice({ Bt, B }) }, 0) or cn end
      end
      hys[k], cys[k] = h, c
      outs[di + 1] = out
    end
    local nxt = {}
    for t = 1, nT do nxt[t] = D == 2 and T.concat({ outs[1][t], outs[2][t] }, 1) or outs[1][t] end
    cur = nxt
  end
  return T.stack(hys, 0), cx and T.stack(cys, 0), cur
end

---------------------------------------------------------------------------
-- flat inputs <-> structured arguments
---------------------------------------------------------------------------
local function fname(o)
  local base = (o.kind == 'tanh' or o.kind == 'relu') and 'rnn' or o.kind
  return 'n_step_' .. (o.bi and 'bi' or '') .. base
end

local function make_inputs(dt, o)
  local D = o.bi and 2 or 1
  local B = o.lens[1]
  local flat = { U(-1, 1, { o.L * D, B, o.H }, dt) }
  if o.kind == 'lstm' then flat[#flat + 1] = U(-1, 1, { o.L * D, B, o.H }, dt) end
  local nw = NW[o.kind]
  for k = 1, o.L * D do
    local isz = k <= D and o.I or D * o.H
    for j = 1, nw do
      local xside = (o.kind == 'lstm' and j <= 4) or (o.kind == 'gru' and j <= 3) or (nw == 2 and j == 1)
      flat[#flat + 1] = U(-0.8, 0.8, { o.H, xside and isz or o.H }, dt)
    end
  end
  for _ = 1, o.L * D * nw do flat[#flat + 1] = U(-0.5, 0.5, { o.H }, dt) end
  for t = 1, #o.lens do flat[#flat + 1] = U(-1, 1, { o.lens[t], o.I }, dt) end
  return flat
end

local function structure(o, args)
  local D = o.bi and 2 or 1
  local k = 1
  local hx = args[k]; k = k + 1
  local cx
  if o.kind == 'lstm' then cx = args[k]; k = k + 1 end
  local nw = NW[o.kind]
  local ws, bs, xs = {}, {}, {}
  for i = 1, o.L * D do
    ws[i] = {}
    for j = 1, nw do ws[i][j] = args[k]; k = k + 1 end
  end
  for i = 1, o.L * D do
    bs[i] = {}
    for j = 1, nw do bs[i][j] = args[k]; k = k + 1 end
  end
  for t = 1, #o.lens do xs[t] = args[k]; k = k + 1 end
  return hx, cx, ws, bs, xs
end

local function call(o, hx, cx, ws, bs, xs, ratio)
  local f = F[fname(o)]
  if o.kind == 'lstm' then return f(o.L, ratio or 0, hx, cx, ws, bs, xs) end
  local hy, ys
  if o.kind == 'gru' then
    hy, ys = f(o.L, ratio or 0, hx, ws, bs, xs)
  else
    hy, ys = f(o.L, ratio or 0, hx, ws, bs, xs, { activation = o.kind })
  end
  return hy, nil, ys
end

local function flat_outputs(hy, cy, ys)
  local out = { hy }
  if cy then out[#out + 1] = cy end
  for t = 1, #ys do out[#out + 1] = ys[t] end
  return out
end

local cases = {
  { name = 'lstm 2 layers, lengths 3 2 1', opts = { kind = 'lstm', L = 2, I = 2, H = 3, lens = { 3, 2, 1 } } },
  { name = 'bilstm 1 layer, lengths 2 2 1', opts = { kind = 'lstm', bi = true, L = 1, I = 2, H = 2, lens = { 3, 2, 1 } } },
  { name = 'bilstm 2 layers', opts = { kind = 'lstm', bi = true, L = 2, I = 1, H = 2, lens = { 2, 1 } } },
  { name = 'gru 2 layers, lengths 2 2 1', opts = { kind = 'gru', L = 2, I = 2, H = 3, lens = { 2, 2, 1 } } },
  { name = 'bigru 1 layer', opts = { kind = 'gru', bi = true, L = 1, I = 2, H = 2, lens = { 3, 1 } } },
  { name = 'rnn tanh 2 layers', opts = { kind = 'tanh', L = 2, I = 2, H = 3, lens = { 2, 2 } } },
  { name = 'birnn relu 2 layers', opts = { kind = 'relu', bi = true, L = 2, I = 2, H = 2, lens = { 3, 2, 2 } } },
  { name = 'rnn relu single step', opts = { kind = 'relu', L = 1, I = 3, H = 2, lens = { 2 } } },
}

function_spec.describe('F.n_step_*', {
  fn = function(...)
    local args = { ... }
    local o = args[#args]
    return flat_outputs(call(o, structure(o, args)))
  end,
  inputs = make_inputs,
  reference = function(...)
    local args = { ... }
    local o = args[#args]
    local hx, cx, ws, bs, xs = structure(o, args)
    return flat_outputs(reference(o.kind, o.bi, o.L, hx, cx, ws, bs, xs))
  end,
  cases = cases,
  backward_tol = { float32 = { atol = 5e-3, rtol = 5e-2 } },
  eps = 1e-3,
  -- (under double backprop each layer node rebuilds itself from
  -- differentiable functions: both of its backward paths are checked)
  double_backward = true,
})

---------------------------------------------------------------------------
-- explicit behaviour
---------------------------------------------------------------------------
describe('F.n_step_lstm', function()
  local o = { kind = 'lstm', L = 2, I = 3, H = 4, lens = { 3, 3, 2, 1 } }
  local function args(dt)
    T.random.seed(7)
    return structure(o, make_inputs(dt or 'float64', o))
  end

  it('returns hy, cy (n_layers, B, H) and ys as a Lua array of (B_t, H)', function()
    local hx, cx, ws, bs, xs = args()
    local hy, cy, ys = F.n_step_lstm(2, 0, hx, cx, ws, bs, xs)
    assert.are.same({ 2, 3, 4 }, hy.shape)
    assert.are.same({ 2, 3, 4 }, cy.shape)
    assert.are.equal(4, #ys)
    assert.are.same({ 3, 4 }, ys[1].shape)
    assert.are.same({ 1, 4 }, ys[4].shape)
  end)

  it('takes the final state of each sequence at its own last step', function()
    local hx, cx, ws, bs, xs = args()
    local hy, _, ys = F.n_step_lstm(2, 0, hx, cx, ws, bs, xs)
    -- sequence 2 (0-based) has length 2: its top-layer hy is ys[2][2]
    testing.assert_allclose(hy.array:select(1):select(2), ys[2].array:select(2))
    testing.assert_allclose(hy.array:select(1):select(0), ys[4].array:select(0))
  end)

  it('treats hx = nil and cx = nil as zeros', function()
    local hx, cx, ws, bs, xs = args()
    local z = T.zeros(hx.shape, 'float64')
    local hy1, cy1 = F.n_step_lstm(2, 0, nil, nil, ws, bs, xs)
    local hy2, cy2 = F.n_step_lstm(2, 0, z, z, ws, bs, xs)
    testing.assert_allclose(hy1.array, hy2.array)
    testing.assert_allclose(cy1.array, cy2.array)
  end)

  it('applies dropout between layers in train mode only', function()
    local hx, cx, ws, bs, xs = args()
    local ref = select(3, F.n_step_lstm(2, 0, hx, cx, ws, bs, xs))
    local test = chainer.using_config('train', false, function()
      return select(3, F.n_step_lstm(2, 0.5, hx, cx, ws, bs, xs))
    end)
    for t = 1, #ref do testing.assert_allclose(test[t].array, ref[t].array) end
    local trained = select(3, F.n_step_lstm(2, 0.5, hx, cx, ws, bs, xs))
    local differs = false
    for t = 1, #ref do
      if T.abs(trained[t].array - ref[t].array):max():item() > 0 then differs = true end
    end
    assert.is_true(differs)
    -- the first layer's input is never dropped: one layer gives the same result
    local one = function(r) return select(3, F.n_step_lstm(1, r, hx:slice({ 0, 1 }), cx:slice({ 0, 1 }),
      { ws[1] }, { bs[1] }, xs)) end
    local a, b = one(0), one(0.5)
    for t = 1, #a do testing.assert_allclose(a[t].array, b[t].array) end
  end)

  it('gives gradients to every weight, bias, state and input', function()
    local hx, cx, ws, bs, xs = args()
    local V = function(t) return chainer.Variable(t) end
    local vhx, vcx = V(hx), V(cx)
    local vws, vbs, vxs = {}, {}, {}
    for k = 1, 2 do
      vws[k], vbs[k] = {}, {}
      for j = 1, 8 do vws[k][j] = V(ws[k][j]); vbs[k][j] = V(bs[k][j]) end
    end
    for t = 1, #xs do vxs[t] = V(xs[t]) end
    local hy, cy, ys = F.n_step_lstm(2, 0, vhx, vcx, vws, vbs, vxs)
    F.sum(F.concat(ys, 0)):backward()
    for k = 1, 2 do for j = 1, 8 do
      assert.are.same(vws[k][j].shape, vws[k][j].grad.shape)
      assert.are.same(vbs[k][j].shape, vbs[k][j].grad.shape)
    end end
    assert.are.same({ 2, 3, 4 }, vhx.grad.shape)
    assert.are.same({ 1, 3 }, vxs[4].grad.shape)
    -- the input and hidden biases of a gate get the same gradient
    testing.assert_allclose(vbs[1][1].grad, vbs[1][5].grad)
  end)

  it('rejects bad arguments with clear errors', function()
    local hx, cx, ws, bs, xs = args('float32')
    local function err(...)
      local ok, e = pcall(F.n_step_lstm, ...)
      assert.is_false(ok)
      return e
    end
    assert.matches('n_step_lstm: n_layers', err(0, 0, hx, cx, ws, bs, xs))
    assert.matches('n_step_lstm: dropout_ratio', err(2, 1, hx, cx, ws, bs, xs))
    assert.matches('n_step_lstm: xs must be a non%-empty', err(2, 0, hx, cx, ws, bs, {}))
    assert.matches('n_step_lstm: xs must be sorted', err(2, 0, hx, cx, ws, bs, { xs[4], xs[1] }))
    assert.matches('n_step_lstm: ws must be a Lua array of 2', err(2, 0, hx, cx, { ws[1] }, bs, xs))
    assert.matches('n_step_lstm: ws%[1%] must be a Lua array of 8', err(2, 0, hx, cx, { { ws[1][1] }, ws[2] }, bs, xs))
    local bad = { ws[1][1], ws[1][2], ws[1][3], ws[1][4], ws[1][5], ws[1][6], ws[1][7], T.zeros({ 4, 3 }, 'float32') }
    assert.matches('n_step_lstm: ws%[1%]%[8%] must have shape %(4, 4%)', err(2, 0, hx, cx, { bad, ws[2] }, bs, xs))
    assert.matches('n_step_lstm: hx must have shape %(2, 3, 4%)', err(2, 0, T.zeros({ 2, 2, 4 }, 'float32'), cx, ws, bs, xs))
    assert.matches('n_step_lstm: xs%[2%] is float64', err(2, 0, hx, cx, ws, bs, { xs[1], xs[2]:astype('float64') }))
    assert.matches('n_step_lstm: xs%[2%] must have shape %(B, 3%)', err(2, 0, hx, cx, ws, bs, { xs[1], T.zeros({ 3, 2 }, 'float32') }))
  end)
end)

describe('F.n_step_rnn', function()
  it('checks the activation', function()
    local o = { kind = 'tanh', L = 1, I = 2, H = 2, lens = { 2 } }
    local hx, _, ws, bs, xs = structure(o, make_inputs('float32', o))
    local ok, e = pcall(F.n_step_rnn, 1, 0, hx, ws, bs, xs, { activation = 'sigmoid' })
    assert.is_false(ok)
    assert.matches("n_step_rnn: activation must be 'tanh' or 'relu'", e)
    -- positional activation (Chainer allows it) and the default are tanh
    local h1 = F.n_step_rnn(1, 0, hx, ws, bs, xs)
    local h2 = F.n_step_rnn(1, 0, hx, ws, bs, xs, 'tanh')
    testing.assert_allclose(h1.array, h2.array)
  end)
end)

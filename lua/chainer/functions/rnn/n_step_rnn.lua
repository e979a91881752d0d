-- functions/rnn/n_step_rnn.lua: stacked recurrent layers over batches of
-- variable-length sequences, Chainer's n_step functions:
--
--   hy, ys     = F.n_step_rnn(n_layers, dropout_ratio, hx, ws, bs, xs, {activation = 'tanh'})
--   hy, ys     = F.n_step_birnn(...)            (same arguments)
--   hy, cy, ys = F.n_step_lstm(n_layers, dropout_ratio, hx, cx, ws, bs, xs)
--   hy, cy, ys = F.n_step_bilstm(...)
--   hy, ys     = F.n_step_gru(n_layers, dropout_ratio, hx, ws, bs, xs)
--   hy, ys     = F.n_step_bigru(...)
--
-- xs is a Lua array of (B_t, in_size) inputs, batch sizes non-increasing
-- (sequences sorted longest first); hx, cx are (n_layers * D, B, H) with D
-- = 2 for the bidirectional forms; ws[k] / bs[k] (k = 1 .. n_layers * D,
-- layer-major, forward direction first) are Lua arrays of the layer's
-- weight matrices and bias vectors in Chainer's order (8 for LSTM, 6 for
-- GRU, 2 for RNN).  ys is a Lua array of (B_t, D * H) Variables.
--
-- Gate equations (as Chainer computes them; note W2/W3 of the LSTM):
--   LSTM  i = σ(W0 x + W4 h + b0 + b4)   f = σ(W1 x + W5 h + b1 + b5)
--         a = tanh(W2 x + W6 h + b2 + b6) o = σ(W3 x + W7 h + b3 + b7)
--         c' = a i + f c, h' = o tanh(c')
--   GRU   r = σ(W0 x + b0 + W3 h + b3)    z = σ(W1 x + b1 + W4 h + b4)
--         h~ = tanh(W2 x + b2 + r (W5 h + b5)), h' = (1 - z) h~ + z h
--   RNN   h' = act(W0 x + b0 + W1 h + b1), act tanh or relu
--
-- Each layer and direction is one node (NStepLayer) whose forward and
-- backward are single C calls (runtime/cpu/rnn_seq.c): the input
-- projections of all steps are one GEMM, the recurrence does only the
-- (B_t, H) x (H, G H) products.  Dropout (train mode) applies to the input
-- of every layer but the first.  The C backward gives first-order
-- gradients; under double backprop (Chainer's CPU path composes linear,
-- sigmoid, tanh, ..., so its gradients are differentiable) the node instead
-- recomputes its layer from differentiable functions and differentiates
-- that graph (see `recompute`).
local args = require 'chainer._args'
local ffi = require 'ffi'
local chainer_config = require('chainer.config').config
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local H = require 'chainer.functions.math._helpers'

local C, check, wrap = T.C, T.check, T.wrap

local M = {}

-- Per cell kind: C enum, weights per layer, Chainer indices (0-based) of the
-- input-side and hidden-side weights in the kernel's gate-block order.
local CELLS = {
  tanh = { code = C.CH_RNN_TANH, nw = 2, xmap = { 0 }, hmap = { 1 } },
  relu = { code = C.CH_RNN_RELU, nw = 2, xmap = { 0 }, hmap = { 1 } },
  lstm = { code = C.CH_RNN_LSTM, nw = 8, xmap = { 2, 0, 1, 3 }, hmap = { 6, 4, 5, 7 }, cell = true },
  gru = { code = C.CH_RNN_GRU, nw = 6, xmap = { 0, 1, 2 }, hmap = { 3, 4, 5 } },
}
for _, spec in pairs(CELLS) do
  -- Chainer index -> { side ('x' or 'h'), block (0-based) }
  spec.where = {}
  for blk, j in ipairs(spec.xmap) do spec.where[j] = { 'x', blk - 1 } end
  for blk, j in ipairs(spec.hmap) do spec.where[j] = { 'h', blk - 1 } end
end
M.CELLS = CELLS

local out4 = ffi.new('ch_tensor*[4]')
local out7 = ffi.new('ch_tensor*[7]')

local function opt_wrap(p)
  if p == nil then return nil end
  return wrap(p)
end

-- The packed sequence x (the rows of step 1, then of step 2, ...; batch[t-1]
-- rows at step t) split into its nT steps.
local function split_steps(F, x, batch, nT)
  if nT == 1 then return { x } end
  local cuts, o = {}, 0
  for t = 1, nT - 1 do
    o = o + tonumber(batch[t - 1])
    cuts[t] = o
  end
  return F.split_axis(x, cuts, 0)
end

-- Stacks the weights at inputs[first + map[k]] along axis 0 (no copy for
-- a single gate).
local function stack(inputs, first, map)
  if #map == 1 then return inputs[first + map[1]] end
  local parts = {}
  for k = 1, #map do parts[k] = inputs[first + map[k]] end
  return T.concat(parts, 0)
end

local NStepLayer = FunctionNode:extend('NStepLayer')
M.NStepLayer = NStepLayer

-- inputs: x (N, I), h0 (B, H), [c0 (B, H)], w_1 .. w_nw, b_1 .. b_nw
-- outputs: y (N, H), hy (B, H), [cy (B, H)]
function NStepLayer:forward(inputs)
  local spec = self.spec
  -- (kept for double backprop, which rebuilds the layer from the inputs)
  local all = {}
  for k = 1, #inputs do all[k] = k end
  self:retain_inputs(all)
  local x, h0 = inputs[1], inputs[2]
  local c0, first = nil, 3
  if spec.cell then c0, first = inputs[3], 4 end
  local bfirst = first + spec.nw
  local wx, wh = stack(inputs, first, spec.xmap), stack(inputs, first, spec.hmap)
  local bx, bh = stack(inputs, bfirst, spec.xmap), stack(inputs, bfirst, spec.hmap)
  check(C.ch_rnn_seq_forward(spec.code, self.reverse, self.T, self.batch, x.ptr, h0.ptr, c0 and c0.ptr or nil,
    wx.ptr, wh.ptr, bx.ptr, bh.ptr, out4, out4 + 1, out4 + 2, out4 + 3), 3)
  local y, hy, cy = wrap(out4[0]), wrap(out4[1]), opt_wrap(out4[2])
  self._ws = wrap(out4[3])
  self._x, self._wx, self._wh = x, wx, wh
  self._first = first
  if spec.cell then return { y, hy, cy } end
  return { y, hy }
end

local function arr(v) return v and v._data or nil end
local function ptr(t) return t and t.ptr or nil end

-- One step of each cell from differentiable functions (the equations at the
-- top of this file); w(j), b(j) are Chainer's 0-based weight indices.
local STEP = {
  lstm = function(F, x, h, c, w, b)
    local function gate(jx, jh) return F.linear(x, w(jx), b(jx)) + F.linear(h, w(jh), b(jh)) end
    local a, i = F.tanh(gate(2, 6)), F.sigmoid(gate(0, 4))
    local f, o = F.sigmoid(gate(1, 5)), F.sigmoid(gate(3, 7))
    c = a * i + f * c
    return o * F.tanh(c), c
  end,
  gru = function(F, x, h, _, w, b)
    local r = F.sigmoid(F.linear(x, w(0), b(0)) + F.linear(h, w(3), b(3)))
    local z = F.sigmoid(F.linear(x, w(1), b(1)) + F.linear(h, w(4), b(4)))
    local h_bar = F.tanh(F.linear(x, w(2), b(2)) + r * F.linear(h, w(5), b(5)))
    return (1 - z) * h_bar + z * h
  end,
  tanh = function(F, x, h, _, w, b) return F.tanh(F.linear(x, w(0), b(0)) + F.linear(h, w(1), b(1))) end,
  relu = function(F, x, h, _, w, b) return F.relu(F.linear(x, w(0), b(0)) + F.linear(h, w(1), b(1))) end,
}

-- The node's outputs { y, hy, [cy] } recomputed from its inputs (Variables)
-- with differentiable functions, step by step as Chainer's CPU path: at a
-- step with fewer rows than the state, only the first rows advance (the
-- others keep their state: finished sequences going forward, sequences not
-- yet started going backward).
function NStepLayer:recompute(ins)
  local F = H.F()
  local spec = self.spec
  local x, h, c, first = ins[1], ins[2], nil, 3
  if spec.cell then c, first = ins[3], 4 end
  local nw = spec.nw
  local function w(j) return ins[first + j] end
  local function b(j) return ins[first + nw + j] end
  local nT = self.T
  local xs = split_steps(F, x, self.batch, nT)
  local step = STEP[self.kind]
  local ys = {}
  local from, to, by = 1, nT, 1
  if self.reverse == 1 then from, to, by = nT, 1, -1 end
  for t = from, to, by do
    local bt = tonumber(self.batch[t - 1])
    local h_rest, c_rest
    if h.shape[1] > bt then
      h, h_rest = unpack(F.split_axis(h, { bt }, 0))
      if c then c, c_rest = unpack(F.split_axis(c, { bt }, 0)) end
    end
    h, c = step(F, xs[t], h, c, w, b)
    ys[t] = h
    if h_rest then
      h = F.concat({ h, h_rest }, 0)
      if c then c = F.concat({ c, c_rest }, 0) end
    end
  end
  local y = nT == 1 and ys[1] or F.concat(ys, 0)
  if spec.cell then return { y, h, c } end
  return { y, h }
end

-- Differentiable gradients: the recomputed layer's gradients, built with
-- enable_double_backprop so that they stay connected to the inputs and gys.
-- The layer is rebuilt on identity copies of the inputs: the inner
-- traversal then ends at nodes of its own, and leaves alone the gradients
-- the outer traversal is accumulating in the inputs (x feeds both
-- directions).
function NStepLayer:backward_composite(gys)
  local F = H.F()
  local ins = { F.identity(unpack(self:get_retained_inputs())) }
  return require('chainer.backprop').recomputed_grads(self:recompute(ins), gys, ins, true)
end

function NStepLayer:backward(idx, gys)
  if chainer_config.enable_backprop then return self:backward_composite(gys) end
  local spec = self.spec
  local gy, ghy, gcy = arr(gys[1]), arr(gys[2]), arr(gys[3])
  local want_gx = idx[1] == 1
  for k = 0, 6 do out7[k] = nil end
  local is_gru = spec.code == C.CH_RNN_GRU
  check(C.ch_rnn_seq_backward(spec.code, self.reverse, self.T, self.batch, self._x.ptr, self._wx.ptr,
    self._wh.ptr, self._ws.ptr, ptr(gy), ptr(ghy), ptr(gcy),
    want_gx and out7 or nil, out7 + 1, spec.cell and out7 + 2 or nil, out7 + 3, out7 + 4, out7 + 5,
    is_gru and out7 + 6 or nil), 3)
  local gx, gh0, gc0 = opt_wrap(out7[0]), wrap(out7[1]), opt_wrap(out7[2])
  local gwx, gwh, gbx = wrap(out7[3]), wrap(out7[4]), wrap(out7[5])
  local gbh = is_gru and wrap(out7[6]) or gbx
  local Hn = self._wh.shape[2]
  local gs = { gx, gh0 }
  if spec.cell then gs[3] = gc0 end
  local first = self._first
  local nw = spec.nw
  for j = 0, nw - 1 do
    local w = spec.where[j]
    local lo, hi = w[2] * Hn, (w[2] + 1) * Hn
    if w[1] == 'x' then
      gs[first + j] = nw == 2 and gwx or gwx:slice({ lo, hi })
      gs[first + nw + j] = nw == 2 and gbx or gbx:slice({ lo, hi })
    else
      gs[first + j] = nw == 2 and gwh or gwh:slice({ lo, hi })
      gs[first + nw + j] = nw == 2 and gbh or gbh:slice({ lo, hi })
    end
  end
  return gs
end

---------------------------------------------------------------------------
-- argument checks
---------------------------------------------------------------------------
local function shape_str(s) return '(' .. table.concat(s, ', ') .. ')' end

local function is_list(v)
  return type(v) == 'table' and not T.is_tensor(v) and not v._is_variable
end

local function expect_shape(fn, what, d, want, deeper)
  local s = d.shape
  local ok = #s == #want
  for k = 1, #want do ok = ok and s[k] == want[k] end
  if not ok then
    error(string.format('%s: %s must have shape %s, got %s', fn, what, shape_str(want), shape_str(s)),
      4 + (deeper or 0))
  end
end

local function dropout(F, x, ratio)
  if F.dropout then return F.dropout(x, ratio) end
  local d = x._data or x
  local mask = T.random.uniform(0, 1, d.shape, d.dtype):greater_equal(ratio):astype(d.dtype) * (1 / (1 - ratio))
  return x * mask
end

-- The whole stacked computation.  hx/cx may be nil (zeros).
local function n_step(fn, kind, bi, n_layers, dropout_ratio, hx, cx, ws, bs, xs)
  local spec = CELLS[kind]
  local D = bi and 2 or 1
  if type(n_layers) ~= 'number' or n_layers < 1 or n_layers ~= math.floor(n_layers) then
    error(string.format('%s: n_layers must be a positive integer (got %s)', fn, tostring(n_layers)), 3)
  end
  if type(dropout_ratio) ~= 'number' or dropout_ratio < 0 or dropout_ratio >= 1 then
    error(string.format('%s: dropout_ratio must be a number in [0, 1) (got %s)', fn, tostring(dropout_ratio)), 3)
  end
  if not is_list(xs) or #xs == 0 then
    error(fn .. ': xs must be a non-empty Lua array of (B_t, in_size) inputs', 3)
  end
  local nT = #xs
  local batch = ffi.new('int64_t[?]', nT)
  local x0 = args.float_array(fn, 'xs[1]', xs[1], 3)
  local dt = x0.dtype
  if dt ~= 'float32' and dt ~= 'float64' then
    error(string.format('%s: xs must be float32 or float64 (got %s)', fn, dt), 3)
  end
  if x0.ptr.nd ~= 2 then error(string.format('%s: xs[1] must be 2-d (B, in_size), got %s', fn, shape_str(x0.shape)), 3) end
  local in_size = x0.shape[2]
  for t = 1, nT do
    local d = args.float_array(fn, 'xs[' .. t .. ']', xs[t], 3)
    local s = d.shape
    if #s ~= 2 or s[2] ~= in_size then
      error(string.format('%s: xs[%d] must have shape (B, %d), got %s', fn, t, in_size, shape_str(s)), 3)
    end
    if d.dtype ~= dt then
      error(string.format('%s: xs[%d] is %s but xs[1] is %s (one dtype)', fn, t, d.dtype, dt), 3)
    end
    if t > 1 and s[1] > batch[t - 2] then
      error(string.format('%s: xs must be sorted by decreasing batch size (xs[%d] has %d rows, xs[%d] has %d)',
        fn, t, s[1], t - 1, tonumber(batch[t - 2])), 3)
    end
    batch[t - 1] = s[1]
  end
  local B = tonumber(batch[0])
  if not is_list(ws) or #ws ~= n_layers * D then
    error(string.format('%s: ws must be a Lua array of %d weight lists (n_layers * %d), got %s', fn, n_layers * D, D,
      is_list(ws) and tostring(#ws) or type(ws)), 3)
  end
  if not is_list(bs) or #bs ~= n_layers * D then
    error(string.format('%s: bs must be a Lua array of %d bias lists (n_layers * %d), got %s', fn, n_layers * D, D,
      is_list(bs) and tostring(#bs) or type(bs)), 3)
  end
  local nw = spec.nw
  local Hn
  for k = 1, n_layers * D do
    if not is_list(ws[k]) or #ws[k] ~= nw then
      error(string.format('%s: ws[%d] must be a Lua array of %d weight matrices', fn, k, nw), 3)
    end
    if not is_list(bs[k]) or #bs[k] ~= nw then
      error(string.format('%s: bs[%d] must be a Lua array of %d bias vectors', fn, k, nw), 3)
    end
    local layer = math.floor((k - 1) / D)
    local isz = layer == 0 and in_size or D * (Hn or 0)
    for j = 1, nw do
      local w = args.float_array(fn, string.format('ws[%d][%d]', k, j), ws[k][j], 3)
      if Hn == nil then Hn = w.shape[1] end
      if layer > 0 and isz == 0 then isz = D * Hn end
      local side = spec.where[j - 1][1]
      if w.dtype ~= dt then
        error(string.format('%s: ws[%d][%d] is %s but xs are %s (one dtype)', fn, k, j, w.dtype, dt), 3)
      end
      expect_shape(fn, string.format('ws[%d][%d]', k, j), w, { Hn, side == 'x' and isz or Hn })
      local b = args.float_array(fn, string.format('bs[%d][%d]', k, j), bs[k][j], 3)
      if b.dtype ~= dt then
        error(string.format('%s: bs[%d][%d] is %s but xs are %s (one dtype)', fn, k, j, b.dtype, dt), 3)
      end
      expect_shape(fn, string.format('bs[%d][%d]', k, j), b, { Hn })
    end
  end
  local F = H.F()
  local hshape = { n_layers * D, B, Hn }
  -- hx (and cx): zeros when not given (nil or Python's None)
  local function initial_state(name, v)
    -- on the inputs' device, so that a GPU run never mixes in a CPU state
    if v == nil or v == false then return T.zeros(hshape, dt, x0.ptr.dev) end
    local d = args.float_array(fn, name, v, 4)
    expect_shape(fn, name, d, hshape, 1)
    if d.dtype ~= dt then error(string.format('%s: %s is %s but xs are %s (one dtype)', fn, name, d.dtype, dt), 4) end
    return v
  end
  hx = initial_state('hx', hx)
  if spec.cell then cx = initial_state('cx', cx) end

  -- the graph: concat xs, one node per layer and direction, split ys
  local x = nT == 1 and xs[1] or F.concat(xs, 0)
  local hs = n_layers * D == 1 and { F.reshape(hx, { B, Hn }) } or F.separate(hx, 0)
  local cs
  if spec.cell then cs = n_layers * D == 1 and { F.reshape(cx, { B, Hn }) } or F.separate(cx, 0) end
  local hys, cys = {}, {}
  local train = chainer_config.train
  for layer = 0, n_layers - 1 do
    if layer > 0 and dropout_ratio > 0 and train then x = dropout(F, x, dropout_ratio) end
    local ys_dir = {}
    for di = 0, D - 1 do
      local k = D * layer + di + 1
      local node = setmetatable({ spec = spec, kind = kind, reverse = di, T = nT, batch = batch }, NStepLayer)
      local ins = { x, hs[k] }
      if spec.cell then ins[3] = cs[k] end
      local base = #ins
      for j = 1, nw do ins[base + j] = ws[k][j] end
      for j = 1, nw do ins[base + nw + j] = bs[k][j] end
      local r = node:apply(ins)
      ys_dir[di + 1] = r[1]
      hys[k] = r[2]
      if spec.cell then cys[k] = r[3] end
    end
    x = D == 2 and F.concat(ys_dir, 1) or ys_dir[1]
  end
  local hy = #hys == 1 and F.reshape(hys[1], hshape) or F.stack(hys, 0)
  local cy
  if spec.cell then cy = #cys == 1 and F.reshape(cys[1], hshape) or F.stack(cys, 0) end
  local ys = split_steps(F, x, batch, nT)
  return hy, cy, ys
end
M._n_step = n_step

local ACTIVATION_OPTIONS = args.accept { 'activation' }

local function activation_of(fn, activation)
  if type(activation) == 'table' and not T.is_tensor(activation) and not activation._is_variable then
    activation = args.options(fn, activation, ACTIVATION_OPTIONS, 3).activation
  end
  if activation == nil or activation == false then activation = 'tanh' end
  if activation ~= 'tanh' and activation ~= 'relu' then
    error(string.format("%s: activation must be 'tanh' or 'relu' (got %s)", fn, tostring(activation)), 3)
  end
  return activation
end

-- F.n_step_rnn(n_layers, dropout_ratio, hx, ws, bs, xs, {activation = 'tanh'}) -> hy, ys
function M.n_step_rnn(n_layers, dropout_ratio, hx, ws, bs, xs, activation)
  local act = activation_of('n_step_rnn', activation)
  local hy, _, ys = n_step('n_step_rnn', act, false, n_layers, dropout_ratio, hx, nil, ws, bs, xs)
  return hy, ys
end

function M.n_step_birnn(n_layers, dropout_ratio, hx, ws, bs, xs, activation)
  local act = activation_of('n_step_birnn', activation)
  local hy, _, ys = n_step('n_step_birnn', act, true, n_layers, dropout_ratio, hx, nil, ws, bs, xs)
  return hy, ys
end

-- F.n_step_lstm(n_layers, dropout_ratio, hx, cx, ws, bs, xs) -> hy, cy, ys
function M.n_step_lstm(n_layers, dropout_ratio, hx, cx, ws, bs, xs)
  return n_step('n_step_lstm', 'lstm', false, n_layers, dropout_ratio, hx, cx, ws, bs, xs)
end

function M.n_step_bilstm(n_layers, dropout_ratio, hx, cx, ws, bs, xs)
  return n_step('n_step_bilstm', 'lstm', true, n_layers, dropout_ratio, hx, cx, ws, bs, xs)
end

-- F.n_step_gru(n_layers, dropout_ratio, hx, ws, bs, xs) -> hy, ys
function M.n_step_gru(n_layers, dropout_ratio, hx, ws, bs, xs)
  local hy, _, ys = n_step('n_step_gru', 'gru', false, n_layers, dropout_ratio, hx, nil, ws, bs, xs)
  return hy, ys
end

function M.n_step_bigru(n_layers, dropout_ratio, hx, ws, bs, xs)
  local hy, _, ys = n_step('n_step_bigru', 'gru', true, n_layers, dropout_ratio, hx, nil, ws, bs, xs)
  return hy, ys
end

return M

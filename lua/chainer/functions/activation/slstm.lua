-- functions/activation/slstm.lua: F.slstm(c_prev1, c_prev2, x1, x2) -> c, h,
-- the S-LSTM cell that merges two child states (Chainer's F.slstm).
--
-- x1, x2 (B, 4U, ...) hold gate pre-activations interleaved per unit as in
-- F.lstm (x.reshape(B, U, 4, ...) gives a, i, f, o):
--   c = tanh(a1) σ(i1) + tanh(a2) σ(i2) + σ(f1) c_prev1 + σ(f2) c_prev2
--   h = σ(o1 + o2) tanh(c)
-- Composed of differentiable functions, so gradients of any order work
-- (Chainer's S-LSTM has first-order gradients only).
local args = require 'chainer._args'
local H = require 'chainer.functions.math._helpers'

local M = {}

local function shape_str(s) return '(' .. table.concat(s, ', ') .. ')' end

-- The four gate blocks of x (B, 4U, ...), each shaped (B, U, ...).
local function gates(F, x, shape)
  local r = { shape[1], shape[2] / 4, 4 }
  for d = 3, #shape do r[#r + 1] = shape[d] end
  return F.separate(F.reshape(x, r), 2)
end
M._gates = gates

function M.slstm(c_prev1, c_prev2, x1, x2)
  local fn = 'slstm'
  local c1 = args.float_array(fn, 'c_prev1', c_prev1)
  local c2 = args.float_array(fn, 'c_prev2', c_prev2)
  local d1 = args.float_array(fn, 'x1', x1)
  local d2 = args.float_array(fn, 'x2', x2)
  H.same_dtype(c1, c2, fn, 'c_prev1', 'c_prev2')
  H.same_dtype(c1, d1, fn, 'c_prev1', 'x1')
  H.same_dtype(c1, d2, fn, 'c_prev1', 'x2')
  local cs, xs = c1.shape, d1.shape
  if #cs < 2 then error(string.format('slstm: c_prev1 must be at least 2-d (B, U, ...), got %d-d', #cs), 2) end
  local ok = #xs == #cs and xs[1] == cs[1] and xs[2] == 4 * cs[2]
  for d = 3, #cs do ok = ok and xs[d] == cs[d] end
  if not ok then
    error(string.format('slstm: x1 %s must be (B, 4U, ...) for c_prev1 %s', shape_str(xs), shape_str(cs)), 2)
  end
  if shape_str(c2.shape) ~= shape_str(cs) then
    error(string.format('slstm: c_prev2 %s must have the shape of c_prev1 %s', shape_str(c2.shape), shape_str(cs)), 2)
  end
  if shape_str(d2.shape) ~= shape_str(xs) then
    error(string.format('slstm: x2 %s must have the shape of x1 %s', shape_str(d2.shape), shape_str(xs)), 2)
  end
  local F = H.F()
  local g1, g2 = gates(F, x1, xs), gates(F, x2, xs)
  local c = F.tanh(g1[1]) * F.sigmoid(g1[2]) + F.tanh(g2[1]) * F.sigmoid(g2[2])
    + F.sigmoid(g1[3]) * c_prev1 + F.sigmoid(g2[3]) * c_prev2
  local o = F.sigmoid(g1[4] + g2[4])
  local h = o * F.tanh(c)
  return c, h
end

return M

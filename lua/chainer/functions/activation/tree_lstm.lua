-- functions/activation/tree_lstm.lua: F.tree_lstm(c1, ..., cN, x) -> c, h,
-- the N-ary Tree-LSTM cell (Chainer's F.tree_lstm).
--
-- Unlike F.lstm, the gates of x (B, (3 + N) U, ...) are contiguous blocks:
-- x.reshape(B, 3 + N, U, ...) gives a, i, o, f1, ..., fN:
--   c = tanh(a) σ(i) + Σ_k σ(f_k) c_k,   h = σ(o) tanh(c)
-- Composed of differentiable functions (gradients of any order).
local args = require 'chainer._args'
local H = require 'chainer.functions.math._helpers'

local M = {}

local function shape_str(s) return '(' .. table.concat(s, ', ') .. ')' end

function M.tree_lstm(...)
  local fn = 'tree_lstm'
  local n = select('#', ...)
  local cells = { ... }
  if n < 2 then error('tree_lstm: needs at least one cell state and x (tree_lstm(c1, ..., cN, x))', 2) end
  local x = cells[n]
  local xd = args.float_array(fn, 'x', x)
  local N = n - 1
  local cs = args.float_array(fn, 'c1', cells[1]).shape
  if #cs < 2 then error(string.format('tree_lstm: c1 must be at least 2-d (B, U, ...), got %d-d', #cs), 2) end
  for k = 1, N do
    local d = args.float_array(fn, 'c' .. k, cells[k])
    H.same_dtype(d, xd, fn, 'c' .. k, 'x')
    if shape_str(d.shape) ~= shape_str(cs) then
      error(string.format('tree_lstm: c%d %s must have the shape of c1 %s', k, shape_str(d.shape), shape_str(cs)), 2)
    end
  end
  local xs = xd.shape
  local ok = #xs == #cs and xs[1] == cs[1] and xs[2] == (3 + N) * cs[2]
  for d = 3, #cs do ok = ok and xs[d] == cs[d] end
  if not ok then
    error(string.format('tree_lstm: x %s must be (B, %d U, ...) for %d cell states %s', shape_str(xs), 3 + N, N,
      shape_str(cs)), 2)
  end
  local F = H.F()
  local r = { xs[1], 3 + N, cs[2] }
  for d = 3, #xs do r[#r + 1] = xs[d] end
  local g = F.separate(F.reshape(x, r), 1)
  local c = F.tanh(g[1]) * F.sigmoid(g[2])
  for k = 1, N do c = c + F.sigmoid(g[3 + k]) * cells[k] end
  local h = F.sigmoid(g[3]) * F.tanh(c)
  return c, h
end

return M

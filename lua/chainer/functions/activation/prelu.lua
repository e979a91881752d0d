-- functions/activation/prelu.lua: F.prelu(x, W): x where x >= 0, W * x
-- elsewhere, with W (shape x.shape[1 : 1 + W.ndim]) broadcast over the
-- other axes.  Composed of differentiable functions, so gradients for x and
-- W support double backprop.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local H = require 'chainer.functions.math._helpers'

local M = {}

-- W reshaped and broadcast to x's shape (shared with swish).
function M._broadcast_param(fn, x, W, wname)
  local F = H.F()
  local dx, dw = H.float_pair(fn, 'x', x, wname, W, 3)
  local xs, ws = dx.shape, dw.shape
  local ok = #xs >= 1 + #ws
  if ok then for i = 1, #ws do if ws[i] ~= xs[i + 1] then ok = false end end end
  if not ok then
    error(string.format('%s: %s has shape %s, which must equal x.shape[1:%d] for x of shape %s', fn, wname,
      T.shape_str(ws), 1 + #ws, T.shape_str(xs)), 3)
  end
  local s = {}
  for i = 1, #xs do s[i] = 1 end
  for i = 1, #ws do s[i + 1] = ws[i] end
  return F.broadcast_to(F.reshape(W, s), xs), dx
end

function M.prelu(x, W)
  local Wb, dx = M._broadcast_param('prelu', x, W, 'W')
  local neg = T.lt(dx, 0):astype(dx.dtype)
  -- x * (1 - neg) + W * x * neg
  return x * (1 - neg) + Wb * x * neg
end

return M

-- The comparison of the GPU specs of issue 15 (require 'cuda.max_error'):
-- a GPU result against the CPU's, reporting on failure the op, shape,
-- dtype, the largest difference and where it is, so that one GPU run
-- shows what to fix.
local assert = require 'luassert'

local M = {}

function M.shape_str(t) return t and ('(' .. table.concat(t.shape, ', ') .. ')') or 'nil' end

-- GPU tensor g (on device dev) against CPU tensor c: shape, dtype, and the
-- largest difference relative to max(1, |c|) within tol[dtype] * scale.
function M.close(dev, tol, g, c, what, scale)
  assert(g ~= nil and c ~= nil,
    what .. ': a result is missing (GPU ' .. M.shape_str(g) .. ', CPU ' .. M.shape_str(c) .. ')')
  assert.are.equal(dev, g.device, what .. ': result not on ' .. dev)
  assert.are.same(c.shape, g.shape, what .. ': shape')
  assert.are.equal(c.dtype, g.dtype, what .. ': dtype')
  local gv = g:to_cpu():astype('float64'):flatten():tolist()
  local cv = c:astype('float64'):flatten():tolist()
  local worst, at = 0, 1
  for i = 1, #cv do
    local d = math.abs(gv[i] - cv[i]) / math.max(1, math.abs(cv[i]))
    if d ~= d or d > worst then worst, at = (d ~= d) and math.huge or d, i end
  end
  local limit = tol[c.dtype] * (scale or 1)
  assert(worst <= limit, string.format('%s %s %s: max relative error %.3g at element %d (GPU %.17g, CPU %.17g), '
    .. 'tolerance %.3g', what, c.dtype, M.shape_str(c), worst, at, gv[at] or 0 / 0, cv[at] or 0 / 0, limit))
end

return M

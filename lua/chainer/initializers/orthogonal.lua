-- initializers/orthogonal.lua: Orthogonal(scale = 1.1).
--
-- The array is viewed as a matrix (shape[1], prod(shape[2:])); its rows (or
-- columns, whichever are fewer) are made orthonormal, then scaled.  The
-- basis comes from Gaussian samples orthonormalised by modified Gram-Schmidt
-- in float64 (the same distribution as the Q of a QR decomposition).
local T = require 'chainer.tensor'
local base = require 'chainer.initializers.initializer'

local Orthogonal = base.scaled('Orthogonal', 1.1)

function Orthogonal:fill(array)
  local shape = array.shape
  if #shape == 0 then error('Orthogonal: the array must have at least 1 dimension (got a 0-d array)', 3) end
  base.check_float(array, 'Orthogonal')
  local rows = shape[1]
  local cols = 1
  for i = 2, #shape do cols = cols * shape[i] end
  if rows == 0 or cols == 0 then return end
  -- k vectors of length n, orthonormal; k <= n
  local k, n = math.min(rows, cols), math.max(rows, cols)
  local g = T.random.normal(0, 1, { k, n }, 'float64'):totable()
  for i = 1, k do
    local v = g[i]
    for _ = 1, 2 do      -- twice: Gram-Schmidt with re-orthogonalisation
      for j = 1, i - 1 do
        local u = g[j]
        local d = 0
        for e = 1, n do d = d + u[e] * v[e] end
        for e = 1, n do v[e] = v[e] - d * u[e] end
      end
    end
    local norm = 0
    for e = 1, n do norm = norm + v[e] * v[e] end
    norm = math.sqrt(norm)
    if norm == 0 then error('Orthogonal: degenerate random basis; try again', 3) end
    for e = 1, n do v[e] = v[e] / norm end
  end
  local q = T.array(g, 'float64')               -- (k, n)
  if rows > cols then q = q:transpose() end       -- (rows, cols)
  q = (q * self.scale):astype(array.dtype):reshape(shape)
  if array.ptr.dev ~= q.ptr.dev then q = q:to_device(array.ptr.dev) end
  array:copy_(q)
end

return { Orthogonal = Orthogonal }

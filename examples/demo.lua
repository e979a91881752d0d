-- examples/demo.lua: a first look at chainlua (run with `make demo`).
-- Tensors: creation, views that share memory, printing, arithmetic.
local chainer = require 'chainer'
local T = chainer.tensor

print(('chainlua %s, %d threads'):format(chainer.__version__, chainer.get_num_threads()))

-- creation: positions and axes are 0-based, like NumPy
local x = T.arange(12, 'float32'):reshape{3, 4}
print('x = arange(12):reshape{3, 4}')
print(x)
print('shape', table.concat(x.shape, ' x '), 'dtype', x.dtype)

-- views share storage: writing through a view changes x
local col = x:slice({}, 1)          -- x[:, 1]
print('x[:, 1] =', col)
local rev = x:slice({ step = -1 })  -- x[::-1], a negative-stride view
print('x[::-1] =')
print(rev)
x:set(0, 1, 100)                    -- x[0, 1] = 100
print('after x[0, 1] = 100, the view x[:, 1] reads', col)

-- transposes are views too; copy() makes contiguous data
local xt = x:transpose()
print('x.T is contiguous?', xt.is_contiguous, ' x.T:copy() is?', xt:copy().is_contiguous)

-- arithmetic with broadcasting and weak scalars (float32 stays float32)
if T.add then
  local y = x * 2 + 1
  print('x * 2 + 1 =')
  print(y)
  local row = T.array({ 10, 20, 30, 40 })
  print('x + row (broadcast over rows) =')
  print(x + row)
  if y.sum then print('sum of x * 2 + 1 =', y:sum():item()) end
end

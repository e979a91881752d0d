-- chainer.functions (F): differentiable functions on Variables.
--
-- Each family file under functions/<family>/ returns a table; its public
-- entries (lower-case names: the wrappers users call) are copied into F.
-- Adding a function = one file + one line in `modules` below.  Missing
-- files are tolerated while the library is being written.
-- The autograd core and chainer.functions refer to each other (Variable's
-- operators are FunctionNodes); loading `chainer` first fixes the order.
require 'chainer'

local F = {}

local modules = {
  'math.basic_math', 'math.sum', 'math.sum_to', 'math.exp', 'math.log', 'math.matmul', 'math.identity',
  'array.reshape', 'array.broadcast_to', 'array.transpose',
  -- the library's families: each functions/<family>/init.lua returns the
  -- functions of its files (one file per function or small family)
  'activation', 'array', 'connection', 'evaluation', 'loss', 'math', 'noise', 'normalization',
  'pooling', 'rnn', 'util',
}

-- entries of a family module that are not user functions
local private = { add2 = true, same_shape = true, shape_equal = true, add_n = true }

local function load(name)
  local ok, mod = pcall(require, 'chainer.functions.' .. name)
  if not ok then
    if tostring(mod):find("module 'chainer.functions." .. name .. "' not found", 1, true) then return end
    error(mod, 0)
  end
  for k, v in pairs(mod) do
    if type(v) == 'function' and k:match('^[a-z]') and not private[k] then F[k] = v end
  end
end

for _, name in ipairs(modules) do load(name) end

-- F.add(a, b, c, ...) sums any number of operands
F.add = require('chainer.functions.math.basic_math').add_n

-- Lets other modules (the full library) register families later.
function F._register(name) load(name) end

return F

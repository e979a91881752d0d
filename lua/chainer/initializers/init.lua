-- chainer.initializers: callable objects that fill arrays in place.
--
--   local I = chainer.initializers
--   local W = T.empty({100, 784}); I.LeCunNormal()(W)
--   local W2 = I.generate_array(I.HeNormal(), {64, 3, 3, 3})
local T = require 'chainer.tensor'
local base = require 'chainer.initializers.initializer'

local M = {
  Initializer = base.Initializer,
  get_fans = base.get_fans,
}
for _, fam in ipairs({ 'constant', 'normal', 'uniform', 'orthogonal', 'sampling' }) do
  for k, v in pairs(require('chainer.initializers.' .. fam)) do M[k] = v end
end

local function callable(v)
  if type(v) == 'function' then return true end
  local mt = getmetatable(v)
  return type(mt) == 'table' and mt.__call ~= nil
end
M.callable = callable

-- generate_array(initializer, shape, [dtype], [device]): a new array filled by initializer.
function M.generate_array(initializer, shape, dtype, device)
  if type(shape) == 'number' then shape = { shape } end
  if type(shape) ~= 'table' then error('generate_array: shape must be a table of integers', 2) end
  local idt = type(initializer) == 'table' and initializer.dtype or nil
  if dtype ~= nil and idt ~= nil and T.dtype_name(dtype) ~= idt then
    error(string.format('generate_array: dtype %s does not match the initializer dtype %s', T.dtype_name(dtype), idt), 2)
  end
  dtype = dtype or idt or T.default_float
  local a = T.empty(shape, dtype, device)
  initializer = M._get_initializer(initializer, 'generate_array')
  initializer(a)
  return a
end

-- nil -> LeCunNormal, number -> Constant, tensor -> Constant, callable -> itself.
function M._get_initializer(init, fn, default)
  if init == nil then return default or M.LeCunNormal() end
  if type(init) == 'number' or T.is_tensor(init) then return M.Constant(init) end
  if callable(init) then return init end
  if type(init) == 'table' then return M.Constant(T.array(init)) end
  error(string.format('%s: an initializer must be nil, a number, a tensor or a callable (got %s)',
    fn or 'initializer', type(init)), 3)
end

return M

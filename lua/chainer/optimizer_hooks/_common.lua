-- optimizer_hooks/_common.lua: the class helper shared by the hooks.
-- A hook is a callable object with `name`, `timing` ('pre' or 'post') and
-- `call_for_each_param` (true: called as hook(rule, param) per parameter;
-- false: called once as hook(optimizer)).
local class = require 'chainer.class'
local lib = require 'chainer._lib'
local args = require 'chainer._args'

local M = { C = lib.C, check = lib.check, signature = args.signature }

local Hook = class.Object:extend('OptimizerHook')
Hook.timing = 'pre'
Hook.call_for_each_param = false
Hook.__call = function(self, ...) return self:call(...) end
Hook.__tostring = function(self) return tostring(self.name) end
M.Hook = Hook

function M.number(v, fn, arg)
  if type(v) ~= 'number' then
    error(string.format('%s: %s must be a number (got %s)', fn, arg, type(v)), 4)
  end
  return v
end

-- Reads (positional..., {opts}) or ({opts}) into a table, Chainer's order;
-- `sig` is the hook's args.signature, built once at load.
function M.args(fn, sig, n, ...)
  local out = args.parse_at(4, fn, sig, n, ...)
  return out
end

-- A per-parameter regulariser g += rate * f(p) in one fused C pass:
-- sign_of_p false gives f(p) = p (WeightDecay), true f(p) = sign(p)
-- (Lasso).  Built as Name(rate) / Name{rate =}.
function M.regularizer(name, sign_of_p)
  local cls = Hook:extend(name)
  local sig = args.signature { 'rate' }
  local mode = sign_of_p and 1 or 0
  local C, check = M.C, M.check
  cls.name = name
  cls.call_for_each_param = true
  function cls:init(...)
    local a = M.args(name, sig, select('#', ...), ...)
    self.rate = M.number(a.rate, name, 'rate')
  end
  function cls:call(rule, param)
    local p, g = param._data, param.grad
    if p == nil or g == nil then return end
    check(C.ch_grad_transform(g.ptr, p.ptr, 1, self.rate, mode, -math.huge, math.huge), 2)
  end
  return cls
end

return M

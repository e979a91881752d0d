-- optimizer_hooks/_common.lua: the class helper shared by the hooks.
-- A hook is a callable object with `name`, `timing` ('pre' or 'post') and
-- `call_for_each_param` (true: called as hook(rule, param) per parameter;
-- false: called once as hook(optimizer)).
local class = require 'chainer.class'
local lib = require 'chainer._lib'

local M = { C = lib.C, check = lib.check }

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

-- Reads (positional..., {opts}) or ({opts}) into a table, Chainer's order.
function M.args(fn, names, n, ...)
  local first = ...
  local out = {}
  if n == 1 and type(first) == 'table' and getmetatable(first) == nil then
    local known = {}
    for _, k in ipairs(names) do known[k] = true end
    for k, v in pairs(first) do
      if not known[k] then
        error(string.format("%s: unknown option '%s' (expected one of %s)", fn, tostring(k),
          table.concat(names, ', ')), 4)
      end
      out[k] = v
    end
  else
    if n > #names then
      error(string.format('%s: too many arguments (%d given, at most %d)', fn, n, #names), 4)
    end
    for i = 1, n do out[names[i]] = select(i, ...) end
  end
  return out
end

return M

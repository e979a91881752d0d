-- function_hook.lua: chainer.FunctionHook, the base of hooks that observe
-- every FunctionNode's forward and backward.
--
--   local Hook = chainer.FunctionHook:extend('MyHook')
--   function Hook:forward_preprocess(func, in_data) ... end
--   hook:scope(function() ... end)      -- global registration for a scope
--   node:add_hook(hook)                 -- one node only
--
-- Global hooks live in one ordered list; FunctionNode.apply and backprop
-- test `hooks.list[1] ~= nil` first, so hooks cost nothing when none is
-- registered.
local class = require 'chainer.class'

local M = {}
local list = {}          -- registered global hooks, in registration order
M.list = list

local FunctionHook = class.Object:extend('FunctionHook')

-- A hook's name: its `name` field, else its class name.
local function name_of(h)
  local n = h.name
  if n ~= nil then return n end
  return getmetatable(h).__name
end
M.name_of = name_of

function FunctionHook:added(func) end
function FunctionHook:deleted(func) end
function FunctionHook:forward_preprocess(func, in_data) end
function FunctionHook:forward_postprocess(func, in_data) end
function FunctionHook:backward_preprocess(func, in_data, out_grad) end
function FunctionHook:backward_postprocess(func, in_data, out_grad) end

local function find(name)
  for i = 1, #list do
    if name_of(list[i]) == name then return i end
  end
  return nil
end

-- Registers the hook for every function until unregistered.
function FunctionHook:register()
  local name = name_of(self)
  if find(name) then
    error(string.format("FunctionHook: a hook named '%s' is already registered", tostring(name)), 2)
  end
  list[#list + 1] = self
  self:added(nil)
  return self
end

function FunctionHook:unregister()
  local i = find(name_of(self))
  if i and list[i] == self then
    table.remove(list, i)
    self:deleted(nil)
  end
  return self
end

local function finish(self, ok, ...)
  self:unregister()
  if not ok then error((...), 0) end
  return ...
end

-- Registers the hook globally while fn runs (Chainer's `with hook:`);
-- unregisters it even when fn raises.  Returns what fn returns.
function FunctionHook:scope(fn)
  if type(fn) ~= 'function' then
    error('FunctionHook.scope: pass the scope as a function: hook:scope(function() ... end)', 2)
  end
  self:register()
  return finish(self, pcall(fn))
end

-- Global hooks by name (chainer.get_function_hooks()).
function M.get_function_hooks()
  local out = {}
  for i = 1, #list do out[name_of(list[i])] = list[i] end
  return out
end

M.FunctionHook = FunctionHook
return M

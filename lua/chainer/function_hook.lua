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

local global_hooks = require 'chainer._global_hooks'

local M = {}
local FunctionHook = class.Object:extend('FunctionHook')
local list = global_hooks.new(FunctionHook, 'FunctionHook').list  -- in registration order
M.list = list
local name_of = global_hooks.name_of
M.name_of = name_of

function FunctionHook:added(func) end
function FunctionHook:deleted(func) end
function FunctionHook:forward_preprocess(func, in_data) end
function FunctionHook:forward_postprocess(func, in_data) end
function FunctionHook:backward_preprocess(func, in_data, out_grad) end
function FunctionHook:backward_postprocess(func, in_data, out_grad) end

-- Global hooks by name (chainer.get_function_hooks()).
function M.get_function_hooks()
  local out = {}
  for i = 1, #list do out[name_of(list[i])] = list[i] end
  return out
end

M.FunctionHook = FunctionHook
return M

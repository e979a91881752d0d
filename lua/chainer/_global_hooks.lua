-- _global_hooks.lua: the global registration that FunctionHook and
-- LinkHook share (Chainer's `with hook:`): one ordered list per hook kind,
-- hooks identified by name, and register/unregister/scope methods.
--
--   local registry = require('chainer._global_hooks').new(LinkHook, 'LinkHook')
--   registry.list        -- the registered hooks, in registration order
--
-- Callers test `registry.list[1] ~= nil` on their fast paths, so hooks
-- cost nothing while none is registered.
local M = {}

-- A hook's name: its `name` field (instance or class), else its class name.
function M.name_of(h)
  local n = h.name
  if n ~= nil then return n end
  return getmetatable(h).__name
end
local name_of = M.name_of

-- Gives class Hook (labelled `label` in messages) register, unregister and
-- scope over a new list; returns { list = ..., find = ... }.
function M.new(Hook, label)
  local list = {}

  local function find(name)
    for i = 1, #list do
      if name_of(list[i]) == name then return i end
    end
    return nil
  end

  -- Registers the hook for every function or link until unregistered.
  -- added(nil) runs first, so a hook whose added raises is not left behind.
  function Hook:register()
    local name = name_of(self)
    if find(name) then
      error(string.format("%s: a hook named '%s' is already registered globally", label, tostring(name)), 2)
    end
    self:added(nil)
    list[#list + 1] = self
    return self
  end

  function Hook:unregister()
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

  -- Registers the hook globally while fn runs; unregisters it even when fn
  -- raises.  Returns what fn returns.
  function Hook:scope(fn)
    if type(fn) ~= 'function' then
      error(label .. '.scope: pass the scope as a function: hook:scope(function() ... end)', 2)
    end
    self:register()
    return finish(self, pcall(fn))
  end

  return { list = list, find = find }
end

return M

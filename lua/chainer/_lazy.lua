-- _lazy.lua: namespaces whose members load on first use and are then kept
-- in the namespace, for members whose modules would load the rest of chainer
-- (or a costly part of it) when the namespace loads.
--
--   lazy(M, { extensions = 'chainer.training.extensions' })
--     M.extensions is require('chainer.training.extensions')
--   lazy(M, nil, { MultithreadIterator = 'chainer.iterators.multithread_iterator' })
--     M.MultithreadIterator is that module's field MultithreadIterator
--
-- `modules` and `fields` map a member's name to a module path; `otherwise`
-- (optional) answers the names in neither.  Sets M's metatable; returns M.
local function lazy(M, modules, fields, otherwise)
  modules, fields = modules or {}, fields or {}
  return setmetatable(M, {
    __index = function(t, k)
      local v
      if modules[k] then
        v = require(modules[k])
      elseif fields[k] then
        v = require(fields[k])[k]
      elseif otherwise then
        v = otherwise(t, k)
      end
      if v ~= nil then rawset(t, k, v) end
      return v
    end,
  })
end

return lazy

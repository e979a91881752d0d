-- _lazy.lua: namespaces whose members load on first use and are then kept
-- in the namespace, so that a program carries only the modules it uses (a
-- smaller live heap for the collector to walk: bench/README.md, sessions 11
-- and 12) and modules that would load the rest of chainer load after it.
--
--   lazy(M, { extensions = 'chainer.training.extensions' })
--     M.extensions is require('chainer.training.extensions')
--   lazy(M, { cuda = function(M, name) ... end })
--     M.cuda is what the function returns (nil: M has no such member)
--   lazy(M, nil, { MultithreadIterator = 'chainer.iterators.multithread_iterator' })
--     M.MultithreadIterator is that module's field MultithreadIterator
--
-- `modules` and `fields` map a member's name to a module path (or, in
-- `modules`, a loader function).  Names in neither answer nil.  Sets M's
-- metatable; returns M.  The two tables are the namespace's listing: the
-- REPL's Tab completion reads them (repl/complete.lua follows __index's
-- upvalues), and `lazy.load_all` loads them for code that iterates over M.
--
-- The big namespaces (chainer.functions, chainer.links) take `fields` from
-- a generated index (<namespace>/_index.lua, scripts/gen-lazy-index.lua).
local lazy = {}

local listings = setmetatable({}, { __mode = 'k' })   -- M -> { modules, fields }

local function namespace(M, modules, fields)
  modules, fields = modules or {}, fields or {}
  listings[M] = { modules, fields }
  return setmetatable(M, {
    __index = function(t, k)
      local v
      local m = modules[k]
      if type(m) == 'function' then
        v = m(t, k)
      elseif m then
        v = require(m)
      elseif fields[k] then
        v = require(fields[k])[k]
      end
      if v ~= nil then rawset(t, k, v) end
      return v
    end,
  })
end

-- Loads every listed member of M (those of `fields`, or of both tables
-- with `modules_too`) and returns M, whose pairs() then sees them all.
function lazy.load_all(M, modules_too)
  local listing = assert(listings[M], 'chainer._lazy.load_all: not a lazy namespace')
  for name in pairs(listing[2]) do local _ = M[name] end
  if modules_too then
    for name in pairs(listing[1]) do local _ = M[name] end
  end
  return M
end

return setmetatable(lazy, { __call = function(_, M, modules, fields) return namespace(M, modules, fields) end })

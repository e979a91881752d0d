-- chainer.training.Extension, make_extension and the priority constants.
--
-- An extension is anything callable as ext(trainer): a plain function, an
-- object made by make_extension, or an instance of an Extension subclass:
--
--   local MyExt = training.Extension:extend('MyExt')
--   MyExt.trigger = {1, 'epoch'}
--   MyExt.priority = training.PRIORITY_WRITER
--   function MyExt:__call(trainer) ... end        -- what it does
--   function MyExt:initialize(trainer) ... end    -- optional hooks:
--   function MyExt:finalize(trainer) ... end      --   finalize, on_error,
--   function MyExt:serialize(serializer) ... end  --   serialize
local args = require 'chainer._args'
local class = require 'chainer.class'

local M = {}

M.PRIORITY_WRITER = 300
M.PRIORITY_EDITOR = 200
M.PRIORITY_READER = 100

local Extension = class.Object:extend('Extension')
class.check_self(Extension)   -- model.cleargrads() (a dot) names the method
M.Extension = Extension

Extension.trigger = { 1, 'iteration' }
Extension.priority = M.PRIORITY_READER
Extension.name = nil

Extension.__call = function(self)
  error(string.format('%s: an extension must define __call(trainer) (function %s:__call(trainer) ... end)',
    tostring(getmetatable(self).__name), tostring(getmetatable(self).__name)), 2)
end

-- The name the Trainer uses when extend() gets none: the class name.
function Extension:get_default_name()
  local d = rawget(self, 'default_name')
  if d then return d end
  local mt = getmetatable(self)
  while mt do
    local dn = rawget(mt, 'default_name')
    if dn then return dn end
    if rawget(mt, '__name') then return rawget(mt, '__name') end
    mt = rawget(mt, '__super')
  end
  return nil
end

function Extension:initialize(trainer) end
function Extension:finalize(trainer) end
function Extension:on_error(trainer, err, traceback) end
function Extension:serialize(serializer) end

-- make_extension(opts, fn) -> a callable object with the given attributes;
-- make_extension(opts) -> a function that takes fn (decorator form).
-- opts: trigger, default_name (alias name), priority, initializer,
-- finalizer, on_error.
local Made = class.Object:extend('FunctionExtension')
Made.__call = function(self, trainer) return self._fn(trainer) end

local function make(opts, fn)
  if type(fn) ~= 'function' and not (type(fn) == 'table' and getmetatable(fn) and getmetatable(fn).__call) then
    error('make_extension: expected a function(trainer) (got ' .. type(fn) .. ')', 3)
  end
  if opts.invoke_before_training ~= nil then
    error('make_extension: invoke_before_training has been removed since Chainer v2.0.0; use initializer instead', 3)
  end
  local e = setmetatable({}, Made)
  e._fn = fn
  e.trigger = opts.trigger or { 1, 'iteration' }
  e.default_name = opts.default_name or opts.name
  e.priority = opts.priority or M.PRIORITY_READER
  if opts.initializer then e.initialize = function(_, trainer) return opts.initializer(trainer) end end
  if opts.finalizer then e.finalize = function(_, trainer) return opts.finalizer(trainer) end end
  if opts.on_error then e.on_error = function(_, trainer, err, tb) return opts.on_error(trainer, err, tb) end end
  return e
end

local MAKE_OPTIONS = args.accept { 'trigger', 'default_name', 'name', 'priority', 'initializer', 'finalizer',
  'on_error', 'invoke_before_training' }

function M.make_extension(opts, fn)
  if type(opts) == 'function' and fn == nil then return make({}, opts) end
  opts = args.options('make_extension', opts, MAKE_OPTIONS)
  if fn ~= nil then return make(opts, fn) end
  return function(f) return make(opts, f) end
end

return M

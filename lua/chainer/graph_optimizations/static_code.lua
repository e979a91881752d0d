-- graph_optimizations/static_code.lua: chainer.static_code(fn).
--
-- Code inside a static graph's forward that is not a chainer function runs
-- only while the forward is recorded; a function wrapped by static_code
-- runs on every call, replays included, and its tensor results feed the
-- recorded steps (a random mask drawn afresh each call, data prepared each
-- call).  Outside a static graph it is a plain call.
local args = require 'chainer._args'
local trace = require 'chainer.graph_optimizations.trace'

return function(fn)
  if type(fn) ~= 'function' then
    args.fail('static_code: fn must be a function (got ' .. type(fn) .. ')', 2)
  end
  return function(...)
    local tr = trace.active
    if tr then return tr:code(fn, ...) end
    return fn(...)
  end
end

-- chainer.utils.warnings: the one channel chainlua's warnings go through, so
-- that a spec can catch them (chainer.testing.assert_warns) the way Python's
-- warnings module lets Chainer's tests catch theirs.
--
--   warnings.warn('FutureWarning', 'foo is experimental. ...')
--   -- writes "FutureWarning: foo is experimental. ..." on warnings.output
--   local caught, ok, err = warnings.catch(function() ... end)
--   -- caught: { {category = 'FutureWarning', message = '...'}, ... }
--
-- A category is one of Python's warning class names, as a string
-- ('UserWarning', 'FutureWarning', 'RuntimeWarning', 'DeprecationWarning', ...).
local M = {}

-- Where warnings go when nothing is catching them; a caller may pass its own
-- output to warn instead (utils.experimental and utils.nondeterministic keep
-- theirs swappable).
M.output = io.stderr

-- The open catch scopes, innermost last: each is a list of records.
local catching = {}

local function check_string(v, fn, arg)
  if type(v) ~= 'string' then
    error(string.format('%s: %s must be a string (got %s)', fn, arg, type(v)), 3)
  end
end

-- warn(category, message, [output]): records the warning in the innermost
-- catch scope, or writes "category: message" on output (default M.output).
function M.warn(category, message, output)
  check_string(category, 'warnings.warn', 'category')
  check_string(message, 'warnings.warn', 'message')
  local scope = catching[#catching]
  if scope then
    scope[#scope + 1] = { category = category, message = message }
    return
  end
  (output or M.output):write(category, ': ', message, '\n')
end

-- catch(fn, ...): runs fn(...) with every warning recorded instead of
-- written.  Returns the list of records, then pcall's results (true and
-- fn's results, or false and the error); the scope is closed either way.
function M.catch(fn, ...)
  if type(fn) ~= 'function' then
    error(string.format('warnings.catch: fn must be a function (got %s)', type(fn)), 2)
  end
  local scope = {}
  catching[#catching + 1] = scope
  local res = { pcall(fn, ...) }
  -- remove this scope (and any an error left open inside it)
  for i = #catching, 1, -1 do
    local s = catching[i]
    catching[i] = nil
    if s == scope then break end
  end
  return scope, unpack(res, 1, table.maxn(res))
end

return M

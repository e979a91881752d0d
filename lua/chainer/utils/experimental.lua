-- chainer.utils.experimental(api_name): tells the user, once per name, that
-- `api_name` is experimental (Chainer's FutureWarning: "<name> is
-- experimental. Signatures and behaviors may change in the future.").
-- Setting chainer.disable_experimental_feature_warning = true silences it,
-- as Chainer's flag of the same name (also read from the environment
-- variable CHAINER_DISABLE_EXPERIMENTAL_FEATURE_WARNING=1 at load time).
local warnings = require 'chainer.utils.warnings'

local M = {}

local warned = {}

-- Where the warnings go unless chainer.utils.warnings is catching them; a
-- spec may swap it for a capture.
M.output = io.stderr

local function disabled()
  local chainer = package.loaded['chainer']
  if chainer and rawget(chainer, 'disable_experimental_feature_warning') ~= nil then
    return rawget(chainer, 'disable_experimental_feature_warning') == true
  end
  return os.getenv('CHAINER_DISABLE_EXPERIMENTAL_FEATURE_WARNING') == '1'
end

-- Returns true when it wrote the warning, false when it was silent (the
-- name warned about before, or warnings disabled).
function M.experimental(api_name)
  if type(api_name) ~= 'string' then
    error(string.format('experimental: api_name must be a string (got %s)', type(api_name)), 2)
  end
  if disabled() or warned[api_name] then return false end
  warned[api_name] = true
  warnings.warn('FutureWarning', api_name ..
    ' is experimental. Signatures and behaviors may change in the future.', M.output)
  return true
end

-- Forgets which names were warned about (for specs).
function M.reset() warned = {} end

return M

-- chainer.utils.nondeterministic(f_name): warns, when
-- chainer.config.warn_nondeterministic is true, that f_name runs code whose
-- result may differ between runs (atomic additions on a GPU), as Chainer's
-- helper of the same name.  Functions call it on their nondeterministic path.
local warnings = require 'chainer.utils.warnings'

local M = {}

-- Where the warnings go unless chainer.utils.warnings is catching them; a
-- spec may swap it for a capture.
M.output = io.stderr

-- Returns true when it wrote the warning.
function M.nondeterministic(f_name)
  if type(f_name) ~= 'string' then
    error('nondeterministic: f_name must be a string (got ' .. type(f_name) .. ')', 2)
  end
  if not require('chainer.config').config.warn_nondeterministic then return false end
  warnings.warn('UserWarning', 'Potentially non-deterministic code is being executed while ' ..
    'config.warn_nondeterministic set. Source: ' .. f_name, M.output)
  return true
end

return M

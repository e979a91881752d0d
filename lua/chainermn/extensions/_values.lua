-- chainermn/extensions/_values.lua: observed or computed values as the
-- *_obj collectives can send them (a Variable becomes its array; tables
-- are converted element by element), and their sum.
local T = require 'chainer.tensor'

local M = {}

function M.plain(v)
  if type(v) ~= 'table' or T.is_tensor(v) then return v end
  if v._is_variable then return v.array end
  local out = {}
  for k, x in pairs(v) do out[k] = M.plain(x) end
  return out
end

return M

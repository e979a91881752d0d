-- functions/_family.lua: builds a family index (functions/<family>/init.lua)
-- from the family's file list.  Each file returns a table; its lower-case
-- functions (the user-facing wrappers) are merged into one table, which
-- functions/init.lua copies into F.  A missing file is an error: the list
-- is the family's contents.
--   return require('chainer.functions._family')('pooling', { 'max_pooling', ... })
-- `private` names entries that are helpers, not user functions.
return function(family, files, private)
  local M = {}
  for _, name in ipairs(files) do
    local path = name:find('%.') and name or (family .. '.' .. name)
    for k, v in pairs(require('chainer.functions.' .. path)) do
      if type(v) == 'function' and k:match('^[a-z]') and not (private and private[k]) then M[k] = v end
    end
  end
  return M
end

-- functions/noise: dropout, gaussian, gumbel_softmax,
-- simplified_dropconnect, zoneout.
local files = { 'dropout', 'gaussian', 'gumbel_softmax', 'simplified_dropconnect', 'zoneout' }

local M = {}
for _, name in ipairs(files) do
  for k, v in pairs(require('chainer.functions.noise.' .. name)) do
    if type(v) == 'function' and k:match('^[a-z]') then M[k] = v end
  end
end
return M

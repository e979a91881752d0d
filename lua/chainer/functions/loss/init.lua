-- functions/loss: the loss functions (one file per function or family).
-- Returns one table with every file's user functions (lower-case names).
local files = {
  'absolute_error', 'black_out', 'connectionist_temporal_classification', 'contrastive', 'crf1d',
  'cross_covariance', 'decov', 'hinge', 'huber_loss', 'mean_absolute_error', 'mean_squared_error',
  'negative_sampling', 'sigmoid_cross_entropy', 'softmax_cross_entropy', 'squared_error', 'triplet', 'vae',
}

local M = {}
for _, name in ipairs(files) do
  local ok, mod = pcall(require, 'chainer.functions.loss.' .. name)
  if not ok then
    if not tostring(mod):find("module 'chainer.functions.loss." .. name .. "' not found", 1, true) then
      error(mod, 0)
    end
  else
    for k, v in pairs(mod) do
      if type(v) == 'function' and k:match('^[a-z]') then M[k] = v end
    end
  end
end
return M

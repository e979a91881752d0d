-- functions/evaluation: accuracy, binary_accuracy, classification_summary
-- (with precision, recall, fbeta_score, f1_score) and r2_score.
local files = { 'accuracy', 'binary_accuracy', 'classification_summary', 'r2_score' }

local M = {}
for _, name in ipairs(files) do
  local mod = require('chainer.functions.evaluation.' .. name)
  for k, v in pairs(mod) do
    if type(v) == 'function' and k:match('^[a-z]') then M[k] = v end
  end
end
return M

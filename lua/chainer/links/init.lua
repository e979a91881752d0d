-- chainer.links (L): parameterised layers built on chainer.functions.
-- Each file returns a table of link classes; this index merges them.
local M = {}

local files = {
  'connection.linear', 'connection.convolution_nd', 'connection.deconvolution_nd', 'connection.embed_id',
  'connection.bias_scale', 'connection.inception', 'connection.local_convolution_2d',
  'normalization.batch_normalization', 'normalization.layer_normalization',
  'rnn.lstm', 'rnn.gru', 'rnn.n_step_rnn', 'rnn.tree_lstm',
  'activation.activation', 'loss.loss', 'model.classifier', 'model.vision',
}

for _, f in ipairs(files) do
  for k, v in pairs(require('chainer.links.' .. f)) do
    if k:sub(1, 1) ~= '_' then M[k] = v end
  end
end

return M

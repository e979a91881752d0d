-- chainer.links (L): parameterised layers built on chainer.functions.
-- One file per link (or per base link with its thin variants, where Chainer's
-- chainer/links does the same); each returns a table name -> class, and
-- this index merges them (names starting with '_' stay private).
local M = {}

local files = {
  'connection.linear', 'connection.convolution_nd', 'connection.convolution_2d',
  'connection.dilated_convolution_2d', 'connection.depthwise_convolution_2d',
  'connection.deconvolution_nd', 'connection.deconvolution_2d', 'connection.embed_id',
  'connection.bias', 'connection.scale', 'connection.bilinear', 'connection.highway',
  'connection.inception', 'connection.inceptionbn', 'connection.mlp_convolution_2d',
  'connection.local_convolution_2d', 'connection.deformable_convolution_2d',
  'connection.deformable_convolution_2d_sampler', 'connection.parameter',
  'normalization.batch_normalization', 'normalization.batch_renormalization',
  'normalization.layer_normalization', 'normalization.group_normalization',
  'normalization.decorrelated_batch_normalization',
  'rnn.lstm', 'rnn.peephole', 'rnn.gru', 'rnn.mgu', 'rnn.n_step_rnn', 'rnn.n_step_lstm', 'rnn.n_step_gru',
  'rnn.child_sum_tree_lstm', 'rnn.nary_tree_lstm', 'rnn.zoneout_lstm',
  'activation.prelu', 'activation.maxout', 'activation.swish', 'activation.simplified_dropconnect',
  'loss.crf1d', 'loss.negative_sampling', 'loss.black_out', 'loss.hierarchical_softmax',
  'model.classifier',
  'model.vision.vgg', 'model.vision.resnet', 'model.vision.googlenet', 'model.vision.building_block',
  'model.vision.bottleneck_a', 'model.vision.bottleneck_b',
}

for _, f in ipairs(files) do
  for k, v in pairs(require('chainer.links.' .. f)) do
    if k:sub(1, 1) ~= '_' then M[k] = v end
  end
end

-- L.caffe.CaffeFunction (chainer.links.caffe), loaded on first use.
require('chainer._lazy')(M, { caffe = 'chainer.links.caffe' })

return M

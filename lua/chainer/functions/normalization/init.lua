-- functions/normalization: batch / fixed batch / batch re-, layer, group
-- and local response normalization, and L2 normalize.
return require('chainer.functions._family')('normalization', {
  'batch_normalization', 'batch_renormalization', 'layer_normalization', 'group_normalization',
  'local_response_normalization', 'l2_normalization', 'fixed_batch_renormalization',
  'decorrelated_batch_normalization',
})

-- functions/loss: the loss functions (one file per function or family).
return require('chainer.functions._family')('loss', {
  'absolute_error', 'black_out', 'connectionist_temporal_classification', 'contrastive', 'crf1d',
  'cross_covariance', 'decov', 'discriminative_loss', 'hinge', 'huber_loss', 'mean_absolute_error',
  'mean_squared_error', 'negative_sampling', 'sigmoid_cross_entropy', 'softmax_cross_entropy', 'squared_error',
  'triplet', 'vae',
})

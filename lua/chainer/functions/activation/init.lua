-- functions/activation: the activation family (lstm, slstm and tree_lstm
-- are documented with the recurrent functions but live here, as in Chainer).
return require('chainer.functions._family')('activation', {
  'relu', 'leaky_relu', 'clipped_relu', 'crelu', 'elu', 'hard_sigmoid', 'sigmoid', 'tanh', 'softplus',
  'softmax', 'swish', 'prelu', 'maxout', 'rrelu', 'lstm', 'slstm', 'tree_lstm',
})

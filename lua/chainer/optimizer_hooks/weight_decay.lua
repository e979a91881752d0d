-- optimizer_hooks/weight_decay.lua: L2 regularisation, g += rate * p
-- (one fused pass per parameter).  WeightDecay(rate) / WeightDecay{rate =}
return require('chainer.optimizer_hooks._common').regularizer('WeightDecay', false)

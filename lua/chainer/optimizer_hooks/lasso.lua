-- optimizer_hooks/lasso.lua: L1 regularisation, g += rate * sign(p).
-- Lasso(rate) / Lasso{rate =}
return require('chainer.optimizer_hooks._common').regularizer('Lasso', true)

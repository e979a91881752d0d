-- functions/util: utilities around other functions (F.forget).
return require('chainer.functions._family')('util', { 'forget' })

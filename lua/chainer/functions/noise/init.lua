-- functions/noise: dropout, gaussian, gumbel_softmax,
-- simplified_dropconnect, zoneout.
return require('chainer.functions._family')('noise',
  { 'dropout', 'gaussian', 'gumbel_softmax', 'simplified_dropconnect', 'zoneout' })

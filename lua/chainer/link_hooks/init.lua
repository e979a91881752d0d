-- chainer.link_hooks: the concrete LinkHooks.
return {
  SpectralNormalization = require 'chainer.link_hooks.spectral_normalization',
  WeightStandardization = require 'chainer.link_hooks.weight_standardization',
  TimerHook = require 'chainer.link_hooks.timer',
}

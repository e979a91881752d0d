-- chainer.optimizer_hooks: hooks an optimizer calls before (or after) each
-- update: opt:add_hook(optimizer_hooks.WeightDecay(5e-4)).
return {
  WeightDecay = require 'chainer.optimizer_hooks.weight_decay',
  Lasso = require 'chainer.optimizer_hooks.lasso',
  GradientClipping = require 'chainer.optimizer_hooks.gradient_clipping',
  GradientHardClipping = require 'chainer.optimizer_hooks.gradient_hard_clipping',
  GradientNoise = require 'chainer.optimizer_hooks.gradient_noise',
  GradientLARS = require 'chainer.optimizer_hooks.gradient_lars',
  exponential_decay_noise = require('chainer.optimizer_hooks.gradient_noise').exponential_decay_noise,
}

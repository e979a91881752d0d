-- optimizer_hooks/gradient_noise.lua: adds annealed Gaussian noise to every
-- gradient, g += N(0, sigma_t^2) with sigma_t^2 = eta / (1 + t)^0.55
-- (Neelakantan et al.), t the update rule's count.  noise_func(xp, shape,
-- dtype, hook, rule) returning a tensor replaces the default.
local T = require 'chainer.tensor'
local common = require 'chainer.optimizer_hooks._common'
local C, check = common.C, common.check

local GradientNoise = common.Hook:extend('GradientNoise')
local SIGNATURE = common.signature { 'eta', 'noise_func' }
GradientNoise.name = 'GradientNoise'
GradientNoise.call_for_each_param = true

function GradientNoise.exponential_decay_noise(xp, shape, dtype, hook, rule)
  local std = math.sqrt(hook.eta / (1 + rule.t) ^ 0.55)
  return xp.random.normal(0, std, shape, dtype)
end

-- GradientNoise(eta, noise_func) / GradientNoise{eta =, noise_func =}
function GradientNoise:init(...)
  local a = common.args('GradientNoise', SIGNATURE, select('#', ...), ...)
  self.eta = common.number(a.eta, 'GradientNoise', 'eta')
  self.noise_func = a.noise_func or GradientNoise.exponential_decay_noise
end

function GradientNoise:call(rule, param)
  local g = param.grad
  if g == nil then return end
  local noise = self.noise_func(T, g.shape, g.dtype, self, rule)
  if noise.ptr.dev ~= g.ptr.dev then noise = noise:to_device(g.ptr.dev) end
  check(C.ch_axpby(1, noise.ptr, 1, g.ptr), 2)
end

return GradientNoise

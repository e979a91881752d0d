-- optimizers/_elementwise.lua: an optimizer whose update is one fused C
-- kernel over the parameter, its gradient and per-parameter state arrays
-- (SGD, MomentumSGD, AdaGrad, RMSprop, ...):
--
--   return elementwise.define('AdaGrad', { 'lr', 'eps' }, { lr = 0.001, eps = 1e-8 }, {
--     state = { 'h' },
--     update = function(param, st, hp)
--       return C.ch_adagrad_update(param._data.ptr, param.grad.ptr, st.h.ptr, hp.lr, hp.eps)
--     end,
--   })
--
-- gives { AdaGrad = the optimizer class, AdaGradRule = its update rule }.
-- `names` are the hyperparameters in Chainer's positional order, `defaults`
-- their module defaults.  Each state array starts as zeros shaped as the
-- parameter (ones for those listed in `ones`); `update(param, state,
-- hyperparam, rule)` runs the kernel and returns its status.
--
-- elementwise.momentum(name, kernel) is the momentum family's optimizer.
local optimizer = require 'chainer.optimizer'
local T = require 'chainer.tensor'
local check = require('chainer._lib').check

local function define(name, names, defaults, spec)
  local Rule = optimizer.rule_class(name .. 'Rule', names, defaults)
  local ones = spec.ones or {}

  if spec.state then
    function Rule:init_state(param)
      for _, s in ipairs(spec.state) do
        self.state[s] = (ones[s] and T.ones_like or T.zeros_like)(param._data)
      end
    end
  end

  Rule.is_elementwise = true   -- Chainer's flag: the update is elementwise

  function Rule:update_core_cpu(param)
    check(spec.update(param, self.state, self.hyperparam, self), 3)
  end

  return { [name] = optimizer.gradient_method(name, Rule, names), [name .. 'Rule'] = Rule }
end

-- The momentum family (MomentumSGD, NesterovAG, CorrectedMomentumSGD): lr
-- and momentum (0.01, 0.9), one velocity v, and a kernel
-- kernel(param, grad, v, lr, momentum).
local function momentum(name, kernel)
  return define(name, { 'lr', 'momentum' }, { lr = 0.01, momentum = 0.9 }, {
    state = { 'v' },
    update = function(param, st, hp)
      return kernel(param._data.ptr, param.grad.ptr, st.v.ptr, hp.lr, hp.momentum)
    end,
  })
end

return { define = define, momentum = momentum }

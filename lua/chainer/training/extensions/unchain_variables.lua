-- unchain_variables: an extension (priority 0, every iteration) that cuts
-- the graphs behind the Variables in the observation, so memory kept by
-- chainer.config.keep_graph_on_report is released early.
local extension = require 'chainer.training.extension'

return extension.make_extension({ trigger = { 1, 'iteration' }, priority = 0, default_name = 'unchain_variables' },
  function(trainer)
    for _, v in pairs(trainer.observation) do
      if type(v) == 'table' and v._is_variable and v.unchain_backward then v:unchain_backward() end
    end
  end)

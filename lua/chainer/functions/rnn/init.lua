-- functions/rnn: the recurrent family.  The cells (lstm, slstm, tree_lstm)
-- live with the activations and are exported here too; the n_step
-- functions (n_step_rnn/birnn/lstm/bilstm/gru/bigru) run whole sequences
-- on the fused C layers of runtime/cpu/rnn_seq.c.
local M = {}
local function merge(mod)
  for k, v in pairs(mod) do
    if type(v) == 'function' and k:match('^[a-z]') then M[k] = v end
  end
end
merge(require 'chainer.functions.activation.lstm')
merge(require 'chainer.functions.activation.slstm')
merge(require 'chainer.functions.activation.tree_lstm')
merge(require 'chainer.functions.rnn.n_step_rnn')
return M

-- links/rnn/n_step_lstm.lua: L.NStepLSTM and L.NStepBiLSTM (one and both
-- directions), as Chainer's rnn/n_step_lstm.py.
--
-- L.NStepLSTM(n_layers, in_size, out_size, dropout, {initialW =, initial_bias =})
-- Each layer (and direction) holds w0..w7, b0..b7.
--   local hy, cy, ys = lstm(hx, cx, xs)   -- hx, cx nil: zeros; xs a Lua list of
--                                          -- (L_i, in_size) sequences, any order
local NStepRNNBase = require('chainer.links.rnn.n_step_rnn')._NStepRNNBase

return {
  NStepLSTM = NStepRNNBase._variant('NStepLSTM', 8, true, false, 'n_step_lstm'),
  NStepBiLSTM = NStepRNNBase._variant('NStepBiLSTM', 8, true, true, 'n_step_bilstm'),
}

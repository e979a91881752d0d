-- links/rnn/n_step_gru.lua: L.NStepGRU and L.NStepBiGRU (one and both
-- directions), as Chainer's rnn/n_step_gru.py.
--
-- L.NStepGRU(n_layers, in_size, out_size, dropout, {initialW =, initial_bias =})
-- Each layer (and direction) holds w0..w5, b0..b5.
--   local hy, ys = gru(hx, xs)   -- hx nil: zeros; xs a Lua list of (L_i, in_size) sequences
local NStepRNNBase = require('chainer.links.rnn.n_step_rnn')._NStepRNNBase

return {
  NStepGRU = NStepRNNBase._variant('NStepGRU', 6, false, false, 'n_step_gru'),
  NStepBiGRU = NStepRNNBase._variant('NStepBiGRU', 6, false, true, 'n_step_bigru'),
}

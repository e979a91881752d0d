-- functions/rnn: the recurrent family.  The cells (lstm, slstm, tree_lstm)
-- live with the activations and are exported here too; the n_step
-- functions (n_step_rnn/birnn/lstm/bilstm/gru/bigru) run whole sequences
-- on the fused C layers of runtime/cpu/rnn_seq.c.
return require('chainer.functions._family')('rnn', {
  'activation.lstm', 'activation.slstm', 'activation.tree_lstm', 'n_step_rnn',
})

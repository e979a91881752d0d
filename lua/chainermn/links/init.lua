-- chainermn.links (ChainerMN 7.8.1's): MultiNodeBatchNormalization,
-- create_mnbn_model, MultiNodeChainList and create_multi_node_n_step_rnn.
return {
  MultiNodeBatchNormalization = require('chainermn.links.batch_normalization').MultiNodeBatchNormalization,
  create_mnbn_model = require('chainermn.links.create_mnbn_model').create_mnbn_model,
  MultiNodeChainList = require('chainermn.links.multi_node_chain_list').MultiNodeChainList,
  create_multi_node_n_step_rnn = require('chainermn.links.n_step_rnn').create_multi_node_n_step_rnn,
}

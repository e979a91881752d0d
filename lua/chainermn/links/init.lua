-- chainermn.links (ChainerMN 7.8.1's): MultiNodeBatchNormalization and
-- MultiNodeChainList.
return {
  MultiNodeBatchNormalization = require('chainermn.links.batch_normalization').MultiNodeBatchNormalization,
  MultiNodeChainList = require('chainermn.links.multi_node_chain_list').MultiNodeChainList,
}

-- chainermn.links (ChainerMN 7.8.1's): MultiNodeBatchNormalization.
return {
  MultiNodeBatchNormalization = require('chainermn.links.batch_normalization').MultiNodeBatchNormalization,
}

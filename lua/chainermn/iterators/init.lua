-- chainermn.iterators (ChainerMN 7.8.1's): iterators that give every rank
-- the same batches, for model-parallel jobs whose ranks hold different
-- parts of one model (an encoder here, a decoder there).
--
--   create_multi_node_iterator(actual_iterator, comm, rank_master = 0)
--       the master's batches, broadcast to every rank at each next()
--   create_synchronized_iterator(actual_iterator, comm)
--       every rank's own iterator, shuffled in the same order on all ranks
return {
  create_multi_node_iterator = require('chainermn.iterators.multi_node_iterator').create_multi_node_iterator,
  create_synchronized_iterator = require('chainermn.iterators.synchronized_iterator').create_synchronized_iterator,
}

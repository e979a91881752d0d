-- chainer.training.updaters
return {
  StandardUpdater = require 'chainer.training.updaters.standard',
  ParallelUpdater = require 'chainer.training.updaters.parallel',
  MultiprocessParallelUpdater = require 'chainer.training.updaters.multiprocess_parallel',
}

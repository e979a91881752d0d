-- chainer.dataset.tabular: tabular datasets (Chainer's
-- chainer.dataset.tabular): from_data, DelegateDataset, and the
-- TabularDataset base class (also chainer.dataset.TabularDataset).
return {
  TabularDataset = require 'chainer.dataset.tabular.tabular_dataset',
  DelegateDataset = require 'chainer.dataset.tabular.delegate_dataset',
  from_data = require 'chainer.dataset.tabular.from_data',
}

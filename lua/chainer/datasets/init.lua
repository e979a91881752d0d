-- chainer.datasets: general dataset classes, split helpers and the loaders
-- of standard datasets (MNIST, Fashion-MNIST, KMNIST, CIFAR, SVHN, PTB),
-- and Python-compatible pickle dataset files.
local sub = require 'chainer.datasets.sub_dataset'

local M = {}
M.TupleDataset = require 'chainer.datasets.tuple_dataset'
M.DictDataset = require 'chainer.datasets.dict_dataset'
M.SubDataset = sub.SubDataset
M.ConcatenatedDataset = require 'chainer.datasets.concatenated_dataset'
M.TransformDataset = require 'chainer.datasets.transform_dataset'
M.split_dataset = sub.split_dataset
M.split_dataset_random = sub.split_dataset_random
M.split_dataset_n = sub.split_dataset_n
M.split_dataset_n_random = sub.split_dataset_n_random
M.get_cross_validation_datasets = sub.get_cross_validation_datasets
M.get_cross_validation_datasets_random = sub.get_cross_validation_datasets_random

-- Loaders and file-backed datasets load on first use.
local lazy = {
  get_mnist = { 'chainer.datasets.mnist', 'get_mnist' },
  get_fashion_mnist = { 'chainer.datasets.mnist', 'get_fashion_mnist' },
  get_fashion_mnist_labels = { 'chainer.datasets.mnist', 'get_fashion_mnist_labels' },
  get_kuzushiji_mnist = { 'chainer.datasets.mnist', 'get_kuzushiji_mnist' },
  get_kuzushiji_mnist_labels = { 'chainer.datasets.mnist', 'get_kuzushiji_mnist_labels' },
  get_cifar10 = { 'chainer.datasets.cifar', 'get_cifar10' },
  get_cifar100 = { 'chainer.datasets.cifar', 'get_cifar100' },
  get_svhn = { 'chainer.datasets.svhn', 'get_svhn' },
  get_ptb_words = { 'chainer.datasets.ptb', 'get_ptb_words' },
  get_ptb_words_vocabulary = { 'chainer.datasets.ptb', 'get_ptb_words_vocabulary' },
  get_ptb_chars = { 'chainer.datasets.ptb', 'get_ptb_chars' },
  ImageDataset = { 'chainer.datasets.image_dataset', 'ImageDataset' },
  LabeledImageDataset = { 'chainer.datasets.image_dataset', 'LabeledImageDataset' },
  read_image = { 'chainer.datasets.image_dataset', 'read_image' },
  max_image_pixels = { 'chainer.datasets.image_dataset', 'max_image_pixels' },
  ZippedImageDataset = { 'chainer.datasets.zipped_image_dataset', 'ZippedImageDataset' },
  LabeledZippedImageDataset = { 'chainer.datasets.zipped_image_dataset', 'LabeledZippedImageDataset' },
  MultiZippedImageDataset = { 'chainer.datasets.zipped_image_dataset', 'MultiZippedImageDataset' },
  TextDataset = { 'chainer.datasets.text_dataset' },
  pickle_dataset = { 'chainer.datasets.pickle_dataset' },
  PickleDataset = { 'chainer.datasets.pickle_dataset', 'PickleDataset' },
  PickleDatasetWriter = { 'chainer.datasets.pickle_dataset', 'PickleDatasetWriter' },
  open_pickle_dataset = { 'chainer.datasets.pickle_dataset', 'open_pickle_dataset' },
  open_pickle_dataset_writer = { 'chainer.datasets.pickle_dataset', 'open_pickle_dataset_writer' },
}
setmetatable(M, {
  __index = function(t, k)
    local e = lazy[k]
    if e then
      local v = require(e[1])
      if e[2] then v = v[e[2]] end
      rawset(t, k, v)
      return v
    end
  end,
})

return M

-- chainer.serializers: save and load Links, Optimizers, Trainers in
-- Chainer's NPZ and HDF5 layouts (see docs/serialization.md).
local M = {}
for k, v in pairs(require 'chainer.serializers.npz') do M[k] = v end
for k, v in pairs(require 'chainer.serializers.hdf5') do M[k] = v end
local base = require 'chainer.serializer'
M.Serializer = base.Serializer
M.Deserializer = base.Deserializer
M.AbstractSerializer = base.AbstractSerializer
return M

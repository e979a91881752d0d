-- testing/serializer.lua: Chainer's save_and_load helpers: a round trip of
-- an object through a file in a temporary directory (removed afterwards).
--
--   testing.save_and_load_npz(model, fresh_model)
--   testing.save_and_load(src, dst, 'x.npz', saver, loader)
local tempdir = require 'chainer.utils.tempdir'

local M = {}

-- saver(path, src), then loader(path, dst), path = <tempdir>/<filename>.
function M.save_and_load(src, dst, filename, saver, loader)
  if type(filename) ~= 'string' or filename == '' or filename:find('/', 1, true) then
    error('save_and_load: filename must be a plain file name such as "tmp.npz" (got ' .. tostring(filename) .. ')', 2)
  end
  tempdir(function(dir)
    local path = dir .. '/' .. filename
    saver(path, src)
    loader(path, dst)
  end)
end

function M.save_and_load_npz(src, dst)
  local S = require 'chainer.serializers'
  M.save_and_load(src, dst, 'tmp.npz', S.save_npz, S.load_npz)
end

function M.save_and_load_hdf5(src, dst)
  local S = require 'chainer.serializers'
  M.save_and_load(src, dst, 'tmp.h5', S.save_hdf5, S.load_hdf5)
end

return M

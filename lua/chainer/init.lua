-- chainer: Chainer's define-by-run deep learning framework for LuaJIT.
local chainer = {}
local lib = require 'chainer._lib'
local C, ffi = lib.C, lib.ffi

chainer.tensor = require 'chainer.tensor'
chainer.__version__ = ffi.string(C.ch_version())

function chainer.set_num_threads(n) C.ch_set_num_threads(n) end
function chainer.get_num_threads() return C.ch_get_num_threads() end

return chainer

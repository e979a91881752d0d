-- Writes the seed corpus of the fuzz targets (tests/fuzz/corpus/<reader>/)
-- with chainlua's own writers; the outputs are committed.  From the
-- repository root, with a built library:
--   build/chainlua tests/fuzz/make-seeds.lua
-- The HDF5 seeds are spec/fixtures (h5py's strings, a model-like file).
local T = require 'chainer.tensor'
local C = T.C

local root = 'tests/fuzz/corpus/'
local function write(path, s)
  local f = assert(io.open(path, 'wb'))
  f:write(s)
  f:close()
end
local function read(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('*a')
  f:close()
  return s
end

-- npy: numbers of several dtypes and ranks, a 0-d one, strings
T.save(root .. 'npy/f32_2x3.npy', T.arange(6, 'float32'):reshape({ 2, 3 }))
T.save(root .. 'npy/i64_0d.npy', T.array(7, 'int64'))
T.save(root .. 'npy/bool_4.npy', T.array({ 1, 0, 1, 1 }, 'bool'))
T.save(root .. 'npy/f16_2x2x2.npy', T.arange(8, 'float16'):reshape({ 2, 2, 2 }))
T.save(root .. 'npy/u_strings.npy', T.string_array({ 'ab', 'c\u{e9}', '' }, { 3 }))

-- npz: stored and deflated, plus NumPy's own (spec/fixtures/strings)
T.savez(root .. 'npz/stored.npz', { a = T.arange(4, 'float32'), b = T.array(3, 'int64') })
T.savez_compressed(root .. 'npz/deflated.npz', { w = T.ones({ 3, 2 }, 'float64'), s = T.string_array({ 'x' }, { 1 }) })
write(root .. 'npz/numpy_strings.npz', read('spec/fixtures/strings/numpy_strings.npz'))

-- hdf5: chainlua's writer, h5py's strings, the model-like fixture
T.save_hdf5(root .. 'hdf5/chainlua_model.h5', { ['predictor/l1/W'] = T.ones({ 3, 2 }, 'float32'),
  ['predictor/l1/b'] = T.zeros({ 3 }, 'float32'), ['updater/iteration'] = T.array(5, 'int64') })
write(root .. 'hdf5/h5py_strings.h5', read('spec/fixtures/strings/h5py_strings.h5'))
write(root .. 'hdf5/model_vlen.h5', read('spec/fixtures/hdf5/model_vlen.h5'))

-- idx: a 2x2x3 uint8 image set and int32 labels, plain; the images gzip'ed
local idx_images = '\0\0\8\3\0\0\0\2\0\0\0\2\0\0\0\3' .. string.rep('\1\2\3\4\5\6', 2)
write(root .. 'idx/images-idx3-ubyte', idx_images)
write(root .. 'idx/labels-idx1-ubyte', '\0\0\12\1\0\0\0\2\0\0\0\7\0\0\0\1')
write('/tmp/chainlua-seed-idx', idx_images)
assert(os.execute('gzip -9 -n -c /tmp/chainlua-seed-idx > ' .. root .. 'idx/images-idx3-ubyte.gz'))
os.remove('/tmp/chainlua-seed-idx')

-- image: small PNGs (gray, RGB, RGBA) and JPEGs (gray, RGB)
local function img(h, w, c)
  local t = T.empty({ h, w, c }, 'uint8')
  for i = 0, h * w * c - 1 do C.ch_set_flat(t.ptr, i, (i * 37) % 256) end
  return t
end
local function save_image(path, t, q)
  assert(C.ch_image_save(path, t.ptr, q or 90) == 0, T.ffi.string(C.ch_last_error()))
end
save_image(root .. 'image/gray.png', img(4, 5, 1))
save_image(root .. 'image/rgb.png', img(3, 4, 3))
save_image(root .. 'image/rgba.png', img(2, 3, 4))
save_image(root .. 'image/gray.jpg', img(8, 8, 1), 75)
save_image(root .. 'image/rgb.jpg', img(9, 7, 3), 90)
-- caffe: a layer-form and a V1-form model, written by the specs' protobuf encoder
package.path = './?.lua;./spec/?.lua;' .. package.path
local PB = require 'spec.links.caffe.pb_writer'
local W = T.arange(12, 'float32'):reshape({ 3, 4 })
PB.write(root .. 'caffe/layers.caffemodel', PB.net('n', {
  { name = 'conv', type = 'Convolution', bottom = { 'data' }, top = { 'c' },
    blobs = { PB.tensor_blob(T.arange(8, 'float32'):reshape({ 2, 1, 2, 2 })), PB.blob({ shape = { 2 }, data = { 1, 2 } }) },
    params = { { 106, PB.uint(1, 2) .. PB.uint(4, 2) .. PB.uint(5, 1) } } },
  { name = 'ip', type = 'InnerProduct', bottom = { 'c' }, top = { 'y' }, blobs = { PB.tensor_blob(W) },
    params = { { 117, PB.uint(1, 3) .. PB.bool(2, false) } } },
  { name = 'el', type = 'Eltwise', bottom = { 'y', 'y' }, top = { 'z' },
    params = { { 110, PB.float(2, 0.5) .. PB.float(2, 2) } } },
  { name = 'rs', type = 'Reshape', bottom = { 'z' }, top = { 'r' },
    params = { { 133, PB.message(1, PB.ints_packed(1, { 0, -1 })) } } },
}))
PB.write(root .. 'caffe/v1.caffemodel', PB.net('v1', {
  { name = 'fc', type = 14, bottom = { 'x' }, top = { 'y' }, blobs = { PB.tensor_blob(W, true) },
    params = { { 17, PB.uint(1, 3) } } },
  { name = 'relu', type = 18, bottom = { 'y' }, top = { 'y' } },
}, true))

-- pickle: chainlua's writer at each protocol (arrays, nested containers,
-- shared None), and Python's own pickles (spec/fixtures/pickle)
local pickle = require 'chainer.datasets.pickle_dataset'
for proto = 2, 5 do
  local w = pickle.open_pickle_dataset_writer(root .. 'pickle/chainlua_protocol' .. proto .. '.pkl', proto)
  w:write({ T.arange(6, 'float32'):reshape({ 2, 3 }), 7, 'text', pickle.bytes('\0\255'), pickle.None })
  w:write({ x = T.array(3, 'int64'), y = pickle.list({ 1.5, true, { T.array({ 1, 0 }, 'bool') } }) })
  w:close()
end
write(root .. 'pickle/python_examples.pkl', read('spec/fixtures/pickle/python_examples.pkl'))

print('seeds written under ' .. root)

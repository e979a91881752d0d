-- links/caffe/_net.lua: a .caffemodel read through the runtime's protobuf-c
-- parser (runtime/io/caffe.c): the layers as plain Lua tables.
--
--   net.layers[i] = { name =, type =, bottom = {...}, top = {...},
--                     params = <ch_caffe_params>, nblobs =, blob = function(k) }
-- blob(k) returns blob k (1-based) as a float32 tensor shaped as the file says.
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local ffi, C, check = T.ffi, T.C, T.check

local M = {}

local box = ffi.new('ch_caffe_net*[1]')

local function fail_from(err, level)
  args.fail((tostring(err):gsub('^.-:%d+: ', '')), level + 1)
end

local function str(p) return p ~= nil and ffi.string(p) or '' end

function M.available() return C.ch_caffe_available() ~= 0 end

-- open(path) -> { path =, v1 = bool, layers = {...} }
function M.open(path)
  if type(path) ~= 'string' or path == '' then
    args.fail(string.format('CaffeFunction: model_path must be a non-empty string (got %s)', type(path)), 3)
  end
  local ok, err = pcall(check, C.ch_caffe_open(path, box))
  if not ok then fail_from(err, 3) end
  local net = ffi.gc(box[0], C.ch_caffe_close)
  local layers = {}
  for i = 0, C.ch_caffe_layer_count(net) - 1 do
    local layer = {
      name = str(C.ch_caffe_layer_name(net, i)),
      type = str(C.ch_caffe_layer_type(net, i)),
      bottom = {}, top = {},
      nblobs = C.ch_caffe_layer_blob_count(net, i),
      params = ffi.new('ch_caffe_params'),
    }
    for k = 0, C.ch_caffe_layer_bottom_count(net, i) - 1 do layer.bottom[k + 1] = str(C.ch_caffe_layer_bottom(net, i, k)) end
    for k = 0, C.ch_caffe_layer_top_count(net, i) - 1 do layer.top[k + 1] = str(C.ch_caffe_layer_top(net, i, k)) end
    check(C.ch_caffe_layer_params(net, i, layer.params), 2)
    layer.blob = function(k)
      if k > layer.nblobs then
        args.fail(string.format("CaffeFunction: layer '%s' (%s) has %d blobs, blob %d is needed", layer.name,
          layer.type, layer.nblobs, k), 4)
      end
      local ok2, err2 = pcall(check, C.ch_caffe_layer_blob(net, i, k - 1, T.box))
      if not ok2 then fail_from(err2, 4) end
      return T.wrap(T.box[0])
    end
    layers[i + 1] = layer
  end
  return { path = path, v1 = C.ch_caffe_is_v1(net) ~= 0, layers = layers, handle = net }
end

-- Lua array of a C array of n numbers.
function M.list(ptr, n)
  local out = {}
  for k = 0, n - 1 do out[k + 1] = tonumber(ptr[k]) end
  return out
end

return M

-- datasets/image_dataset.lua: ImageDataset, LabeledImageDataset and the
-- image reader behind them (PNG and JPEG, runtime/io/image.c); the zipped
-- datasets (zipped_image_dataset.lua) decode with decode_image.
--
-- ImageDataset(paths, {root = '.', dtype = 'float32'}): paths is a Lua array
-- of file names or the path of a text file with one name per line; example
-- i is image i as a (C, H, W) tensor of dtype (gray images get C = 1),
-- read when accessed -- Chainer's layout.
-- LabeledImageDataset(pairs, {root = '.', dtype = 'float32', label_dtype = 'int32'}):
-- pairs is a Lua array of {path, label} or a text file of "path label"
-- lines; example i is {image, label} with label a 0-d tensor.
local DatasetMixin = require 'chainer.dataset.dataset_mixin'
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local C, check, box = T.C, T.check, T.box

local M = {}

-- (H, W, C) uint8 -> Chainer's (C, H, W) layout in `dtype`.
local function to_chw(hwc, dtype)
  local chw = hwc:transpose(2, 0, 1)
  dtype = dtype or T.default_float
  if dtype == 'uint8' then return chw:contiguous() end
  return chw:astype(dtype)
end

-- read_image(path, [dtype = 'float32']) -> (C, H, W) tensor; dtype 'uint8'
-- keeps the raw bytes.  Errors name the file.
function M.read_image(path, dtype)
  if type(path) ~= 'string' or path == '' then
    error(string.format('read_image: path must be a non-empty string (got %s)', type(path)), 2)
  end
  check(C.ch_image_load(path, box), 2)
  return to_chw(T.wrap(box[0]), dtype)
end

-- decode_image(bytes, [dtype], [what]) -> (C, H, W) tensor from the bytes of a
-- PNG or JPEG file (a 1-D uint8 tensor); `what` names the image in errors.
function M.decode_image(bytes, dtype, what)
  if not T.is_tensor(bytes) then
    args.fail(string.format('decode_image: bytes must be a 1-D uint8 tensor (got %s)', type(bytes)), 2)
  end
  local ok, err = pcall(check, C.ch_image_decode(bytes.ptr, what, box))
  if not ok then args.fail((tostring(err):gsub('^.-:%d+: ', '')), 2) end
  return to_chw(T.wrap(box[0]), dtype)
end

-- max_image_pixels([n]) -> the limit before the call.  The readers refuse an
-- image whose header claims more than n = height * width pixels, before
-- allocating anything (Pillow's decompression-bomb limit, 178,956,970, by
-- default); max_image_pixels(n) sets it, max_image_pixels(0) restores the
-- default, max_image_pixels() only reads it.
function M.max_image_pixels(n)
  if n == nil then return tonumber(C.ch_image_max_pixels(-1)) end
  if type(n) ~= 'number' or n < 0 or n ~= math.floor(n) then
    args.fail(string.format('max_image_pixels: n must be a non-negative integer (got %s)', tostring(n)), 2)
  end
  return tonumber(C.ch_image_max_pixels(n))
end

-- write_image(path, image, [quality = 95]): writes an (H, W) or (H, W, C)
-- uint8 tensor as PNG or JPEG (by extension); atomic.
function M.write_image(path, image, quality)
  if type(path) ~= 'string' or path == '' then
    error(string.format('write_image: path must be a non-empty string (got %s)', type(path)), 2)
  end
  if not T.is_tensor(image) then
    error(string.format('write_image: image must be a uint8 tensor (got %s)', type(image)), 2)
  end
  check(C.ch_image_save(path, image.ptr, quality or 95), 2)
end

-- A Lua array of paths (or {path, label} pairs), as given or read from a
-- text file of one name (or "path label") per line.
local function read_list(fn, src, labeled, level)
  if type(src) == 'table' then return src end
  if type(src) ~= 'string' then
    error(string.format('%s: expected a Lua array of %s or the path of a text file listing them (got %s)', fn,
      labeled and '{path, label} pairs' or 'paths', type(src)), level + 1)
  end
  local f, err = io.open(src, 'r')
  if not f then error(string.format("%s: cannot open the list '%s' (%s)", fn, src, tostring(err)), level + 1) end
  local out, lineno = {}, 0
  for line in f:lines() do
    lineno = lineno + 1
    line = line:gsub('%s+$', '')
    if line ~= '' then
      if labeled then
        local p, l = line:match('^(.-)%s+(%-?%d+)$')
        if not p then
          f:close()
          error(string.format("%s: line %d of '%s' is not 'path label' (got '%s')", fn, lineno, src, line),
            level + 1)
        end
        out[#out + 1] = { p, tonumber(l) }
      else
        out[#out + 1] = line
      end
    end
  end
  f:close()
  return out
end

M.read_list = read_list

local function join(root, p)
  if root == nil or root == '' or root == '.' or p:sub(1, 1) == '/' then return p end
  return root .. '/' .. p
end

local ImageDataset = DatasetMixin:extend('ImageDataset')
M.ImageDataset = ImageDataset

-- Chainer's ImageDataset(paths, root, dtype) and LabeledImageDataset(pairs,
-- root, dtype, label_dtype): positional or by name.
local IMAGE_SIGNATURE = args.signature { 'root', 'dtype' }
local LABELED_SIGNATURE = args.signature { 'root', 'dtype', 'label_dtype' }

function ImageDataset:init(paths, ...)
  local opts = args.parse_at(3, 'ImageDataset', IMAGE_SIGNATURE, select('#', ...), ...)
  self._paths = read_list('ImageDataset', paths, false, 3)
  for i, p in ipairs(self._paths) do
    if type(p) ~= 'string' then
      error(string.format('ImageDataset: paths[%d] must be a string (got %s)', i, type(p)), 3)
    end
  end
  self._root = opts.root or '.'
  self._dtype = opts.dtype or T.default_float
end

function ImageDataset:len() return #self._paths end

function ImageDataset:get_example(i)
  return M.read_image(join(self._root, self._paths[i]), self._dtype)
end

local LabeledImageDataset = DatasetMixin:extend('LabeledImageDataset')
M.LabeledImageDataset = LabeledImageDataset

function LabeledImageDataset:init(pairs, ...)
  local opts = args.parse_at(3, 'LabeledImageDataset', LABELED_SIGNATURE, select('#', ...), ...)
  self._pairs = read_list('LabeledImageDataset', pairs, true, 3)
  for i, pr in ipairs(self._pairs) do
    if type(pr) ~= 'table' or type(pr[1]) ~= 'string' or type(pr[2]) ~= 'number' then
      error(string.format('LabeledImageDataset: pairs[%d] must be {path, label} (a string and a number)', i), 3)
    end
  end
  self._root = opts.root or '.'
  self._dtype = opts.dtype or T.default_float
  self._label_dtype = opts.label_dtype or 'int32'
end

function LabeledImageDataset:len() return #self._pairs end

function LabeledImageDataset:get_example(i)
  local pr = self._pairs[i]
  return { M.read_image(join(self._root, pr[1]), self._dtype), T.array(pr[2], self._label_dtype) }
end

return M

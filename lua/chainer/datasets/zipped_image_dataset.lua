-- datasets/zipped_image_dataset.lua: images read from zip archives
-- (Chainer's ZippedImageDataset, LabeledZippedImageDataset and
-- MultiZippedImageDataset), on the runtime's zip reader and image decoder.
--
-- ZippedImageDataset(zipfilename, [dtype]): one example per member that is
--   not a directory (a name ending in '/'), in archive order: a (C, H, W)
--   tensor, as ImageDataset.  ds:get_example(name) reads a member by name.
-- LabeledZippedImageDataset(zipfilename, labelfilename, [dtype], [label_dtype = 'int32']):
--   the label file has "name label" lines naming members of the archive (or
--   give a Lua array of {name, label}); example i is {image, label}.
-- MultiZippedImageDataset(zipfilenames, [dtype]): several archives one after
--   another.
local DatasetMixin = require 'chainer.dataset.dataset_mixin'
local ZipArchive = require 'chainer.datasets.zip_archive'
local image = require 'chainer.datasets.image_dataset'
local args = require 'chainer._args'
local T = require 'chainer.tensor'

local M = {}

local function check_dtype(fn, dtype)
  if dtype == nil then return T.default_float end
  if type(dtype) ~= 'string' or not pcall(T.empty, { 0 }, dtype) then
    args.fail(string.format("%s: dtype must be a dtype name such as 'float32' (got %s)", fn, tostring(dtype)), 4)
  end
  return dtype
end

---------------------------------------------------------------------------
-- ZippedImageDataset
---------------------------------------------------------------------------
local ZippedImageDataset = DatasetMixin:extend('ZippedImageDataset')
M.ZippedImageDataset = ZippedImageDataset

local ZIPPED_SIGNATURE = args.signature { 'dtype' }

function ZippedImageDataset:init(zipfilename, ...)
  local opts = args.parse_at(3, 'ZippedImageDataset', ZIPPED_SIGNATURE, select('#', ...), ...)
  self._dtype = check_dtype('ZippedImageDataset', opts.dtype)
  self._zip = ZipArchive(zipfilename, 'ZippedImageDataset')
  local members = {}
  for i, name in ipairs(self._zip.names) do
    if name:sub(-1) ~= '/' then members[#members + 1] = i end
  end
  self._members = members
end

function ZippedImageDataset:len() return #self._members end

-- The image member i (1-based) or the member called i (a string).
function ZippedImageDataset:get_example(i)
  local z = self._zip
  local index
  if type(i) == 'string' then
    index = z:index(i)
    if index == nil then
      args.fail(string.format("ZippedImageDataset: '%s' has no member '%s'", z.path, i), 2)
    end
  else
    index = self._members[i]
    if index == nil then
      args.fail(string.format('ZippedImageDataset: index %s is out of range for %d images', tostring(i),
        #self._members), 2)
    end
  end
  local what = string.format("'%s' member '%s'", z.path, z.names[index])
  return image.decode_image(z:read(index), self._dtype, what)
end

-- The names of the image members, in order (Chainer's private _paths).
function ZippedImageDataset:paths()
  local out = {}
  for k, i in ipairs(self._members) do out[k] = self._zip.names[i] end
  return out
end

---------------------------------------------------------------------------
-- LabeledZippedImageDataset
---------------------------------------------------------------------------
local LabeledZippedImageDataset = DatasetMixin:extend('LabeledZippedImageDataset')
M.LabeledZippedImageDataset = LabeledZippedImageDataset

local LABELED_SIGNATURE = args.signature { 'dtype', 'label_dtype' }

function LabeledZippedImageDataset:init(zipfilename, labelfilename, ...)
  local fn = 'LabeledZippedImageDataset'
  local opts = args.parse_at(3, fn, LABELED_SIGNATURE, select('#', ...), ...)
  local pairs_ = image.read_list(fn, labelfilename, true, 3)
  self._zipfile = ZippedImageDataset(zipfilename, { dtype = opts.dtype })
  local z = self._zipfile._zip
  for i, pr in ipairs(pairs_) do
    if type(pr) ~= 'table' or type(pr[1]) ~= 'string' or type(pr[2]) ~= 'number' then
      args.fail(string.format('%s: pairs[%d] must be {name, label} (a string and a number)', fn, i), 3)
    end
    if z:index(pr[1]) == nil then
      args.fail(string.format("%s: label entry %d names '%s', which '%s' does not contain", fn, i, pr[1],
        z.path), 3)
    end
  end
  self._pairs = pairs_
  self._label_dtype = opts.label_dtype or 'int32'
end

function LabeledZippedImageDataset:len() return #self._pairs end

function LabeledZippedImageDataset:get_example(i)
  local pr = self._pairs[i]
  return { self._zipfile:get_example(pr[1]), T.array(pr[2], self._label_dtype) }
end

---------------------------------------------------------------------------
-- MultiZippedImageDataset
---------------------------------------------------------------------------
local MultiZippedImageDataset = DatasetMixin:extend('MultiZippedImageDataset')
M.MultiZippedImageDataset = MultiZippedImageDataset

function MultiZippedImageDataset:init(zipfilenames, ...)
  local opts = args.parse_at(3, 'MultiZippedImageDataset', ZIPPED_SIGNATURE, select('#', ...), ...)
  if type(zipfilenames) ~= 'table' or getmetatable(zipfilenames) ~= nil then
    args.fail(string.format('MultiZippedImageDataset: zipfilenames must be a Lua array of paths (got %s)',
      type(zipfilenames)), 3)
  end
  local parts, ends, total = {}, {}, 0
  for k, name in ipairs(zipfilenames) do
    parts[k] = ZippedImageDataset(name, { dtype = opts.dtype })
    total = total + parts[k]:len()
    ends[k] = total
  end
  self._parts, self._ends = parts, ends
end

function MultiZippedImageDataset:len() return self._ends[#self._ends] or 0 end

function MultiZippedImageDataset:get_example(i)
  local ends = self._ends
  -- binary search for the first archive whose cumulative count reaches i
  local lo, hi = 1, #ends
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if ends[mid] >= i then hi = mid else lo = mid + 1 end
  end
  local before = lo > 1 and ends[lo - 1] or 0
  return self._parts[lo]:get_example(i - before)
end

return M

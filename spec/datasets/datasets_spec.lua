-- Specs for the general dataset classes and split helpers (chainer.datasets).
local chainer = require 'chainer'
local T = chainer.tensor
local D = chainer.datasets
local H = require 'spec.dataset.helpers'

local function ints(n) return T.arange(0, n, 1, 'int32') end

local function vals(ds)
  local out = {}
  for i = 1, ds:len() do
    local e = ds[i]
    if type(e) == 'table' then e = e[1] end
    out[i] = T.is_tensor(e) and e:item() or e
  end
  return out
end

describe('TupleDataset', function()
  it('zips tensors (rows as views), Lua arrays and datasets, 1-based', function()
    local x = T.arange(0, 6, 1, 'float32'):reshape(3, 2)
    local ds = D.TupleDataset(x, ints(3), { 'a', 'b', 'c' })
    assert.equal(3, ds:len())
    local e = ds[2]
    assert.same({ 2, 3 }, e[1]:totable())
    assert.equal(1, e[2]:item())
    assert.equal('b', e[3])
    assert.same(ds:get_example(3)[1]:totable(), ds[-1][1]:totable())
    e[1]:fill_(7)                          -- a view: writes reach the dataset
    assert.same({ 7, 7 }, x:select(1):totable())
    local s = ds:slice(2, 3)
    assert.equal(2, #s)
    assert.equal('c', s[2][3])
    assert.same({}, ds:slice(3, 2))
    assert.equal(3, #ds:slice(-5, 10))    -- clamped like string.sub
  end)

  it('gathers batches with get_examples when every component is a tensor', function()
    local x = T.arange(0, 12, 1, 'float64'):reshape(4, 3)
    local ds = D.TupleDataset(x, ints(4))
    local b = ds:get_examples(T.array({ 3, 1 }, 'int64'))
    assert.same({ { 9, 10, 11 }, { 3, 4, 5 } }, b[1]:totable())
    assert.same({ 3, 1 }, b[2]:totable())
    assert.is_nil(D.TupleDataset(x, { 1, 2, 3, 4 }):get_examples(T.array({ 0 }, 'int64')))
  end)

  it('handles 0-example tensors and size-1 datasets', function()
    local ds = D.TupleDataset(T.empty({ 0, 2 }), T.empty({ 0 }, 'int32'))
    assert.equal(0, ds:len())
    local one = D.TupleDataset(T.array({ { 1, 2 } }))
    assert.same({ 1, 2 }, one[1][1]:totable())
  end)

  it('reports bad lengths, bad indices and no datasets', function()
    H.errors_with(function() D.TupleDataset(ints(3), ints(4)) end, 'TupleDataset', 'dataset 2', '4', '3')
    H.errors_with(function() D.TupleDataset() end, 'TupleDataset', 'no datasets')
    local ds = D.TupleDataset(ints(3))
    H.errors_with(function() return ds[4] end, 'out of range', '3')
    H.errors_with(function() return ds[0] end, '1-based')
    H.errors_with(function() return ds[1.5] end, 'integer')
    H.errors_with(function() D.TupleDataset(T.array(3)) end, '0-d')
  end)
end)

describe('DictDataset', function()
  it('gives tables of named fields and gathers batches', function()
    local ds = D.DictDataset{ x = T.arange(0, 6, 1, 'float32'):reshape(3, 2), t = ints(3) }
    assert.equal(3, ds:len())
    assert.same({ 't', 'x' }, ds:keys())
    local e = ds[3]
    assert.same({ 4, 5 }, e.x:totable())
    assert.equal(2, e.t:item())
    local b = ds:get_examples(T.array({ 2, 0 }, 'int64'))
    assert.same({ 2, 0 }, b.t:totable())
    assert.same({ { 4, 5 }, { 0, 1 } }, b.x:totable())
    H.errors_with(function() D.DictDataset{ x = ints(2), t = ints(3) } end, 'DictDataset', 'lengths')
    H.errors_with(function() D.DictDataset(5) end, 'DictDataset')
  end)
end)

describe('SubDataset and splits', function()
  it('SubDataset(ds, start, finish) has examples start+1..finish; order permutes', function()
    local base = ints(10)
    local s = D.SubDataset(base, 2, 5)
    assert.equal(3, s:len())
    assert.same({ 2, 3, 4 }, vals(s))
    local o = D.SubDataset(base, 1, 4, T.array({ 9, 8, 7, 6, 5, 4, 3, 2, 1, 0 }, 'int64'))
    assert.same({ 8, 7, 6 }, vals(o))
    local lua_order = D.SubDataset(base, 0, 2, { 10, 9, 8, 7, 6, 5, 4, 3, 2, 1 })  -- 1-based Lua positions
    assert.same({ 9, 8 }, vals(lua_order))
    assert.same({ 8, 7 }, o:get_examples(T.array({ 0, 1 }, 'int64')):totable())
    H.errors_with(function() D.SubDataset(base, 4, 11) end, 'SubDataset', 'finish=11')
    H.errors_with(function() D.SubDataset(base, 0, 3, { 1, 2 }) end, 'order has 2 entries')
    H.errors_with(function() D.SubDataset(base, 0, 3, T.array({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 10 }, 'int64')) end,
      'out of range')
  end)

  it('split_dataset and split_dataset_random', function()
    local a, b = D.split_dataset(ints(10), 7)
    assert.same({ 0, 1, 2, 3, 4, 5, 6 }, vals(a))
    assert.same({ 7, 8, 9 }, vals(b))
    local r1, r2 = D.split_dataset_random(ints(10), 6, 42)
    assert.equal(6, r1:len())
    assert.equal(4, r2:len())
    local all = {}
    for _, v in ipairs(vals(r1)) do all[#all + 1] = v end
    for _, v in ipairs(vals(r2)) do all[#all + 1] = v end
    table.sort(all)
    assert.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }, all)
    local q1 = D.split_dataset_random(ints(10), 6, 42)
    assert.same(vals(r1), vals(q1))      -- a seed fixes the split
    H.errors_with(function() D.split_dataset(ints(3), 4) end, 'split_dataset', 'split_at')
    H.errors_with(function() D.split_dataset_random(ints(3), 1, -1) end, 'seed')
  end)

  it('split_dataset_n drops the remainder like Chainer; the random variant permutes', function()
    local parts = D.split_dataset_n(ints(10), 3)
    assert.equal(3, #parts)
    assert.same({ 0, 1, 2 }, vals(parts[1]))
    assert.same({ 3, 4, 5 }, vals(parts[2]))
    assert.same({ 6, 7, 8 }, vals(parts[3]))
    local rp = D.split_dataset_n_random(ints(9), 3, 1)
    local all = {}
    for _, p in ipairs(rp) do for _, v in ipairs(vals(p)) do all[#all + 1] = v end end
    table.sort(all)
    assert.same({ 0, 1, 2, 3, 4, 5, 6, 7, 8 }, all)
    H.errors_with(function() D.split_dataset_n(ints(3), 0) end, 'split_dataset_n', 'n')
  end)

  it('get_cross_validation_datasets: Chainer fold layout', function()
    -- Chainer, len 10, 3 folds: test sizes [3, 3, 4] used in reverse with a rotating order
    local folds = D.get_cross_validation_datasets(ints(10), 3)
    assert.equal(3, #folds)
    assert.same({ 0, 1, 2, 3, 4, 5 }, vals(folds[1][1]))
    assert.same({ 6, 7, 8, 9 }, vals(folds[1][2]))
    assert.same({ 6, 7, 8, 9, 0, 1, 2 }, vals(folds[2][1]))
    assert.same({ 3, 4, 5 }, vals(folds[2][2]))
    assert.same({ 3, 4, 5, 6, 7, 8, 9 }, vals(folds[3][1]))
    assert.same({ 0, 1, 2 }, vals(folds[3][2]))
    local rf = D.get_cross_validation_datasets_random(ints(7), 2, 3)
    assert.equal(4, rf[1][1]:len() + (rf[1][2]:len() == 3 and 0 or 1))
    H.errors_with(function() D.get_cross_validation_datasets(ints(3), 5) end, 'n_folds')
  end)
end)

describe('ConcatenatedDataset and TransformDataset', function()
  it('concatenates and transforms on access', function()
    local c = D.ConcatenatedDataset(ints(2), { 10, 11, 12 }, T.array({ 20 }, 'int32'))
    assert.equal(6, c:len())
    assert.same({ 0, 1, 10, 11, 12, 20 }, vals(c))
    local t = D.TransformDataset(ints(3), function(x) return x:item() * 10 end)
    assert.same({ 0, 10, 20 }, vals(t))
    assert.equal(0, D.ConcatenatedDataset():len())
    H.errors_with(function() D.TransformDataset(ints(3), 5) end, 'TransformDataset', 'transform')
  end)
end)

describe('DatasetMixin subclasses', function()
  it('get ds[i], slice, iter and checks from len/get_example', function()
    local Squares = chainer.dataset.DatasetMixin:extend('Squares')
    function Squares:init(n) self.n = n end
    function Squares:len() return self.n end
    function Squares:get_example(i) return i * i end
    local s = Squares(4)
    assert.equal(9, s[3])
    assert.equal(16, s[-1])
    assert.same({ 4, 9 }, s:slice(2, 3))
    local seen = {}
    for i, v in s:iter() do seen[i] = v end
    assert.same({ 1, 4, 9, 16 }, seen)
    assert.equal(4, chainer.dataset.len(s))
    assert.equal(3, chainer.dataset.len({ 1, 2, 3 }))
    assert.equal(2, chainer.dataset.len(T.zeros({ 2, 5 })))
    H.errors_with(function() return s[5] end, 'out of range')
    local Bad = chainer.dataset.DatasetMixin:extend('Bad')
    H.errors_with(function() Bad():len() end, 'Bad', 'len is not implemented')
  end)
end)

describe('ImageDataset and LabeledImageDataset', function()
  local dir
  setup(function() dir = H.tmpdir() end)
  teardown(function() H.rmdir(dir) end)
  local img = require 'chainer.datasets.image_dataset'

  it('reads PNG (gray, RGB, RGBA) exactly as (C, H, W)', function()
    local rgb = T.arange(0, 24, 1, 'uint8'):reshape(2, 4, 3) * 10
    img.write_image(dir .. '/rgb.png', rgb)
    local gray = T.array({ { 0, 128, 255 }, { 1, 2, 3 } }, 'uint8')
    img.write_image(dir .. '/gray.png', gray)
    img.write_image(dir .. '/rgba.png', T.full({ 1, 1, 4 }, 200, 'uint8'))
    local ds = D.ImageDataset({ 'rgb.png', 'gray.png', 'rgba.png' }, { root = dir })
    assert.equal(3, ds:len())
    local a = ds[1]
    assert.same({ 3, 2, 4 }, a.shape)
    assert.equal('float32', a.dtype)
    assert.same(rgb:transpose(2, 0, 1):astype('float32'):totable(), a:totable())
    local g = ds[2]
    assert.same({ 1, 2, 3 }, g.shape)
    assert.same({ { { 0, 128, 255 }, { 1, 2, 3 } } }, g:totable())
    assert.same({ 4, 1, 1 }, ds[3].shape)
    assert.equal('uint8', img.read_image(dir .. '/gray.png', 'uint8').dtype)
  end)

  it('reads JPEG (lossy: close to the written pixels)', function()
    local flat = T.full({ 8, 8, 3 }, 100, 'uint8')
    img.write_image(dir .. '/flat.jpg', flat, 100)
    local x = img.read_image(dir .. '/flat.jpg')
    assert.same({ 3, 8, 8 }, x.shape)
    assert.truthy((x - 100):abs():max():item() <= 2)
    img.write_image(dir .. '/g.jpeg', T.full({ 4, 5 }, 50, 'uint8'), 95)
    assert.same({ 1, 4, 5 }, img.read_image(dir .. '/g.jpeg').shape)
  end)

  it('reads list files and labeled pairs', function()
    img.write_image(dir .. '/a.png', T.full({ 2, 2 }, 1, 'uint8'))
    img.write_image(dir .. '/b.png', T.full({ 2, 2 }, 2, 'uint8'))
    H.write(dir .. '/list.txt', 'a.png 3\nb.png 7\n')
    local ds = D.LabeledImageDataset(dir .. '/list.txt', { root = dir, dtype = 'float64' })
    assert.equal(2, ds:len())
    local e = ds[2]
    assert.equal('float64', e[1].dtype)
    assert.equal(2, e[1]:max():item())
    assert.equal(7, e[2]:item())
    assert.equal('int32', e[2].dtype)
    local p = D.LabeledImageDataset({ { 'a.png', 0 } }, dir)
    assert.equal(0, p[1][2]:item())
    H.write(dir .. '/names.txt', 'a.png\n\nb.png\n')
    assert.equal(2, D.ImageDataset(dir .. '/names.txt', { root = dir }):len())
  end)

  it('reports unreadable files clearly', function()
    H.write(dir .. '/not.png', 'hello world, not an image')
    local ds = D.ImageDataset({ 'not.png', 'missing.png' }, { root = dir })
    H.errors_with(function() return ds[1] end, 'load_image', 'not.png', 'neither a PNG nor a JPEG')
    H.errors_with(function() return ds[2] end, 'load_image', 'missing.png')
    H.write(dir .. '/bad.txt', 'a.png x\n')
    H.errors_with(function() D.LabeledImageDataset(dir .. '/bad.txt') end, 'LabeledImageDataset', 'line 1')
    H.errors_with(function() img.write_image(dir .. '/x.bmp', T.zeros({ 2, 2 }, 'uint8')) end, 'extension')
    H.errors_with(function() img.write_image(dir .. '/x.png', T.zeros({ 2, 2 }, 'float32')) end, 'uint8')
    H.errors_with(function() img.write_image(dir .. '/x.jpg', T.zeros({ 2, 2, 4 }, 'uint8')) end, 'channels')
  end)

  -- a JPEG's frame header (SOF0) with its height and width set to h, w
  local function with_size(bytes, h, w)
    local i = 3
    while i < #bytes do
      local marker, len = bytes:byte(i + 1), bytes:byte(i + 2) * 256 + bytes:byte(i + 3)
      if marker == 0xC0 then
        local size = string.char(math.floor(h / 256), h % 256, math.floor(w / 256), w % 256)
        return bytes:sub(1, i + 4) .. size .. bytes:sub(i + 9)
      end
      i = i + 2 + len
    end
    error('no SOF0 marker')
  end

  it('refuses images beyond max_image_pixels from the header, before allocating', function()
    img.write_image(dir .. '/small.jpg', T.full({ 8, 8, 3 }, 90, 'uint8'))
    local f = io.open(dir .. '/small.jpg', 'rb')
    local bytes = f:read('*a')
    f:close()
    -- 65500 x 65500 x 3 bytes (12 GB) claimed by a 700-byte file
    H.write(dir .. '/bomb.jpg', with_size(bytes, 65500, 65500))
    H.errors_with(function() img.read_image(dir .. '/bomb.jpg') end, 'load_image', 'bomb.jpg',
      '65500 x 65500 pixels', 'limit of 178956970', 'max_image_pixels')
    assert.equal(178956970, D.max_image_pixels())
    assert.equal(178956970, D.max_image_pixels(63))
    H.errors_with(function() img.read_image(dir .. '/small.jpg') end, '8 x 8 pixels', 'limit of 63')
    img.write_image(dir .. '/small.png', T.full({ 8, 8 }, 1, 'uint8'))
    H.errors_with(function() img.read_image(dir .. '/small.png') end, '8 x 8 pixels', 'limit of 63')
    assert.equal(63, D.max_image_pixels(64))
    assert.same({ 3, 8, 8 }, img.read_image(dir .. '/small.jpg').shape)
    assert.equal(64, D.max_image_pixels(0))
    assert.equal(178956970, D.max_image_pixels())
    H.errors_with(function() D.max_image_pixels(-1) end, 'max_image_pixels', 'non-negative integer')
  end)

  it('refuses a truncated JPEG as Pillow does (no rows of padding)', function()
    local noise = (T.arange(0, 64 * 64 * 3, 1, 'float32') * 7919 % 251):astype('uint8'):reshape(64, 64, 3)
    img.write_image(dir .. '/noise.jpg', noise, 90)
    local f = io.open(dir .. '/noise.jpg', 'rb')
    local bytes = f:read('*a')
    f:close()
    H.write(dir .. '/cut.jpg', bytes:sub(1, math.floor(#bytes / 2)))
    H.errors_with(function() img.read_image(dir .. '/cut.jpg') end, 'load_image', 'cut.jpg', 'truncated')
  end)
end)

describe('TextDataset', function()
  local dir
  setup(function() dir = H.tmpdir() end)
  teardown(function() H.rmdir(dir) end)

  it('reads lines lazily (with newlines), pairs of files and filters', function()
    H.write(dir .. '/en.txt', 'hello\nworld\nlong line here\n')
    H.write(dir .. '/ja.txt', 'konnichiwa\nsekai\nnagai\n')
    local one = D.TextDataset(dir .. '/en.txt')
    assert.equal(3, one:len())
    assert.equal('world\n', one[2])
    local two = D.TextDataset({ dir .. '/en.txt', dir .. '/ja.txt' }, {
      filter_func = function(a, b) return #a < 10 end })
    assert.equal(2, two:len())
    assert.same({ 'world\n', 'sekai\n' }, two[2])
    H.write(dir .. '/short.txt', 'x\n')
    H.errors_with(function() D.TextDataset({ dir .. '/en.txt', dir .. '/short.txt' }) end, 'different numbers of lines')
    H.errors_with(function() D.TextDataset(dir .. '/nope.txt') end, 'TextDataset', 'nope.txt')
    H.write(dir .. '/nonl.txt', 'a\nb')
    assert.equal('b', D.TextDataset(dir .. '/nonl.txt')[2])
  end)
end)

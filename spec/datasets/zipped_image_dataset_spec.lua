-- Specs for ZippedImageDataset, LabeledZippedImageDataset and
-- MultiZippedImageDataset.  The fixtures are made here: images written with
-- write_image, archives with an independent zip writer (spec/datasets/zip_writer.lua).
local chainer = require 'chainer'
local T = chainer.tensor
local D = chainer.datasets
local image = require 'chainer.datasets.image_dataset'
local Z = require 'spec.datasets.zip_writer'
local H = require 'spec.dataset.helpers'
local common = require 'helpers'

local dir
local files = {}   -- name -> bytes of the image file

-- Pixel (y, x, c) of the RGB test image: 10y + 3x + c (fits in uint8).
local function rgb_value(y, x, c) return 10 * y + 3 * x + c end

setup(function()
  dir = H.tmpdir()
  local rgb = T.empty({ 4, 5, 3 }, 'uint8')
  for y = 0, 3 do
    for x = 0, 4 do
      for c = 0, 2 do rgb:slice(y, x, c):fill_(rgb_value(y, x, c)) end
    end
  end
  image.write_image(dir .. '/rgb.png', rgb)
  image.write_image(dir .. '/gray.png', T.array({ { 0, 50, 100 }, { 150, 200, 250 } }, 'uint8'))
  image.write_image(dir .. '/photo.jpg', T.full({ 8, 8, 3 }, 120, 'uint8'))
  for _, n in ipairs({ 'rgb.png', 'gray.png', 'photo.jpg' }) do files[n] = common.read_file(dir .. '/' .. n) end
  Z.write(dir .. '/a.zip', {
    { 'rgb.png', files['rgb.png'] },
    { 'sub/' },
    { 'sub/gray.png', files['gray.png'], deflate = true },
    { 'photo.jpg', files['photo.jpg'], deflate = true },
  })
  Z.write(dir .. '/b.zip', { { 'x/gray.png', files['gray.png'] } })
  Z.write(dir .. '/c.zip', { { 'one.png', files['rgb.png'], deflate = true }, { 'two.png', files['gray.png'] } })
end)
teardown(function() H.rmdir(dir) end)

describe('ZippedImageDataset', function()
  it('has one (C, H, W) example per non-directory member, in archive order', function()
    local ds = D.ZippedImageDataset(dir .. '/a.zip')
    assert.equal(3, ds:len())
    assert.same({ 'rgb.png', 'sub/gray.png', 'photo.jpg' }, ds:paths())
    local x = ds[1]
    assert.same({ 3, 4, 5 }, x.shape)
    assert.equal('float32', x.dtype)
    for _, p in ipairs({ { 0, 0, 0 }, { 2, 3, 1 }, { 3, 4, 2 } }) do
      local y, xx, c = p[1], p[2], p[3]
      assert.equal(rgb_value(y, xx, c), x:slice(c, y, xx):item())
    end
    local g = ds[2]
    assert.same({ 1, 2, 3 }, g.shape)
    assert.same({ { { 0, 50, 100 }, { 150, 200, 250 } } }, g:totable())
  end)

  it('decodes exactly what ImageDataset reads from the same files', function()
    local ds = D.ZippedImageDataset(dir .. '/a.zip', 'uint8')
    local files_ds = D.ImageDataset({ 'rgb.png', 'gray.png', 'photo.jpg' }, dir, 'uint8')
    for i = 1, 3 do
      assert.equal('uint8', ds[i].dtype)
      assert.same(files_ds[i]:totable(), ds[i]:totable())
    end
    assert.same(files_ds[2]:totable(), ds:get_example('sub/gray.png'):totable())
    assert.equal('float64', D.ZippedImageDataset(dir .. '/a.zip', { dtype = 'float64' })[3].dtype)
  end)

  it('works with an iterator and concat_examples', function()
    local ds = D.ZippedImageDataset(dir .. '/c.zip')
    local it = chainer.iterators.SerialIterator(ds, 1, { shuffle = false })
    local b = it:next()
    assert.same({ 1, 3, 4, 5 }, chainer.dataset.concat_examples(b).shape)
  end)

  it('reports bad arguments and missing members', function()
    local ds = D.ZippedImageDataset(dir .. '/a.zip')
    H.errors_with(function() return ds[4] end, 'out of range')
    H.errors_with(function() ds:get_example('nope.png') end, "has no member 'nope.png'")
    H.errors_with(function() D.ZippedImageDataset(dir .. '/missing.zip') end, 'missing.zip')
    H.errors_with(function() D.ZippedImageDataset(nil) end, 'non-empty string')
    H.errors_with(function() D.ZippedImageDataset(dir .. '/a.zip', 'float33') end, "dtype must be a dtype name")
    H.errors_with(function() D.ZippedImageDataset(dir .. '/a.zip', { dtyp = 'uint8' }) end, "unknown option 'dtyp'")
  end)
end)

describe('damaged archives and images', function()
  it('a file that is not a zip, and truncated archives, are errors naming the file', function()
    H.errors_with(function() D.ZippedImageDataset(dir .. '/rgb.png') end, 'rgb.png', 'not a valid npz/zip file')
    local whole = common.read_file(dir .. '/a.zip')
    for _, keep in ipairs({ 0, 10, 40, #whole - 30, #whole - 1 }) do
      local p = dir .. '/cut.zip'
      common.write_file(p, whole:sub(1, keep))
      H.errors_with(function()
        local ds = D.ZippedImageDataset(p)
        for i = 1, ds:len() do local _ = ds[i] end
      end, 'cut.zip')
    end
  end)

  it('a damaged member is a CRC or deflate error naming the member', function()
    local whole = common.read_file(dir .. '/a.zip')
    -- flip a byte inside rgb.png's stored data (after its 30-byte header and name)
    local at = 30 + #'rgb.png' + 40
    local bad = whole:sub(1, at - 1) .. string.char((whole:byte(at) + 1) % 256) .. whole:sub(at + 1)
    common.write_file(dir .. '/flip.zip', bad)
    local ds = D.ZippedImageDataset(dir .. '/flip.zip')
    H.errors_with(function() return ds[1] end, "member 'rgb.png'", 'CRC-32 mismatch')
    assert.same({ 1, 2, 3 }, ds[2].shape)   -- the other members still read
  end)

  it('a member that is not an image, or a damaged image, is an error naming it', function()
    Z.write(dir .. '/junk.zip', {
      { 'notes.txt', 'hello, not an image' },
      { 'half.png', files['rgb.png']:sub(1, 40) },
      { 'half.jpg', files['photo.jpg']:sub(1, 200), deflate = true },
    })
    local ds = D.ZippedImageDataset(dir .. '/junk.zip')
    H.errors_with(function() return ds[1] end, "member 'notes.txt'", 'neither a PNG nor a JPEG')
    H.errors_with(function() return ds[2] end, "member 'half.png'", 'PNG')
    H.errors_with(function() return ds[3] end, "member 'half.jpg'", 'JPEG')
  end)

  it('survives random byte damage (errors, never crashes)', function()
    local whole = common.read_file(dir .. '/a.zip')
    local seed = 12345
    local function rand(n)   -- a small LCG: the damage is the same on every run
      seed = (seed * 1103515245 + 12345) % 2147483648
      return seed % n
    end
    local failures, reads = 0, 0
    for _ = 1, 150 do
      local bytes = { whole:byte(1, -1) }
      for _ = 1, 1 + rand(3) do
        local k = 1 + rand(#bytes)
        bytes[k] = rand(256)
      end
      local p = dir .. '/fuzz.zip'
      common.write_file(p, string.char(unpack(bytes)))
      local ok = pcall(function()
        local ds = D.ZippedImageDataset(p)
        for i = 1, ds:len() do local _ = ds[i]; reads = reads + 1 end
      end)
      if not ok then failures = failures + 1 end
    end
    assert.is_true(failures > 0)
    assert.is_true(reads > 0)
  end)
end)

describe('LabeledZippedImageDataset', function()
  it('reads "name label" lines naming members', function()
    H.write(dir .. '/labels.txt', 'photo.jpg 3\nrgb.png 0\n\nsub/gray.png -1\n')
    local ds = D.LabeledZippedImageDataset(dir .. '/a.zip', dir .. '/labels.txt')
    assert.equal(3, ds:len())
    local x, t = unpack(ds[1])
    assert.same({ 3, 8, 8 }, x.shape)
    assert.equal(3, t:item())
    assert.equal('int32', t.dtype)
    assert.equal(0, ds[2][2]:item())
    assert.equal(rgb_value(1, 1, 1), ds[2][1]:slice(1, 1, 1):item())
    assert.equal(-1, ds[3][2]:item())
    local d64 = D.LabeledZippedImageDataset(dir .. '/a.zip', { { 'rgb.png', 5 } }, 'float64', 'int64')
    assert.equal('float64', d64[1][1].dtype)
    assert.equal('int64', d64[1][2].dtype)
  end)

  it('reports bad label files and names missing from the archive', function()
    H.write(dir .. '/bad.txt', 'rgb.png 0\nrgb.png\n')
    H.errors_with(function() D.LabeledZippedImageDataset(dir .. '/a.zip', dir .. '/bad.txt') end,
      "line 2", "not 'path label'")
    H.write(dir .. '/missing.txt', 'rgb.png 0\nother.png 1\n')
    H.errors_with(function() D.LabeledZippedImageDataset(dir .. '/a.zip', dir .. '/missing.txt') end,
      "label entry 2 names 'other.png'", 'does not contain')
    H.errors_with(function() D.LabeledZippedImageDataset(dir .. '/a.zip', dir .. '/none.txt') end,
      'cannot open the list')
  end)
end)

describe('MultiZippedImageDataset', function()
  it('puts archives one after another', function()
    local ds = D.MultiZippedImageDataset({ dir .. '/a.zip', dir .. '/b.zip', dir .. '/c.zip' })
    assert.equal(6, ds:len())
    local shapes = {}
    for i = 1, 6 do shapes[i] = ds[i].shape end
    assert.same({ { 3, 4, 5 }, { 1, 2, 3 }, { 3, 8, 8 }, { 1, 2, 3 }, { 3, 4, 5 }, { 1, 2, 3 } }, shapes)
    assert.same(ds[5]:totable(), ds[1]:totable())
    assert.same({ 1, 2, 3 }, ds[-1].shape)
    H.errors_with(function() return ds[7] end, 'out of range')
    assert.equal(0, D.MultiZippedImageDataset({}):len())
    H.errors_with(function() D.MultiZippedImageDataset(dir .. '/a.zip') end, 'Lua array of paths')
  end)
end)

-- Specs for chainer.dataset: concat_examples, converters, dataset root and
-- download/cache helpers.
local chainer = require 'chainer'
local T = chainer.tensor
local DS = chainer.dataset
local H = require 'spec.dataset.helpers'
local concat = DS.concat_examples

describe('concat_examples', function()
  it('stacks tuple examples field by field (tensors and numbers)', function()
    local batch = {
      { T.array({ 1, 2 }), 0 },
      { T.array({ 3, 4 }), 1 },
      { T.array({ 5, 6 }), 2 },
    }
    local xs = concat(batch)
    assert.same({ { 1, 2 }, { 3, 4 }, { 5, 6 } }, xs[1]:totable())
    assert.equal('float32', xs[1].dtype)
    assert.same({ 0, 1, 2 }, xs[2]:totable())
    assert.equal('int32', xs[2].dtype)       -- integral numbers: labels
    local f = concat({ { 0.5 }, { 1.5 } })
    assert.equal('float32', f[1].dtype)
    assert.same({ true, false }, concat({ { true }, { false } })[1]:totable())
  end)

  it('stacks dict examples, single tensors and 0-d tensors', function()
    local d = concat({ { x = T.array({ 1 }), t = 3 }, { x = T.array({ 2 }), t = 4 } })
    assert.same({ { 1 }, { 2 } }, d.x:totable())
    assert.same({ 3, 4 }, d.t:totable())
    local s = concat({ T.array({ 1, 2 }, 'float64'), T.array({ 3, 4 }, 'float64') })
    assert.same({ 2, 2 }, s.shape)
    assert.equal('float64', s.dtype)
    local z = concat({ T.array(7, 'int64'), T.array(8, 'int64') })
    assert.same({ 7, 8 }, z:totable())
    -- non-contiguous examples (negative strides)
    local r = concat({ T.array({ 1, 2, 3 }):flip(0), T.array({ 4, 5, 6 }):flip(0) })
    assert.same({ { 3, 2, 1 }, { 6, 5, 4 } }, r:totable())
  end)

  it('pads variable-length fields with padding (a number or per field)', function()
    local batch = {
      { T.array({ 1, 2, 3 }, 'int32'), T.array({ { 1 } }) },
      { T.array({ 4 }, 'int32'), T.array({ { 2, 3 }, { 4, 5 } }) },
    }
    local p = concat(batch, nil, -1)
    assert.same({ { 1, 2, 3 }, { 4, -1, -1 } }, p[1]:totable())
    assert.same({ { { 1, -1 }, { -1, -1 } }, { { 2, 3 }, { 4, 5 } } }, p[2]:totable())
    local q = concat(batch, nil, { 0, 9 })
    assert.same({ { 1, 2, 3 }, { 4, 0, 0 } }, q[1]:totable())
    assert.same({ { 1, 9 }, { 9, 9 } }, q[2]:totable()[1])
    local dp = concat({ { w = T.array({ 1, 2 }) }, { w = T.array({ 3 }) } }, nil, { w = 0 })
    assert.same({ { 1, 2 }, { 3, 0 } }, dp.w:totable())
  end)

  it('moves to the requested device (-1 / cpu here)', function()
    local xs = concat({ { T.array({ 1 }) }, { T.array({ 2 }) } }, -1)
    assert.equal('cpu', xs[1].device)
    assert.equal('cpu', concat({ T.array({ 1 }) }, 'cpu').device)
    assert.equal('cpu', DS.to_device(-1, T.array({ 1 })).device)
    assert.equal(5, DS.to_device(nil, 5))
  end)

  it('reports empty batches and mismatched examples', function()
    H.errors_with(function() concat({}) end, 'concat_examples', 'empty')
    H.errors_with(function() concat(5) end, 'concat_examples', 'batch')
    H.errors_with(function() concat({ T.array({ 1, 2 }), T.array({ 1 }) }) end,
      'concat_examples', 'example 2', '(1,)', '(2,)', 'padding')
    H.errors_with(function() concat({ { T.array({ 1 }), 1 }, { T.array({ 1 }) } }) end, 'example 2', 'tuple')
    H.errors_with(function() concat({ { x = T.array({ 1 }) }, { y = T.array({ 1 }) } }) end, "field 'x'")
    H.errors_with(function() concat({ { 'a' }, { 'b' } }) end, 'string')
  end)

  it('ConcatWithAsyncTransfer and converter() behave as concat_examples', function()
    local conv = DS.ConcatWithAsyncTransfer()
    local xs = conv({ { T.array({ 1 }), 0 }, { T.array({ 2 }), 1 } }, -1)
    assert.same({ 0, 1 }, xs[2]:totable())
    assert.same({ { 1 }, { 2 } }, xs[1]:totable())
    local d = conv({ { a = T.array({ 1, 2 }) }, { a = T.array({ 3 }) } }, 'cpu', 0)
    assert.same({ { 1, 2 }, { 3, 0 } }, d.a:totable())
    local c = DS.converter(function(batch, device) return #batch end)
    assert.is_true(c.is_converter)
    assert.equal(2, c({ 1, 2 }, nil))
  end)
end)

describe('ConcatWithAsyncTransfer', function()
  it('sends to the host as often as asked (-1, cpu and nil are the host)', function()
    local conv = DS.ConcatWithAsyncTransfer()
    conv({ T.array({ 1 }), T.array({ 2 }) }, -1)
    assert.same({ { 1 }, { 2 } }, conv({ T.array({ 1 }), T.array({ 2 }) }, 'cpu'):totable())
    assert.same({ 3, 4 }, conv({ 3, 4 }):totable())
  end)

  it('refuses an empty batch and streams that are not streams', function()
    H.errors_with(function() DS.ConcatWithAsyncTransfer()({}, -1) end, 'ConcatWithAsyncTransfer: batch is empty')
    H.errors_with(function() DS.ConcatWithAsyncTransfer(7) end,
      'ConcatWithAsyncTransfer: stream must be a cuda.Stream or nil (got number)')
  end)

  it('needs a GPU to send to one', function()
    if require('chainer.cuda').available then return end
    H.errors_with(function() DS.ConcatWithAsyncTransfer()({ T.array({ 1 }) }, 0) end,
      'ConcatWithAsyncTransfer: @cupy:0 (cuda:0) asked for, but no GPU is available')
  end)
end)

describe('dataset root and caches', function()
  local dir
  setup(function() dir = H.tmpdir() end)
  teardown(function() H.rmdir(dir); DS.set_dataset_root(nil) end)

  it('get_dataset_root: set_dataset_root > CHAINER_DATASET_ROOT > ~/.chainer/dataset', function()
    H.with_env({ CHAINER_DATASET_ROOT = false }, function()
      assert.equal(os.getenv('HOME') .. '/.chainer/dataset', DS.get_dataset_root())
    end)
    H.with_env({ CHAINER_DATASET_ROOT = dir }, function()
      assert.equal(dir, DS.get_dataset_root())
      DS.set_dataset_root(dir .. '/other')
      assert.equal(dir .. '/other', DS.get_dataset_root())
      DS.set_dataset_root(nil)
      assert.equal(dir, DS.get_dataset_root())
      local d = DS.get_dataset_directory('pfnet/x')
      assert.equal(dir .. '/pfnet/x', d)
      assert.truthy(require('chainer._fs').is_dir(d))
    end)
  end)

  it('cache_or_load_file creates once (atomically) then loads', function()
    local path = dir .. '/c/data.npz'
    local created = 0
    local function creator(tmp)
      created = created + 1
      assert.are_not.equal(path, tmp)
      T.savez(tmp, { a = T.array({ 1, 2 }) })
      return 'made'
    end
    local function loader(p) return T.load_npz(p).a:totable() end
    assert.equal('made', DS.cache_or_load_file(path, creator, loader))
    assert.same({ 1, 2 }, DS.cache_or_load_file(path, creator, loader))
    assert.equal(1, created)
    -- a failing creator leaves nothing behind
    H.errors_with(function()
      DS.cache_or_load_file(dir .. '/c/fail.npz', function() error('boom') end, loader)
    end, 'boom')
    assert.is_false(H.exists(dir .. '/c/fail.npz'))
  end)

  it('cached_download fetches into <root>/_dl_cache/<md5 of url> (file:// URL, no network)', function()
    H.write(dir .. '/src.txt', 'payload')
    DS.set_dataset_root(dir .. '/root')
    local url = 'file://' .. dir .. '/src.txt'
    local p = DS.cached_download(url)
    assert.equal(dir .. '/root/_dl_cache/' .. require('chainer.dataset.md5')(url), p)
    local f = io.open(p, 'rb'); assert.equal('payload', f:read('*a')); f:close()
    os.remove(dir .. '/src.txt')
    assert.equal(p, DS.cached_download(url))   -- cached: not fetched again
    H.errors_with(function() DS.cached_download('file://' .. dir .. '/absent') end, 'cached_download',
      'cannot download')
    DS.set_dataset_root(nil)
  end)

  it('md5 matches RFC 1321 test vectors', function()
    local md5 = require 'chainer.dataset.md5'
    assert.equal('d41d8cd98f00b204e9800998ecf8427e', md5(''))
    assert.equal('900150983cd24fb0d6963f7d28e17f72', md5('abc'))
    assert.equal('57edf4a22be3c955ac49da2e2107b67a', md5(string.rep('1234567890', 8)))
  end)
end)

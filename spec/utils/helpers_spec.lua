-- chainer.utils' top-level helpers (Chainer 7.8.1's chainer.utils).
local chainer = require 'chainer'
local T = chainer.tensor
local utils = chainer.utils
local err_of = require('helpers').err_of

describe('chainer.utils.get_conv_outsize / get_deconv_outsize', function()
  it("gives Chainer's sizes (counted by sliding the window by hand)", function()
    -- the number of window positions, counted directly
    -- (cover_all: windows are added until one reaches the end of the input)
    local function count(size, k, s, p, cover_all, d)
      local dk, len, n, start = k + (k - 1) * (d - 1), size + 2 * p, 0, 0
      if cover_all then
        repeat n = n + 1; start = start + s until start - s + dk >= len
        return n
      end
      while start + dk <= len do n = n + 1; start = start + s end
      return n
    end
    for size = 5, 12 do
      for k = 1, 4 do
        for s = 1, 3 do
          for p = 0, 2 do
            for d = 1, 2 do
              if size + 2 * p >= k + (k - 1) * (d - 1) then
                assert.are.equal(count(size, k, s, p, false, d), utils.get_conv_outsize(size, k, s, p, false, d))
                assert.are.equal(count(size, k, s, p, true, d), utils.get_conv_outsize(size, k, s, p, true, d))
              end
            end
          end
        end
      end
    end
    assert.are.equal(3, utils.get_conv_outsize(7, 3, 2, 0))          -- defaults cover_all = false, d = 1
    assert.are.equal(4, utils.get_conv_outsize(8, 3, 2, 0, true))
  end)

  it('inverts the convolution: a deconvolution of the conv size gives back a size with that conv size', function()
    for size = 4, 10 do
      for k = 1, 4 do
        for s = 1, 3 do
          for p = 0, 1 do
            for _, cover_all in ipairs { false, true } do
              local out = utils.get_conv_outsize(size, k, s, p, cover_all)
              if out >= 1 then
                local back = utils.get_deconv_outsize(out, k, s, p, cover_all)
                assert.are.equal(out, utils.get_conv_outsize(back, k, s, p, cover_all))
              end
            end
          end
        end
      end
    end
    assert.are.equal(9, utils.get_deconv_outsize(4, 3, 2, 0))        -- 2*3 + 3
    assert.are.equal(8, utils.get_deconv_outsize(4, 3, 2, 0, true))  -- 2*3 + 3 - 2 + 1
    assert.are.equal(11, utils.get_deconv_outsize(4, 3, 2, 0, false, 2))
  end)

  it('is the formula the convolution functions use', function()
    local F = chainer.functions
    local x = T.zeros({ 1, 1, 9, 7 })
    local W = T.zeros({ 2, 1, 3, 2 })
    local y = F.convolution_2d(x, W, nil, 2, 1, { cover_all = true, dilate = 2 })
    assert.are.same({ 1, 2, utils.get_conv_outsize(9, 3, 2, 1, true, 2), utils.get_conv_outsize(7, 2, 2, 1, true, 2) },
      y.shape)
    local z = F.deconvolution_2d(T.zeros({ 1, 2, 4, 3 }), T.zeros({ 2, 1, 3, 3 }), nil, 2, 1)
    assert.are.same({ 1, 1, utils.get_deconv_outsize(4, 3, 2, 1), utils.get_deconv_outsize(3, 3, 2, 1) }, z.shape)
  end)

  it('rejects bad arguments by name', function()
    assert.has_error(function() utils.get_conv_outsize(5, 0, 1, 0) end)
    assert.matches('get_conv_outsize: s must be an integer >= 1 %(got 0%)', err_of(utils.get_conv_outsize, 5, 3, 0, 0))
    assert.matches('get_deconv_outsize: cover_all must be a boolean', err_of(utils.get_deconv_outsize, 5, 3, 1, 0, 'yes'))
    assert.matches('size must be an integer', err_of(utils.get_conv_outsize, 5.5, 3, 1, 0))
  end)
end)

describe('chainer.utils.force_array / force_type', function()
  it('makes a 0-d tensor of a number and passes tensors through', function()
    local a = utils.force_array(2.5)
    assert.is_true(T.is_tensor(a))
    assert.are.equal(0, a.ndim)
    assert.are.equal(2.5, a:item())
    assert.are.equal(T.default_float, a.dtype)
    assert.are.equal('float64', utils.force_array(1, 'float64').dtype)
    local x = T.array({ 1, 2 }, 'float32')
    assert.is_true(rawequal(x, utils.force_array(x)))
    assert.is_true(rawequal(x, utils.force_array(x, 'float32')))
    local y = utils.force_array(x, 'int32')
    assert.are.equal('int32', y.dtype)
    assert.are.same({ 1, 2 }, y:totable())
    assert.matches('force_array: x must be a number, a boolean or a tensor %(got table%)',
      err_of(utils.force_array, { 1, 2 }))
  end)

  it("converts scalars as the dtype's scalar type would", function()
    assert.are.equal(2, utils.force_type('int32', 2.7))
    assert.are.equal(-2, utils.force_type('int64', -2.7))
    assert.are.equal(44, utils.force_type('uint8', 300))      -- wraps as the C type does
    assert.are.equal(0.1, utils.force_type('float64', 0.1))
    local f = utils.force_type('float32', 0.1)
    assert.are_not.equal(0.1, f)
    assert.is_true(math.abs(f - 0.1) < 1e-8)
    assert.are.equal(1, utils.force_type('float16', 1))
    assert.are.equal(true, utils.force_type('bool', 3))
    local x = T.array({ 1.5, 2.5 }, 'float64')
    assert.is_true(rawequal(x, utils.force_type('float64', x)))
    assert.are.equal('float32', utils.force_type('float32', x).dtype)
    assert.matches('unknown dtype', err_of(utils.force_type, 'floaty', 1))
  end)
end)

describe('chainer.utils.size_of_shape / sum_to', function()
  it('multiplies the extents', function()
    assert.are.equal(24, utils.size_of_shape({ 2, 3, 4 }))
    assert.are.equal(1, utils.size_of_shape({}))
    assert.are.equal(0, utils.size_of_shape({ 3, 0 }))
    assert.are.equal(T.zeros({ 3, 5 }).size, utils.size_of_shape(T.zeros({ 3, 5 }).shape))
    assert.matches('size_of_shape: shape%[2%] must be a non%-negative integer %(got %-1%)',
      err_of(utils.size_of_shape, { 2, -1 }))
  end)

  it('sums leading axes and the axes of extent 1, as broadcasting in reverse', function()
    local x = T.arange(24, 'float64'):reshape({ 2, 3, 4 })
    local y = utils.sum_to(x, { 3, 1 })
    assert.are.same({ 3, 1 }, y.shape)
    -- by hand: element (j) = sum over i, k of x[i][j][k]
    for j = 0, 2 do
      local s = 0
      for i = 0, 1 do for k = 0, 3 do s = s + i * 12 + j * 4 + k end end
      assert.are.equal(s, y:get(j, 0))
    end
    assert.is_true(rawequal(x, utils.sum_to(x, { 2, 3, 4 })))
    assert.matches('use chainer.functions.sum_to for Variables', err_of(utils.sum_to, chainer.Variable(x), { 3, 1 }))
  end)
end)

describe('chainer.utils.experimental', function()
  local E = require 'chainer.utils.experimental'
  local captured
  before_each(function()
    E.reset()
    captured = {}
    E.output = { write = function(_, ...) for _, s in ipairs { ... } do captured[#captured + 1] = s end end }
  end)
  after_each(function() E.output = io.stderr; chainer.disable_experimental_feature_warning = nil end)

  it("warns once per name with Chainer's message", function()
    assert.is_true(utils.experimental('chainer.links.Foo'))
    assert.is_false(utils.experimental('chainer.links.Foo'))
    assert.is_true(utils.experimental('chainer.functions.bar'))
    local text = table.concat(captured)
    assert.matches('FutureWarning: chainer.links.Foo is experimental. Signatures and behaviors may change in the future.',
      text, 1, true)
    local _, n = text:gsub('chainer.links.Foo', '')
    assert.are.equal(1, n)
  end)

  it('is silent when chainer.disable_experimental_feature_warning is set', function()
    chainer.disable_experimental_feature_warning = true
    assert.is_false(utils.experimental('chainer.links.Baz'))
    assert.are.equal(0, #captured)
    assert.matches('experimental: api_name must be a string', err_of(utils.experimental, 3))
  end)
end)

describe('chainer.utils.tempdir', function()
  local fs = require 'chainer._fs'

  it('creates a private directory for the scope and removes it with its content', function()
    local seen
    local a, b = utils.tempdir(function(path)
      seen = path
      assert.is_true(fs.is_dir(path))
      local f = assert(io.open(path .. '/x.txt', 'w')); f:write('hi'); f:close()
      fs.mkdir_p(path .. '/sub/deeper')
      return 1, 2
    end)
    assert.are.same({ 1, 2 }, { a, b })
    assert.is_false(fs.is_dir(seen))
  end)

  it('takes prefix, suffix and dir, and removes the directory when the scope raises', function()
    utils.tempdir(function(parent)
      local seen
      local ok, err = pcall(utils.tempdir, { prefix = 'pre-', suffix = '.d', dir = parent }, function(path)
        seen = path
        error('boom')
      end)
      assert.is_false(ok)
      assert.matches('boom', err)
      assert.matches('^' .. parent:gsub('%p', '%%%0') .. '/pre%-[%w_]+%.d$', seen)
      assert.is_false(fs.is_dir(seen))
      assert.are.same({}, fs.listdir(parent))
    end)
  end)

  it('rejects unknown options and a missing scope', function()
    assert.matches("unknown option 'prefx'", err_of(utils.tempdir, { prefx = 'a' }, function() end))
    assert.matches('tempdir: pass the scope as a function', err_of(utils.tempdir, {}))
    assert.matches('tempdir: cannot create a directory in /nonexistent/place', err_of(utils.tempdir, { dir = '/nonexistent/place' }, function() end))
  end)
end)

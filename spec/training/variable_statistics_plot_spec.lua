-- VariableStatisticsPlot: one figure (a column per kind, rows for mean/std
-- and percentiles) at figsize x 100 pixels, statistics checked against
-- hand-computed values, and a reservoir of at most max_sample_size records.
local chainer = require 'chainer'
local T = require 'chainer.tensor'
local extensions = require 'chainer.training.extensions'
local plot = require 'chainer.training.extensions._plot'
local fs = require 'chainer._fs'
local H = require 'training.helpers'

local VSP = extensions.VariableStatisticsPlot

-- A trainer as far as the extension looks at it.
local function fake_trainer(out)
  return { out = out, updater = { iteration = 0, epoch = 0, epoch_detail = 0, is_new_epoch = false } }
end

local function count(s, pat)
  local n = 0
  for _ in s:gmatch(pat) do n = n + 1 end
  return n
end

-- Width and height from a PNG's IHDR chunk (big-endian at bytes 17-24).
local function png_size(bytes)
  local function u32(i)
    local a, b, c, d = bytes:byte(i, i + 3)
    return ((a * 256 + b) * 256 + c) * 256 + d
  end
  return u32(17), u32(21)
end

describe('VariableStatisticsPlot', function()
  it('records the mean, std and percentiles of the data and the gradients', function()
    local v = chainer.Variable(T.array({ 1, 2, 3, 4, 5 }, 'float32'))
    v.grad = T.array({ -2, 0, 0, 0, 2 }, 'float32')
    local ext = VSP(v, { percentile_sigmas = { 0, 25, 50, 100 }, trigger = function() return false end })
    local tr = fake_trainer(H.tmpdir())
    tr.updater.iteration = 7
    ext(tr)
    local s = ext:samples()[1]
    assert.are.equal(7, s.x)
    -- by hand: mean 3, population variance (4+1+0+1+4)/5 = 2
    assert.near(3, s.data.mean, 1e-12)
    assert.near(math.sqrt(2), s.data.std, 1e-12)
    -- linear interpolation at (n-1) q / 100: positions 0, 1, 2, 4
    assert.are.same({ 1, 2, 3, 5 }, s.data.percentiles)
    assert.near(0, s.grad.mean, 1e-12)
    assert.near(math.sqrt(8 / 5), s.grad.std, 1e-12)
    assert.are.same({ -2, 0, 0, 2 }, s.grad.percentiles)
    H.rmdir(tr.out)
  end)

  it('draws one figure: a column per kind, a mean/std row and a percentile row, figsize x 100 pixels', function()
    local out = H.tmpdir()
    local link = chainer.links.Linear(3, 2)
    local ext = VSP(link, { figsize = { 3, 2 }, trigger = function() return true end })
    local tr = fake_trainer(out)
    for i = 1, 3 do
      tr.updater.iteration = i
      ext(tr)
    end
    ext:finalize()
    local svg = H.read(out .. '/statistics.svg')
    assert.truthy(svg:find('width="300" height="200"', 1, true))
    assert.are.equal(4, count(svg, 'fill="none" stroke="black"'))   -- four panel frames
    assert.are.equal(1, count(svg, '>data<'))
    assert.are.equal(1, count(svg, '>grad<'))
    assert.are.equal(2, count(svg, '>mean, std<'))
    assert.are.equal(2, count(svg, '>percentile<'))
    -- no per-kind files any more
    assert.is_false(fs.exists(out .. '/statistics_data.svg'))
    assert.is_false(fs.exists(out .. '/statistics_grad.png'))
    if plot.have_gnuplot() then
      local w, h = png_size(H.read(out .. '/statistics.png'))
      assert.are.same({ 300, 200 }, { w, h })
    end
    H.rmdir(out)
  end)

  it("leaves out the rows and columns that are switched off (Chainer's positional order)", function()
    local out = H.tmpdir()
    local v = chainer.Variable(T.array({ 1, 2 }, 'float32'))
    -- targets, max_sample_size, report_data, report_grad, plot_mean, plot_std, percentile_sigmas, trigger
    local ext = VSP(v, 10, true, false, true, false, {}, function() return true end, 'only_mean.png')
    local tr = fake_trainer(out)
    tr.updater.iteration = 1
    ext(tr)
    local svg = H.read(out .. '/only_mean.svg')
    assert.are.equal(1, count(svg, 'fill="none" stroke="black"'))
    assert.are.equal(1, count(svg, '>mean<'))
    assert.are.equal(0, count(svg, '>grad<'))
    assert.truthy(svg:find('width="640" height="480"', 1, true))   -- matplotlib's default 6.4 x 4.8
    H.rmdir(out)
  end)

  it('keeps at most max_sample_size records, ordered by iteration', function()
    local v = chainer.Variable(T.array({ 1, 2 }, 'float32'))
    local ext = VSP(v, { max_sample_size = 3, trigger = function() return false end })
    local tr = fake_trainer('/nonexistent')
    for i = 1, 3 do
      tr.updater.iteration = i
      ext(tr)
    end
    local xs = {}
    for i, s in ipairs(ext:samples()) do xs[i] = s.x end
    assert.are.same({ 1, 2, 3 }, xs)   -- not full yet: every record kept
    for i = 4, 50 do
      tr.updater.iteration = i
      ext(tr)
    end
    local seen, last = {}, 0
    local samples = ext:samples()
    assert.are.equal(3, #samples)
    for _, s in ipairs(samples) do
      assert.is_true(s.x > last and s.x <= 50)
      assert.is_nil(seen[s.x])
      seen[s.x], last = true, s.x
    end
  end)

  it('refuses targets without Variables, nothing to plot, and bad figsize or marker', function()
    local v = chainer.Variable(T.array({ 1 }, 'float32'))
    assert.has_error(function() VSP({}) end,
      'VariableStatisticsPlot: targets must hold at least one Variable (a Variable, a Link or a list of them)')
    assert.has_error(function() VSP(v, { plot_mean = false, plot_std = false, percentile_sigmas = {} }) end,
      'VariableStatisticsPlot: nothing to plot (plot_mean, plot_std and percentile_sigmas all off)')
    assert.has_error(function() VSP(v, { figsize = { 4 } }) end,
      'VariableStatisticsPlot: figsize must be {width, height} in inches, both positive')
    assert.has_error(function() VSP(v, { marker = '*' }) end,
      "VariableStatisticsPlot: marker must be one of 'x', '+', 'o', 's', '.' (got *)")
    assert.has_error(function() VSP(v, { max_sample_size = 0 }) end,
      'VariableStatisticsPlot: max_sample_size must be a positive integer (got 0)')
    assert.has_error(function() VSP(v, { colour = 'red' }) end)
  end)
end)

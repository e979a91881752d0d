-- Specs for chainer.dataset.TabularDataset and chainer.dataset.tabular.
-- Expected values come from a plain Lua table of rows (the reference):
-- every view is compared with what simple loops over that table give.
local chainer = require 'chainer'
local T = chainer.tensor
local DS = chainer.dataset
local tabular = DS.tabular
local H = require 'spec.dataset.helpers'

-- A 4-row, 3-column dataset whose cell (row r, column j) is 3r + j,
-- implemented from scratch as Chainer's docstring example.
local MyDataset = DS.TabularDataset:extend('MyDataset')
function MyDataset:init(mode, n) self.keys = { 'a', 'b', 'c' }; self.mode = mode or 'tuple'; self.n = n or 4 end
function MyDataset:len() return self.n end
function MyDataset:get_examples(indices, key_indices)
  local rows = indices
  if rows == nil then
    rows = {}
    for r = 1, self.n do rows[r] = r - 1 end
  end
  local ks = key_indices or { 0, 1, 2 }
  local out = {}
  for k, j in ipairs(ks) do
    local col = {}
    for p, r in ipairs(rows) do col[p] = 3 * r + j end
    out[k] = T.array(col, 'int64')
    if #rows == 0 then out[k] = T.empty({ 0 }, 'int64') end
  end
  return out
end

-- The reference: cell(r, key) for 0-based row r.
local COL = { a = 0, b = 1, c = 2 }
local function cell(r, key) return 3 * r + COL[key] end

local function num(v) return T.is_tensor(v) and v:item() or v end

local function values(col)
  if T.is_tensor(col) then return col:totable() end
  local out = {}
  for k, v in ipairs(col) do out[k] = num(v) end
  return out
end

local function expect_column(rows, key, col)
  local want = {}
  for p, r in ipairs(rows) do want[p] = cell(r, key) end
  assert.same(want, values(col))
end

describe('TabularDataset', function()
  local ds = MyDataset()

  it('has len, keys, mode and 1-based examples in each mode', function()
    assert.equal(4, ds:len())
    assert.same({ 'a', 'b', 'c' }, ds.keys)
    assert.equal('tuple', ds.mode)
    local ex = ds[2]
    assert.same({ 3, 4, 5 }, { num(ex[1]), num(ex[2]), num(ex[3]) })
    local d = ds:asdict()[4]
    assert.same({ 9, 10, 11 }, { num(d.a), num(d.b), num(d.c) })
    assert.equal('dict', ds:asdict().mode)
    assert.equal('tuple', ds:asdict():astuple().mode)
    assert.equal('dict', ds:as_dict().mode)
    assert.equal('tuple', ds:as_dict():as_tuple().mode)
    assert.equal(11, num(ds[-1][3]))
    H.errors_with(function() return ds[0] end, 'out of range', 'ds[1]')
    H.errors_with(function() return ds[5] end, 'out of range')
  end)

  it('fetch returns columns by mode', function()
    local f = ds:fetch()
    expect_column({ 0, 1, 2, 3 }, 'a', f[1])
    expect_column({ 0, 1, 2, 3 }, 'c', f[3])
    local fd = ds:asdict():fetch()
    expect_column({ 0, 1, 2, 3 }, 'b', fd.b)
    expect_column({ 0, 1, 2, 3 }, 'c', ds:slice(nil, 'c'):fetch())
  end)

  it("slices as Chainer's docstring: ds.slice[[3, 2], ('c', 0)]", function()
    local view = ds:slice(T.ints { 3, 2 }, { 'c', 0 })
    assert.equal(2, view:len())
    assert.same({ 'c', 'a' }, view.keys)
    local t = view:astuple()[2]
    assert.same({ 8, 6 }, { num(t[1]), num(t[2]) })
    local d = view:asdict()[2]
    assert.same({ 6, 8 }, { num(d.a), num(d.c) })
  end)

  local row_cases = {
    { 'nil', nil, { 0, 1, 2, 3 } },
    { '{1, 3}', { 1, 3 }, { 1, 2 } },
    { '{nil, nil, -1}', { nil, nil, -1 }, { 3, 2, 1, 0 } },
    { '{nil, nil, 2}', { nil, nil, 2 }, { 0, 2 } },
    { "'1:'", '1:', { 1, 2, 3 } },
    { "'::-2'", '::-2', { 3, 1 } },
    { "'-3:-1'", '-3:-1', { 1, 2 } },
    { '{10, 20} (clamped)', { 10, 20 }, {} },
    { 'T.ints{-1, 0, 0}', T.ints { -1, 0, 0 }, { 3, 0, 0 } },
    { 'int32 positions', T.array({ 2, 1 }, 'int32'), { 2, 1 } },
    { 'Lua mask', { true, false, false, true }, { 0, 3 } },
    { 'bool tensor', T.array({ false, true, true, false }, 'bool'), { 1, 2 } },
    { 'empty positions', T.ints {}, {} },
  }
  for _, case in ipairs(row_cases) do
    it('slices rows by ' .. case[1], function()
      local v = ds:slice(case[2], { 'b', 'a' })
      assert.equal(#case[3], v:len())
      local f = v:fetch()
      expect_column(case[3], 'b', f[1])
      expect_column(case[3], 'a', f[2])
      for i, r in ipairs(case[3]) do assert.equal(cell(r, 'b'), num(v[i][1])) end
    end)
  end

  it('keys: one key gives mode nil, a list keeps dict mode, negatives count from the end', function()
    assert.is_nil(ds:slice(nil, 'b').mode)
    assert.is_nil(ds:slice(nil, -1).mode)
    assert.same({ 'c' }, ds:slice(nil, -1).keys)
    assert.equal(7, num(ds:slice(nil, 'b')[3]))
    assert.equal('tuple', ds:slice(nil, { 'b' }).mode)
    assert.equal('dict', ds:asdict():slice(nil, { 'b', 2 }).mode)
    assert.same({ 'b', 'c' }, ds:asdict():slice(nil, { 'b', 2 }).keys)
    assert.equal('tuple', ds:slice('1:').mode)
  end)

  it('composes slices of slices', function()
    local v = ds:slice('::-1', { 'c', 'a', 'b' }):slice(T.ints { 0, 2 }, { 2, 0 })
    -- rows: reversed [3, 2, 1, 0] then positions 0, 2 -> 3, 1; keys: (c, a, b)[2, 0] -> b, c
    assert.same({ 'b', 'c' }, v.keys)
    local f = v:fetch()
    expect_column({ 3, 1 }, 'b', f[1])
    expect_column({ 3, 1 }, 'c', f[2])
    local w = ds:slice('1:'):slice('1:'):slice({ nil, nil, -1 })
    expect_column({ 3, 2 }, 'a', w:fetch()[1])
  end)

  it('reports bad rows and keys clearly', function()
    H.errors_with(function() ds:slice(2) end, 'slice: rows must be', 'got number', 'ds[i]')
    H.errors_with(function() ds:slice({ true, false }) end, 'mask has 2 entries', '4 rows')
    H.errors_with(function() ds:slice(T.ints { 4 }) end, 'slice: the rows tensor', 'out of bounds')
    H.errors_with(function() ds:slice(T.array({ 1.5 })) end, 'integer positions or booleans', 'float32')
    H.errors_with(function() ds:slice({ 1, 2, 0 }) end, 'step must not be zero')
    H.errors_with(function() ds:slice({ 0.5 }) end, 'expected an integer or nil', 'T.ints')
    H.errors_with(function() ds:slice('1:2, 3') end, 'must be one slice')
    H.errors_with(function() ds:slice(nil, 'z') end, "no key 'z'", 'a, b, c')
    H.errors_with(function() ds:slice(nil, 3) end, 'key position 3 is out of range', '0..2')
    H.errors_with(function() ds:slice(nil, { true }) end, 'a name or a 0-based position')
  end)

  it('join puts columns side by side; mode is the first non-nil mode', function()
    local extra = tabular.from_data({ 'd', { 'w', 'x', 'y', 'z' } })
    local j = ds:slice(nil, 'a'):join(extra, ds:asdict():slice(nil, { 'c' }))
    assert.same({ 'a', 'd', 'c' }, j.keys)
    assert.equal('dict', j.mode)
    local e = j[3]
    assert.same({ 6, 'y', 8 }, { num(e.a), e.d, num(e.c) })
    local part = j:slice(T.ints { 1 }, { 'c', 'd', 'c' }):fetch()
    assert.same({ 5 }, values(part.c))
    assert.same({ 'x' }, part.d)
    assert.equal('tuple', ds:slice(nil, 'a'):join(extra).mode)
    H.errors_with(function() ds:join(ds) end, "key 'a'", 'unique')
    H.errors_with(function() ds:join(tabular.from_data({ 'z', { 1 } })) end, 'same length')
    H.errors_with(function() ds:join({}) end, 'dataset 2 is not a TabularDataset')
  end)

  it('concat stacks rows in order, for any row selection', function()
    local c = ds:concat(ds:slice('::-1'), MyDataset('tuple', 2))
    assert.equal(10, c:len())
    local all = { 0, 1, 2, 3, 3, 2, 1, 0, 0, 1 }
    expect_column(all, 'b', c:fetch()[2])
    local picks = { { T.ints { 9, 0, 5, 4 }, { 1, 0, 2, 3 } }, { '::-3', { 1, 1, 3, 0 } }, { '2:6', { 2, 3, 3, 2 } },
      { T.ints { 8 }, { 0 } }, { T.ints {}, {} } }
    for _, pk in ipairs(picks) do
      local v = c:slice(pk[1], { 'c', 'a' })
      local f = v:fetch()
      expect_column(pk[2], 'c', f[1])
      expect_column(pk[2], 'a', f[2])
    end
    assert.equal(cell(1, 'c'), num(c[7][3]))   -- position 6
    H.errors_with(function() ds:concat(ds:slice(nil, { 'b', 'a', 'c' })) end, 'same keys')
  end)

  it('concat of list columns gives lists', function()
    local a = tabular.from_data({ 's', { 'p', 'q' } })
    local b = tabular.from_data({ 's', { 'r' } })
    local c = a:concat(b, a)
    assert.same({ 'p', 'q', 'r', 'p', 'q' }, c:fetch())
    assert.same({ 'q', 'p', 'r' }, c:slice(T.ints { 4, 3, 2 }):fetch())
  end)

  it('transform: per-row function, mode from what it returns', function()
    local t = ds:transform({ 'x', 'y' }, function(a, b, c) return { num(a) + num(b), num(c) * 2 } end)
    assert.equal('tuple', t.mode)
    assert.same({ 'x', 'y' }, t.keys)
    assert.same({ 7, 10 }, t[2])
    local f = t:slice('1:3', 'y'):fetch()
    assert.same({ 10, 16 }, f)
    local td = ds:asdict():transform({ 'sum' }, function(e) return { sum = num(e.a) + num(e.b) + num(e.c) } end)
    assert.equal('dict', td.mode)
    assert.same({ sum = 30 }, td[4])
    local single = ds:slice(nil, 'a'):transform('sq', function(a) return num(a) * num(a) end)
    assert.is_nil(single.mode)
    assert.same({ 0, 9, 36, 81 }, single:fetch())
  end)

  it('transform errors: changing return type, missing keys, no function', function()
    local flip = ds:transform('x', function(a) if num(a) == 0 then return 1 end return { 1 } end)
    H.errors_with(function() flip:fetch() end, 'transform must not change its return type')
    local short = ds:transform({ 'x', 'y' }, function(a) return { a } end)
    H.errors_with(function() short:fetch() end, "no value for key 'y'")
    H.errors_with(function() ds:transform('x', 3) end, 'transform: expected a function')
    H.errors_with(function() ds:transform(3, print) end, 'keys must be a name')
    H.errors_with(function() return MyDataset('tuple', 0):transform('x', print).mode end, 'empty dataset')
  end)

  it('transform_batch: whole columns, length kept', function()
    local tb = ds:transform_batch({ 'p', 'q' }, function(a, b, c) return { a + b, c - a } end)
    assert.equal('tuple', tb.mode)
    local f = tb:slice(T.ints { 3, 1 }):fetch()
    assert.same({ 19, 7 }, f[1]:totable())
    assert.same({ 2, 2 }, f[2]:totable())
    local bad = ds:transform_batch('p', function(a) return a:slice({ 0, 1 }) end)
    H.errors_with(function() bad:fetch() end, 'must not change the length', 'expected 4')
    local td = ds:asdict():transform_batch({ 'm' }, function(e) return { m = e.a * e.b } end)
    assert.equal('dict', td.mode)
    assert.same({ 0, 12, 42, 90 }, td:fetch().m:totable())
  end)

  it('convert stacks columns; with_converter replaces it', function()
    local lists = tabular.from_data { { 'x', { 1.5, 2.5 } }, { 'y', { 1, 2 } } }
    local arr = lists:convert(lists:fetch())
    assert.equal('float32', arr[1].dtype)
    assert.equal('int32', arr[2].dtype)
    assert.same({ 1, 2 }, arr[2]:totable())
    local wc = ds:with_converter(function(a, b, c) return { a + b + c } end)
    assert.same({ 3, 12, 21, 30 }, wc:convert(wc:fetch())[1]:totable())
    local wd = ds:asdict():with_converter(function(d) return d.a end)
    assert.same({ 0, 3, 6, 9 }, wd:convert(wd:fetch()):totable())
    -- views keep the converter of the dataset they come from
    local v = wd:slice('1:')
    assert.same({ 3, 6, 9 }, v:convert(v:fetch()):totable())
    H.errors_with(function() ds:with_converter('no') end, 'converter must be a function')
    -- a class that defines convert keeps it under views, joins and concats
    local Own = MyDataset:extend('Own')
    function Own:convert(data) return 'own ' .. #data end
    assert.equal('own 2', Own():slice(nil, { 'a', 'b' }):convert({ 1, 2 }))
    assert.equal('own 3', Own():concat(ds):convert({ 1, 2, 3 }))
  end)

  it('iterators gather batches; concat_examples stacks them', function()
    local it = chainer.iterators.SerialIterator(ds:asdict(), 3, { shuffle = false, ['repeat'] = false })
    local b = it:next()
    assert.equal(3, #b)
    assert.equal(7, num(b[3].b))
    local arrays = DS.concat_examples(b)
    expect_column({ 0, 1, 2 }, 'c', arrays.c)
    local t = ds:transform({ 's' }, function(a) return { num(a) * 10 } end)
    local it2 = chainer.iterators.SerialIterator(t, 2, { shuffle = false })
    it2:next()
    local b2 = it2:next()
    assert.same({ { 60 }, { 90 } }, b2)
  end)

  it('user classes must define keys, get_examples and a mode when they have several keys', function()
    local NoKeys = DS.TabularDataset:extend('NoKeys')
    function NoKeys:len() return 1 end
    H.errors_with(function() return NoKeys().keys end, 'NoKeys defines no keys')
    local NoMode = DS.TabularDataset:extend('NoMode')
    function NoMode:init() self.keys = { 'a', 'b' } end
    function NoMode:len() return 1 end
    function NoMode:get_examples() return { { 1 }, { 2 } } end
    H.errors_with(function() return NoMode()[1] end, 'NoMode has 2 keys but no mode')
    local BadCols = DS.TabularDataset:extend('BadCols')
    function BadCols:init() self.keys = { 'a' } end
    function BadCols:len() return 1 end
    function BadCols:get_examples() return { { 1 }, { 2 } } end
    H.errors_with(function() return BadCols()[1] end, 'returned 2 columns for 1 requested keys')
    local Bare = DS.TabularDataset:extend('Bare')
    function Bare:init() self.keys = { 'a' } end
    function Bare:len() return 1 end
    H.errors_with(function() return Bare()[1] end, 'get_examples is not implemented')
  end)
end)

describe('tabular.from_data', function()
  it("follows Chainer's docstring examples", function()
    assert.equal(0, tabular.from_data({ 0, 1, 2 })[1])
    local d = tabular.from_data { { 'a', { 0, 1, 2 } }, { 'b', { 3, 4, 5 } } }
    assert.same({ 'a', 'b' }, d.keys)
    assert.same({ 0, 3 }, d[1])
    local dd = tabular.from_data { a = { 0, 1, 2 }, b = { 3, 4, 5 } }
    assert.same({ a = 0, b = 3 }, dd[1])
    local sq = tabular.from_data({ 'a', function(i) return i * i end }, { size = 10 })
    assert.equal(25, sq[6])   -- row 5
    assert.equal(10, sq:len())
  end)

  it('tensor columns, unnamed columns, multi-key functions, DelegateDataset', function()
    local x = T.arange(6, 'float32'):reshape { 3, 2 }
    local a = tabular.from_data(x)
    assert.is_nil(a.mode)
    assert.same({ 4, 5 }, a[3]:totable())
    local mixed = tabular.from_data { x, { 'n', { 'u', 'v', 'w' } } }
    assert.equal('tuple', mixed.mode)
    assert.equal(2, #mixed.keys)
    assert.equal('v', mixed[2][2])
    local MyDelegate = tabular.DelegateDataset:extend('MyDelegate')
    function MyDelegate:init()
      MyDelegate.super.init(self, tabular.from_data {
        { 'a', T.arange(10, 'int64') },
        { 'b', function(i) return 'b[' .. i .. ']' end },
        { 'c', { 3, 1, 4, 5, 9, 2, 6, 8, 7, 0 } },
        { { 'd', 'e' }, function(i) return { d = 'd[' .. i .. ']', e = 'e[' .. i .. ']' } end },
      })
    end
    local m = MyDelegate()
    assert.equal(10, m:len())
    assert.same({ 'a', 'b', 'c', 'd', 'e' }, m.keys)
    local e = m[1]
    assert.same({ 0, 'b[0]', 3, 'd[0]', 'e[0]' }, { num(e[1]), e[2], e[3], e[4], e[5] })
    assert.same({ 'e[7]', 'd[2]' }, { m:slice(T.ints { 7 }, 'e'):fetch()[1], m[3][4] })
  end)

  it('reports what it cannot read', function()
    H.errors_with(function() tabular.from_data(print) end, 'needs key(s)')
    H.errors_with(function() tabular.from_data({ 'a', print }) end, 'size must be given')
    H.errors_with(function() tabular.from_data({ 1 }, { sizes = 1 }) end, "unknown option 'sizes'")
    H.errors_with(function() tabular.from_data({ 1 }, { size = -1 }) end, 'size must be a non-negative integer')
    H.errors_with(function() tabular.from_data(3) end, 'a column is a tensor, a Lua array or a function')
    H.errors_with(function() tabular.from_data { { 'a', { 1, 2 } }, { 'b', { 1 } } } end, 'same length')
  end)
end)

describe('Converter and converter()', function()
  it('concat_examples is a Converter; converter() is the decorator', function()
    assert.is_true(chainer.class.isinstance(DS.concat_examples, DS.Converter))
    local seen
    local conv = DS.converter()(function(batch, device)
      seen = device
      return DS.concat_examples_func(batch, device)
    end)
    assert.is_true(chainer.class.isinstance(conv, DS.Converter))
    local xs = conv({ { T.array({ 1 }), 0 }, { T.array({ 2 }), 1 } }, 'cpu')
    assert.equal(chainer.get_device('@numpy'), seen)
    assert.same({ 0, 1 }, xs[2]:totable())
    conv({ { 1 } }, nil)
    assert.is_nil(seen)
    H.errors_with(function() DS.converter()(5) end, 'converter: expected a function')
    H.errors_with(function() DS.Converter()({}, nil) end, 'must define __call')
  end)

  it('a Converter subclass and a decorated function drive StandardUpdater and Evaluator', function()
    local Double = DS.Converter:extend('Double')
    local calls = 0
    Double.__call = function(self, batch, device)
      calls = calls + 1
      local xs = DS.concat_examples(batch, device)
      return { xs[1] * 2, xs[2] }
    end
    local x = T.arange(8, 'float32'):reshape { 4, 2 }
    local t = T.array({ 0, 1, 0, 1 }, 'int32')
    local data = tabular.from_data { { 'x', x }, { 't', t } }
    local model = chainer.links.Classifier(chainer.links.Linear(2, 2))
    local opt = chainer.optimizers.SGD()
    opt:setup(model)
    local it = chainer.iterators.SerialIterator(data, 2, { shuffle = false })
    local upd = chainer.training.updaters.StandardUpdater(it, opt, { converter = Double() })
    upd:update()
    assert.equal(1, calls)
    local ev = chainer.training.extensions.Evaluator(
      chainer.iterators.SerialIterator(data, 2, { ['repeat'] = false, shuffle = false }), model,
      { converter = DS.converter()(function(b, d) calls = calls + 10; return DS.concat_examples(b, d) end) })
    local r = ev()
    assert.equal(21, calls)
    assert.is_number(r['main/loss'])
  end)
end)

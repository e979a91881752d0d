-- links/loss/loss.lua: CRF1d, NegativeSampling, BlackOut, BinaryHierarchicalSoftmax.
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local M = {}

-- CRF1d(n_label, {initial_cost = 0, transpose = false}): param cost (n_label, n_label).
local CRF1d = Link:extend('CRF1d')
function CRF1d:init(n_label, opts)
  opts = opts or {}
  if type(n_label) ~= 'number' then error('CRF1d: n_label must be a number', 3) end
  local ic = opts.initial_cost
  if ic == nil then ic = 0 end
  self.cost = U.param(I._get_initializer(ic, 'CRF1d'), { n_label, n_label })
end
-- forward(xs, ys, {reduce = 'mean'}): xs, ys Lua lists (time-major, batch sorted by length).
function CRF1d:forward(xs, ys, opts)
  return F.crf1d(self.cost, xs, ys, opts)
end
function CRF1d:argmax(xs) return F.argmax_crf1d(self.cost, xs) end
M.CRF1d = CRF1d

-- Sampler over counts^power (Chainer's WalkerAlias).
local function walker(counts, power)
  local WalkerAlias = require 'chainer.utils.walker_alias'
  local c = counts
  if T.is_tensor(c) then c = c:astype('float64'):reshape(-1):totable() end
  if type(c) ~= 'table' or #c == 0 then error('the counts must be a non-empty list or tensor', 4) end
  local p = {}
  for i = 1, #c do p[i] = c[i] ^ power end
  return WalkerAlias(p), #c
end

-- NegativeSampling(in_size, counts, sample_size, power = 0.75, dtype): W zeros (n_vocab, in_size).
local NegativeSampling = Link:extend('NegativeSampling')
function NegativeSampling:init(in_size, counts, sample_size, power, dtype)
  if type(power) == 'table' then power, dtype = power.power, power.dtype end
  self.sample_size = sample_size
  self.power = power or 0.75
  local sampler, n = walker(counts, self.power)
  rawset(self, 'sampler', sampler)
  self.W = U.param(I.Zero(dtype), { n, in_size })
end
-- forward(x, t, {reduce = 'sum'})
function NegativeSampling:forward(x, t, opts)
  return F.negative_sampling(x, t, self.W, self.sampler, self.sample_size, opts)
end
M.NegativeSampling = NegativeSampling

-- BlackOut(in_size, counts, sample_size): W (n_vocab, in_size) ~ LeCunNormal.
local BlackOut = Link:extend('BlackOut')
function BlackOut:init(in_size, counts, sample_size)
  self.sample_size = sample_size
  local sampler, n = walker(counts, 1)
  rawset(self, 'sampler', sampler)
  rawset(self, 'sample_data', nil)
  self.W = U.param(I.LeCunNormal(), { n, in_size })
end
function BlackOut:forward(x, t)
  local samples = rawget(self, 'sample_data')
  if samples == nil then
    samples = self.sampler:sample({ U.data(x).shape[1], self.sample_size })
  end
  return F.black_out(x, t, self.W, samples)
end
M.BlackOut = BlackOut

---------------------------------------------------------------------------
-- BinaryHierarchicalSoftmax(in_size, tree): tree is a nested pair of word
-- ids, e.g. {{3, 1}, {2, 0}}; W (n_internal_nodes, in_size).  forward(x, t)
-- returns the summed loss -sum log p(t_i | x_i).
---------------------------------------------------------------------------
local BHS = Link:extend('BinaryHierarchicalSoftmax')

local function parse_tree(tree)
  local next_id = 0
  local path, code = {}, {}
  local paths, codes = {}, {}
  local function walk(node)
    if type(node) == 'table' then
      if #node ~= 2 then error('BinaryHierarchicalSoftmax: all internal nodes must have two children', 4) end
      path[#path + 1] = next_id
      next_id = next_id + 1
      code[#code + 1] = 1.0
      walk(node[1])
      code[#code] = -1.0
      walk(node[2])
      path[#path] = nil
      code[#code] = nil
    else
      local p, c = {}, {}
      for i = 1, #path do p[i], c[i] = path[i], code[i] end
      paths[node], codes[node] = p, c
    end
  end
  walk(tree)
  return paths, codes, next_id
end

function BHS:init(in_size, tree)
  local paths, codes, n = parse_tree(tree)
  rawset(self, '_paths', paths)
  rawset(self, '_codes', codes)
  self.W = U.param(I.Uniform(1), { n, in_size })
end

function BHS:forward(x, t)
  local td = U.data(t)
  if td == nil or T.is_float_dtype(td.dtype) then
    error('BinaryHierarchicalSoftmax: t must be an integer tensor of word ids', 2)
  end
  local labels = td:reshape(-1):totable()
  local nodes, rows, signs = {}, {}, {}
  for i, w in ipairs(labels) do
    local p = self._paths[w]
    if p == nil then error('BinaryHierarchicalSoftmax: word id ' .. tostring(w) .. ' is not in the tree', 2) end
    local c = self._codes[w]
    for j = 1, #p do
      nodes[#nodes + 1] = p[j]
      rows[#rows + 1] = i - 1
      signs[#signs + 1] = c[j]
    end
  end
  local dtype = U.data(x).dtype
  if #nodes == 0 then return F.sum(F.reshape(x, { -1 }) * 0) end
  local wv = F.embed_id(T.array(nodes, 'int32'), self.W)      -- (M, in)
  local xv = F.embed_id(T.array(rows, 'int32'), x)            -- (M, in)
  local wx = F.sum(wv * xv, 1) * T.array(signs, dtype)
  return F.sum(F.softplus(-wx))
end

-- create_huffman_tree({[id] = count, ...}) -> nested pairs (ids ascending break ties as Chainer).
function BHS.create_huffman_tree(word_counts)
  local ids = {}
  for k in pairs(word_counts) do ids[#ids + 1] = k end
  if #ids == 0 then error('create_huffman_tree: empty word_counts', 2) end
  table.sort(ids)
  local q = {}
  for uid, w in ipairs(ids) do q[#q + 1] = { word_counts[w], uid, w } end
  local function less(a, b)
    if a[1] ~= b[1] then return a[1] < b[1] end
    return a[2] < b[2]
  end
  local next_uid = #ids + 1
  while #q >= 2 do
    table.sort(q, less)
    local a = table.remove(q, 1)
    local b = table.remove(q, 1)
    q[#q + 1] = { a[1] + b[1], next_uid, { a[3], b[3] } }
    next_uid = next_uid + 1
  end
  return q[1][3]
end
M.BinaryHierarchicalSoftmax = BHS

return M

-- links/loss/hierarchical_softmax.lua: L.BinaryHierarchicalSoftmax(in_size, tree).
-- tree is a nested pair of word ids, e.g. {{3, 1}, {2, 0}}; W
-- (n_internal_nodes, in_size) ~ U(-1, 1).  forward(x, t) returns the summed
-- loss -sum log p(t_i | x_i).  L.BinaryHierarchicalSoftmax.create_huffman_tree
-- builds a tree from word counts.
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local Link = require('chainer.link').Link
local args = require 'chainer._args'
local U = require 'chainer.links._util'
local I = require 'chainer.initializers'

local BHS = Link:extend('BinaryHierarchicalSoftmax')
local SIGNATURE = args.signature { 'in_size', 'tree' }

-- paths[id], codes[id]: the internal nodes from the root to word id and the
-- sign (+1 left, -1 right) taken at each; and the number of internal nodes.
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

function BHS:init(...)
  local a = args.parse('L.BinaryHierarchicalSoftmax', SIGNATURE, select('#', ...), ...)
  local paths, codes, n = parse_tree(a.tree)
  rawset(self, '_paths', paths)
  rawset(self, '_codes', codes)
  self.W = U.param(I.Uniform(1), { n, a.in_size })
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

return { BinaryHierarchicalSoftmax = BHS }

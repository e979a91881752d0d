-- computational_graph.lua: the graph behind some Variables as Graphviz DOT.
--
--   local cg = chainer.computational_graph
--   local g = cg.build_computational_graph({loss}, {rankdir = 'LR'})
--   io.open('cg.dot', 'w'):write(g:dump())      -- then: dot -Tsvg cg.dot
--
-- Options (Chainer's): variable_style, function_style (tables of DOT
-- attributes), rankdir ('TB' | 'BT' | 'LR' | 'RL'), remove_variable (only
-- functions, linked directly), show_name (prefix variable labels with their
-- names; default true).  Everything reachable backward from the outputs is
-- included; the walk is iterative.
local args = require 'chainer._args'
local class = require 'chainer.class'
local Variable = require 'chainer.variable'
local FunctionNode = require 'chainer.function_node'

local M = {}

M.default_variable_style = { shape = 'octagon', fillcolor = '#E0E0E0', style = 'filled' }
M.default_function_style = { shape = 'record', fillcolor = '#6495ED', style = 'filled' }

local ComputationalGraph = class.Object:extend('ComputationalGraph')
M.ComputationalGraph = ComputationalGraph

local function is_function(n) return class.isinstance(n, FunctionNode) end

-- Chainer's ComputationalGraph(nodes, edges, variable_style, function_style,
-- rankdir, remove_variable, show_name) and build_computational_graph(outputs,
-- remove_split, variable_style, ...); remove_split is accepted and, as in
-- Chainer 7, has no effect.
local GRAPH_SIGNATURE = args.signature { 'variable_style', 'function_style', 'rankdir', 'remove_variable',
  'show_name' }
local BUILD_SIGNATURE = args.signature { 'remove_split', 'variable_style', 'function_style', 'rankdir',
  'remove_variable', 'show_name' }

function ComputationalGraph:init(nodes, edges, ...)
  local opts = args.parse_at(3, 'ComputationalGraph', GRAPH_SIGNATURE, select('#', ...), ...)
  self.nodes = nodes
  self.edges = edges
  self.variable_style = opts.variable_style or M.default_variable_style
  self.function_style = opts.function_style or M.default_function_style
  self.rankdir = opts.rankdir or 'TB'
  self.remove_variable = opts.remove_variable and true or false
  self.show_name = opts.show_name ~= false
  local ok = { TB = true, BT = true, LR = true, RL = true }
  if not ok[self.rankdir] then
    error("build_computational_graph: rankdir must be 'TB', 'BT', 'LR' or 'RL' (got " .. tostring(self.rankdir) .. ')', 3)
  end
end

local function escape(s, record)
  s = tostring(s):gsub('\\', '\\\\'):gsub('"', '\\"')
  if record then s = s:gsub('([|{}<>])', '\\%1') end
  return s
end

local function attrs(style, label, record)
  local keys = {}
  for k in pairs(style) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = { 'label="' .. escape(label, record) .. '"' }
  for _, k in ipairs(keys) do
    parts[#parts + 1] = k .. '="' .. escape(style[k]) .. '"'
  end
  return table.concat(parts, ',')
end

function ComputationalGraph:node_label(n)
  if is_function(n) then return n:label() end
  local label = n:label()
  local name = n.name
  local v = n:get_variable_or_none()
  if v and v.name then name = v.name end
  if self.show_name and name then return name .. ': ' .. label end
  return label
end

-- The graph in DOT (the only format, as in Chainer).
function ComputationalGraph:dump(format)
  format = format or 'dot'
  if format ~= 'dot' then error("ComputationalGraph.dump: only format 'dot' is supported (got " .. tostring(format) .. ')', 2) end
  local ids = {}
  local out = { 'digraph graphname{rankdir=' .. self.rankdir .. ';' }
  for i, n in ipairs(self.nodes) do
    ids[n] = 'node' .. i
    local fn = is_function(n)
    local style = fn and self.function_style or self.variable_style
    out[#out + 1] = ids[n] .. ' [' .. attrs(style, self:node_label(n), fn and style.shape == 'record') .. '];'
  end
  for _, e in ipairs(self.edges) do
    out[#out + 1] = ids[e[1]] .. ' -> ' .. ids[e[2]] .. ';'
  end
  out[#out + 1] = '}'
  return table.concat(out, '\n') .. '\n'
end

-- build_computational_graph(outputs, opts): outputs are Variables,
-- VariableNodes or FunctionNodes (one or a table of them).
function M.build_computational_graph(outputs, ...)
  local opts = args.parse_at(2, 'build_computational_graph', BUILD_SIGNATURE, select('#', ...), ...)
  if type(outputs) ~= 'table' or outputs._is_variable or getmetatable(outputs) ~= nil then
    outputs = { outputs }
  end
  local nodes, edges = {}, {}
  local seen_node, seen_edge = {}, {}
  local function add_node(n)
    if not seen_node[n] then seen_node[n] = true nodes[#nodes + 1] = n end
  end
  local function add_edge(a, b)
    local ea = seen_edge[a]
    if not ea then ea = {} seen_edge[a] = ea end
    if ea[b] then return false end
    ea[b] = true
    edges[#edges + 1] = { a, b }
    return true
  end
  local queue, head = {}, 1
  for _, o in ipairs(outputs) do
    if type(o) == 'table' and o._is_variable then o = Variable.node_of(o) end
    queue[#queue + 1] = o
  end
  while head <= #queue do
    local c = queue[head]
    head = head + 1
    if is_function(c) then
      local ins = c.inputs or {}
      for i = 1, #ins do
        local x = ins[i]
        if add_edge(x, c) then
          add_node(x) add_node(c)
          queue[#queue + 1] = x
        end
      end
    else
      local f = c.creator
      if f and add_edge(f, c) then
        add_node(f) add_node(c)
        queue[#queue + 1] = f
      end
    end
  end
  if opts.remove_variable then
    -- connect functions directly: f1 -> v -> f2 becomes f1 -> f2
    local fnodes, fedges, seen = {}, {}, {}
    for _, n in ipairs(nodes) do if is_function(n) then fnodes[#fnodes + 1] = n end end
    for _, e in ipairs(edges) do
      local v, f2 = e[1], e[2]
      if is_function(f2) and v.creator and seen_node[v.creator] then
        local f1 = v.creator
        seen[f1] = seen[f1] or {}
        if not seen[f1][f2] then seen[f1][f2] = true fedges[#fedges + 1] = { f1, f2 } end
      end
    end
    nodes, edges = fnodes, fedges
  end
  return ComputationalGraph(nodes, edges, { variable_style = opts.variable_style,
    function_style = opts.function_style, rankdir = opts.rankdir, remove_variable = opts.remove_variable,
    show_name = opts.show_name })
end

return M

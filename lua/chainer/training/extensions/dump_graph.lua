-- DumpGraph(root_name, {filename = 'cg.dot' (alias out_name),
-- variable_style =, function_style =}) and its function form dump_graph:
-- at the first iteration, writes the Graphviz DOT text of the graph behind
-- observation[root_name] (e.g. 'main/loss') to <out>/<filename>, and, when
-- the `dot` command exists, renders <stem>.png.  It keeps
-- config.keep_graph_on_report on until then so the reported loss still
-- carries its graph.
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local cfg = require 'chainer.config'
local util = require 'chainer.training._util'
local fs = require 'chainer._fs'

local DumpGraph = extension.Extension:extend('DumpGraph')
-- Chainer's arguments after the required ones, positional or by name
local SIGNATURE = args.signature({ 'filename', 'variable_style', 'function_style' }, { 'out_name' })
DumpGraph.default_name = 'dump_graph'

function DumpGraph:init(root_name, ...)
  if type(root_name) ~= 'string' then
    error("DumpGraph: root_name must be an observation key such as 'main/loss' (got " .. type(root_name) .. ')', 3)
  end
  local opts = args.parse_at(3, 'DumpGraph', SIGNATURE, select('#', ...), ...)
  self._root_name = root_name
  self._filename = opts.filename or opts.out_name or 'cg.dot'
  self._variable_style = opts.variable_style
  self._function_style = opts.function_style
  self._original_flag = nil
  self._flag_called = false
  -- Chainer's trigger is a method that fires only on the first call
  self.trigger = function() return not self._flag_called end
end

function DumpGraph:initialize()
  if not self._flag_called then
    self._original_flag = cfg.config.keep_graph_on_report
    cfg.config.keep_graph_on_report = true
  end
end

local function have_dot()
  local ok = os.execute('command -v dot >/dev/null 2>&1')
  return ok == 0 or ok == true
end

DumpGraph.__call = function(self, trainer)
  self._flag_called = true
  local ok, err = pcall(function()
    local var = trainer.observation[self._root_name]
    if type(var) ~= 'table' or not var._is_variable then
      error(string.format("DumpGraph: observation['%s'] is not a Variable (got %s)", self._root_name, type(var)), 0)
    end
    local cg = require('chainer.computational_graph').build_computational_graph({ var }, {
      variable_style = self._variable_style, function_style = self._function_style,
    })
    fs.mkdir_p(trainer.out)
    local path = fs.join(trainer.out, self._filename)
    assert(fs.atomic_write(path, cg:dump()))
    if have_dot() then
      local png = fs.join(trainer.out, (self._filename:gsub('%.[^./]*$', '')) .. '.png')
      os.execute(string.format("dot -Tpng '%s' -o '%s' >/dev/null 2>&1", path, png))
    end
  end)
  cfg.config.keep_graph_on_report = self._original_flag or false
  if not ok then error(err, 0) end
end

function DumpGraph:serialize(serializer)
  self._original_flag = util.ser_bool(serializer, '_original_flag', self._original_flag or false)
  self._flag_called = util.ser_bool(serializer, '_flag_called', self._flag_called)
end

local M = {}
M.DumpGraph = DumpGraph
function M.dump_graph(...) return DumpGraph(...) end
return M

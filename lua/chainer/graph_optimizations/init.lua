-- chainer.graph_optimizations: static_graph and static_code
-- (docs/static_graph.md).  Both are also chainer.static_graph and
-- chainer.static_code, as in Chainer.
local sg = require 'chainer.graph_optimizations.static_graph'

return {
  static_graph = sg.static_graph,
  static_code = sg.static_code,
}

-- backprop.lua: reverse-mode traversal of the graph (Variable:backward,
-- chainer.backward, chainer.grad).
--
-- Functions are processed from a max-heap on rank (ties: first pushed runs
-- first), so a function runs only after every consumer of its outputs.
-- Gradients travel on the nodes themselves (node._grad, stamped with the
-- traversal's id in node._bp), which spares a hash table per traversal;
-- intermediate gradients are dropped as soon as their creator has used
-- them, unless retain_grad asks to keep them on the Variables.
-- A gradient tensor the traversal made itself and gave to one node only
-- is that node's own (node._gown): later gradients are added into it in
-- place, and a backward_tensors may write into it (see function_node.lua);
-- tensors anyone else can see are never modified.
-- The traversal is a loop with an explicit heap: graphs of any depth
-- backpropagate without growing the Lua stack.
local T = require 'chainer.tensor'
local config = require('chainer.config').config
local Variable = require 'chainer.variable'
local FunctionNode = require 'chainer.function_node'
local hookmod = require 'chainer.function_hook'

local new_var, node_of, is_variable = Variable.new_var, Variable.node_of, Variable.is_variable
local is_tensor = T.is_tensor
local global_hooks = hookmod.list
local shape_str = T.shape_str

local M = {}

local bp_counter = 0
local IDX1, IDX12 = { 1 }, { 1, 2 }
local add -- basic_math.add, set on first use (avoids a require cycle)
local T_add = T._var_add or T.add   -- the tensor kernel (not the Variable-aware wrapper)

-- Gradients on nodes (node._grad) are Variables, or bare tensors where the
-- traversal ran on tensors (runs_on_tensors); Variables are made at the edges.
local function as_gvar(g)
  if type(g) == 'cdata' then return new_var(g, true) end
  return g
end

---------------------------------------------------------------------------
-- gradient checks
---------------------------------------------------------------------------
local meta_of, unpack_meta = Variable.VariableNode.meta_of, Variable.VariableNode.unpack_meta
local live_variable = Variable.VariableNode.live_variable

-- The data of a node when it is at hand: retained, or its live Variable's.
local function node_data(node)
  local d = node.data
  if d then return d end
  local v = live_variable(node)
  return v and v._data or nil
end

local function node_shape_text(node)
  local d = node_data(node)
  if d then return shape_str(d.shape) end
  local _, nd, numel = unpack_meta(node._meta)
  return string.format('(%d-d, %d elements)', nd, numel)
end

local function grad_error(f, i, node, what)
  error(string.format('%s (backward): the gradient of input %d %s%s', f:label(), i, what,
    FunctionNode._creation_stack(f)), 0)
end

-- Raises the error for a gradient that does not fit its input node, in
-- the order dtype, shape, device.  dims_differ: everything packed in _meta
-- matched but a dimension did not.
local function grad_mismatch(f, i, node, g, dims_differ)
  local p = g.ptr
  local dt, nd, numel, dev = unpack_meta(node._meta)
  if p.dt ~= dt then
    grad_error(f, i, node, string.format('has dtype %s but the input has dtype %s',
      T.dtype_names[p.dt], T.dtype_names[dt]))
  end
  if dims_differ or p.nd ~= nd or tonumber(p.numel) ~= numel then
    grad_error(f, i, node, string.format('has shape %s but the input has shape %s',
      shape_str(g.shape), node_shape_text(node)))
  end
  grad_error(f, i, node, string.format('is on %s but the input is on %s',
    T.device_name(p.dev), T.device_name(dev)))
end

-- Checks a gradient against the dtype/shape/device of its input node: one
-- comparison of the packed dtype, rank, size and device, then the
-- dimensions when the data is at hand (1-d tensors of equal size need no
-- loop).
local function check_grad(f, i, node, g)
  local p = g.ptr
  if meta_of(p) ~= node._meta then return grad_mismatch(f, i, node, g, false) end
  if p.nd > 1 then
    local d = node_data(node)
    if d then
      local q = d.ptr
      for k = 0, p.nd - 1 do
        if q.dim[k] ~= p.dim[k] then return grad_mismatch(f, i, node, g, true) end
      end
    end
  end
end

---------------------------------------------------------------------------
-- the traversal
---------------------------------------------------------------------------
-- One state table per traversal (new_traversal):
--   id           the stamp of this traversal on the nodes it reaches (_bp)
--   load_if_new  a Variable's existing .grad joins the first gradient its
--                node receives (backward: Chainer's rule) or not (grad)
--   retain_grad  intermediate Variables keep their gradients
--   needed, keep (chainer.grad) the functions that lead to the wanted
--                inputs, and the wanted inputs' nodes; nil for backward
--   leaves       the nodes without a creator that received a gradient
--   on_tensors   gradients may travel as bare tensors (runs_on_tensors)
--   heap_f, heap_k, hn, seq   the functions still to run (a heap)
--   gys, gxs     scratch tables for backward_tensors
local function new_traversal(load_if_new, retain_grad, needed, keep)
  bp_counter = bp_counter + 1
  return { id = bp_counter, load_if_new = load_if_new, retain_grad = retain_grad, needed = needed,
    keep = keep, leaves = {}, on_tensors = false, debug = false,
    heap_f = {}, heap_k = {}, hn = 0, seq = 0, gys = {}, gxs = {} }
end

-- The one place that decides how a node's backward runs: backward_tensors
-- (see function_node.lua) when the node has one and nothing could tell
-- the difference from backward: no graph is recorded (no double
-- backprop), no function hook is registered (globally or on the node),
-- debug mode is off and no Variable retains its gradient.  The part that
-- holds for the whole traversal is decided once, when it starts
-- (st.on_tensors); gradients then travel between nodes as bare tensors
-- and become Variables only where users see them.
local function gradients_as_tensors(st)
  return not config.enable_backprop and not config.debug and not st.retain_grad and global_hooks[1] == nil
end

local function runs_on_tensors(st, f)
  -- (false where a class defines backward_accumulate: function_node.lua)
  return st.on_tensors and f.backward_tensors and rawget(f, 'local_function_hooks') == nil
end

-- The heap: parallel arrays of functions and keys; a key orders by rank
-- first (larger first) and push order second (earlier first).
local function heap_push(st, f)
  local heap_f, heap_k = st.heap_f, st.heap_k
  local seq = st.seq + 1
  st.seq = seq
  local key = f.rank * 4294967296 - seq
  local h = st.hn + 1
  st.hn = h
  while h > 1 do
    local parent = (h - h % 2) / 2
    if heap_k[parent] >= key then break end
    heap_f[h], heap_k[h] = heap_f[parent], heap_k[parent]
    h = parent
  end
  heap_f[h], heap_k[h] = f, key
end

local function heap_pop(st)
  local heap_f, heap_k = st.heap_f, st.heap_k
  local hn = st.hn
  local f = heap_f[1]
  local lf, lk = heap_f[hn], heap_k[hn]
  heap_f[hn], heap_k[hn] = nil, nil
  hn = hn - 1
  st.hn = hn
  if hn > 0 then
    local i = 1
    while true do
      local c = 2 * i
      if c > hn then break end
      if c < hn and heap_k[c + 1] > heap_k[c] then c = c + 1 end
      if heap_k[c] <= lk then break end
      heap_f[i], heap_k[i] = heap_f[c], heap_k[c]
      i = c
    end
    heap_f[i], heap_k[i] = lf, lk
  end
  return f
end

-- Schedules function c, once per traversal (and, for chainer.grad, only
-- when it leads to a wanted input).
local function schedule(st, c)
  local needed = st.needed
  if c._bp ~= st.id and (needed == nil or needed[c]) then
    c._bp = st.id
    heap_push(st, c)
  end
end

-- The positions of the inputs of a function that need a gradient (shared
-- constant tables in the common cases: backward must not modify its
-- target_input_indexes), and their number.
local function target_inputs(st, ins)
  local nin = #ins
  local needed = st.needed
  if needed == nil then
    if nin == 1 and ins[1].requires_grad then return IDX1, 1 end
    if nin == 2 and ins[1].requires_grad and ins[2].requires_grad then return IDX12, 2 end
  end
  local keep = st.keep
  local idx, nt = {}, 0
  for i = 1, nin do
    local x = ins[i]
    if x.requires_grad and (needed == nil or keep[x] or (x.creator and needed[x.creator])) then
      nt = nt + 1
      idx[nt] = i
    end
  end
  return idx, nt
end

-- The gradient that reached output node o (a Variable or a bare tensor;
-- nil when none did), and whether it is the traversal's alone (a tensor it
-- made and gave to this node only).  The node lets go of it, unless
-- chainer.grad wants it kept.
local function take_output_grad(st, o)
  if o._bp == st.id then
    local g, owned = o._grad, o._gown
    o._gown = false
    local keep = st.keep
    if keep and keep[o] then owned = false else o._grad = false end
    return g, owned
  end
  if st.load_if_new then
    local v = live_variable(o)
    return v and v._grad_var or nil, false
  end
  return nil, false
end

-- Adds the gradient gx that function f gives its input i (node x) to what
-- x has received so far.  gx is a Variable or a bare tensor (gt: its
-- tensor); owned: nothing else holds gx, so later gradients may be added
-- into it in place.  The sum a node builds from two gradients is its own.
-- The first gradient of a node schedules its creator (or records a leaf).
local function accumulate(st, f, i, x, gx, gt, owned)
  check_grad(f, i, x, gt)
  if st.debug and FunctionNode._has_nan(gt) then
    error(string.format('NaN is detected on backward computation of %s (gradient of input %d)%s',
      f:label(), i, FunctionNode._creation_stack(f)), 0)
  end
  local id = st.id
  if x._bp ~= id then
    x._bp = id
    if st.load_if_new then
      local v = live_variable(x)
      local prev = v and v._grad_var
      if prev then
        v._grad_var = false
        gx = add(prev, gx)
        owned = false
      end
    end
    x._grad = gx
    x._gown = owned
    local c = x.creator
    if c then
      schedule(st, c)
    else
      local leaves = st.leaves
      leaves[#leaves + 1] = x
    end
    return
  end
  local cur = x._grad
  if not cur then
    x._grad = gx
    x._gown = owned
  elseif type(cur) == 'cdata' and type(gx) == 'cdata' then
    -- same dtype and shape (checked)
    if x._gown then
      T_add(cur, gx, cur)
    elseif owned then
      T_add(gx, cur, gx)
      x._grad = gx
      x._gown = true
    else
      x._grad = T_add(cur, gx)
      x._gown = true
    end
  else
    x._grad = add(cur, gx)
    x._gown = false
  end
end

-- f:backward(idx, gys), or f:backward_accumulate(idx, gys, gins) when gins
-- is given, with the function hooks around it; returns its table.
local function call_backward(f, ins, gys, nout, idx, gins)
  local hooked = global_hooks[1] ~= nil or rawget(f, 'local_function_hooks') ~= nil
  local hooks, in_data, out_grad
  if hooked then
    hooks = FunctionNode._hooks_of(f)
    in_data, out_grad = {}, {}
    for i = 1, #ins do in_data[i] = ins[i].data or nil end
    for j = 1, nout do out_grad[j] = gys[j] and gys[j]._data or nil end
    for h = 1, #hooks do hooks[h]:backward_preprocess(f, in_data, out_grad) end
  end
  local gxs
  if gins then gxs = f:backward_accumulate(idx, gys, gins) else gxs = f:backward(idx, gys) end
  if hooked then
    for h = 1, #hooks do hooks[h]:backward_postprocess(f, in_data, out_grad) end
  end
  if type(gxs) ~= 'table' then
    error(string.format('%s: %s must return a table of gradients (got %s)', f:label(),
      gins and 'backward_accumulate' or 'backward', type(gxs)), 0)
  end
  return gxs
end

local default_accumulate = FunctionNode.backward_accumulate

-- What a class's own backward_accumulate receives as grad_inputs: for each
-- target, the gradient its input has received so far (on this traversal,
-- or for backward a Variable's existing .grad), taken from the node, since
-- the method returns the sum; nil where none, and at every position after
-- the first where one input is given twice.
local function take_input_grads(st, ins, idx, nt)
  local id = st.id
  local gins = { n = nt }
  for k = 1, nt do
    local x = ins[idx[k]]
    local g
    if x._bp == id then
      g = x._grad or nil
      x._grad, x._gown = false, false
    elseif st.load_if_new then
      local v = live_variable(x)
      if v and v._grad_var then
        g = v._grad_var
        v._grad_var = false
      end
    end
    gins[k] = as_gvar(g)
  end
  return gins
end

local per_target = FunctionNode._per_target

-- backward on Variables: the output gradients become Variables, the
-- results are checked and accumulated.
local function backward_on_variables(st, f, ins, outs, idx, nt)
  local nout = #outs
  local gys = {}
  for j = 1, nout do
    local g = take_output_grad(st, outs[j])
    if g then
      if type(g) == 'cdata' then g = new_var(g, true) end
      gys[j] = g
    end
  end

  if nt > 0 then
    local gxs, aligned
    if f.backward_accumulate == default_accumulate then
      gxs = call_backward(f, ins, gys, nout, idx)
      aligned = per_target(gxs, idx, nt, #ins)
    else
      gxs = call_backward(f, ins, gys, nout, idx, take_input_grads(st, ins, idx, nt))
      if table.maxn(gxs) > nt then
        error(string.format('%s: backward_accumulate must return one gradient per target input (%d; got %d)',
          f:label(), nt, table.maxn(gxs)), 0)
      end
      aligned = true
    end
    for k = 1, nt do
      local i = idx[k]
      local gx
      if aligned then gx = gxs[k] else gx = gxs[i] end
      if gx then
        local gt
        if is_tensor(gx) then
          -- a bare tensor: kept as it is when gradients travel as tensors,
          -- wrapped otherwise
          gt = gx
          if not st.on_tensors then gx = new_var(gx, false) end
        elseif type(gx) ~= 'table' or not gx._is_variable then
          error(string.format('%s: backward returned a %s for input %d (expected a Variable or nil)',
            f:label(), type(gx), i), 0)
        else
          gt = gx._data
        end
        accumulate(st, f, i, ins[i], gx, gt, false)
      end
    end
  end

  if st.retain_grad then
    for j = 1, nout do
      local v = live_variable(outs[j])
      if v then v._grad_var = gys[j] or false end
    end
  end
end

-- Whether a result of backward_tensors is one of the grad outputs passed on.
local function passed_on(g, gys, nout)
  for j = 1, nout do
    if gys[j] == g then return true end
  end
  return false
end

-- Whether two targets got the same result tensor (x + y passes gy on to
-- both inputs).
local function shared_result(gxs, idx, nt)
  for k = 1, nt - 1 do
    local g = gxs[idx[k]]
    if g ~= nil then
      for m = k + 1, nt do
        if gxs[idx[m]] == g then return true end
      end
    end
  end
  return false
end

-- (static_graph's replayed backward reads results the same way)
M._per_target, M._passed_on, M._shared_result = per_target, passed_on, shared_result

-- One tensor given to two targets (nodes x1, x2, delivered in that order)
-- may be owned by x1 alone, and only when x2 will add it into a sum it
-- already has instead of storing it, and x1 does not first add its own sum
-- into it in place (it stores it, or adds it into a sum it owns).
local function first_may_own_shared(st, x1, x2)
  local id = st.id
  return x1 ~= x2 and x2._bp == id and x2._grad and not (x1._bp == id and x1._grad and not x1._gown)
    and true or false
end

-- Hands result g of backward_tensors for target input i (node x) to
-- accumulate, unless it is x's own sum coming back (the op added into it
-- already: a result given to two inputs is never owned, so only a sum
-- handed over can be a node's own gradient here).
local function deliver(st, f, i, x, g, owned)
  if not (g == x._grad and x._gown and x._bp == st.id) then accumulate(st, f, i, x, g, g, owned) end
end

-- A parameter with a gradient slot (chainer/_grad_bucket.lua), reached for
-- the first time in a backward: its gradient sum starts in the slot, which
-- the op then adds into in place (so the gradient is written where the
-- bucket keeps it, with no copy).  The sum so far is the slot itself when
-- the parameter's grad is its slot (Chainer's accumulation), zeros when the
-- grad was cleared.  Returns the slot, or nil for the usual path (no slot,
-- chainer.grad, or a gradient array the user set: backward_body copies
-- that sum into the slot).
local function open_slot(st, x)
  if not st.load_if_new then return nil end
  local v = live_variable(x)
  local slot = v and rawget(v, '_grad_slot')
  if not slot or meta_of(slot.ptr) ~= x._meta then return nil end
  local prev = v._grad_var
  if prev then
    if prev._data ~= slot then return nil end
    v._grad_var = false   -- as accumulate's load_if_new: the sum now lives on the node
  else
    slot:fill_(0)
  end
  x._bp = st.id
  x._grad = slot
  x._gown = true
  local leaves = st.leaves
  leaves[#leaves + 1] = x
  return slot
end

-- Whether result g is the traversal's alone: a new tensor, or a grad output
-- passed on when the grad outputs were (own).
local function result_owned(g, own, gys, nout)
  return own or (g ~= gys[1] and (nout == 1 or not passed_on(g, gys, nout)))
end

-- backward_tensors: gradients as bare tensors, and the sums the input
-- nodes own handed to the op to add into in place.  Who owns each result
-- is inferred (result_owned), and a tensor shared by two targets is owned
-- by at most one (first_may_own_shared; none with more targets).  One and
-- two targets (nearly every node) are read without loops.
local function backward_on_tensors(st, f, ins, outs, idx, nt)
  local gys, gxs = st.gys, st.gxs
  local id = st.id
  -- the output gradients; own: every one of them is the traversal's alone
  -- (a Variable there was set by the user: its tensor is not)
  local nout = #outs
  local g1, own = take_output_grad(st, outs[1])
  if g1 == nil then own = true elseif type(g1) == 'table' then g1, own = g1._data, false end
  gys[1] = g1
  for j = 2, nout do
    local g, owned = take_output_grad(st, outs[j])
    if type(g) == 'table' then g, owned = g._data, false end
    gys[j] = g
    if g and not owned then own = false end
  end
  -- the sums the targets' nodes own (always tensors), to add into, and
  -- the results; one and two targets without loops
  if nt == 1 then
    local i = idx[1]
    local x = ins[i]
    if x._bp == id then
      if x._gown then gxs[i] = x._grad end
    elseif not x.creator then
      gxs[i] = open_slot(st, x)
    end
    f:backward_tensors(idx, gys, gxs, own)
    local g = gxs[i]
    if g ~= nil then
      gxs[i] = nil
      deliver(st, f, i, x, g, result_owned(g, own, gys, nout))
    end
  elseif nt == 2 then
    local i1, i2 = idx[1], idx[2]
    local x1, x2 = ins[i1], ins[i2]
    if x1._bp == id then
      if x1._gown then gxs[i1] = x1._grad end
    elseif not x1.creator then
      gxs[i1] = open_slot(st, x1)
    end
    if x2._bp == id then
      if x2._gown then gxs[i2] = x2._grad end
    elseif not x2.creator then
      gxs[i2] = open_slot(st, x2)
    end
    f:backward_tensors(idx, gys, gxs, own)
    local ga, gb = gxs[i1], gxs[i2]
    local owna, ownb = false, false
    if ga ~= nil then
      gxs[i1] = nil
      owna = result_owned(ga, own, gys, nout)
    end
    if gb ~= nil then
      gxs[i2] = nil
      ownb = result_owned(gb, own, gys, nout)
    end
    if ga == gb and owna then owna, ownb = first_may_own_shared(st, x1, x2), false end
    if ga ~= nil then deliver(st, f, i1, x1, ga, owna) end
    if gb ~= nil then deliver(st, f, i2, x2, gb, ownb) end
  else
    for k = 1, nt do
      local x = ins[idx[k]]
      if x._bp == id then
        if x._gown then gxs[idx[k]] = x._grad end
      elseif not x.creator then
        gxs[idx[k]] = open_slot(st, x)
      end
    end
    f:backward_tensors(idx, gys, gxs, own)
    local shared = shared_result(gxs, idx, nt)
    for k = 1, nt do
      local i = idx[k]
      local g = gxs[i]
      if g ~= nil then
        gxs[i] = nil
        deliver(st, f, i, ins[i], g, not shared and result_owned(g, own, gys, nout))
      end
    end
  end
  for j = 1, nout do gys[j] = nil end
  if nt < #ins then   -- (an op should fill only its targets)
    for i = 1, #ins do gxs[i] = nil end
  end
end

-- Runs the scheduled functions in rank order until none is left.
local function traverse(st)
  st.on_tensors = gradients_as_tensors(st)
  st.debug = config.debug
  while st.hn > 0 do
    local f = heap_pop(st)
    local ins, outs = f.inputs, f.outputs
    if ins and outs then
      local idx, nt = target_inputs(st, ins)
      if nt > 0 and runs_on_tensors(st, f) then
        backward_on_tensors(st, f, ins, outs, idx, nt)
      else
        backward_on_variables(st, f, ins, outs, idx, nt)
      end
    end
  end
end

local function as_grad_var(g, fn, k)
  if g == nil then return nil end
  if is_variable(g) then return g end
  if is_tensor(g) then return new_var(g, true) end
  error(string.format('%s: grad_outputs[%d] must be a Variable, a tensor or nil (got %s)', fn, k, type(g)), 3)
end

-- Runs `body` with enable_backprop set for the traversal and restores it
-- even on error (one pcall per backward call, none per node).
local function with_backprop_mode(enable_double, body, ...)
  local old = config.enable_backprop
  config.enable_backprop = enable_double and true or false
  local ok, err = pcall(body, ...)
  config.enable_backprop = old
  if not ok then error(err, 0) end
end

---------------------------------------------------------------------------
-- backward
---------------------------------------------------------------------------
local function default_seed(y, fn)
  local d = y._data
  if d.ptr.numel ~= 1 then
    error(string.format('%s: the output has shape %s; only a one-element output gets the initial gradient 1 ' ..
      'automatically, so set y.grad (e.g. to ones of its shape) first, or reduce it to a scalar loss', fn,
      shape_str(d.shape)), 4)
  end
  return new_var(T.ones_like(d), true)
end

-- A leaf gradient g that did not start in its parameter's slot (see
-- open_slot: a gradient the user set, or a traversal on Variables) is
-- copied there, so the bucket still holds it; a gradient with a graph
-- (double backprop) stays as it is.  Returns what the Variable gets.
local function into_slot(v, g)
  local slot = rawget(v, '_grad_slot')
  if not slot or g == slot then return g end
  local t = g
  if type(g) ~= 'cdata' then
    if g._node and g._node.creator then return g end
    t = g._data
  end
  if meta_of(slot.ptr) ~= meta_of(t.ptr) then return g end
  slot:copy_(t)
  return slot
end

-- loss_scale: the factor the seeds were multiplied by; every leaf Variable
-- reached remembers it (nil when none), so its UpdateRule divides it out.
local function backward_body(outputs, seeds, n, retain_grad, loss_scale)
  add = add or require('chainer.functions.math.basic_math').add
  local st = new_traversal(true, retain_grad, nil, nil)
  local id = st.id
  local given = {}
  for k = 1, n do
    local y = outputs[k]
    local node = node_of(y)
    local g = seeds[k]
    given[g] = true
    given[g._data] = true
    if node._bp == id then
      node._grad = add(node._grad, g)
    else
      node._bp = id
      node._grad = g
    end
    node._gown = false
    local c = node.creator
    if c then
      schedule(st, c)
    else
      -- a leaf among the outputs keeps its seed plus whatever flows to it
      local leaves = st.leaves
      leaves[#leaves + 1] = node
    end
  end
  traverse(st)
  -- leaves: the accumulated gradient goes to the Variable
  local leaves = st.leaves
  for k = 1, #leaves do
    local x = leaves[k]
    local g = x._grad
    x._grad = false
    local v = live_variable(x)
    if v then rawset(v, '_loss_scale', loss_scale) end
    if v and g and v._grad_var ~= g then
      g = into_slot(v, g)
      -- no two variables get the same gradient tensor (nor a seed's)
      if type(g) == 'cdata' then
        if given[g] then g = g:copy() end
        given[g] = true
        g = new_var(g, true)
      else
        if given[g] or given[g._data] then
          if g._node and g._node.creator then
            g = add(g, 0)        -- keep the graph (double backprop), new tensor
          else
            g = new_var(g._data:copy(), g._requires_grad)
          end
        end
        given[g] = true
        given[g._data] = true
      end
      v._grad_var = g
    end
  end
  -- seeds that are not leaves keep their own gradient only
  for k = 1, n do
    local node = outputs[k]._node
    if node and node._bp == id and node.creator then node._grad = false end
  end
end

-- chainer.backward(outputs, grad_outputs, opts): backpropagates from
-- several outputs at once.  grad_outputs[k] == nil uses outputs[k].grad,
-- or 1 for a one-element output.
function M.backward(outputs, grad_outputs, opts)
  if is_variable(outputs) then outputs = { outputs } end
  if type(outputs) ~= 'table' then error('backward: outputs must be a table of Variables', 2) end
  opts = opts or {}
  local n = #outputs
  local seeds = {}
  for k = 1, n do
    local y = outputs[k]
    if not is_variable(y) then
      error(string.format('backward: outputs[%d] must be a Variable (got %s)', k, type(y)), 2)
    end
    local g = as_grad_var(grad_outputs and grad_outputs[k], 'backward', k)
    if g == nil then
      g = y._grad_var
      if not g then g = default_seed(y, 'backward') end
    end
    if opts.loss_scale then g = new_var(T.mul(g._data, opts.loss_scale), g._requires_grad) end
    seeds[k] = g
  end
  with_backprop_mode(opts.enable_double_backprop, backward_body, outputs, seeds, n, opts.retain_grad and true or false,
    opts.loss_scale)
end

-- Variable:backward{retain_grad =, enable_double_backprop =, loss_scale =}
function Variable:backward(opts)
  local retain_grad, double, loss_scale = false, false, nil
  if opts ~= nil then
    if type(opts) ~= 'table' then
      error('Variable.backward: options must be a table, e.g. {retain_grad = true}', 2)
    end
    retain_grad = opts.retain_grad and true or false
    double = opts.enable_double_backprop and true or false
    loss_scale = opts.loss_scale
  end
  if self._data == nil then error('Variable.backward: this variable has no data', 2) end
  local g = self._grad_var
  if not g then
    g = default_seed(self, 'Variable.backward')
    self._grad_var = g
  end
  if loss_scale then g = new_var(T.mul(g._data, loss_scale), g._requires_grad) end
  with_backprop_mode(double, backward_body, { self }, { g }, 1, retain_grad, loss_scale)
end

---------------------------------------------------------------------------
-- grad
---------------------------------------------------------------------------
-- Marks the functions that lead to any of the wanted nodes (iterative
-- post-order walk).
local function needed_functions(start, wanted)
  local needed = {}
  local state = {}   -- nil: unseen, 1: expanded, 2: done
  local stack, top = {}, 0
  for k = 1, #start do
    local c = start[k]
    if c and not state[c] then top = top + 1 stack[top] = c end
    while top > 0 do
      local f = stack[top]
      local s = state[f]
      local ins = f.inputs or {}
      if s == nil then
        state[f] = 1
        for i = 1, #ins do
          local cc = ins[i].creator
          if cc and not state[cc] then top = top + 1 stack[top] = cc end
        end
      else
        top = top - 1
        if s == 1 then
          state[f] = 2
          local need = false
          for i = 1, #ins do
            local x = ins[i]
            if wanted[x] or (x.creator and needed[x.creator]) then need = true break end
          end
          needed[f] = need
        end
      end
    end
  end
  return needed
end

local function grad_body(st, outputs, seeds, inputs, result, opts)
  local id = st.id
  for k = 1, #outputs do
    local node = node_of(outputs[k])
    -- As in Chainer, a Variable listed twice in outputs gets the last of
    -- its seeds (Chainer's grad table is assigned, not accumulated; the
    -- oracle's double-backprop vectors of `add` depend on it).
    node._bp = id
    node._grad = seeds[k]
    node._gown = false
    local c = node.creator
    if c then schedule(st, c) end
  end
  traverse(st)
  local gin = opts.grad_inputs
  for k = 1, #inputs do
    local x = inputs[k]
    local node = x._node
    local g = nil
    if node and node._bp == id and node._grad then g = as_gvar(node._grad) end
    if gin and gin[k] ~= nil then
      local gi = as_grad_var(gin[k], 'grad', k)
      g = g and add(g, gi) or gi
    end
    result[k] = g
    if opts.set_grad then x._grad_var = g or false end
  end
  for k = 1, #inputs do
    local node = inputs[k]._node
    if node then node._grad = false end
  end
  for k = 1, #outputs do
    local node = outputs[k]._node
    if node then node._grad = false end
  end
end

-- chainer.grad(outputs, inputs, {grad_outputs =, grad_inputs =, set_grad =,
-- retain_grad =, enable_double_backprop =, loss_scale =}): gradients of the
-- outputs with respect to the inputs, as a table aligned with inputs (nil
-- where an input does not influence the outputs; the table's `n` field is
-- the number of inputs).  Variables' .grad are left alone unless set_grad.
function M.grad(outputs, inputs, opts)
  opts = opts or {}
  if is_variable(outputs) then outputs = { outputs } end
  if is_variable(inputs) then inputs = { inputs } end
  if type(outputs) ~= 'table' then error('grad: outputs must be a table of Variables', 2) end
  if type(inputs) ~= 'table' then error('grad: inputs must be a table of Variables', 2) end
  add = add or require('chainer.functions.math.basic_math').add
  local go = opts.grad_outputs
  local seeds = {}
  for k = 1, #outputs do
    local y = outputs[k]
    if not is_variable(y) then error(string.format('grad: outputs[%d] must be a Variable (got %s)', k, type(y)), 2) end
    local g = as_grad_var(go and go[k], 'grad', k)
    if g == nil then g = default_seed(y, 'grad') end
    if opts.loss_scale then g = new_var(T.mul(g._data, opts.loss_scale), g._requires_grad) end
    seeds[k] = g
  end
  local wanted = {}
  for k = 1, #inputs do
    local x = inputs[k]
    if not is_variable(x) then error(string.format('grad: inputs[%d] must be a Variable (got %s)', k, type(x)), 2) end
    wanted[node_of(x)] = true
  end
  local start = {}
  for k = 1, #outputs do start[k] = node_of(outputs[k]).creator end
  local st = new_traversal(false, opts.retain_grad and true or false, needed_functions(start, wanted), wanted)
  local result = { n = #inputs }
  with_backprop_mode(opts.enable_double_backprop, grad_body, st, outputs, seeds, inputs, result, opts)
  return result
end

-- The gradients of a graph rebuilt inside a backward (F.forget, the n_step
-- layers' double backprop): of the outputs outs with respect to ins, from
-- gys aligned with outs (an output whose gy is nil is left out), as a plain
-- list aligned with ins; enable_double_backprop as in M.grad.
function M.recomputed_grads(outs, gys, ins, enable_double_backprop)
  local ys, gs = {}, {}
  for k = 1, #outs do
    if gys[k] ~= nil then
      ys[#ys + 1] = outs[k]
      gs[#gs + 1] = gys[k]
    end
  end
  local grads = M.grad(ys, ins, { grad_outputs = gs, enable_double_backprop = enable_double_backprop })
  local out = {}
  for k = 1, #ins do out[k] = grads[k] end
  return out
end

return M

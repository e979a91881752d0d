-- chainermn/links/multi_node_chain_list.lua:
-- chainermn.links.MultiNodeChainList(comm): a model split across ranks
-- (model parallel), as ChainerMN's.
--
--   local model = MultiNodeChainList(comm)
--   if comm.rank == 0 then
--     model:add_link(L.Linear(784, 100), nil, 1)   -- the model's input; output to rank 1
--     model:add_link(L.Linear(100, 10), 1, nil)    -- input from rank 1; the model's output
--   else
--     model:add_link(L.Linear(100, 100), 0, 0)     -- from rank 0, back to rank 0
--   end
--
-- add_link(link, rank_in, rank_out): rank_in nil means the link takes the
-- model's inputs, otherwise what the rank(s) rank_in send (a rank or an
-- array of them); rank_out nil means its output is the model's output (one
-- component at most), otherwise it goes to rank(s) rank_out.  Calling the
-- model runs the components in order with chainermn.functions.send/recv,
-- threading the delegate variables through, so that the model's output (or
-- on a rank without one, the last delegate variable) backpropagates
-- through every component of this rank with one backward call.  Every rank
-- must call its model in the same order, as the ranks pass data.
local ChainList = require('chainer.link').ChainList
local MF = require 'chainermn.functions'

local MultiNodeChainList = ChainList:extend('MultiNodeChainList')

function MultiNodeChainList:init(comm)
  if type(comm) ~= 'table' or type(comm.send) ~= 'function' then
    error('MultiNodeChainList: comm must be a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
  ChainList.init(self)
  rawset(self, '_comm', comm)
  rawset(self, '_rank_inouts', {})
end

local function ranks(v, what)
  if v == nil then return nil end
  if type(v) == 'number' then return { v } end
  if type(v) ~= 'table' or #v == 0 then
    error('MultiNodeChainList.add_link: ' .. what .. ' must be nil, a rank or an array of ranks (got ' .. type(v) .. ')', 3)
  end
  return v
end

function MultiNodeChainList:add_link(link, rank_in, rank_out)
  rank_in, rank_out = ranks(rank_in, 'rank_in'), ranks(rank_out, 'rank_out')
  if rank_out == nil then
    for _, io in ipairs(self._rank_inouts) do
      if io[2] == nil then
        error('MultiNodeChainList.add_link: only one component may give the model output (rank_out = nil)', 2)
      end
    end
  end
  ChainList.add_link(self, link)
  local list = self._rank_inouts
  list[#list + 1] = { rank_in, rank_out }
  return link
end

function MultiNodeChainList:forward(...)
  local comm = self._comm
  local inputs = { ... }
  local queue = {}   -- outputs this rank sends to itself, in order
  local y, delegate
  for i, io in ipairs(self._rank_inouts) do
    local f, rank_in, rank_out = self._children[i], io[1], io[2]
    local x
    if rank_in == nil then
      if i == 1 or delegate == nil then
        x = f(unpack(inputs))
      else
        local joined = MF.pseudo_connect(delegate, unpack(inputs))
        if #inputs == 1 then x = f(joined) else x = f(unpack(joined)) end
      end
    else
      local xs = {}
      for _, r in ipairs(rank_in) do
        local got
        if r == comm.rank then
          got = table.remove(queue, 1)
          if got == nil then error('MultiNodeChainList: component ' .. i .. ' takes from this rank, which sent nothing', 2) end
          if delegate ~= nil then got = MF.pseudo_connect(delegate, got) end
        else
          got = MF.recv(comm, r, { delegate_variable = delegate })
        end
        xs[#xs + 1] = got
        delegate = got
      end
      delegate = nil
      x = f(unpack(xs))
    end
    if rank_out == nil then
      y = x
      delegate = y
    else
      for j, r in ipairs(rank_out) do
        if r == comm.rank then
          if delegate ~= nil then x = MF.pseudo_connect(delegate, x) end
          queue[#queue + 1] = x
          delegate = x
        elseif j == 1 then
          delegate = MF.send(x, comm, r)
        else
          if delegate ~= nil then x = MF.pseudo_connect(delegate, x) end
          delegate = MF.send(x, comm, r)
        end
      end
    end
  end
  if #queue > 0 then
    error('MultiNodeChainList: outputs this rank sent to itself were never taken; check that every rank_in ' ..
      'matches a rank_out', 2)
  end
  if y == delegate then return y end
  if y ~= nil then return MF.pseudo_connect(delegate, y) end
  return delegate
end

return { MultiNodeChainList = MultiNodeChainList }

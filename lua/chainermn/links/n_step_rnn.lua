-- chainermn/links/n_step_rnn.lua:
-- chainermn.links.create_multi_node_n_step_rnn(actual_link, comm, rank_in,
-- rank_out), as ChainerMN's.
--
-- A stacked RNN (L.NStepLSTM, L.NStepGRU, L.NStepRNNTanh, their Bi
-- variants ...) split across ranks (model parallel): the caller passes
-- the sequences only; the initial states are received from rank_in (zeros
-- when rank_in is nil), the RNN runs, and its final states are sent to
-- rank_out (when not nil).  It returns the RNN's results followed by one
-- more, the delegate variable of the last send (nil without rank_out):
--
--   local hy, cy, ys, delegate = mn_lstm(xs)
--
-- With rank_out set, backward starts from the delegate variable (it waits
-- for the states' gradients from rank_out, as chainermn.functions.send).
local Chain = require('chainer.link').Chain
local Object = require('chainer.class').Object
local NStepRNNBase = require('chainer.links.rnn.n_step_rnn')._NStepRNNBase
local MF = require 'chainermn.functions'

local M = {}
local FN = 'create_multi_node_n_step_rnn'

local MultiNodeNStepRNN = Chain:extend('MultiNodeNStepRNN')
M.MultiNodeNStepRNN = MultiNodeNStepRNN

function MultiNodeNStepRNN:init(link, comm, rank_in, rank_out)
  Chain.init(self)
  self:add_link('actual_rnn', link)
  rawset(self, 'communicator', comm)
  rawset(self, 'rank_in', rank_in)
  rawset(self, 'rank_out', rank_out)
  rawset(self, 'n_cells', link.use_cell and 2 or 1)   -- LSTMs have h and c
end

-- The states travel as one message (ChainerMN sends one per state and
-- pseudo-connects them): their gradients then come back as one message
-- too, whatever order the receiving rank's backward pass takes.
function MultiNodeNStepRNN:forward(...)
  local comm, n_cells = self.communicator, self.n_cells
  local inputs = {}
  if self.rank_in ~= nil then
    local cells = MF.recv(comm, self.rank_in, { force_tuple = true })
    if #cells ~= n_cells then
      error(string.format('MultiNodeNStepRNN: rank %d sent %d states (expected %d)', self.rank_in, #cells, n_cells), 2)
    end
    for i = 1, n_cells do inputs[i] = cells[i] end
  end
  local n = n_cells + select('#', ...)
  for i = 1, select('#', ...) do inputs[n_cells + i] = (select(i, ...)) end
  local outputs = { self.actual_rnn(unpack(inputs, 1, n)) }
  local delegate
  if self.rank_out ~= nil then
    local cells = {}
    for i = 1, n_cells do cells[i] = outputs[i] end
    delegate = MF.send(cells, comm, self.rank_out)
  end
  outputs[n_cells + 2] = delegate
  return unpack(outputs, 1, n_cells + 2)
end

local function check_rank(comm, r, what)
  if r ~= nil and (type(r) ~= 'number' or r ~= math.floor(r) or r < 0 or r >= comm.size or r == comm.rank) then
    error(string.format('%s: %s must be nil or another rank in 0..%d (got %s)', FN, what, comm.size - 1,
      tostring(r)), 3)
  end
end

function M.create_multi_node_n_step_rnn(actual_link, comm, rank_in, rank_out)
  if type(comm) ~= 'table' or type(comm.send) ~= 'function' then
    error(FN .. ': comm must be a chainermn communicator (got ' .. type(comm) .. ')', 2)
  end
  if not Object.isinstance(actual_link, NStepRNNBase) then
    error(FN .. ': link must be NStepRNN and its inherited link (L.NStepLSTM, L.NStepGRU, L.NStepRNNTanh, ...; got ' ..
      (type(actual_link) == 'table' and tostring(getmetatable(actual_link) and getmetatable(actual_link).__name) or
        type(actual_link)) .. ')', 2)
  end
  check_rank(comm, rank_in, 'rank_in')
  check_rank(comm, rank_out, 'rank_out')
  return MultiNodeNStepRNN(actual_link, comm, rank_in, rank_out)
end

return M

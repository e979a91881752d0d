-- chainermn/extensions/multi_node_snapshot.lua:
-- multi_node_snapshot(comm, snapshot, replica_sets).
--
-- Wraps a snapshot extension (chainer.training.extensions.snapshot) for a
-- job of several ranks, as ChainerMN's.  The ranks are grouped into
-- replica sets, ranks whose target (the trainer) is the same; in each set
-- only the lowest rank, the set's master, writes snapshots, to files named
-- like the snapshot's with '.<rank>' appended.  With autoload, each master
-- loads its newest snapshot and sends it to the rest of its set, so a job
-- that was killed resumes on every rank.
--
-- replica_sets: an array whose entries are a rank or an array of ranks;
-- the ranks not named form one more set.  {} puts every rank in one set
-- (data parallel training where every rank's trainer is the same), {0}
-- gives rank 0 its own set (say it alone has LogReport) and the others one.
local extension = require 'chainer.training.extension'
local fs = require 'chainer._fs'
local util = require 'chainer.training._util'

local M = {}

local MultiNodeSnapshot = extension.Extension:extend('_MultiNodeSnapshot')

local function serializers() return require 'chainer.serializers' end

-- The sets as arrays of ranks, the unnamed ranks last; errors on a rank
-- outside 0..size-1 or named twice.
function M.parse_replica_sets(replica_sets, size, fn)
  if type(replica_sets) ~= 'table' then
    error(fn .. ': replica_sets must be an array of ranks or of arrays of ranks (got ' .. type(replica_sets) .. ')', 3)
  end
  local sets, seen = {}, {}
  local function add(set, r)
    if type(r) ~= 'number' or r ~= math.floor(r) or r < 0 or r >= size then
      error(string.format('%s: replica_sets names rank %s; ranks are 0..%d', fn, tostring(r), size - 1), 4)
    end
    if seen[r] then error(string.format('%s: replica_sets names rank %d twice', fn, r), 4) end
    seen[r] = true
    set[#set + 1] = r
  end
  for _, entry in ipairs(replica_sets) do
    local set = {}
    if type(entry) == 'table' then
      for _, r in ipairs(entry) do add(set, r) end
    else
      add(set, entry)
    end
    if #set > 0 then sets[#sets + 1] = set end
  end
  local rest = {}
  for r = 0, size - 1 do if not seen[r] then rest[#rest + 1] = r end end
  if #rest > 0 then sets[#sets + 1] = rest end
  for _, set in ipairs(sets) do table.sort(set) end
  return sets
end

function MultiNodeSnapshot:init(comm, snapshot, replica_sets)
  local fn = 'multi_node_snapshot'
  if type(comm) ~= 'table' or type(comm.send_obj) ~= 'function' then
    error(fn .. ': the first argument must be a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
  if type(snapshot) ~= 'table' or snapshot.filename == nil or type(snapshot._make_snapshot) ~= 'function' then
    error(fn .. ': the second argument must be a snapshot extension (chainer.training.extensions.snapshot)', 3)
  end
  self.comm, self.snapshot = comm, snapshot
  -- each rank's files get its rank at the end of the name
  local filename = snapshot.filename
  if type(filename) == 'function' then
    snapshot.filename = function(trainer) return filename(trainer) .. '.' .. comm.rank end
  else
    snapshot.filename = filename .. '.' .. comm.rank
  end
  self.trigger, self.priority = snapshot.trigger, snapshot.priority
  for _, set in ipairs(M.parse_replica_sets(replica_sets or {}, comm.size, fn)) do
    for _, r in ipairs(set) do
      if r == comm.rank then self.replica_set, self.master = set, set[1] end
    end
  end
end

function MultiNodeSnapshot:is_master() return self.master == self.comm.rank end

-- The master autoloads as the snapshot does, then sends its target's
-- state (an npz file's bytes, or false when it found none) to its set.
function MultiNodeSnapshot:initialize(trainer)
  local snap, comm = self.snapshot, self.comm
  if self:is_master() then snap:initialize(trainer) end
  if not snap.autoload then return end
  local target = snap._target or trainer
  if self:is_master() then
    local files = snap:_matching_files(trainer.out)
    local data = false
    if #files > 0 then
      local tmp = fs.temp_path(fs.join(trainer.out, 'multi_node_snapshot'), '.npz')
      serializers().save_npz(tmp, target)
      data = fs.read_file(tmp)
      os.remove(tmp)
    end
    for _, r in ipairs(self.replica_set) do
      if r ~= comm.rank then comm:send_obj(data, r) end
    end
  else
    local data = comm:recv_obj(self.master)
    if data then
      local tmp = fs.temp_path(fs.join(trainer.out, 'multi_node_snapshot'), '.npz')
      fs.mkdir_p(trainer.out)
      local f = assert(io.open(tmp, 'wb'))
      f:write(data)
      f:close()
      local ok, err = pcall(serializers().load_npz, tmp, target)
      os.remove(tmp)
      if not ok then error('multi_node_snapshot: loading rank ' .. self.master .. "'s snapshot failed: " .. tostring(err), 0) end
    end
  end
end

MultiNodeSnapshot.__call = function(self, trainer)
  if self:is_master() then self.snapshot(trainer) end
end

function MultiNodeSnapshot:on_error(trainer, err, tb)
  if self:is_master() then self.snapshot:on_error(trainer, err, tb) end
end

function MultiNodeSnapshot:finalize(trainer)
  if self:is_master() then self.snapshot:finalize(trainer) end
end

M.MultiNodeSnapshot = MultiNodeSnapshot

function M.multi_node_snapshot(comm, snapshot, replica_sets)
  return MultiNodeSnapshot(comm, snapshot, replica_sets)
end

return M

-- chainermn/extensions/checkpointer.lua:
-- create_multi_node_checkpointer(name, comm, {cp_interval = 5,
-- gc_interval = 5, path = nil}), as ChainerMN's (which deprecates it for
-- multi_node_snapshot; both are here).
--
-- Every rank saves its own target (the trainer) to '<path>/<name>.<rank>.
-- <iteration>' each time the extension runs.  maybe_load(trainer,
-- optimizer) before trainer:run() finds the newest iteration that every
-- rank has a file for, and every rank loads its own file of that iteration:
-- a killed job resumes there on all ranks.  Only the newest cp_interval
-- common iterations are kept.  The files are removed when training ends
-- without an error (ChainerMN also removes them after an error its trainer
-- caught; kept here, so that the job can resume).
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local fs = require 'chainer._fs'

local M = {}

local Checkpointer = extension.Extension:extend('_MultiNodeCheckpointer')

local function serializers() return require 'chainer.serializers' end

local OPTIONS = args.accept{ 'cp_interval', 'gc_interval', 'path' }

function Checkpointer:init(name, comm, opts)
  local fn = 'create_multi_node_checkpointer'
  if type(name) ~= 'string' or name == '' or name:find('[./]') then
    error(fn .. ": name must be a non-empty string without '.' or '/' (got " .. tostring(name) .. ')', 3)
  end
  if type(comm) ~= 'table' or type(comm.gather_obj) ~= 'function' then
    error(fn .. ': the second argument must be a chainermn communicator (got ' .. type(comm) .. ')', 3)
  end
  opts = args.options(fn, opts, OPTIONS, 3)
  for _, k in ipairs({ 'cp_interval', 'gc_interval' }) do
    local v = opts[k]
    if v ~= nil and (type(v) ~= 'number' or v < 1 or v ~= math.floor(v)) then
      error(string.format('%s: %s must be a positive integer (got %s)', fn, k, tostring(v)), 3)
    end
  end
  self.name, self.comm = name, comm
  self.cp_interval, self.gc_interval = opts.cp_interval or 5, opts.gc_interval or 5
  self.path = opts.path
  if self.path then fs.mkdir_p(self.path) end
  self.files = {}   -- this rank's checkpoint files, oldest first
end

function Checkpointer:_filename(iteration)
  return string.format('%s.%d.%d', self.name, self.comm.rank, iteration)
end

-- name, rank, iteration of one of this checkpointer's files, or nil.
function Checkpointer:_parse(filename)
  local name, rank, it = filename:match('^([^.]+)%.(%d+)%.(%d+)$')
  if name ~= self.name then return nil end
  return tonumber(rank), tonumber(it)
end

-- The newest cp_interval iterations every rank has a file for (a
-- collective); with remove_remainder, this rank's other files go.
function Checkpointer:_sync_file_list(remove_remainder)
  local mine = {}
  for _, f in ipairs(self.files) do
    local _, it = self:_parse(f)
    mine[#mine + 1] = it
  end
  local all = self.comm:gather_obj(mine, 0)
  local common
  if self.comm.rank == 0 then
    local count = {}
    for _, list in ipairs(all) do
      local once = {}
      for _, it in ipairs(list) do
        if not once[it] then once[it], count[it] = true, (count[it] or 0) + 1 end
      end
    end
    common = {}
    for it, c in pairs(count) do if c == #all then common[#common + 1] = it end end
    table.sort(common)
    while #common > self.cp_interval do table.remove(common, 1) end
  end
  common = self.comm:bcast_obj(common, 0)
  local keep = {}
  for i, it in ipairs(common) do keep[i] = self:_filename(it) end
  if remove_remainder then
    local kept = {}
    for _, f in ipairs(keep) do kept[f] = true end
    for _, f in ipairs(self.files) do
      if not kept[f] then os.remove(fs.join(self.path, f)) end
    end
  end
  self.files = keep
  return common
end

-- save(target, iteration): this rank's checkpoint of target (written to a
-- temporary and renamed into place).
function Checkpointer:save(target, iteration)
  if not self.path then
    error('multi-node checkpointer: save needs a folder: create it with {path = ...}, or call maybe_load first ' ..
      '(as a trainer extension it uses trainer.out)', 2)
  end
  if type(iteration) ~= 'number' then error('multi-node checkpointer: save(target, iteration) needs the iteration', 2) end
  fs.mkdir_p(self.path)
  local filename = self:_filename(iteration)
  local ok, err = fs.write_via_temp(fs.join(self.path, filename),
    function(tmp) serializers().save_npz(tmp, target) end, '.npz')
  if not ok then error('multi-node checkpointer: ' .. tostring(err), 2) end
  self.files[#self.files + 1] = filename
  if #self.files - self.cp_interval > self.gc_interval then self:_sync_file_list(true) end
end

Checkpointer.__call = function(self, trainer)
  self.path = self.path or trainer.out
  self:save(trainer, trainer.updater.iteration)
end

-- maybe_load(trainer, optimizer, path): loads the newest checkpoint that
-- every rank has (a collective: call it on every rank).  Returns the
-- iteration loaded, or nil when there is none.  With a multi-node
-- optimizer, its first update then averages gradients instead of
-- broadcasting rank 0's parameters (every rank loaded the same ones).
function Checkpointer:maybe_load(trainer, optimizer, path)
  self.path = self.path or path or trainer.out
  local found = {}
  for _, f in ipairs(fs.listdir(self.path) or {}) do
    local rank, it = self:_parse(f)
    if rank == self.comm.rank then found[#found + 1] = { it, f } end
  end
  table.sort(found, function(a, b) return a[1] < b[1] end)
  self.files = {}
  for i, e in ipairs(found) do self.files[i] = e[2] end
  local common = self:_sync_file_list(false)
  if #common == 0 then return nil end
  local it = common[#common]
  serializers().load_npz(fs.join(self.path, self:_filename(it)), trainer)
  if optimizer ~= nil then optimizer.needs_broadcast = false end
  return it
end

function Checkpointer:on_error() self._failed = true end

-- Training ended: without an error, the checkpoints are no longer needed.
function Checkpointer:finalize()
  if self._failed or not self.path then return end
  for _, f in ipairs(self.files) do os.remove(fs.join(self.path, f)) end
  self.files = {}
end

M.Checkpointer = Checkpointer

function M.create_multi_node_checkpointer(name, comm, opts)
  return Checkpointer(name, comm, opts)
end

return M

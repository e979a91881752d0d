-- snapshot{filename = 'snapshot_iter_{.updater.iteration}', savefun =,
-- target =, condition =, writer =, snapshot_on_error = false,
-- n_retains = -1, autoload = false}: saves the trainer (or `target`), by
-- default once per epoch, priority -100 (after every other extension of
-- the iteration).
--
-- As Chainer's: the target is serialized here (chainer.serializers.serialize,
-- a table {['path/key'] = tensor}) and handed to the writer as
-- writer(filename, outdir, serialized); the default writer is
-- snapshot_writers.SimpleWriter(savefun or save_npz), and a background
-- writer (ProcessWriter, ThreadQueueWriter, ...) lets training go on while
-- the file is written.  savefun and writer cannot be given together.
--
-- The filename is a template over the trainer: '{.updater.iteration}',
-- '{.updater.epoch}' (Chainer's str.format form), or a function(trainer).
-- The built-in writers write a temporary name in <out> and rename it into
-- place, so a crash never leaves a half-written snapshot.  A crash does
-- leave the temporary ('.snapshot_iter_N.tmp-PID-K', maybe with
-- '.tmp-XXXXXX' after it): the next run removes its stale ones (the
-- writer's pid no longer runs, or a day old) when it writes or autoloads
-- there.  autoload loads the newest matching snapshot in <out> during
-- initialize (resume without --resume); n_retains keeps only the newest n
-- files, removed by the writer right after each save (a writer without
-- _add_cleanup_hook, such as a plain function, keeps every file, as Chainer).
local args = require 'chainer._args'
local extension = require 'chainer.training.extension'
local util = require 'chainer.training._util'
local fs = require 'chainer._fs'
local errors = require 'chainer._errors'
local writers = require 'chainer.training.extensions.snapshot_writers'

local Snapshot = extension.Extension:extend('_Snapshot')
Snapshot.trigger = { 1, 'epoch' }
Snapshot.priority = -100

local function serializers()
  local ok, s = pcall(require, 'chainer.serializers')
  if not ok then error('snapshot: chainer.serializers is not available: ' .. tostring(s), 0) end
  return s
end

-- Chainer's snapshot(savefun, filename, *, target, condition, writer,
-- snapshot_on_error, n_retains, autoload) and snapshot_object(target,
-- filename, savefun, *, ...); trigger and priority set the extension's own.
local KEYWORDS = { 'target', 'condition', 'writer', 'snapshot_on_error', 'n_retains', 'autoload', 'trigger',
  'priority' }
local SNAPSHOT_SIGNATURE = args.signature({ 'savefun', 'filename' }, KEYWORDS)
local OBJECT_SIGNATURE = args.signature({ 'savefun' }, { 'condition', 'writer', 'snapshot_on_error', 'n_retains',
  'autoload', 'trigger', 'priority' })

function Snapshot:init(opts)
  opts = args.options('snapshot', opts, SNAPSHOT_SIGNATURE, 3)
  if opts.savefun and opts.writer then error('snapshot: give savefun or writer, not both', 3) end
  if opts.writer ~= nil and type(opts.writer) ~= 'function' and not (type(opts.writer) == 'table'
      and type((getmetatable(opts.writer) or {}).__call) == 'function') then
    error('snapshot: writer must be callable as writer(filename, outdir, target), such as ' ..
      'snapshot_writers.ProcessWriter() (got ' .. type(opts.writer) .. ')', 3)
  end
  self.filename = opts.filename or 'snapshot_iter_{.updater.iteration}'
  self.writer = opts.writer or writers.SimpleWriter(opts.savefun or serializers().save_npz)
  self._target = opts.target
  self._condition = opts.condition
  self._snapshot_on_error = opts.snapshot_on_error == true
  self.n_retains = opts.n_retains or -1
  self.autoload = opts.autoload == true
  if opts.trigger then self.trigger = opts.trigger end
  if opts.priority then self.priority = opts.priority end
end

-- Files in `outdir` that the template could have produced, newest
-- (largest numbers) last.
function Snapshot:_matching_files(outdir)
  if type(self.filename) ~= 'string' then return {} end
  local pat, nfields = util.template_pattern(self.filename)
  local names = fs.listdir(outdir) or {}
  local found = {}
  for _, name in ipairs(names) do
    local caps = { name:match(pat) }
    if caps[1] ~= nil and (nfields > 0 or name == self.filename) then
      local nums = {}
      for i, c in ipairs(caps) do nums[i] = tonumber(c) or 0 end
      found[#found + 1] = { name = name, nums = nums }
    end
  end
  table.sort(found, function(a, b)
    for i = 1, math.max(#a.nums, #b.nums) do
      local x, y = a.nums[i] or 0, b.nums[i] or 0
      if x ~= y then return x < y end
    end
    return a.name < b.name
  end)
  return found
end

-- Removes the temporaries that crashed writes of this extension's files
-- left in `outdir` (chainer._fs.remove_stale_temporaries: never those of a
-- writer still running).  `current`: the name about to be written.
function Snapshot:_remove_stale_temporaries(outdir, current)
  local pat, nfields = nil, 0
  if type(self.filename) == 'string' then pat, nfields = util.template_pattern(self.filename) end
  fs.remove_stale_temporaries(outdir, function(base)
    if base == current then return true end
    if pat == nil then return false end
    if nfields == 0 then return base == self.filename end
    return base:match(pat) ~= nil
  end)
end

function Snapshot:initialize(trainer)
  local outdir = trainer.out
  if self.autoload then
    self:_remove_stale_temporaries(outdir)
    local files = self:_matching_files(outdir)
    local latest = files[#files]
    if latest then
      local target = self._target or trainer
      local ok, err = pcall(serializers().load_npz, fs.join(outdir, latest.name), target)
      if not ok then error('snapshot: autoload failed: ' .. errors.clean(err), 0) end
    end
  end
  -- n_retains: the writer removes the oldest files right after each save
  -- (in its own process for a background writer), once per writer.
  local writer = self.writer
  if type(writer) == 'table' and writer._add_cleanup_hook and self.n_retains > 0 and type(self.filename) == 'string'
      and not self._cleanup_added then
    self._cleanup_added = true
    writer:_add_cleanup_hook(function()
      local files = self:_matching_files(outdir)
      for i = 1, #files - self.n_retains do os.remove(fs.join(outdir, files[i].name)) end
    end)
  end
end

function Snapshot:_make_snapshot(trainer)
  local target = self._target or trainer
  local filename = util.format_template(self.filename, trainer)
  local outdir = trainer.out
  fs.mkdir_p(outdir)
  self:_remove_stale_temporaries(outdir, filename)
  local serialized = serializers().serialize(target)
  local ok, err = pcall(self.writer, filename, outdir, serialized)
  if not ok then error('snapshot: ' .. errors.clean(err), 0) end
end

Snapshot.__call = function(self, trainer)
  if self._condition == nil or self._condition() then self:_make_snapshot(trainer) end
end

function Snapshot:on_error(trainer)
  if self._snapshot_on_error then self:_make_snapshot(trainer) end
end

function Snapshot:finalize()
  local writer = self.writer
  if type(writer) == 'table' and type(writer.finalize) == 'function' then
    local ok, err = pcall(writer.finalize, writer)
    if not ok then error('snapshot: ' .. errors.clean(err), 0) end
  end
end

local M = {}
M.Snapshot = Snapshot

-- snapshot(opts) / snapshot(savefun, filename, opts): the trainer (or
-- opts.target) as an extension.
function M.snapshot(...)
  return Snapshot(args.parse_at(2, 'snapshot', SNAPSHOT_SIGNATURE, select('#', ...), ...))
end

-- snapshot_object(target, filename, opts) / (target, filename, savefun,
-- opts): one object (a model, an optimizer).
function M.snapshot_object(target, filename, ...)
  if type(target) ~= 'table' then
    error('snapshot_object: target must be a Link, an Optimizer or another serializable object', 2)
  end
  if type(filename) ~= 'string' and type(filename) ~= 'function' then
    error("snapshot_object: filename must be a template such as 'model_epoch-{.updater.epoch}'", 2)
  end
  local o = args.parse_at(2, 'snapshot_object', OBJECT_SIGNATURE, select('#', ...), ...)
  o.target = target
  o.filename = filename
  return Snapshot(o)
end

return M

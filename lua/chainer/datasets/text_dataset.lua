-- datasets/text_dataset.lua: TextDataset, a line-based dataset read lazily.
--
-- TextDataset(paths, {filter_func = fn}): paths is one file name or a Lua
-- array of them (of equal line counts).  Example i is line i of the file
-- (with its newline, as Chainer's readline gives it), or with several files
-- the tuple {line of file 1, line of file 2, ...}.  filter_func(line1, ...)
-- returning false drops a line (pair).  Only line offsets are kept in memory.
local args = require 'chainer._args'
local DatasetMixin = require 'chainer.dataset.dataset_mixin'

local TextDataset = DatasetMixin:extend('TextDataset')

-- Options by name only: of Chainer's (paths, encoding, errors, newline,
-- filter_func) chainlua implements filter_func (files are read as bytes).
local OPTIONS = args.accept { 'filter_func' }

function TextDataset:init(paths, opts)
  opts = args.options('TextDataset', opts, OPTIONS, 3)
  if type(paths) == 'string' then paths = { paths } end
  if type(paths) ~= 'table' or #paths == 0 then
    error(string.format('TextDataset: paths must be a file name or a Lua array of them (got %s)', type(paths)), 3)
  end
  local filter = opts.filter_func
  local files, offsets = {}, {}
  for k, p in ipairs(paths) do
    local f, err = io.open(p, 'rb')
    if not f then error(string.format("TextDataset: cannot open '%s' (%s)", tostring(p), tostring(err)), 3) end
    files[k] = f
  end
  local n = #paths
  local pos = {}
  for k = 1, n do pos[k] = 0 end
  local lines = {}
  while true do
    local got = 0
    for k = 1, n do
      local l = files[k]:read('*L')
      lines[k] = l
      if l ~= nil then got = got + 1 end
    end
    if got == 0 then break end
    if got ~= n then
      for k = 1, n do files[k]:close() end
      local short = 1
      for k = 1, n do if lines[k] == nil then short = k break end end
      error(string.format("TextDataset: the files have different numbers of lines ('%s' ends first)",
        tostring(paths[short])), 3)
    end
    local keep = true
    if filter then keep = filter(unpack(lines, 1, n)) end
    if keep then
      local e = {}
      for k = 1, n do e[k] = pos[k] end
      offsets[#offsets + 1] = e
    end
    for k = 1, n do pos[k] = pos[k] + #lines[k] end
  end
  self._files, self._offsets, self._n, self._paths = files, offsets, n, paths
end

function TextDataset:len() return #self._offsets end

function TextDataset:get_example(i)
  local off = self._offsets[i]
  local out = {}
  for k = 1, self._n do
    local f = self._files[k]
    f:seek('set', off[k])
    out[k] = f:read('*L')
  end
  if self._n == 1 then return out[1] end
  return out
end

function TextDataset:close()
  for _, f in ipairs(self._files) do pcall(f.close, f) end
end

return TextDataset

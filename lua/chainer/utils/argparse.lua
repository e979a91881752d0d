-- utils/argparse.lua: a small command-line parser for the examples, with
-- Python argparse's spelling of options.
--
--   local ap = require('chainer.utils.argparse')('Chainer example: MNIST')
--   ap:option('--batchsize', '-b', {type = 'number', default = 100, help = '...'})
--   ap:flag('--noplot', {help = 'Disable PlotReport extension'})
--   local args = ap:parse(arg)      -- args.batchsize, args.noplot
--
-- `--name value` and `--name=value` both work; --help prints the usage and
-- exits.  Dashes in names become underscores in the result.
local args = require 'chainer._args'
local Parser = {}
Parser.__index = Parser

local function new(description)
  return setmetatable({ description = description, opts = {}, by_name = {} }, Parser)
end

local function key_of(long) return (long:gsub('^%-%-', ''):gsub('%-', '_')) end

-- option(long, [short], {type = 'number'|'string', default =, help =, aliases = {...}})
local OPTION_SPEC = args.accept { 'type', 'default', 'help', 'aliases', 'dest', 'metavar' }
local FLAG_SPEC = args.accept { 'help', 'dest', 'aliases' }

function Parser:option(long, short, spec)
  if type(short) == 'table' then short, spec = nil, short end
  spec = args.options('argparse option ' .. tostring(long), spec, OPTION_SPEC)
  local o = { long = long, short = short, type = spec.type or 'string', default = spec.default,
    help = spec.help or '', key = spec.dest or key_of(long), flag = false, metavar = spec.metavar }
  self.opts[#self.opts + 1] = o
  self.by_name[long] = o
  if short then self.by_name[short] = o end
  for _, a in ipairs(spec.aliases or {}) do self.by_name[a] = o end
  return self
end

-- flag(long, [short], {help =}): a store_true option.
function Parser:flag(long, short, spec)
  if type(short) == 'table' then short, spec = nil, short end
  spec = args.options('argparse flag ' .. tostring(long), spec, FLAG_SPEC)
  self:option(long, short, { default = false, help = spec.help, dest = spec.dest, aliases = spec.aliases })
  self.by_name[long].flag = true
  return self
end

function Parser:usage()
  local lines = { 'usage: ' .. (self.prog or 'chainlua script.lua') .. ' [options]', '' }
  if self.description then lines[#lines + 1] = self.description lines[#lines + 1] = '' end
  lines[#lines + 1] = 'options:'
  lines[#lines + 1] = '  -h, --help            show this help message and exit'
  for _, o in ipairs(self.opts) do
    local names = (o.short and (o.short .. ', ') or '') .. o.long
    if not o.flag then names = names .. ' ' .. (o.metavar or o.key:upper()) end
    local help = o.help
    if not o.flag and o.default ~= nil then help = help .. ' (default: ' .. tostring(o.default) .. ')' end
    -- as Python's argparse: an option too wide for its column puts its help
    -- on the next line
    if #names > 20 then
      lines[#lines + 1] = '  ' .. names
      lines[#lines + 1] = string.rep(' ', 24) .. help
    else
      lines[#lines + 1] = string.format('  %-22s%s', names, help)
    end
  end
  return table.concat(lines, '\n') .. '\n'
end

-- parse(argv) -> table of values; errors name the option.
function Parser:parse(argv)
  argv = argv or {}
  local out = {}
  for _, o in ipairs(self.opts) do out[o.key] = o.default end
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == '-h' or a == '--help' then
      io.stdout:write(self:usage())
      os.exit(0)
    end
    local name, value = a:match('^(%-%-[^=]+)=(.*)$')
    if not name then name = a end
    local o = self.by_name[name]
    if not o then
      io.stderr:write(self:usage())
      error('argparse: unrecognized argument ' .. a, 0)
    end
    if o.flag then
      out[o.key] = true
    else
      if value == nil then
        i = i + 1
        value = argv[i]
        if value == nil then error('argparse: argument ' .. name .. ': expected one value', 0) end
      end
      if o.type == 'number' then
        local n = tonumber(value)
        if n == nil then error('argparse: argument ' .. name .. ": invalid number value '" .. value .. "'", 0) end
        value = n
      end
      out[o.key] = value
    end
    i = i + 1
  end
  return out
end

return new

-- spec/host/util.lua: running the chainlua executable from specs.
local fs = require 'chainer._fs'
local M = {}

local root = (debug.getinfo(1, 'S').source:sub(2):match('^(.*)/spec/host/[^/]*$')) or '.'
if root == '.' then root = os.getenv('PWD')
elseif root:sub(1, 1) ~= '/' then root = os.getenv('PWD') .. '/' .. root:gsub('^%./', '') end
M.root = root
M.build = os.getenv('CHAINLUA_BUILD') or (root .. '/build')
M.exe = M.build .. '/chainlua'

M.exists = fs.exists

function M.quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

M.read = fs.read_file

function M.write(path, text)
  local f = assert(io.open(path, 'wb'))
  f:write(text)
  f:close()
end

-- Runs a shell command line; returns stdout, stderr, exit status.
-- opts.stdin: text fed to standard input; opts.env: 'A=1 B=2' prefix.
function M.run(cmdline, opts)
  opts = opts or {}
  local out, err, inp = os.tmpname(), os.tmpname(), nil
  local redirect = ''
  if opts.stdin then
    inp = os.tmpname()
    M.write(inp, opts.stdin)
    redirect = ' < ' .. inp
  else
    redirect = ' < /dev/null'
  end
  local full = string.format('%s%s%s > %s 2> %s; echo $? >> %s', opts.env and (opts.env .. ' ') or '',
    cmdline, redirect, out, err, err)
  os.execute(full)
  local o, e = M.read(out), M.read(err)
  os.remove(out); os.remove(err)
  if inp then os.remove(inp) end
  local status = tonumber(e:match('(%d+)\n$'))
  e = e:gsub('%d+\n$', '')
  return o, e, status
end

-- Runs chainlua with the given argument string.
function M.chainlua(args, opts)
  return M.run(M.quote(M.exe) .. ' ' .. (args or ''), opts)
end

return M

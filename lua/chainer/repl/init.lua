-- chainer.repl: the Lua side of the `chainlua` REPL and of `chainlua -e`.
--
-- runtime/host/repl.c keeps only the terminal glue (libedit, the read
-- loop); what the REPL does with a line is decided here, in Lua, where
-- specs can call it without a terminal:
--
--   repl.preload([env])               the globals of the REPL and of -e:
--                                     chainer, F, L, optimizers, help
--   repl.rewrite(chunk)               `?expr` -> a chunk that returns help's text
--   repl.print(...)                   prints values readably (repl/show.lua)
--   repl.complete(line, word_start)   Tab: replacements for the word libedit
--                                     is completing (repl/complete.lua)
--   repl.help(obj [, method])         help(obj) (repl/help.lua)
local M = {}

-- name of the global, module; loaded in this order
M.preloaded = {
  { 'chainer', 'chainer' },
  { 'F', 'chainer.functions' },
  { 'L', 'chainer.links' },
  { 'optimizers', 'chainer.optimizers' },
}

-- Sets the preloaded globals in env (default _G).  A module that does not
-- exist is skipped; any other failure is written to stderr (and the rest
-- still load).  `help` is set when env has none.
function M.preload(env)
  env = env or _G
  for i, entry in ipairs(M.preloaded) do
    local global, name = entry[1], entry[2]
    local ok, mod = xpcall(require, debug.traceback, name)
    if ok then
      rawset(env, global, mod)
    elseif not tostring(mod):find("module '" .. name .. "' not found", 1, true) then
      io.stderr:write('chainlua: cannot load ', name, ': ', tostring(mod), '\n')
      if i == 1 then return end   -- without chainer the others cannot load
    elseif i == 1 then
      return
    end
  end
  if rawget(env, 'help') == nil then
    rawset(env, 'help', function(...) return require('chainer.repl.help').help(...) end)
  end
end

-- `?F.relu` or `? x:reshape` at the start of a chunk asks for help.
function M.rewrite(chunk)
  local what = chunk:match('^%s*%?%s*(.-)%s*$')
  if not what then return chunk end
  return string.format('return require("chainer.repl.help").text(%q)', what)
end

function M.print(...)
  if select('#', ...) == 0 then return end
  io.write(require('chainer.repl.show').values(...), '\n')
end

function M.complete(line, word_start)
  return require('chainer.repl.complete').for_readline(line, word_start)
end

function M.help(...)
  return require('chainer.repl.help').help(...)
end

return M

-- The check lines the programs that chainermn_spec.lua starts print, one
-- per rank and check, which the spec reads back:
--   check <name> rank <r> ok
--   check <name> rank <r> FAIL <message>
--   local check, expect = require('spec.chainermn.rank_checks')(comm.rank)
return function(rank)
  local function check(name, fn)
    local ok, err = pcall(fn)
    io.write(string.format('check %s rank %d %s\n', name, rank, ok and 'ok' or ('FAIL ' .. tostring(err):gsub('\n', ' '))))
    io.flush()
  end
  local function expect(cond, msg) if not cond then error(msg, 2) end end
  return check, expect
end

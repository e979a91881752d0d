-- oracle.lua: runs chainlua against the real-Chainer reference vectors.
-- usage: chainlua scripts/oracle.lua [DIR] [--filter TEXT] [--verbose] [--allow-missing]
-- Prints "oracle: N of M cases pass" (function and link cases) and
-- "oracle: N of M optimizer trajectories pass", then one line per failing
-- case.  Exit status 1 when a case fails; a case whose function does not
-- exist counts as failing unless --allow-missing is given.  DIR defaults to
-- vectors-v2, the 722 cases make test runs (vectors/, the first 471, is
-- kept in shared/ but no longer read).
local dir, filter, verbose, allow_missing = '../shared/oracle/vectors-v2', nil, false, false
local i = 1
while arg[i] do
  local a = arg[i]
  if a == '--filter' then i = i + 1; filter = arg[i]
  elseif a == '--verbose' then verbose = true
  elseif a == '--allow-missing' then allow_missing = true
  else dir = a end
  i = i + 1
end
local oracle = require 'chainer.testing.oracle'
local s = oracle.run(dir, { filter = filter, verbose = verbose })

local function line(what, g)
  print(string.format('oracle: %d of %d %s pass (%d failing, %d not implemented yet)',
    g.passed, g.total, what, g.failed, g.not_implemented))
end
line('cases', s.cases)
line('optimizer trajectories', s.optimizers)
for _, f in ipairs(s.failures) do print('FAIL ' .. f) end
local names = {}
for what, n in pairs(s.missing) do names[#names + 1] = string.format('%s (%d)', what, n) end
table.sort(names)
if #names > 0 then print('not implemented yet: ' .. table.concat(names, ', ')) end
local missing = s.cases.not_implemented + s.optimizers.not_implemented
local bad = s.cases.failed + s.optimizers.failed > 0 or (not allow_missing and missing > 0)
os.exit(bad and 1 or 0)

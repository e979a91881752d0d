-- chainermn.DataSizeError: a collective's payload is larger than one MPI
-- call can move (MPI counts are C ints: at most 2147483647 bytes).
--
-- Raised as a table, so that a caller can tell it from other failures:
--   local ok, err = pcall(comm.bcast_obj, comm, huge)
--   if chainermn.DataSizeError.is(err) then ... err.collective, err.size, err.limit ... end
-- tostring(err) is the message, which names the collective and the sizes.
-- Fields: collective (the method's name), size (bytes; nil where this rank
-- does not know it: another rank's value was too large), limit (bytes),
-- message.  Every rank of the collective raises it, not only the one whose
-- value was too large, so no rank is left waiting.
local M = {}

local DataSizeError = { __name = 'DataSizeError' }
DataSizeError.__index = DataSizeError
DataSizeError.__tostring = function(e) return e.message end
M.DataSizeError = DataSizeError

-- Whether err (from pcall) is a DataSizeError.
function DataSizeError.is(err) return getmetatable(err) == DataSizeError end

-- DataSizeError.new(collective, what, size, limit): `what` says whose
-- payload ('the value', "rank 1's value", 'the values together').
function DataSizeError.new(collective, what, size, limit)
  local verb = (what:match('s$') or what:match('together$')) and 'are' or 'is'
  local message
  if size then
    message = string.format('%s: %s %s too large to send (%.0f bytes; one MPI call takes at most %.0f)', collective,
      what, verb, size, limit)
  else
    message = string.format('%s: %s %s too large to send (over %.0f bytes, the most one MPI call takes)', collective,
      what, verb, limit)
  end
  return setmetatable({ collective = collective, size = size, limit = limit, message = message }, DataSizeError)
end

-- DataSizeError.raise(...): new(...) raised as the error.
function DataSizeError.raise(collective, what, size, limit)
  error(DataSizeError.new(collective, what, size, limit), 0)
end

return M

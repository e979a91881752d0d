-- dataset/download.lua: the dataset root, downloads and the convert-once cache.
--
--   get_dataset_root()           set_dataset_root(path) > $CHAINER_DATASET_ROOT >
--                                ~/.chainer/dataset  (read on each call)
--   get_dataset_directory(name)  <root>/<name>, created unless create == false
--   cached_download(url)         <root>/_dl_cache/<md5 of url> (Chainer's layout),
--                                fetched with the `curl` command when missing
--   cache_or_load_file(path, creator, loader)
--                                loader(path) when path exists; otherwise
--                                creator(tmp) writes a temporary beside path,
--                                which is renamed into place (atomic)
--   download(url, dest)          curl to dest.part-XXXX, progress on stderr, rename
local md5 = require 'chainer.dataset.md5'
local fs = require 'chainer._fs'

local M = {}

local root_override = nil

local function home()
  return os.getenv('HOME') or '/tmp'
end

function M.get_dataset_root()
  if root_override then return root_override end
  local env = os.getenv('CHAINER_DATASET_ROOT')
  if env and env ~= '' then return env end
  return home() .. '/.chainer/dataset'
end

-- Where the root came from, for error messages: a newcomer whose data is
-- "missing" has most often not set CHAINER_DATASET_ROOT at all.
function M.describe_dataset_root()
  local root = M.get_dataset_root()
  if root_override then return string.format("the dataset root is '%s', set by set_dataset_root", root) end
  local env = os.getenv('CHAINER_DATASET_ROOT')
  if env and env ~= '' then return string.format("the dataset root is $CHAINER_DATASET_ROOT, now '%s'", root) end
  return string.format("CHAINER_DATASET_ROOT is unset, so the dataset root is the default '%s'", root)
end

function M.set_dataset_root(path)
  if path ~= nil and (type(path) ~= 'string' or path == '') then
    error(string.format('set_dataset_root: path must be a non-empty string or nil (got %s)', type(path)), 2)
  end
  root_override = path
end

-- Shell-quotes one argument.
local function q(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end
M.shell_quote = q

-- os.execute's success across Lua 5.1 (status number) and 5.2 (true/nil).
local function run(cmd)
  local r = os.execute(cmd)
  return r == 0 or r == true
end
M.run = run

-- True when files can be created in `dir` (creating it if needed).  A
-- folder whose permission bits deny writing counts as read-only even for
-- root (who could write there anyway): shared data folders stay untouched.
function M.writable_dir(dir)
  local probe_dir = dir
  while not fs.is_dir(probe_dir) do
    local parent = probe_dir:match('^(.*)/[^/]*$')
    if parent == nil or parent == '' or parent == probe_dir then break end
    probe_dir = parent
  end
  if fs.is_dir(probe_dir) and not run('test -w ' .. q(probe_dir) .. ' && test -n "$(find ' .. q(probe_dir) ..
      ' -maxdepth 0 -perm -u+w 2>/dev/null)"') then
    return false
  end
  if not fs.mkdir_p(dir) then return false end
  local probe = string.format('%s/.chainlua-write-test-%d', dir, math.random(1, 2^30))
  local f = io.open(probe, 'wb')
  if not f then return false end
  f:close()
  os.remove(probe)
  return true
end

function M.get_dataset_directory(name, create)
  if type(name) ~= 'string' or name == '' then
    error(string.format('get_dataset_directory: name must be a non-empty string (got %s)', type(name)), 2)
  end
  local path = M.get_dataset_root() .. '/' .. name
  if create ~= false and not fs.mkdir_p(path) then
    error(string.format("get_dataset_directory: cannot create '%s'", path), 2)
  end
  return path
end

-- A writable folder for converted files when the dataset root is read-only:
-- $CHAINLUA_CACHE_DIR, else $XDG_CACHE_HOME/chainlua/dataset, else
-- ~/.cache/chainlua/dataset; one sub-folder per dataset root.
function M.cache_dir_for_root(root)
  local base = os.getenv('CHAINLUA_CACHE_DIR')
  if not base or base == '' then
    local xdg = os.getenv('XDG_CACHE_HOME')
    base = ((xdg and xdg ~= '') and xdg or (home() .. '/.cache')) .. '/chainlua/dataset'
  end
  return base .. '/' .. md5(root):sub(1, 12)
end

-- download(url, dest, [fn]): fetches url into dest (atomically).  Returns
-- true, or false and a reason.  Progress goes to stderr.
function M.download(url, dest)
  if not run('command -v curl >/dev/null 2>&1') then
    return false, 'the curl command is not installed'
  end
  local tmp = fs.temp_path(dest)
  io.stderr:write(string.format('Downloading from %s...\n', url))
  io.stderr:flush()
  local timeout = os.getenv('CHAINLUA_DOWNLOAD_CONNECT_TIMEOUT') or '20'
  local ok = run(string.format('curl -fL --connect-timeout %s --progress-bar -o %s %s',
    q(timeout), q(tmp), q(url)))
  if not ok or not fs.exists(tmp) then
    os.remove(tmp)
    return false, 'curl could not download it (offline, or the address is unreachable)'
  end
  local moved, err = fs.replace(tmp, dest)
  if not moved then return false, 'cannot move the download into place: ' .. err end
  return true
end

function M.cached_download(url)
  if type(url) ~= 'string' or url == '' then
    error(string.format('cached_download: url must be a non-empty string (got %s)', type(url)), 2)
  end
  local dir = M.get_dataset_root() .. '/_dl_cache'
  local path = dir .. '/' .. md5(url)
  if fs.exists(path) then return path end
  if not fs.mkdir_p(dir) then
    error(string.format("cached_download: cannot create the download cache '%s'", dir), 2)
  end
  local ok, why = M.download(url, path)
  if not ok then
    error(string.format('cached_download: cannot download %s: %s', url, why), 2)
  end
  return path
end

function M.cache_or_load_file(path, creator, loader)
  if type(path) ~= 'string' or path == '' then
    error(string.format('cache_or_load_file: path must be a non-empty string (got %s)', type(path)), 2)
  end
  if type(creator) ~= 'function' and not (type(creator) == 'table' and getmetatable(creator)) then
    error('cache_or_load_file: creator must be a function', 2)
  end
  if fs.exists(path) then return loader(path) end
  local dir = path:match('^(.*)/[^/]*$')
  if dir and dir ~= '' and not fs.mkdir_p(dir) then
    error(string.format("cache_or_load_file: cannot create the folder '%s'", dir), 2)
  end
  -- the temporary ends in .npz: numpy-style writers append it otherwise
  local tmp = fs.temp_path(path, '.npz')
  local ok, content = pcall(creator, tmp)
  if not ok then
    os.remove(tmp)
    error(content, 0)
  end
  if fs.exists(path) then
    os.remove(tmp)   -- another process finished first
  else
    local moved, err = fs.replace(tmp, path)
    if not moved then error('cache_or_load_file: ' .. err, 2) end
  end
  return content
end

return M

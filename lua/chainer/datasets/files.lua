-- datasets/files.lua: where the dataset loaders find, fetch and cache files.
--
-- A raw file `name` of dataset folder `dir` (e.g. 'mnist') is looked for in
--   <root>/<dir>/<name>                 the flat layout (shared/data)
--   <root>/_dl_cache/<md5 of its URL>   Chainer's download cache
--   any extra folder the loader names   (e.g. Debian's dataset packages)
-- and otherwise downloaded with curl into <root>/<dir>/<name> (or, when the
-- root is read-only, into the cache folder below).  $CHAINER_DATASET_URL_BASE,
-- when set, replaces every download address's folder: <base>/<name>.
--
-- Converted files (.npz) go to <root>/pfnet/chainer/<dir>/, Chainer's
-- layout, when the root is writable, and otherwise to a per-root cache
-- folder ($CHAINLUA_CACHE_DIR, $XDG_CACHE_HOME/chainlua/dataset or
-- ~/.cache/chainlua/dataset).
local dl = require 'chainer.dataset.download'
local fs = require 'chainer._fs'
local md5 = require 'chainer.dataset.md5'
local errors = require 'chainer._errors'

local M = {}

local writable_cache = {}

local function root_writable(root)
  local v = writable_cache[root]
  if v == nil then
    v = dl.writable_dir(root)
    writable_cache[root] = v
  end
  return v
end

-- Folder for converted files of `sub` (e.g. 'pfnet/chainer/mnist').
function M.converted_dir(sub)
  local root = dl.get_dataset_root()
  if root_writable(root) and fs.mkdir_p(root .. '/' .. sub) then return root .. '/' .. sub end
  local dir = dl.cache_dir_for_root(root) .. '/' .. sub
  if not fs.mkdir_p(dir) then
    error(string.format("datasets: neither the dataset root '%s' nor the cache folder '%s' is writable",
      root, dir), 3)
  end
  return dir
end

-- The existing converted file `name` of `sub`, or nil.
function M.find_converted(sub, name)
  local root = dl.get_dataset_root()
  local p = root .. '/' .. sub .. '/' .. name
  if fs.exists(p) then return p end
  p = dl.cache_dir_for_root(root) .. '/' .. sub .. '/' .. name
  if fs.exists(p) then return p end
  return nil
end

-- f as the public loader `fn`: whatever fails inside (a missing file, a
-- damaged cache, a reader's error) is raised at the user's call and named
-- as fn's, without chainlua's own file positions (chainer._errors).
function M.public(fn, f)
  errors.add_inner(fn)
  local function finish(ok, ...)
    if not ok then errors.raise(fn, (...), 2) end
    return ...
  end
  return function(...) return finish(pcall(f, ...)) end
end

function M.url_for(url)
  local base = os.getenv('CHAINER_DATASET_URL_BASE')
  if base and base ~= '' then
    return (base:gsub('/+$', '')) .. '/' .. url:match('([^/]+)$')
  end
  return url
end

-- The path of raw file `name` (downloading it from `url` when missing).
-- fn names the loader in errors; extra_dirs are more folders to look in.
function M.raw_file(fn, dir, name, url, extra_dirs)
  local root = dl.get_dataset_root()
  local flat = root .. '/' .. dir .. '/' .. name
  if fs.exists(flat) then return flat end
  local cached = root .. '/_dl_cache/' .. md5(url)
  if fs.exists(cached) then return cached end
  for _, d in ipairs(extra_dirs or {}) do
    local p = d .. '/' .. name
    if fs.exists(p) then return p end
  end
  local target
  if root_writable(root) and fs.mkdir_p(root .. '/' .. dir) then
    target = flat
  else
    local cdir = dl.cache_dir_for_root(root) .. '/' .. dir
    target = cdir .. '/' .. name
    if fs.exists(target) then return target end
    fs.mkdir_p(cdir)
  end
  local src = M.url_for(url)
  local ok, why = dl.download(src, target)
  if not ok then
    error(string.format("%s: the file '%s' is missing and cannot be downloaded from %s (%s). " ..
      "Put %s at %s (%s), or set CHAINER_DATASET_ROOT to a folder that has %s/%s",
      fn, name, src, why, name, flat, dl.describe_dataset_root(), dir, name), 3)
  end
  return target
end

return M

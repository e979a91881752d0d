-- chainer._fs: exists, is_dir, mkdir_p, listdir, read_file and atomic
-- writes (a temporary in the same folder, renamed over the target).
local fs = require 'chainer._fs'
local libc = require 'chainer._libc'

local function fresh_dir()
  local d = os.tmpname()
  os.remove(d)
  return d
end

local function rm_rf(d) os.execute("rm -rf '" .. d .. "'") end

describe('chainer._fs', function()
  local root
  before_each(function() root = fresh_dir() end)
  after_each(function() rm_rf(root) end)

  it('mkdir_p creates missing parents, accepts an existing folder and reports failure', function()
    assert.is_false(fs.exists(root))
    assert.is_true(fs.mkdir_p(root .. '/a/b/c'))
    assert.is_true(fs.is_dir(root .. '/a/b/c'))
    assert.is_true(fs.mkdir_p(root .. '/a/b/c'))        -- already there
    assert.is_true(fs.mkdir_p(root .. '/a//b/'))        -- doubled and trailing slashes
    assert.is_true(fs.atomic_write(root .. '/file', 'x'))
    assert.is_false(fs.mkdir_p(root .. '/file/sub'))    -- a file is in the way
    assert.is_false(fs.mkdir_p(''))
  end)

  it('exists and is_dir tell files from folders', function()
    fs.mkdir_p(root)
    assert.is_true(fs.atomic_write(root .. '/f.txt', 'hello'))
    assert.is_true(fs.exists(root .. '/f.txt'))
    assert.is_false(fs.is_dir(root .. '/f.txt'))
    assert.is_true(fs.is_dir(root))
    assert.is_false(fs.exists(root .. '/missing'))
    assert.is_false(fs.is_dir(root .. '/missing'))
  end)

  it('atomic_write replaces the whole file and leaves no temporary behind', function()
    fs.mkdir_p(root)
    local path = root .. '/data.bin'
    assert.is_true(fs.atomic_write(path, 'first version, longer'))
    assert.is_true(fs.atomic_write(path, 'second\0binary'))
    assert.equal('second\0binary', fs.read_file(path))
    assert.same({ 'data.bin' }, fs.listdir(root))
  end)

  it('atomic_write returns nil and a message when the folder is missing', function()
    local ok, err = fs.atomic_write(root .. '/no/such/dir/f', 'x')
    assert.is_nil(ok)
    assert.matches("write_file: cannot create '.*no/such/dir/f'", err)
  end)

  it('temp_path stays in the same folder, is hidden and unique', function()
    local a, b = fs.temp_path('/x/y/out.npz'), fs.temp_path('/x/y/out.npz')
    assert.not_equal(a, b)
    assert.matches('^/x/y/%.out%.npz%.tmp%-' .. libc.getpid() .. '%-%d+$', a)
    assert.matches('%.npz$', fs.temp_path('/x/y/out', '.npz'))
    assert.matches('^%.out%.tmp', fs.temp_path('out'))
  end)

  it('write_via_temp moves the finished file into place and cleans up after an error', function()
    fs.mkdir_p(root)
    local path = root .. '/snap'
    local ok, r = fs.write_via_temp(path, function(tmp)
      local f = assert(io.open(tmp, 'wb'))
      f:write('payload')
      f:close()
      return 42
    end)
    assert.is_true(ok)
    assert.equal(42, r)
    assert.equal('payload', fs.read_file(path))
    local raised = pcall(fs.write_via_temp, root .. '/broken', function(tmp)
      local f = assert(io.open(tmp, 'wb'))
      f:write('half')
      f:close()
      error('writer failed')
    end)
    assert.is_false(raised)
    assert.same({ 'snap' }, fs.listdir(root))
  end)

  it('listdir lists names (hidden ones too) and gives nil for a missing folder', function()
    fs.mkdir_p(root .. '/sub')
    fs.atomic_write(root .. '/.hidden', '')
    local names = fs.listdir(root)
    table.sort(names)
    assert.same({ '.hidden', 'sub' }, names)
    assert.is_nil(fs.listdir(root .. '/missing'))
  end)

  it('join adds one slash and keeps absolute names', function()
    assert.equal('a/b', fs.join('a', 'b'))
    assert.equal('a/b', fs.join('a/', 'b'))
    assert.equal('/abs', fs.join('a', '/abs'))
    assert.equal('b', fs.join('', 'b'))
  end)
end)

describe('chainer._libc', function()
  it('has a monotonic clock, isatty and setenv', function()
    local t0 = libc.monotonic()
    assert.is_true(libc.monotonic() >= t0)
    assert.is_boolean(libc.isatty(1))
    libc.setenv('CHAINLUA_FS_SPEC_PROBE', 'yes')
    assert.equal('yes', os.getenv('CHAINLUA_FS_SPEC_PROBE'))
    libc.setenv('CHAINLUA_FS_SPEC_PROBE', nil)
    assert.is_nil(os.getenv('CHAINLUA_FS_SPEC_PROBE'))
  end)
end)

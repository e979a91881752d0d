-- The documentation as a reader meets it (issue 18): every relative link of
-- README.md, docs/ and the example READMEs resolves (#anchors included),
-- every page of docs/ can be reached from README.md, nothing points outside
-- the repository, and the README opens with what a newcomer needs.
local fs = require 'chainer._fs'

local read = require('helpers').read_file

-- Every .md file under dir (relative paths, sorted).
local function markdown_under(dir, out)
  out = out or {}
  for _, name in ipairs(fs.listdir(dir)) do
    local p = dir .. '/' .. name
    if fs.is_dir(p) then markdown_under(p, out)
    elseif name:match('%.md$') then out[#out + 1] = p end
  end
  table.sort(out)
  return out
end

local function pages()
  local list = { 'README.md' }
  for _, p in ipairs(markdown_under('docs')) do list[#list + 1] = p end
  for _, name in ipairs(fs.listdir('examples')) do
    if fs.exists('examples/' .. name .. '/README.md') then list[#list + 1] = 'examples/' .. name .. '/README.md' end
  end
  return list
end

-- The text outside code blocks (and, for links, outside code spans).
local function without_code_blocks(text)
  return (text:gsub('\n```.-\n```', '\n'):gsub('^```.-\n```', ''))
end
local function prose(text)
  return (without_code_blocks(text):gsub('`[^`\n]*`', ''))
end

-- Relative link targets of a page: { {target =, line =} }.
local function links_of(text)
  local out = {}
  for target in prose(text):gmatch('%]%(([^)%s]+)%)') do
    if not target:match('^%a[%w+.-]*:') then out[#out + 1] = target end
  end
  return out
end

-- a/b/../c -> a/c; nil when the path climbs out of the repository.
local function normalize(path)
  local parts = {}
  for part in path:gmatch('[^/]+') do
    if part == '..' then
      if #parts == 0 then return nil end
      parts[#parts] = nil
    elseif part ~= '.' then
      parts[#parts + 1] = part
    end
  end
  return table.concat(parts, '/')
end

local function dir_of(page) return page:match('^(.*)/[^/]*$') or '' end

-- GitHub's anchors of a page's headings: lower case, punctuation dropped,
-- spaces made dashes; a repeated heading gets -1, -2, ...
local function anchors_of(text)
  local set, seen = {}, {}
  for line in (without_code_blocks(text) .. '\n'):gmatch('([^\n]*)\n') do
    local title = line:match('^#+%s+(.-)%s*$')
    if title then
      local slug = title:lower():gsub('[^%w%s_%-]', ''):gsub('%s', '-')
      if seen[slug] then
        seen[slug] = seen[slug] + 1
        slug = slug .. '-' .. seen[slug]
      else
        seen[slug] = 0
      end
      set[slug] = true
    end
  end
  return set
end

-- Resolves a link of `page`: the repository path (or nil) and the anchor.
local function resolve(page, target)
  local path, anchor = target:match('^([^#]*)#?(.*)$')
  if path == '' then return page, anchor end
  local base = dir_of(page)
  return normalize(base == '' and path or (base .. '/' .. path)), anchor
end

describe('documentation links', function()
  it('every relative link resolves inside the repository, anchors included', function()
    local bad = {}
    for _, page in ipairs(pages()) do
      for _, target in ipairs(links_of(read(page))) do
        local path, anchor = resolve(page, target)
        if path == nil then
          bad[#bad + 1] = page .. ': ' .. target .. ' leaves the repository'
        elseif not fs.exists(path) then
          bad[#bad + 1] = page .. ': ' .. target .. ' does not exist'
        elseif anchor ~= '' and path:match('%.md$') and not anchors_of(read(path))[anchor] then
          bad[#bad + 1] = page .. ': ' .. target .. ' names no heading of ' .. path
        end
      end
    end
    assert.are.same({}, bad)
  end)

  it('every page of docs/ can be reached from README.md', function()
    local reached, queue = { ['README.md'] = true }, { 'README.md' }
    while #queue > 0 do
      local page = table.remove(queue, 1)
      for _, target in ipairs(links_of(read(page))) do
        local path = resolve(page, target)
        if path and path:match('%.md$') and not reached[path] and fs.exists(path) then
          reached[path] = true
          queue[#queue + 1] = path
        end
      end
    end
    local missing = {}
    for _, p in ipairs(markdown_under('docs')) do
      if not reached[p] then missing[#missing + 1] = p end
    end
    assert.are.same({}, missing)
  end)

  it('docs/README.md lists every page of docs/', function()
    local index = read('docs/README.md')
    local listed = {}
    for _, target in ipairs(links_of(index)) do
      local path = resolve('docs/README.md', target)
      if path then listed[path] = true end
    end
    local missing = {}
    for _, p in ipairs(markdown_under('docs')) do
      if p ~= 'docs/README.md' and not listed[p] then missing[#missing + 1] = p end
    end
    assert.are.same({}, missing)
  end)

  it('no page refers to files outside the repository', function()
    local bad = {}
    for _, page in ipairs(pages()) do
      local text = read(page)
      for _, outside in ipairs({ '../shared', 'shared/design', 'shared/data', 'shared/oracle', '/work/' }) do
        if text:find(outside, 1, true) then bad[#bad + 1] = page .. ': ' .. outside end
      end
    end
    assert.are.same({}, bad)
  end)

  it('the link checker itself catches a broken link and a wrong anchor', function()
    assert.are.same({ 'docs/x.md', 'tensor.md#shape' }, links_of('[a](docs/x.md) `[b](no.md)` [c](tensor.md#shape) ' ..
      '[d](https://example.org)\n```\n[e](inside-code.md)\n```\n'))
    assert.is_nil((resolve('README.md', '../outside.md')))
    assert.are.equal('docs/tensor.md', (resolve('docs/links.md', './tensor.md')))
    local anchors = anchors_of('# T\n## Lua: `chainer.cuda`\n## Debug mode, type checks, hooks\n## Notes\n## Notes\n')
    assert.is_true(anchors['lua-chainercuda'])
    assert.is_true(anchors['debug-mode-type-checks-hooks'])
    assert.is_true(anchors['notes-1'])
    assert.is_nil(anchors['shape'])
  end)
end)

describe('README.md', function()
  local text = read('README.md')

  it('opens with the title, one paragraph, the two commands, then a 10-line example', function()
    local title, paragraph, commands, lead, example = text:match(
      '^# ([^\n]+)\n\n(.-)\n\n```sh\n(.-)\n```\n\n([^\n]*)\n\n```lua\n(.-)\n```\n')
    assert.are.equal('chainlua', title)
    assert.is_nil(paragraph:find('\n\n', 1, true), 'one paragraph before the commands')
    assert.are.equal('make demo\nmake test', commands)
    local n = select(2, example:gsub('\n', '')) + 1
    assert.is_true(n <= 10, 'the example has ' .. n .. ' lines')
  end)

  it('its example runs and learns', function()
    local example = text:match('```lua\n(.-)\n```')
    local printed = {}
    local env = setmetatable({ print = function(s) printed[#printed + 1] = s end }, { __index = _G })
    local chunk = assert(loadstring(example, '=README example'))
    setfenv(chunk, env)
    require('chainer.tensor').random.seed(0)
    chunk()
    local accuracy = tonumber(printed[1]:match('accuracy ([%d.]+)'))
    assert.is_true(accuracy ~= nil and accuracy > 0.9, printed[1])
  end)

  it('links the docs index, names CHAINER_DATASET_ROOT, and the LICENSE the rockspec names', function()
    assert.truthy(text:find('(docs/README.md)', 1, true))
    assert.truthy(text:find('CHAINER_DATASET_ROOT', 1, true))
    local license = read('LICENSE')
    assert.truthy(license:find('MIT License', 1, true))
    assert.truthy(license:find('the chainlua authors', 1, true))
    assert.truthy(read('rockspec/chainlua-scm-1.rockspec'):find('license = "MIT"', 1, true))
  end)
end)

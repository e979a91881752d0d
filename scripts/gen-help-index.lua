-- gen-help-index.lua: writes lua/chainer/repl/help_index.lua, the table
-- behind the REPL's help(obj) and ?obj: for every documented name, its
-- signature and a one-line summary, taken from the docs pages so that the
-- pages stay the one place where a signature is written.
-- usage: luajit scripts/gen-help-index.lua [OUTPUT]   (default: print)
--        (run from the repository root; spec/docs checks the file is current)
--
-- What counts as an entry, in order of trust (the first one found wins):
--   1. a table row whose first cell has a code span calling the name
--      (`F.relu(x)`, `Linear(in_size, ...)`, `backward{...}`) or naming it
--      bare (`grad`): the span is the signature, the other cells the summary;
--   2. a line of a ```lua block calling it: the code is the signature, the
--      `--` comment the summary;
--   3. a code span in prose calling it: the span, and the words after it.
-- Each page says which scope its names belong to: a prefix in the span
-- (F., T., L., t:) wins, else capitalised names are the page's classes and
-- lowercase ones its methods.

local pages = {
  -- page, scope of capitalised names, scope of lowercase names
  { 'docs/functions/activation.md', 'F', 'F' }, { 'docs/functions/array.md', 'F', 'F' },
  { 'docs/functions/connection.md', 'F', 'F' }, { 'docs/functions/evaluation.md', 'F', 'F' },
  { 'docs/functions/loss.md', 'F', 'F' }, { 'docs/functions/math.md', 'F', 'F' },
  { 'docs/functions/noise.md', 'F', 'F' }, { 'docs/functions/normalization.md', 'F', 'F' },
  { 'docs/functions/pooling.md', 'F', 'F' }, { 'docs/functions/rnn.md', 'F', 'F' },
  { 'docs/links.md', 'L', 'Link' },
  { 'docs/optimizers.md', 'optimizers', 'Optimizer' },
  { 'docs/tensor.md', 'T', 'Tensor' }, { 'docs/tensor-elementwise.md', 'T', 'Tensor' },
  { 'docs/tensor-reduce.md', 'T', 'Tensor' }, { 'docs/tensor-linalg.md', 'T', 'Tensor' },
  { 'docs/tensor-indexing.md', 'T', 'Tensor' }, { 'docs/tensor-random.md', 'T.random', 'T.random' },
  { 'docs/autograd.md', 'chainer', 'Variable' },
  { 'docs/datasets.md', 'datasets', 'datasets' },
  { 'docs/iterators.md', 'iterators', 'Iterator' },
  { 'docs/training.md', 'extensions', 'Trainer' },
  { 'docs/initializers.md', 'initializers', 'initializers' },
  { 'docs/serialization.md', 'serializers', 'serializers' },
}
-- explicit prefixes inside a code span
local prefixes = {
  ['F.'] = 'F', ['T.'] = 'T', ['L.'] = 'L', ['T.random.'] = 'T.random', ['optimizers.'] = 'optimizers',
  ['chainer.'] = 'chainer', ['extensions.'] = 'extensions', ['E.'] = 'extensions',
  ['chainer.functions.'] = 'F', ['chainer.links.'] = 'L', ['chainer.tensor.'] = 'T',
  ['chainer.optimizers.'] = 'optimizers', ['chainer.iterators.'] = 'iterators',
  ['chainer.datasets.'] = 'datasets', ['chainer.training.extensions.'] = 'extensions',
  ['chainer.serializers.'] = 'serializers', ['chainer.initializers.'] = 'initializers',
}

local function read(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('*a')
  f:close()
  return s
end

local function trim(s) return (s:gsub('^%s+', ''):gsub('%s+$', '')) end

-- One line of summary: first ~150 characters, cut at a word.
local function one_line(s)
  s = trim(s:gsub('%s+', ' '))
  if #s > 150 then s = s:sub(1, 150):gsub('%s+%S*$', '') .. ' ...' end
  return s
end

-- The subject of a code span: scope (or nil: decided by the page) and name.
-- The first call `name(` or `name{` is the subject; a span that is just a
-- (prefixed) name names it.
local function subject(span)
  local s = span:gsub('^.-=%s*([%a_][%w_%.:]*[%({])', '%1')   -- `c, h = F.lstm(...)`
  local path, name = s:match('^([%a_][%w_%.]*[%.:])([%a_][%w_]*)[%({]')
  if not name then name = s:match('^([%a_][%w_]*)[%({]') end
  if not name then path, name = s:match('^([%a_][%w_%.]*[%.:])([%a_][%w_]*)$') end
  if not name then name = s:match('^([%a_][%w_]*)$') end
  if not name then return nil end
  local scope
  if path then
    scope = prefixes[path]
    if not scope and path:match('^%a+:$') then scope = 'method' end   -- t:reshape, x:slice
    if not scope then return nil end
  end
  return scope, name
end

local index, order = {}, {}
local function add(scope, name, sig, summary, page, rank)
  index[scope] = index[scope] or {}
  local old = index[scope][name]
  if old and old.rank <= rank then return end
  if not old then order[#order + 1] = { scope, name } end
  index[scope][name] = { sig = trim(sig), summary = one_line(summary), page = page, rank = rank }
end

local function scope_for(scope, name, cls, meth)
  if scope == 'method' then return meth end
  if scope then return scope end
  return name:match('^%u') and cls or meth
end

-- column headings that add nothing in front of their cell
local generic_column = { notes = true, ['definition / notes'] = true, meaning = true, result = true,
  ['what it does'] = true, contents = true, description = true }

for _, p in ipairs(pages) do
  local page, cls, meth = p[1], p[2], p[3]
  local text = read(page)
  local in_code = false
  local header, last_row
  for line in (text .. '\n'):gmatch('([^\n]*)\n') do
    if line:match('^```') then
      in_code = not in_code
    elseif in_code then
      local code, comment = line:match('^(.-)%s*%-%-%s*(.*)$')
      code = code or line
      -- several signatures on one line are separated by two spaces or more;
      -- `T.zeros(...)` and a bare `T.zeros_like` take the arguments of the
      -- first one (`T.empty(shape, [dtype])  T.zeros(...)`)
      local first_args
      for seg in (code .. '  '):gmatch('(.-)%s%s+') do
        seg = trim(seg):gsub('^local%s+[%w_,%s]-=%s*', '')
        local scope, name = subject(seg)
        if name then
          local args = seg:match('^[%w_%.:]+(%b())$')
          if args and args ~= '(...)' and not first_args then first_args = args end
          if first_args and (args == '(...)' or seg:match('^[%w_%.:]+$')) then
            seg = seg:gsub('%(%.%.%.%)$', '') .. first_args
          end
          if seg:find('[%({]') then add(scope_for(scope, name, cls, meth), name, seg, comment or '', page, 2) end
        end
      end
    elseif line:match('^|%s*:?%-') then
      header = last_row   -- the row above a |---| line names the columns
    elseif line:match('^|') then
      local cells = {}
      for cell in line:gmatch('|([^|]*)') do cells[#cells + 1] = trim(cell) end
      if cells[#cells] == '' then cells[#cells] = nil end
      last_row = cells
      -- the other cells, labelled with their column unless it only says "notes"
      local rest = {}
      for i = 2, #cells do
        if cells[i] ~= '' and cells[i] ~= 'same' then   -- (links.md: "same as Chainer")
          local label = header and header[i]
          if label and not generic_column[label:lower()] then
            rest[#rest + 1] = label .. ': ' .. cells[i]
          else
            rest[#rest + 1] = cells[i]
          end
        end
      end
      for span in (cells[1] or ''):gmatch('`([^`]+)`') do
        local scope, name = subject(span)
        if name then
          local sig, summary = span, table.concat(rest, '; ')
          if page == 'docs/optimizers.md' and not span:find('[%({]') and name:match('^%u') then
            -- the optimizers table gives hyperparameters in positional order
            sig = 'optimizers.' .. name .. '(' .. (cells[2] or '') .. ')'
            local bullet = text:match('\n%- %*%*' .. name .. '%*%*: ([^\n]*)')
            summary = bullet or ('state: ' .. (cells[3] or ''))
          end
          add(scope_for(scope, name, cls, meth), name, sig, summary, page, 1)
        end
      end
    else
      -- prose: a span calling a name, and the words after it up to the
      -- next call listed after a comma (`t:a(x)` (what a does), `t:b(y)`)
      local pos = 1
      while true do
        local s, e, span = line:find('`([^`]+)`', pos)
        if not s then break end
        pos = e + 1
        local scope, name = subject(span)
        if name and span:find('[%({]') then
          local after = line:sub(e + 1)
          after = after:gsub('[,;]%s*`[%w_%.:]+[%({].*$', ''):gsub('^[%s,;:%.]+', '')
          after = after:match('^%((.*)%)[%.,]?$') or after
          if #after < 12 then after = '' end
          add(scope_for(scope, name, cls, meth), name, span, after, page, 3)
        end
      end
    end
  end
end

-- docs/functions.md (generated from the family pages by
-- gen-functions-doc.lua) has a signature for every function, including
-- those the pages document in grouped or prose form; the summary is then
-- the rest of the first family-page row that mentions the function.
local family_rows = {}
for _, p in ipairs(pages) do
  if p[1]:match('^docs/functions/') then
    for line in read(p[1]):gmatch('[^\n]+') do
      if line:match('^|') then family_rows[#family_rows + 1] = { line, p[1] } end
    end
  end
end
for line in read('docs/functions.md'):gmatch('[^\n]+') do
  local name, sig = line:match('^| `([%w_]+)` | `([^`]+)` |')
  if name and not (index.F and index.F[name]) then
    local summary, page = '', 'docs/functions.md'
    for _, row in ipairs(family_rows) do
      local cells, hit = {}, false
      for cell in row[1]:gmatch('|([^|]*)') do
        if not hit and cell:find('F%.' .. name .. '%f[^%w_]') or cell:find('F%.' .. name .. '/') then
          hit = true
        elseif trim(cell) ~= '' then
          cells[#cells + 1] = trim(cell)
        end
      end
      if hit then
        summary, page = table.concat(cells, '; '), row[2]
        break
      end
    end
    add('F', name, sig, summary, page, 1)
  end
end

table.sort(order, function(a, b)
  if a[1] ~= b[1] then return a[1] < b[1] end
  return a[2] < b[2]
end)

local out = {
  '-- GENERATED by scripts/gen-help-index.lua from docs/: do not edit.',
  '-- help_index[scope][name] = { signature, one-line summary, docs page }',
  'return {',
}
local last
for _, e in ipairs(order) do
  local scope, name = e[1], e[2]
  if scope ~= last then
    if last then out[#out + 1] = '  },' end
    out[#out + 1] = string.format('  [%q] = {', scope)
    last = scope
  end
  local v = index[scope][name]
  out[#out + 1] = string.format('    [%q] = { %q, %q, %q },', name, v.sig, v.summary, v.page)
end
if last then out[#out + 1] = '  },' end
out[#out + 1] = '}'
local text = table.concat(out, '\n') .. '\n'

if arg[1] then
  local f = assert(io.open(arg[1], 'wb'))
  f:write(text)
  f:close()
else
  io.write(text)
end

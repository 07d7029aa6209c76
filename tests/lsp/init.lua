-- Neovim (0.7+, the built-in LSP client) as the client of `torchlint server`: the editor
-- end-to-end test (tests/lsp/nvim_test.sh). Opens train.py of a copy of the fixture
-- project, records the diagnostics Neovim received, edits the buffer, records again,
-- applies the server's code action, records again, then breaks the seeding helper in
-- utils.py and records what train.py shows. Everything goes to $TORCHLINT_NVIM_OUT as
-- JSON; the shell script judges it, so a step that times out is recorded, not hidden.
local bin = assert(os.getenv('TORCHLINT_BIN'), 'TORCHLINT_BIN not set')
local project = assert(os.getenv('TORCHLINT_PROJECT'), 'TORCHLINT_PROJECT not set')
local out = assert(os.getenv('TORCHLINT_NVIM_OUT'), 'TORCHLINT_NVIM_OUT not set')
local timeout_ms = tonumber(os.getenv('TORCHLINT_NVIM_TIMEOUT_MS') or '20000')

vim.o.hidden = true -- keep train.py loaded while utils.py is edited
local results = { steps = {} }

local function write_results()
  vim.fn.writefile({ vim.fn.json_encode(results) }, out)
end

local function now_ms()
  return vim.loop.hrtime() / 1e6
end

-- What Neovim holds for a buffer, as plain data.
local function snapshot(bufnr)
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    local lsp = (d.user_data or {}).lsp or {}
    table.insert(items, {
      code = d.code,
      line = d.lnum + 1,
      col = d.col + 1,
      source = d.source,
      message = d.message,
      href = lsp.codeDescription and lsp.codeDescription.href or vim.NIL,
    })
  end
  table.sort(items, function(a, b)
    return a.line < b.line or (a.line == b.line and tostring(a.code) < tostring(b.code))
  end)
  return items
end

local function has_code(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.code == code then
      return true
    end
  end
  return false
end

-- Waits for `done()`; records the step (with whether it came in time and how long it
-- took) either way.
local function step(name, bufnr, done, started)
  started = started or now_ms()
  local ok = vim.wait(timeout_ms, done, 5)
  local entry = {
    name = name,
    in_time = ok,
    ms = math.floor((now_ms() - started) * 10 + 0.5) / 10,
    diagnostics = snapshot(bufnr),
  }
  table.insert(results.steps, entry)
  write_results()
  return entry
end

local function line_of(bufnr, pattern)
  for i, text in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if text:find(pattern, 1, true) then
      return i
    end
  end
  error('no line with ' .. pattern)
end

local function scenario()
  local client_id = vim.lsp.start_client({
    name = 'torchlint',
    cmd = { bin, 'server' },
    root_dir = project,
    init_options = { ['debounce-ms'] = 50 },
  })
  assert(client_id, 'vim.lsp.start_client failed')

  -- 1. Open train.py: TL304 on torch.load.
  local started = now_ms()
  vim.cmd('edit ' .. vim.fn.fnameescape(project .. '/train.py'))
  local train = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(train, client_id)
  step('open', train, function()
    return #vim.diagnostic.get(train) > 0
  end, started)

  -- 2. Edit through the buffer API: wrap the model in DataParallel (TL401).
  local at = line_of(train, 'model = nn.Linear(8, 1)')
  started = now_ms()
  vim.api.nvim_buf_set_lines(train, at, at, false, { '    model = nn.DataParallel(model)' })
  step('edit', train, function()
    return has_code(train, 'TL401')
  end, started)

  -- Hover on the new finding: the rule's doc.
  local client = vim.lsp.get_client_by_id(client_id)
  local hover = client.request_sync('textDocument/hover', {
    textDocument = { uri = vim.uri_from_bufnr(train) },
    position = { line = at, character = 14 },
  }, timeout_ms, train)
  local hover_text = hover and hover.result and hover.result.contents and hover.result.contents.value or ''
  results.hover = hover_text:sub(1, 200)

  -- 3. The code action on the torch.load line: the safe fix, applied as Neovim applies it.
  local load_line = line_of(train, 'torch.load(path)')
  vim.api.nvim_win_set_cursor(0, { load_line, 30 })
  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  params.context = { diagnostics = vim.lsp.diagnostic.get_line_diagnostics(train) }
  local response = client.request_sync('textDocument/codeAction', params, timeout_ms, train)
  local titles, chosen = {}, nil
  for _, action in ipairs((response and response.result) or {}) do
    table.insert(titles, action.title)
    if not chosen and action.kind == 'quickfix' and action.isPreferred and action.edit then
      chosen = action
    end
  end
  results.code_actions = titles
  started = now_ms()
  if chosen then
    vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding)
  end
  local fixed = step('code_action', train, function()
    return not has_code(train, 'TL304') and #vim.diagnostic.get(train) > 0
  end, started)
  fixed.applied = chosen and chosen.title or vim.NIL
  fixed.line = vim.api.nvim_buf_get_lines(train, load_line - 1, load_line, false)[1]

  -- 4. Project facts live: utils.set_seed stops seeding torch; train.py's TL101 appears
  -- without train.py being touched or anything being saved.
  vim.cmd('edit ' .. vim.fn.fnameescape(project .. '/utils.py'))
  local utils = vim.api.nvim_get_current_buf()
  vim.lsp.buf_attach_client(utils, client_id)
  vim.wait(timeout_ms, function()
    return vim.lsp.buf_is_attached(utils, client_id)
  end, 5)
  local seed_line = line_of(utils, 'torch.manual_seed(seed)')
  started = now_ms()
  vim.api.nvim_buf_set_lines(utils, seed_line - 1, seed_line, false, { '    pass' })
  step('helper_edit', train, function()
    return has_code(train, 'TL101')
  end, started)

  results.done = true
  write_results()
  vim.lsp.stop_client(client_id)
  vim.wait(2000, function()
    return vim.lsp.get_client_by_id(client_id) == nil
  end, 10)
end

vim.api.nvim_create_autocmd('VimEnter', {
  once = true,
  callback = function()
    local ok, err = pcall(scenario)
    if not ok then
      results.error = tostring(err)
      write_results()
      vim.cmd('cquit 1')
    end
    vim.cmd('qall!')
  end,
})

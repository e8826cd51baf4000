-- syncguard in Neovim's built-in LSP client (Neovim 0.7 and later).
--
-- Put this file on your runtimepath (e.g. ~/.config/nvim/lua/syncguard.lua) and add
--   require("syncguard").setup()
-- to init.lua, or `:luafile path/to/syncguard.lua` and call setup() the same way.
-- Options: setup({ cmd = { "/path/to/syncguard", "lsp" } }).

local M = {}

-- The folder a file's project is: the one holding syncguard.toml, pyproject.toml or .git.
local function project_root(file)
  local markers = { "syncguard.toml", "pyproject.toml", ".git" }
  local dir = vim.fn.fnamemodify(file, ":p:h")
  while dir and dir ~= "" do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ":h")
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.fnamemodify(file, ":p:h")
end

local clients = {}

-- One server per project root, attached to every buffer of that project.
local function attach(bufnr, cmd)
  local file = vim.api.nvim_buf_get_name(bufnr)
  local root = project_root(file ~= "" and file or vim.fn.getcwd() .. "/untitled")
  local config = { name = "syncguard", cmd = cmd, root_dir = root }
  if vim.lsp.start then
    vim.lsp.start(config, { bufnr = bufnr })
    return
  end
  -- Neovim 0.7: no vim.lsp.start.
  local id = clients[root]
  if not id or vim.lsp.client_is_stopped(id) then
    id = vim.lsp.start_client(config)
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
end

-- The calls a syncguard finding involves (the LSP related information): where each is,
-- and what it does in the finding.
function M.related_calls(diagnostic)
  local lsp = diagnostic.user_data and diagnostic.user_data.lsp or {}
  local calls = {}
  for _, related in ipairs(lsp.relatedInformation or diagnostic.relatedInformation or {}) do
    local location = related.location
    table.insert(calls, {
      filename = vim.uri_to_fname(location.uri),
      lnum = location.range.start.line + 1,
      col = location.range.start.character + 1,
      text = related.message,
    })
  end
  return calls
end

-- A finding's message with its involved calls, one per line: what the float shows.
-- Neovim 0.7's float shows the message alone.
function M.format(diagnostic)
  local lines = { diagnostic.message }
  for _, call in ipairs(M.related_calls(diagnostic)) do
    table.insert(lines, string.format("  %s:%d: %s", vim.fn.fnamemodify(call.filename, ":."), call.lnum, call.text))
  end
  return table.concat(lines, "\n")
end

-- The involved calls of the findings on the cursor's line, in the quickfix list.
function M.related_to_quickfix()
  local bufnr = vim.api.nvim_get_current_buf()
  local line = vim.api.nvim_win_get_cursor(0)[1] - 1
  local items = {}
  for _, diagnostic in ipairs(vim.diagnostic.get(bufnr, { lnum = line })) do
    if diagnostic.source == "syncguard" then
      table.insert(items, {
        bufnr = bufnr,
        lnum = diagnostic.lnum + 1,
        col = diagnostic.col + 1,
        text = (diagnostic.code or "") .. " " .. diagnostic.message,
      })
      for _, call in ipairs(M.related_calls(diagnostic)) do
        table.insert(items, call)
      end
    end
  end
  vim.fn.setqflist({}, " ", { title = "syncguard: involved calls", items = items })
  return #items
end

function M.setup(options)
  options = options or {}
  local cmd = options.cmd or { "syncguard", "lsp" }
  -- The float lists a syncguard finding's involved calls; other sources' findings keep
  -- whatever format was configured.
  local float = vim.diagnostic.config().float
  local previous = type(float) == "table" and float.format or nil
  vim.diagnostic.config({
    float = vim.tbl_extend("force", type(float) == "table" and float or {}, {
      format = function(diagnostic)
        if diagnostic.source == "syncguard" then
          return M.format(diagnostic)
        end
        return previous and previous(diagnostic) or diagnostic.message
      end,
    }),
  })
  vim.api.nvim_create_user_command("SyncguardRelated", function()
    if M.related_to_quickfix() > 0 then
      vim.cmd("copen")
    end
  end, { desc = "the involved calls of the syncguard findings on this line, in the quickfix list" })
  local group = vim.api.nvim_create_augroup("syncguard", { clear = true })
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
    group = group,
    pattern = { "*.sync" },
    command = "setfiletype sync",
  })
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
    group = group,
    pattern = { "*.jsonl" },
    command = "setfiletype jsonl",
  })
  -- Flight Recorder dumps in JSON form, named by their rank as PyTorch names them.
  vim.api.nvim_create_autocmd({ "BufRead", "BufNewFile" }, {
    group = group,
    pattern = { "nccl_trace_rank_*" },
    command = "setfiletype json",
  })
  -- JSON: the server checks what is a record of a run (a profiler timeline, a Flight
  -- Recorder dump) and leaves any other JSON alone.
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = { "sync", "jsonl", "json", "c", "cpp", "cuda", "python" },
    callback = function(args)
      attach(args.buf, cmd)
    end,
  })
end

return M

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

function M.setup(options)
  options = options or {}
  local cmd = options.cmd or { "syncguard", "lsp" }
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
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = { "sync", "jsonl", "c", "cpp", "cuda", "python" },
    callback = function(args)
      attach(args.buf, cmd)
    end,
  })
end

return M

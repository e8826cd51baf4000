// Finding the syncguard executable. No `vscode` import, so that tests can load it in
// plain Node.

import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** `~`, `${userHome}` and `${workspaceFolder}` in the configured path. */
export function expandVariables(value: string, workspaceFolder: string | undefined): string {
    let expanded = value.replace(/\$\{userHome\}/g, os.homedir());
    if (workspaceFolder !== undefined) {
        expanded = expanded.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
    }
    if (expanded === '~' || expanded.startsWith('~/') || expanded.startsWith('~\\')) {
        expanded = path.join(os.homedir(), expanded.slice(1));
    }
    return expanded;
}

/**
 * The executable that `spawn` would run for `command`: a path (relative ones from the
 * workspace folder), or a name looked up on PATH (with PATHEXT on Windows). Undefined
 * when there is none, so that the user gets a message that says what to do instead of
 * the client's `spawn ENOENT`.
 */
export function findExecutable(command: string, cwd: string | undefined): string | undefined {
    const extensions =
        process.platform === 'win32'
            ? ['', ...(process.env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((e) => e)]
            : [''];
    const candidates = (base: string) => extensions.map((ext) => base + ext);

    if (path.isAbsolute(command) || command.includes('/') || command.includes('\\')) {
        const base = path.resolve(cwd ?? process.cwd(), command);
        return candidates(base).find(isExecutableFile);
    }
    for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
        if (dir === '') {
            continue;
        }
        const found = candidates(path.join(dir, command)).find(isExecutableFile);
        if (found !== undefined) {
            return found;
        }
    }
    return undefined;
}

export function isExecutableFile(file: string): boolean {
    try {
        if (!fs.statSync(file).isFile()) {
            return false;
        }
        if (process.platform !== 'win32') {
            fs.accessSync(file, fs.constants.X_OK);
        }
        return true;
    } catch {
        return false;
    }
}

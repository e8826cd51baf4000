// The extension's settings and the command lines they give. No `vscode` import, so that
// tests can load it in plain Node.

import * as path from 'path';
import { expandVariables } from './executable';

/** The `syncguard.*` settings as the extension reads them. */
export interface Settings {
    /** `syncguard.path`: the executable. */
    path: string;
    /** `syncguard.config`: one configuration file for every file (`--config FILE`). */
    config: string;
    /** `syncguard.isolated`: no configuration file (`--isolated`). */
    isolated: boolean;
}

export const DEFAULTS: Settings = { path: 'syncguard', config: '', isolated: false };

/**
 * What each contributed setting does (`package.json` `contributes.configuration`; a
 * test checks that both list the same keys).
 */
export const SETTINGS: Record<string, string> = {
    'syncguard.path': 'the executable run as `syncguard lsp` and `syncguard check`',
    'syncguard.config': '`--config FILE` for `syncguard lsp` and `syncguard check`',
    'syncguard.isolated': '`--isolated` for `syncguard lsp` and `syncguard check`',
    'syncguard.trace.server': "read by vscode-languageclient (the client's id is `syncguard`)",
};

/** The settings whose change restarts the server. */
export const RESTART_SETTINGS = ['syncguard.path', 'syncguard.config', 'syncguard.isolated'];

/** Settings read from the user's configuration, with wrong types taken as defaults. */
export function readSettings(get: (key: string) => unknown): Settings {
    const text = (value: unknown, fallback: string) => (typeof value === 'string' ? value.trim() : fallback);
    return {
        path: text(get('path'), DEFAULTS.path) || DEFAULTS.path,
        config: text(get('config'), DEFAULTS.config),
        isolated: get('isolated') === true,
    };
}

/** The configuration file's path: variables expanded, a relative path from `cwd`. */
export function configPath(settings: Settings, cwd: string | undefined): string | undefined {
    if (settings.config === '') {
        return undefined;
    }
    const expanded = expandVariables(settings.config, cwd);
    return path.resolve(cwd ?? process.cwd(), expanded);
}

/**
 * The options `syncguard lsp` and `syncguard check` share: `--isolated`, else
 * `--config FILE` (the two exclude each other: `--isolated` wins, and `notes` says so).
 */
export function configArgs(settings: Settings, cwd: string | undefined): { args: string[]; notes: string[] } {
    const config = configPath(settings, cwd);
    if (settings.isolated) {
        const notes =
            config === undefined ? [] : [`syncguard.isolated is on: syncguard.config (${config}) is not read.`];
        return { args: ['--isolated'], notes };
    }
    return { args: config === undefined ? [] : ['--config', config], notes: [] };
}

/** The language server's arguments. */
export function serverArgs(settings: Settings, cwd: string | undefined): string[] {
    return ['lsp', ...configArgs(settings, cwd).args];
}

/** `syncguard check TARGET --format html -o OUTPUT` with the same configuration. */
export function checkArgs(settings: Settings, cwd: string | undefined, target: string, output: string): string[] {
    return ['check', ...configArgs(settings, cwd).args, '--format', 'html', '--color', 'never', '-o', output, '--', target];
}

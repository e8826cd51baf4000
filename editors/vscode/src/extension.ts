// The syncguard extension: runs `syncguard lsp` over stdio for .sync models, JSONL call
// traces, C/C++/CUDA and Python sources.

import * as vscode from 'vscode';
import {
    DocumentSelector,
    Executable,
    LanguageClient,
    LanguageClientOptions,
    RevealOutputChannelOn,
    ServerOptions,
} from 'vscode-languageclient/node';
import { expandVariables, findExecutable } from './executable';

const CLIENT_ID = 'syncguard';
const CLIENT_NAME = 'syncguard';

/** The documents the server checks. */
export const DOCUMENT_SELECTOR: DocumentSelector = [
    { scheme: 'file', language: 'sync' },
    { scheme: 'untitled', language: 'sync' },
    { scheme: 'file', language: 'c' },
    { scheme: 'file', language: 'cpp' },
    { scheme: 'file', language: 'cuda-cpp' },
    { scheme: 'file', language: 'python' },
    // Call traces: whatever language VS Code gives them (plain text, `jsonl`, `json`).
    { scheme: 'file', pattern: '**/*.jsonl' },
];

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
/** Starts and stops run one after another, never interleaved. */
let queue: Promise<void> = Promise.resolve();

export function activate(context: vscode.ExtensionContext): void {
    output = vscode.window.createOutputChannel(CLIENT_NAME);
    context.subscriptions.push(
        output,
        vscode.commands.registerCommand('syncguard.restartServer', () => enqueue(restart)),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (
                event.affectsConfiguration('syncguard.path') ||
                event.affectsConfiguration('syncguard.args')
            ) {
                void enqueue(restart);
            }
        }),
    );
    void enqueue(start);
}

export function deactivate(): Thenable<void> {
    return enqueue(stop);
}

function enqueue(task: () => Promise<void>): Promise<void> {
    queue = queue.then(task).catch((error: unknown) => {
        output.appendLine(`syncguard: ${describe(error)}`);
    });
    return queue;
}

async function restart(): Promise<void> {
    await stop();
    await start();
}

async function stop(): Promise<void> {
    const running = client;
    client = undefined;
    if (running === undefined) {
        return;
    }
    try {
        if (running.isRunning()) {
            await running.stop();
        }
    } catch (error) {
        output.appendLine(`syncguard: stopping the language server failed: ${describe(error)}`);
    }
    await running.dispose().then(undefined, () => undefined);
}

async function start(): Promise<void> {
    const config = vscode.workspace.getConfiguration('syncguard');
    const configured = config.get<string>('path', 'syncguard').trim() || 'syncguard';
    const extraArgs = config.get<unknown[]>('args', []).map(String);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const cwd = folder?.scheme === 'file' ? folder.fsPath : undefined;

    const command = findExecutable(expandVariables(configured, cwd), cwd);
    if (command === undefined) {
        output.appendLine(`syncguard: cannot find the executable \`${configured}\`.`);
        void showNotFound(configured);
        return;
    }

    const executable: Executable = {
        command,
        args: ['lsp', ...extraArgs],
        options: cwd === undefined ? {} : { cwd },
    };
    const serverOptions: ServerOptions = { run: executable, debug: executable };
    const clientOptions: LanguageClientOptions = {
        documentSelector: DOCUMENT_SELECTOR,
        outputChannel: output,
        revealOutputChannelOn: RevealOutputChannelOn.Never,
    };

    const next = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    client = next;
    output.appendLine(`syncguard: starting ${[command, ...executable.args!].join(' ')}`);
    try {
        await next.start();
    } catch (error) {
        output.appendLine(`syncguard: the language server did not start: ${describe(error)}`);
        const choice = await vscode.window.showErrorMessage(
            `syncguard: the language server (\`${command} lsp\`) did not start. ` +
                'Is this syncguard build recent enough to have the `lsp` command?',
            'Show Output',
            'Open Settings',
        );
        if (choice === 'Show Output') {
            output.show(true);
        } else if (choice === 'Open Settings') {
            void vscode.commands.executeCommand('workbench.action.openSettings', 'syncguard.path');
        }
    }
}

async function showNotFound(configured: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(
        `syncguard: cannot find the \`${configured}\` executable. Install it with ` +
            '`cargo install --path .` in the syncguard repository (it puts `syncguard` in ' +
            '~/.cargo/bin, which must be on PATH), or set `syncguard.path` to the executable.',
        'Open Settings',
        'Retry',
    );
    if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'syncguard.path');
    } else if (choice === 'Retry') {
        void enqueue(restart);
    }
}

function describe(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

// The syncguard extension: runs `syncguard lsp` over stdio for .sync models, JSONL call
// traces, C/C++/CUDA and Python sources, and shows a finding's timeline (the HTML report
// of `syncguard check`) in a webview.

import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as vscode from 'vscode';
import {
    DidOpenTextDocumentNotification,
    DocumentSelector,
    Executable,
    LanguageClient,
    LanguageClientOptions,
    Middleware,
    RevealOutputChannelOn,
    ServerOptions,
} from 'vscode-languageclient/node';
import { expandVariables, findExecutable } from './executable';
import { isCallTraceText, isRecordPath, isRecordText, isTracePath, kindOf, startsServer } from './relevance';
import { RESTART_SETTINGS, Settings, checkArgs, configArgs, readSettings, serverArgs } from './settings';
import { findCard, webviewPage } from './timeline';

const CLIENT_ID = 'syncguard';
const CLIENT_NAME = 'syncguard';

/** The documents the server checks, once it runs. */
export const DOCUMENT_SELECTOR: DocumentSelector = [
    { scheme: 'file', language: 'sync' },
    { scheme: 'untitled', language: 'sync' },
    { scheme: 'file', language: 'c' },
    { scheme: 'file', language: 'cpp' },
    { scheme: 'file', language: 'cuda-cpp' },
    { scheme: 'file', language: 'python' },
    // Ascend C sources, whatever language VS Code gives them.
    { scheme: 'file', pattern: '**/*.{asc,aicpu}' },
    // Call traces, whatever language VS Code gives them (plain text, `jsonl`, `json`);
    // the middleware hands the server only those `isCallTraceText` takes.
    { scheme: 'file', pattern: '**/*.jsonl' },
    // Records of a run (profiles, graph task dumps, Flight Recorder dumps, which PyTorch
    // names by rank without an extension); the middleware hands the server only those
    // `isRecordText` takes.
    { scheme: 'file', pattern: '**/*.json' },
    { scheme: 'file', pattern: '**/*[0-9]' },
];

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
/** Starts and stops run one after another, never interleaved. */
let queue: Promise<void> = Promise.resolve();
/** Whether the server is wanted: a document that needs it was opened. */
let wanted = false;
let panel: vscode.WebviewPanel | undefined;

export function activate(context: vscode.ExtensionContext): void {
    output = vscode.window.createOutputChannel(CLIENT_NAME);
    context.subscriptions.push(
        output,
        vscode.commands.registerCommand('syncguard.restartServer', () => {
            wanted = true;
            return enqueue(restart);
        }),
        vscode.commands.registerCommand('syncguard.showTimeline', showTimeline),
        vscode.languages.registerCodeActionsProvider(DOCUMENT_SELECTOR, new TimelineActions(), {
            providedCodeActionKinds: [vscode.CodeActionKind.QuickFix],
        }),
        vscode.workspace.onDidChangeConfiguration((event) => {
            if (wanted && RESTART_SETTINGS.some((key) => event.affectsConfiguration(key))) {
                void enqueue(restart);
            }
        }),
        vscode.workspace.onDidOpenTextDocument(startIfNeeded),
        vscode.workspace.onDidChangeTextDocument((event) => startIfNeeded(event.document)),
    );
    const legacy = vscode.workspace.getConfiguration('syncguard').inspect('args');
    if (legacy?.globalValue !== undefined || legacy?.workspaceValue !== undefined || legacy?.workspaceFolderValue !== undefined) {
        output.appendLine(
            'syncguard: the `syncguard.args` setting is no longer read: use `syncguard.config` (a configuration file) or `syncguard.isolated`.',
        );
    }
    vscode.workspace.textDocuments.forEach(startIfNeeded);
}

export function deactivate(): Thenable<void> {
    return enqueue(stop);
}

/** Start the server the first time a document that needs it is open (see `startsServer`). */
function startIfNeeded(document: vscode.TextDocument): void {
    if (wanted) {
        return;
    }
    const file = document.uri.scheme === 'file' ? document.uri.fsPath : document.uri.path;
    if (startsServer(file.replace(/\\/g, '/'), document.languageId, document.uri.scheme, () => document.getText())) {
        wanted = true;
        output.appendLine(`syncguard: ${vscode.workspace.asRelativePath(document.uri)} starts the language server.`);
        void enqueue(start);
    }
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

/** The settings, the workspace folder the tools run in, and the executable found. */
function environment(): { settings: Settings; cwd: string | undefined; command: string | undefined } {
    const config = vscode.workspace.getConfiguration('syncguard');
    const settings = readSettings((key) => config.get(key));
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const cwd = folder?.scheme === 'file' ? folder.fsPath : undefined;
    const command = findExecutable(expandVariables(settings.path, cwd), cwd);
    return { settings, cwd, command };
}

async function start(): Promise<void> {
    const { settings, cwd, command } = environment();
    if (command === undefined) {
        output.appendLine(`syncguard: cannot find the executable \`${settings.path}\`.`);
        void showNotFound(settings.path);
        return;
    }
    configArgs(settings, cwd).notes.forEach((note) => output.appendLine(`syncguard: ${note}`));
    const executable: Executable = {
        command,
        args: serverArgs(settings, cwd),
        options: cwd === undefined ? {} : { cwd },
    };
    const serverOptions: ServerOptions = { run: executable, debug: executable };
    const clientOptions: LanguageClientOptions = {
        documentSelector: DOCUMENT_SELECTOR,
        outputChannel: output,
        revealOutputChannelOn: RevealOutputChannelOn.Never,
        middleware: traceFilter(() => created),
    };

    const created = new LanguageClient(CLIENT_ID, CLIENT_NAME, serverOptions, clientOptions);
    client = created;
    output.appendLine(`syncguard: starting ${[command, ...executable.args!].join(' ')}`);
    try {
        await created.start();
    } catch (error) {
        output.appendLine(`syncguard: the language server did not start: ${describe(error)}`);
        const choice = await vscode.window.showErrorMessage(
            `syncguard: the language server (\`${command} ${executable.args!.join(' ')}\`) did not start. ` +
                'Is this syncguard build recent enough to have the `lsp` command, and does `syncguard.config` name a readable file?',
            'Show Output',
            'Open Settings',
        );
        if (choice === 'Show Output') {
            output.show(true);
        } else if (choice === 'Open Settings') {
            void vscode.commands.executeCommand('workbench.action.openSettings', 'syncguard');
        }
    }
}

/**
 * Hands the server a `.jsonl` file only if it is a call trace, as `syncguard check DIR`
 * skips datasets (`isCallTraceText`), and a `.json` or rank-numbered file only if it is
 * a record of a run (`isRecordText`): another one is held back (nor its changes, saves
 * and close sent) until an edit makes it one; then it is opened with its text.
 */
export function traceFilter(current: () => Pick<LanguageClient, 'sendNotification' | 'code2ProtocolConverter'>): Middleware {
    const held = new Set<string>();
    const isHeld = (document: vscode.TextDocument) => held.has(document.uri.toString());
    return {
        didOpen: (document, next) => {
            if (!isServed(document)) {
                held.add(document.uri.toString());
                return Promise.resolve();
            }
            return next(document);
        },
        didChange: (event, next) => {
            if (!isHeld(event.document)) {
                return next(event);
            }
            if (!isServed(event.document)) {
                return Promise.resolve();
            }
            held.delete(event.document.uri.toString());
            const client = current();
            return client.sendNotification(
                DidOpenTextDocumentNotification.type,
                client.code2ProtocolConverter.asOpenTextDocumentParams(event.document),
            );
        },
        didSave: (document, next) => (isHeld(document) ? Promise.resolve() : next(document)),
        willSave: (event, next) => (isHeld(event.document) ? Promise.resolve() : next(event)),
        didClose: (document, next) => {
            if (held.delete(document.uri.toString())) {
                return Promise.resolve();
            }
            return next(document);
        },
    };
}

/** Whether the server is handed this document: a call trace or a record of a run only
 * if its text is one, any other document the server reads (`kindOf`) always. */
function isServed(document: vscode.TextDocument): boolean {
    const path = document.uri.path;
    switch (kindOf(path, document.languageId)) {
        case undefined:
            return false;
        case 'trace':
            return !isTracePath(path) || isCallTraceText(document.getText());
        case 'record':
            return isRecordPath(path) && isRecordText(document.getText());
        default:
            return true;
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

// --- Show Timeline -------------------------------------------------------------------

function isSyncguardDiagnostic(diagnostic: vscode.Diagnostic): boolean {
    return diagnostic.source === 'syncguard' && codeOf(diagnostic) !== undefined;
}

function codeOf(diagnostic: vscode.Diagnostic): string | undefined {
    const code = typeof diagnostic.code === 'object' ? diagnostic.code.value : diagnostic.code;
    return code === undefined ? undefined : String(code);
}

/** "Show timeline" next to each syncguard finding's quick fixes. */
class TimelineActions implements vscode.CodeActionProvider {
    provideCodeActions(
        document: vscode.TextDocument,
        _range: vscode.Range | vscode.Selection,
        context: vscode.CodeActionContext,
    ): vscode.CodeAction[] {
        return context.diagnostics.filter(isSyncguardDiagnostic).map((diagnostic) => {
            const action = new vscode.CodeAction(
                `Show timeline of ${codeOf(diagnostic)}`,
                vscode.CodeActionKind.QuickFix,
            );
            action.command = {
                command: 'syncguard.showTimeline',
                title: action.title,
                arguments: [document.uri, diagnostic],
            };
            action.diagnostics = [diagnostic];
            return action;
        });
    }
}

/**
 * The finding under the cursor (or the one passed by the code action, or one picked
 * from the file's findings): `syncguard check FILE --format html` in a webview,
 * scrolled to its card. A C/C++ or Python finding that needs the rest of its project
 * is looked for in a check of the whole workspace folder when the file alone does not
 * give it.
 */
async function showTimeline(uri?: vscode.Uri, given?: vscode.Diagnostic): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const document =
        uri instanceof vscode.Uri
            ? await vscode.workspace.openTextDocument(uri)
            : editor?.document;
    if (document === undefined) {
        void vscode.window.showInformationMessage('syncguard: open a file with syncguard findings first.');
        return;
    }
    if (document.uri.scheme !== 'file') {
        void vscode.window.showInformationMessage('syncguard: the timeline is drawn for files saved on disk.');
        return;
    }
    const diagnostic = given ?? (await chooseFinding(document, editor?.document === document ? editor : undefined));
    if (diagnostic === undefined) {
        return;
    }
    if (document.isDirty) {
        const choice = await vscode.window.showWarningMessage(
            'syncguard: the timeline is drawn for the file as saved.',
            'Save and Show',
            'Show Saved Version',
        );
        if (choice === undefined) {
            return;
        }
        if (choice === 'Save and Show') {
            await document.save();
        }
    }
    const { settings, cwd, command } = environment();
    if (command === undefined) {
        void showNotFound(settings.path);
        return;
    }
    const file = document.uri.fsPath;
    const finding = {
        code: codeOf(diagnostic)!,
        line: diagnostic.range.start.line + 1,
        column: diagnostic.range.start.character + 1,
    };
    const kind = kindOf(file.replace(/\\/g, '/'), document.languageId);
    const folder = vscode.workspace.getWorkspaceFolder(document.uri)?.uri.fsPath ?? path.dirname(file);
    const runCwd = cwd ?? folder;

    const report = await vscode.window.withProgress(
        {
            location: vscode.ProgressLocation.Notification,
            title: `syncguard: checking ${path.basename(file)}`,
            cancellable: true,
        },
        async (progress, token) => {
            let html = await render(command, checkArgs(settings, cwd, file, '{out}'), runCwd, token);
            let card = html === undefined ? undefined : findCard(html, file, finding);
            if (card === undefined && html !== undefined && (kind === 'cpp' || kind === 'python') && !token.isCancellationRequested) {
                progress.report({ message: `the file alone does not give ${finding.code}: checking ${folder}` });
                const whole = await render(command, checkArgs(settings, cwd, folder, '{out}'), runCwd, token);
                const wholeCard = whole === undefined ? undefined : findCard(whole, file, finding);
                if (wholeCard !== undefined) {
                    html = whole;
                    card = wholeCard;
                }
            }
            return html === undefined ? undefined : { html, card };
        },
    );
    if (report === undefined) {
        return;
    }
    if (report.card === undefined) {
        void vscode.window.showInformationMessage(
            `syncguard: the report of ${path.basename(file)} has no ${finding.code} at line ${finding.line}: showing the whole report.`,
        );
    }
    showPanel(`${finding.code} ${path.basename(file)}:${finding.line}`, webviewPage(report.html, report.card?.id));
}

/** The syncguard finding at the cursor, else one picked from the file's findings. */
async function chooseFinding(
    document: vscode.TextDocument,
    editor: vscode.TextEditor | undefined,
): Promise<vscode.Diagnostic | undefined> {
    const findings = vscode.languages.getDiagnostics(document.uri).filter(isSyncguardDiagnostic);
    if (findings.length === 0) {
        void vscode.window.showInformationMessage(
            `syncguard: ${path.basename(document.uri.fsPath)} has no syncguard findings to show.`,
        );
        return undefined;
    }
    if (editor !== undefined) {
        const cursor = editor.selection.active;
        const at =
            findings.find((finding) => finding.range.contains(cursor)) ??
            findings.find((finding) => finding.range.start.line === cursor.line);
        if (at !== undefined) {
            return at;
        }
    }
    if (findings.length === 1) {
        return findings[0];
    }
    const picked = await vscode.window.showQuickPick(
        findings.map((finding) => ({
            label: `${codeOf(finding)}  line ${finding.range.start.line + 1}`,
            detail: finding.message,
            finding,
        })),
        { placeHolder: 'The finding whose timeline to show', matchOnDetail: true },
    );
    return picked?.finding;
}

/**
 * Run `syncguard check ... -o FILE` (`{out}` in `args` is FILE, a new temporary file)
 * and read the report. Exit 0 or 1 (findings) is a report; anything else is shown as
 * an error. `undefined` when there is no report or the user cancelled.
 */
async function render(
    command: string,
    args: string[],
    cwd: string,
    token: vscode.CancellationToken,
): Promise<string | undefined> {
    const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'syncguard-timeline-'));
    const out = path.join(dir, 'report.html');
    const argv = args.map((arg) => (arg === '{out}' ? out : arg));
    try {
        const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
            const child = execFile(command, argv, { cwd, maxBuffer: 16 << 20 }, (error, _stdout, stderr) => {
                const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
                resolve({ code, stderr: String(stderr) });
            });
            token.onCancellationRequested(() => child.kill());
        });
        if (token.isCancellationRequested) {
            return undefined;
        }
        if ((result.code !== 0 && result.code !== 1) || !fs.existsSync(out)) {
            output.appendLine(`syncguard: ${[command, ...argv].join(' ')} failed (exit ${result.code}):`);
            output.appendLine(result.stderr);
            const choice = await vscode.window.showErrorMessage(
                `syncguard: \`syncguard check\` could not draw the report (exit ${result.code}): ${lastLine(result.stderr)}`,
                'Show Output',
            );
            if (choice === 'Show Output') {
                output.show(true);
            }
            return undefined;
        }
        return await fs.promises.readFile(out, 'utf8');
    } finally {
        await fs.promises.rm(dir, { recursive: true, force: true }).catch(() => undefined);
    }
}

function lastLine(text: string): string {
    const lines = text.trim().split('\n');
    return lines[lines.length - 1] ?? '';
}

/** One panel, reused: the report is self-contained, so it may load nothing from disk. */
function showPanel(title: string, html: string): void {
    if (panel === undefined) {
        panel = vscode.window.createWebviewPanel(
            'syncguard.timeline',
            title,
            { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
            {
                enableScripts: true,
                enableCommandUris: false,
                enableFindWidget: true,
                localResourceRoots: [],
            },
        );
        panel.onDidDispose(() => {
            panel = undefined;
        });
    } else {
        panel.reveal(vscode.ViewColumn.Beside, true);
    }
    panel.title = `syncguard: ${title}`;
    panel.webview.html = html;
}

function describe(error: unknown): string {
    return error instanceof Error ? error.message : String(error);
}

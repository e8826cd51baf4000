// "Show Timeline": a finding's card is found in the HTML report, and the page the webview
// shows scrolls to it (compiled code: run `npm run compile` first; the report is drawn by
// the real `syncguard check` when this checkout has a build).
'use strict';

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const REPO = path.join(ROOT, '..', '..');
const out = path.join(ROOT, 'out');
assert.ok(fs.existsSync(path.join(out, 'timeline.js')), 'run `npm run compile` first');
const { REPORT_POLICY, cards, findCard, sameFile, webviewPage } = require(path.join(out, 'timeline.js'));
const { DEFAULTS, checkArgs } = require(path.join(out, 'settings.js'));

const { syncguardBinary } = require('./binary');

const card = (n, code, file, line, column) =>
    `<section class="finding sev-border-error" id="finding-${n}" data-code="${code}" data-severity="error" data-file="${file}">` +
    `<h2><span class="sev sev-error">error</span> <code>${code}</code> name</h2><p class="message">m</p>` +
    `<p class="where"><a href="#src-0-${line}">${file}:${line}:${column}</a> <code class="snippet">x</code></p><figure></figure></section>`;

const REPORT =
    `<!DOCTYPE html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${REPORT_POLICY}"></head><body>` +
    card(0, 'SG102', 'a &amp; b/x.sync', 23, 5) +
    card(1, 'SG601', 'a &amp; b/x.sync', 26, 5) +
    card(2, 'SG601', 'a &amp; b/x.sync', 26, 30) +
    card(3, 'SG601', 'other.sync', 26, 5) +
    '<script>/* report */</script></body></html>';

test('cards are read with their rule, file and position', () => {
    assert.deepEqual(cards(REPORT)[0], { id: 'finding-0', code: 'SG102', file: 'a & b/x.sync', line: 23, column: 5 });
    assert.equal(cards(REPORT).length, 4);
});

test('a finding is matched by rule, file and line; the column decides between several', () => {
    const file = '/ws/a & b/x.sync';
    assert.equal(findCard(REPORT, file, { code: 'SG102', line: 23, column: 5 }).id, 'finding-0');
    assert.equal(findCard(REPORT, file, { code: 'SG601', line: 26, column: 30 }).id, 'finding-2');
    assert.equal(findCard(REPORT, file, { code: 'SG601', line: 26, column: 7 }).id, 'finding-1');
    assert.equal(findCard(REPORT, '/ws/other.sync', { code: 'SG601', line: 26, column: 5 }).id, 'finding-3');
    assert.equal(findCard(REPORT, file, { code: 'SG103', line: 23, column: 5 }), undefined);
    assert.equal(findCard(REPORT, file, { code: 'SG102', line: 24, column: 5 }), undefined);
    assert.ok(sameFile('C:\\ws\\x.sync', 'C:/ws/x.sync'));
    assert.ok(!sameFile('ab.sync', '/ws/b.sync'));
});

test('the page scrolls to the card and keeps the report policy', () => {
    const page = webviewPage(REPORT, 'finding-2');
    assert.ok(page.includes(REPORT_POLICY));
    assert.match(page, /getElementById\("finding-2"\)[\s\S]*scrollIntoView[\s\S]*<\/script><\/body><\/html>$/);
    assert.match(page, /#finding-2\{outline/);
    // Nothing is added for no card, or for an id that is not a card's.
    assert.equal(webviewPage(REPORT, undefined), REPORT);
    assert.equal(webviewPage(REPORT, 'x"><script>'), REPORT);
    // A report without a policy gets the report's one.
    const bare = webviewPage('<html><head></head><body></body></html>', undefined);
    assert.ok(bare.includes(`content="${REPORT_POLICY}"`));
});

test('every finding of a real report has its card', { skip: syncguardBinary() === undefined }, () => {
    const binary = syncguardBinary();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'syncguard-report-'));
    try {
        const targets = [
            path.join(REPO, 'examples', 'acl-event-sync', 'missing-reset.sync'),
            path.join(REPO, 'examples', 'cpp', 'fail_copy_compute_streams.cu'),
            path.join(REPO, 'examples', 'python', 'fail_pyacl_wrong_slot_event.py'),
        ].filter((file) => fs.existsSync(file));
        let checked = 0;
        for (const target of targets) {
            const report = path.join(dir, 'report.html');
            // As the extension runs it (the working directory is the workspace folder).
            const run = spawnSync(binary, checkArgs({ ...DEFAULTS, isolated: true }, REPO, target, report), {
                cwd: REPO,
                encoding: 'utf8',
            });
            assert.ok(run.status === 0 || run.status === 1, `exit ${run.status}: ${run.stderr}`);
            const html = fs.readFileSync(report, 'utf8');
            assert.match(html, /Content-Security-Policy/);
            const concise = spawnSync(binary, ['check', '--isolated', '--format', 'concise', target], {
                cwd: REPO,
                encoding: 'utf8',
            });
            for (const line of concise.stdout.split('\n')) {
                const found = /^(.*):(\d+):(\d+): (SG\d+) /.exec(line);
                if (!found || !sameFile(found[1], target)) {
                    continue;
                }
                const [, , at, column, code] = found;
                const match = findCard(html, target, { code, line: Number(at), column: Number(column) });
                assert.ok(match, `${line}: no card`);
                checked++;
            }
        }
        assert.ok(checked > 0, 'the examples have findings');
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

// The "Show Timeline" command's pure parts: finding a finding's card in the HTML report
// of `syncguard check --format html`, and the page the webview shows. No `vscode`
// import, so that tests can load it in plain Node.

/** A finding as the editor has it: rule code and 1-based line and column. */
export interface FindingAt {
    code: string;
    line: number;
    column: number;
}

/** A finding's card in the report (`<section class="finding" id="finding-N" ...>`). */
export interface Card {
    id: string;
    code: string;
    file: string;
    line: number;
    column: number;
}

const CARD =
    /<section class="finding[^"]*" id="(finding-\d+)" data-code="([^"]*)"[^>]*data-file="([^"]*)"[^>]*>[\s\S]*?<p class="where"><a [^>]*>([\s\S]*?)<\/a>/g;

/** Every finding card of a report, with where its finding is. */
export function cards(html: string): Card[] {
    const found: Card[] = [];
    for (const match of html.matchAll(CARD)) {
        const [, id, code, file, where] = match;
        const position = /:(\d+):(\d+)$/.exec(unescapeHtml(where).trim());
        found.push({
            id,
            code,
            file: unescapeHtml(file),
            line: position ? Number(position[1]) : 0,
            column: position ? Number(position[2]) : 0,
        });
    }
    return found;
}

function unescapeHtml(text: string): string {
    return text
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&#x27;/g, "'")
        .replace(/&amp;/g, '&');
}

/** Whether a report path names `file` (the report shows paths as given to `check`). */
export function sameFile(reported: string, file: string): boolean {
    const normalize = (p: string) => p.replace(/\\/g, '/').replace(/^\.\//, '');
    const a = normalize(reported);
    const b = normalize(file);
    return a === b || b.endsWith('/' + a) || a.endsWith('/' + b);
}

/**
 * The card of `finding` in `file`: same rule and line (the column decides between
 * several; the report counts characters, the editor UTF-16 units, so it may differ
 * on a line with wide characters). `undefined` when the report has none.
 */
export function findCard(html: string, file: string, finding: FindingAt): Card | undefined {
    const candidates = cards(html).filter(
        (card) => card.code === finding.code && card.line === finding.line && sameFile(card.file, file),
    );
    return candidates.find((card) => card.column === finding.column) ?? candidates[0];
}

/**
 * The page the webview shows: the report as it is (self-contained; its own
 * Content-Security-Policy allows its inline style and script and nothing from
 * elsewhere; one is added if it has none), scrolled to the card `focus` and the card
 * outlined.
 */
export function webviewPage(html: string, focus: string | undefined): string {
    let page = html;
    if (!/http-equiv="Content-Security-Policy"/i.test(page)) {
        page = page.replace(
            /<head>/i,
            `<head><meta http-equiv="Content-Security-Policy" content="${REPORT_POLICY}">`,
        );
    }
    if (focus === undefined || !/^finding-\d+$/.test(focus)) {
        return page;
    }
    const script =
        `<style>#${focus}{outline:3px solid #d19a00;outline-offset:4px}</style>` +
        `<script>(function(){var card=document.getElementById(${JSON.stringify(focus)});` +
        `if(card){card.classList.remove("collapsed");card.scrollIntoView({block:"start"});}})();</script>`;
    return /<\/body>/i.test(page) ? page.replace(/<\/body>(?![\s\S]*<\/body>)/i, `${script}</body>`) : page + script;
}

/** The policy `syncguard check --format html` writes into its report. */
export const REPORT_POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

//! The HTML report as a person sees it: each example's page opened in headless Chromium
//! (Debian package `chromium`; `$CHROMIUM` names another binary; skipped without one
//! unless `SYNCGUARD_TEST_REQUIRE_TOOLS=1`). The DOM after its
//! script ran has every op of the finding drawn and highlighted, the browser logs no
//! load the page's policy blocked (a control page shows such a load would be logged),
//! and a screenshot is taken. `SYNCGUARD_UPDATE_SCREENSHOTS=1` keeps the screenshots in
//! docs/screenshots/, the ones the README shows.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod optional_tools;

/// The examples the docs show: the finding's rule, the file, and the screenshot's name.
const EXAMPLES: [(&str, &str, &str); 4] = [
    ("SG501", "examples/acl-event-sync/cross-wait-deadlock.sync", "deadlock"),
    (
        "SG103",
        "examples/acl-event-sync/reset-before-second-wait.sync",
        "reset-before-wait",
    ),
    (
        "SG502",
        "examples/parametric-ring/off-by-one-peer.sync",
        "parametric-ring",
    ),
    (
        "SG303",
        "examples/hccl-three-phase-write/lost-signal.sync",
        "hccl-three-phase",
    ),
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The Chromium binary: `$CHROMIUM`, else the usual names; none skips the test (fails
/// it with `SYNCGUARD_TEST_REQUIRE_TOOLS=1`, as CI runs).
fn chromium() -> Option<PathBuf> {
    let named = std::env::var("CHROMIUM").ok();
    let candidates: Vec<&str> = named
        .as_deref()
        .into_iter()
        .chain(["chromium", "chromium-browser", "google-chrome"])
        .collect();
    optional_tools::optional_tool(
        &candidates,
        "the browser test",
        "Debian package `chromium`, or set $CHROMIUM",
    )
}

/// Headless Chromium on `page`. A start that hangs (seen once in a CI-like run: the
/// browser idle for minutes, no output) is killed after a minute and tried again, so a
/// hung browser fails the test instead of the whole CI run's time limit.
fn browse(page: &Path, extra: &[&str]) -> Output {
    const TRIES: usize = 3;
    for _ in 1..TRIES {
        let output = browse_once(page, extra);
        // `timeout`'s status when it had to stop the browser.
        if !matches!(output.status.code(), Some(124 | 137)) {
            return checked(output);
        }
    }
    checked(browse_once(page, extra))
}

fn checked(output: Output) -> Output {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    output
}

fn browse_once(page: &Path, extra: &[&str]) -> Output {
    let profile = tempfile::tempdir().unwrap();
    Command::new("timeout")
        .args(["--kill-after=5", "60"])
        .arg(chromium().expect("the test checked for Chromium first"))
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--disable-background-networking",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--run-all-compositor-stages-before-draw",
            "--virtual-time-budget=2000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap()
}

/// What the browser's console said about blocked loads: a page that loads nothing says nothing.
fn blocked_loads(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|line| line.contains("CONSOLE") && line.contains("Content Security Policy"))
        .map(str::to_string)
        .collect()
}

fn write_report(example: &str, dir: &Path) -> PathBuf {
    let page = dir.join("report.html");
    let output = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["check", "--format", "html", "-o"])
        .arg(&page)
        .arg(example)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    page
}

/// The DOM after the script ran: the first finding of `code` has its ops drawn, the ones
/// it names highlighted (the cycle's in red), and each links to a row of the listing.
fn assert_drawn(dom: &str, code: &str) {
    let start = dom
        .find(&format!("data-code=\"{code}\""))
        .unwrap_or_else(|| panic!("a {code} finding is on the page"));
    let finding = &dom[start..];
    let finding = &finding[..finding.find("</section>").unwrap()];
    assert!(finding.contains("<svg class=\"timeline\""), "{code} has its timeline");
    let ops: Vec<&str> = finding.split("<a class=\"op ").skip(1).collect();
    let highlighted: Vec<&&str> = ops
        .iter()
        .filter(|op| op.contains("data-role=\"cycle\"") || op.contains("data-role=\"involved\""))
        .collect();
    assert!(!highlighted.is_empty(), "{code}: the finding's ops are highlighted");
    if code == "SG502" {
        // The ring's wait: the peer it expects, as a ghost arrow with its words.
        assert!(
            finding.contains("<g class=\"ghost ghost-wrong-peer\""),
            "{code}: a ghost"
        );
        assert!(
            finding.contains(">expects rank 1 · notify 0</text>"),
            "{code}: its words"
        );
    }
    if code == "SG501" {
        let cycle = ops.iter().filter(|op| op.starts_with("op-cycle")).count();
        let steps = finding.matches("class=\"edge edge-cycle\"").count();
        assert!(
            cycle >= 2 && cycle == steps,
            "{code}: {cycle} cycle ops, {steps} red steps"
        );
    }
    for op in &ops {
        // The script moved each tooltip into `data-tip`: it ran.
        assert!(op.contains("data-tip=\""), "{code}: the script ran over {op}");
        let href = op.split("href=\"#").nth(1).unwrap().split('"').next().unwrap();
        assert!(
            dom.contains(&format!("<tr id=\"{href}\"")),
            "{code}: {href} is in the listing"
        );
    }
}

#[test]
fn a_blocked_load_would_be_seen() {
    if chromium().is_none() {
        return;
    }
    // The control: the same browser flags, a page with the report's policy that tries
    // to load an image. The check that reports pass must be able to fail.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("control.html");
    std::fs::write(
        &page,
        "<!DOCTYPE html><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">\
         <img src=\"https://example.com/x.png\">",
    )
    .unwrap();
    let output = browse(&page, &["--dump-dom"]);
    assert!(!blocked_loads(&output.stderr).is_empty(), "the blocked load is logged");
}

#[test]
fn each_example_report_renders_in_chromium_without_network_access() {
    if chromium().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let update = std::env::var_os("SYNCGUARD_UPDATE_SCREENSHOTS").is_some();
    for (code, example, name) in EXAMPLES {
        let work = dir.path().join(name);
        std::fs::create_dir(&work).unwrap();
        let page = write_report(example, &work);
        let dom = browse(&page, &["--dump-dom"]);
        assert!(
            blocked_loads(&dom.stderr).is_empty(),
            "{name}: {:?}",
            blocked_loads(&dom.stderr)
        );
        assert_drawn(&String::from_utf8(dom.stdout).unwrap(), code);
        let screenshot = work.join(format!("{name}.png"));
        let shot = browse(
            &page,
            &[
                &format!("--screenshot={}", screenshot.display()),
                "--window-size=1400,1000",
            ],
        );
        assert!(blocked_loads(&shot.stderr).is_empty(), "{name}");
        let png = std::fs::read(&screenshot).expect("the screenshot is written");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}: a PNG");
        assert!(png.len() > 20_000, "{name}: the page has content ({} bytes)", png.len());
        if update {
            let kept = root().join("docs/screenshots").join(format!("{name}.png"));
            std::fs::create_dir_all(kept.parent().unwrap()).unwrap();
            std::fs::copy(&screenshot, kept).unwrap();
        }
    }
}

#[test]
fn no_card_runs_off_the_page_sideways_however_long_its_source_lines() {
    if chromium().is_none() {
        return;
    }
    // A call trace's lines are long JSON: the finding's location, its involved calls
    // and the source listing wrap them inside their cards.
    let dir = tempfile::tempdir().unwrap();
    let page = write_report("examples/traces/cuda-stream-race.jsonl", dir.path());
    let html = std::fs::read_to_string(&page).unwrap();
    // Measured by the browser, in a copy of the page: the cards wider than their box.
    let measure = "<script>document.body.setAttribute('data-overflowing', \
                   [...document.querySelectorAll('.finding, #sources, #summary')]\
                   .filter(card => card.scrollWidth > card.clientWidth + 1)\
                   .map(card => card.id || card.className).join(','));</script></body>";
    let measured = dir.path().join("measured.html");
    std::fs::write(&measured, html.replace("</body>", measure)).unwrap();
    let dom = String::from_utf8(browse(&measured, &["--window-size=1000,800", "--dump-dom"]).stdout).unwrap();
    assert!(
        dom.contains("data-overflowing=\"\""),
        "cards overflow: {}",
        dom.split("data-overflowing=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("(not measured)")
    );
}

/// The DOM of a copy of `html` (in `dir`) with `drive` (a `<script>` ending in
/// `</body>`) run after the report's own script.
fn run_in_page(dir: &Path, html: &str, drive: &str) -> String {
    let driven = dir.join("driven.html");
    std::fs::write(&driven, html.replace("</body>", drive)).unwrap();
    String::from_utf8(browse(&driven, &["--dump-dom"]).stdout).unwrap()
}

/// What a driving script wrote down as `data-NAME` on the body.
fn written_data(dom: &str, name: &str) -> String {
    dom.split(&format!("data-{name}=\""))
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("data-{name} was written: the script ran"))
        .replace("&amp;", "&")
}

#[test]
fn a_page_of_many_findings_filters_searches_and_collapses_them() {
    if chromium().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let page = write_report("examples/acl-event-sync", dir.path());
    let html = std::fs::read_to_string(&page).unwrap();
    let total = html.matches(r#"<section class="finding "#).count();
    assert!(total >= 4, "{total} findings");
    // Driven in a copy of the page, after the report's own script: pick the first
    // rule, then search instead, then collapse every card; each result is written down.
    let drive = r#"<script>
      var cards = () => [...document.querySelectorAll('section.finding')];
      var shown = () => cards().filter(card => !card.hidden).length;
      var rule = document.getElementById('finder-rule');
      rule.value = rule.options[1].value; rule.dispatchEvent(new Event('change'));
      document.body.dataset.byRule = shown() + ' ' + rule.value.split(' ')[0];
      rule.value = ''; rule.dispatchEvent(new Event('change'));
      var text = document.getElementById('finder-text');
      text.value = 'forever deadlock'; text.dispatchEvent(new Event('input'));
      document.body.dataset.bySearch = shown();
      text.value = ''; text.dispatchEvent(new Event('input'));
      document.getElementById('finder-collapse').click();
      document.body.dataset.collapsed = cards().filter(card => card.classList.contains('collapsed')).length;
      document.body.dataset.count = document.getElementById('finder-count').textContent;
    </script></body>"#;
    let dom = run_in_page(dir.path(), &html, drive);
    let data = |name: &str| written_data(&dom, name);
    assert!(
        dom.contains(r#"<section id="finder" aria-label="filter findings">"#),
        "the finder is shown"
    );
    let by_rule = data("by-rule");
    let (count, code) = by_rule.split_once(' ').unwrap();
    assert_eq!(
        count.parse::<usize>().unwrap(),
        html.matches(&format!(r#"data-code="{code}""#)).count(),
        "{by_rule}"
    );
    assert_eq!(data("by-search"), "1", "the deadlock alone says both words");
    assert_eq!(data("collapsed"), total.to_string());
    assert_eq!(data("count"), format!("{total} of {total} findings shown"));
}

#[test]
fn a_page_of_many_findings_groups_them_by_file_rule_and_location() {
    if chromium().is_none() {
        return;
    }
    // Two findings share a location (fail_mesh_allgather.sync:61, SG301 and SG303).
    let dir = tempfile::tempdir().unwrap();
    let page = write_report("examples/cpp", dir.path());
    let html = std::fs::read_to_string(&page).unwrap();
    let total = html.matches(r#"<section class="finding "#).count();
    // Driven in a copy of the page: each grouping writes down its headers (name and
    // count) and whether every card stands under the header of its own group; then a
    // header is closed as a keyboard user would (it is a button, focused and activated),
    // a filter is set, and the grouping is taken off again.
    let drive = r#"<script>
      var group = document.getElementById('finder-group');
      var cards = () => [...document.querySelectorAll('section.finding')];
      var headers = () => [...document.querySelectorAll('.group-header')];
      function key(card, by) {
        return by === 'file' ? card.dataset.file : by === 'rule' ? card.dataset.code + ' ' + card.dataset.name : card.dataset.location;
      }
      function check(by) {
        group.value = by; group.dispatchEvent(new Event('change'));
        var under = true, current = null;
        for (var node of document.querySelectorAll('.group-header, section.finding')) {
          if (node.classList.contains('group-header')) { current = node.querySelector('.group-name').textContent; }
          else if (key(node, by) !== current) { under = false; }
        }
        document.body.dataset[by] = headers().map(h => h.querySelector('.group-name').textContent + '=' + h.querySelector('.group-count').textContent).join('|') + ';' + under;
      }
      check('file'); check('rule'); check('location');
      var button = headers()[0].querySelector('button');
      button.focus();
      button.click();
      var members = headers()[0].cards;
      document.body.dataset.closed = document.activeElement === button && button.getAttribute('aria-expanded') === 'false' && members.every(card => card.offsetParent === null);
      var rule = document.getElementById('finder-rule');
      rule.value = [...rule.options].find(o => o.value.startsWith('SG502')).value; rule.dispatchEvent(new Event('change'));
      document.body.dataset.filtered = headers().filter(h => !h.hidden).map(h => h.querySelector('.group-count').textContent).join('|');
      rule.value = ''; rule.dispatchEvent(new Event('change'));
      group.value = ''; group.dispatchEvent(new Event('change'));
      document.body.dataset.ungrouped = headers().length + ' ' + cards().map(card => card.id).join(',') + ' ' + cards().every(card => card.offsetParent !== null);
    </script></body>"#;
    let dom = run_in_page(dir.path(), &html, drive);
    let data = |name: &str| written_data(&dom, name);
    assert!(html.contains(r#"<select id="finder-group" aria-label="group by">"#));
    // Per grouping, one header per distinct value, counting the cards with it.
    for (by, attribute) in [("file", "data-file"), ("location", "data-location")] {
        let written = data(by);
        let (groups, under) = written.rsplit_once(';').unwrap();
        assert_eq!(under, "true", "{by}: every card under its own group's header");
        let mut expected: Vec<String> = Vec::new();
        for value in attribute_values(&html, attribute) {
            let value = value.replace("&amp;", "&");
            if !expected.iter().any(|e| e.starts_with(&format!("{value}="))) {
                let n = attribute_values(&html, attribute)
                    .iter()
                    .filter(|v| v.replace("&amp;", "&") == value)
                    .count();
                expected.push(format!("{value}={n} finding{}", if n == 1 { "" } else { "s" }));
            }
        }
        assert_eq!(groups.split('|').collect::<Vec<_>>(), expected, "{by}");
    }
    assert!(
        data("location").contains("examples/cpp/fail_mesh_allgather.sync:61=2 findings"),
        "{}",
        data("location")
    );
    let rules = data("rule");
    assert!(rules.contains("SG502 wait-without-signal=2 findings"), "{rules}");
    assert_eq!(data("closed"), "true", "the focused header's button closes its group");
    // With a filter, the headers count what it leaves, and groups it empties go.
    let sg502 = html.matches(r#"data-code="SG502""#).count();
    let filtered = data("filtered");
    let counts: usize = filtered
        .split('|')
        .map(|count| count.split(' ').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(counts, sg502, "{filtered}");
    // No grouping: no header, every card back in page order and shown.
    let ids: Vec<String> = (0..total).map(|n| format!("finding-{n}")).collect();
    assert_eq!(data("ungrouped"), format!("0 {} true", ids.join(",")));
}

/// Every value of attribute `name` in `html`, in order (double quotes only).
fn attribute_values<'h>(html: &'h str, name: &str) -> Vec<&'h str> {
    html.split(&format!(" {name}=\""))
        .skip(1)
        .map(|rest| rest.split('"').next().unwrap())
        .collect()
}

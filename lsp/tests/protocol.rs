//! The server driven over the protocol, in memory, as an editor drives it.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lsp_server::{Connection, Message, Notification, Request, Response};
use serde_json::{Value, json};

struct Client {
    connection: Connection,
    server: Option<std::thread::JoinHandle<Result<(), String>>>,
    next_id: i32,
    notifications: VecDeque<Notification>,
    /// Every file diagnostics were published for.
    published: std::collections::BTreeSet<String>,
    /// The version of the diagnostics [`Client::diagnostics`] last looked at.
    last_version: Option<i64>,
    /// The methods of the requests the server sent.
    server_requests: Vec<String>,
    /// The values of the `$/progress` notifications [`Client::diagnostics`] went past.
    progress: Vec<Value>,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn url(path: &Path) -> String {
    format!("file://{}", path.display())
}

impl Client {
    fn start(root: &Path) -> Client {
        Client::start_with(root, json!({}))
    }

    /// A client with these capabilities.
    fn start_with(root: &Path, capabilities: Value) -> Client {
        Client::start_server(root, capabilities, syncguard_lsp::ServerOptions::default())
    }

    /// A client of a server started with `options` (`syncguard lsp --isolated`, ...).
    fn start_server(root: &Path, capabilities: Value, options: syncguard_lsp::ServerOptions) -> Client {
        let (server, connection) = Connection::memory();
        let server = std::thread::spawn(move || syncguard_lsp::serve_with(server, options));
        let mut client = Client {
            connection,
            server: Some(server),
            next_id: 0,
            notifications: VecDeque::new(),
            published: Default::default(),
            last_version: None,
            server_requests: Vec::new(),
            progress: Vec::new(),
        };
        let initialized = client.request(
            "initialize",
            json!({"rootUri": url(root), "capabilities": capabilities}),
        );
        assert_eq!(initialized["serverInfo"]["name"], "syncguard");
        client.notify("initialized", json!({}));
        client
    }

    fn notify(&self, method: &str, params: Value) {
        let message = Message::Notification(Notification::new(method.to_string(), params));
        self.connection.sender.send(message).unwrap();
    }

    /// The response's result, or its error as `{"error": ...}`.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = syncguard_lsp::request_id(self.next_id);
        let request = Request::new(id.clone(), method.to_string(), params);
        self.connection.sender.send(Message::Request(request)).unwrap();
        loop {
            match self.receive() {
                Message::Response(Response {
                    id: answered,
                    result,
                    error,
                }) if answered == id => {
                    return match error {
                        Some(error) => json!({"error": {"code": error.code, "message": error.message}}),
                        None => result.unwrap_or(Value::Null),
                    };
                }
                Message::Notification(notification) => self.notifications.push_back(notification),
                Message::Request(request) => self.server_requests.push(request.method),
                _ => {}
            }
        }
    }

    fn receive(&self) -> Message {
        self.connection
            .receiver
            .recv_timeout(Duration::from_secs(60))
            .expect("the server answers within a minute")
    }

    /// The next diagnostics published for `uri` that satisfy `wanted`.
    fn diagnostics(&mut self, uri: &str, wanted: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            while let Some(notification) = self.notifications.pop_front() {
                if notification.method == "$/progress" {
                    self.progress.push(notification.params["value"].clone());
                }
                if notification.method == "textDocument/publishDiagnostics" {
                    self.published
                        .insert(notification.params["uri"].as_str().unwrap_or("").to_string());
                }
                if notification.method == "textDocument/publishDiagnostics" && notification.params["uri"] == uri {
                    self.last_version = notification.params["version"].as_i64();
                    let found = notification.params["diagnostics"].as_array().unwrap().clone();
                    if wanted(&found) {
                        return found;
                    }
                }
            }
            assert!(Instant::now() < deadline, "no wanted diagnostics for {uri}");
            match self.receive() {
                Message::Notification(notification) => self.notifications.push_back(notification),
                Message::Request(request) => self.server_requests.push(request.method),
                Message::Response(_) => {}
            }
        }
    }

    /// Wait for the diagnostics of `uri` at `version` (all that checks before it
    /// published has arrived by then).
    fn published_version(&mut self, uri: &str, version: i64) {
        loop {
            self.diagnostics(uri, |_| true);
            if self.last_version == Some(version) {
                return;
            }
        }
    }

    fn open(&self, uri: &str, language: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
    }

    fn change(&self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let result = self.server.take().unwrap().join().expect("the server does not panic");
        assert_eq!(result, Ok(()));
    }
}

fn codes(diagnostics: &[Value]) -> Vec<String> {
    let mut codes: Vec<String> = diagnostics
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_string())
        .collect();
    codes.sort();
    codes
}

fn has(code: &'static str) -> impl Fn(&[Value]) -> bool {
    move |diagnostics| codes(diagnostics).iter().any(|c| c == code)
}

/// `text` with a list of LSP text edits applied (ASCII text: columns are bytes). As the
/// protocol says, inserts at one position appear in the order of the list.
fn apply(text: &str, edits: &[Value]) -> String {
    let offset = |position: &Value| {
        let line = position["line"].as_u64().unwrap() as usize;
        let column = position["character"].as_u64().unwrap() as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        (start + column).min(text.len())
    };
    let mut edits: Vec<(usize, usize, usize, &str)> = edits
        .iter()
        .enumerate()
        .map(|(index, edit)| {
            (
                offset(&edit["range"]["start"]),
                index,
                offset(&edit["range"]["end"]),
                edit["newText"].as_str().unwrap(),
            )
        })
        .collect();
    // From the end of the text back; at one position the last edit first, so that the
    // earlier ones land before it.
    edits.sort_by_key(|edit| std::cmp::Reverse((edit.0, edit.1)));
    let mut out = text.to_string();
    for (start, _, end, new) in edits {
        out.replace_range(start..end, new);
    }
    out
}

fn action<'a>(actions: &'a Value, title: &str) -> &'a Value {
    actions
        .as_array()
        .unwrap()
        .iter()
        .find(|action| action["title"] == title)
        .unwrap_or_else(|| panic!("no action {title:?} in {actions:#}"))
}

fn sync_fixture() -> (String, String) {
    let path = fixtures().join("pipeline.sync");
    (url(&path), std::fs::read_to_string(path).unwrap())
}

#[test]
fn a_sync_file_gets_its_findings_with_every_involved_call_and_the_rule_docs() {
    let mut client = Client::start(&fixtures());
    let (uri, text) = sync_fixture();
    client.open(&uri, "sync", &text);
    let diagnostics = client.diagnostics(&uri, has("SG102"));
    assert_eq!(codes(&diagnostics), ["SG102", "SG601", "SG604"]);
    let missing_reset = diagnostics.iter().find(|d| d["code"] == "SG102").unwrap();
    assert_eq!(missing_reset["severity"], 1);
    assert_eq!(missing_reset["source"], "syncguard");
    assert_eq!(missing_reset["range"]["start"], json!({"line": 10, "character": 4}));
    assert!(
        missing_reset["message"]
            .as_str()
            .unwrap()
            .contains("help: call aclrtResetEvent(handed, consumer)")
    );
    let related = missing_reset["relatedInformation"].as_array().unwrap();
    assert!(
        related.iter().any(|r| r["location"]["range"]["start"]["line"] == 11),
        "{related:#?}"
    );
    let docs = missing_reset["codeDescription"]["href"].as_str().unwrap();
    assert!(docs.starts_with("file://") && docs.ends_with("SG102.md"), "{docs}");
    let docs = std::fs::read_to_string(docs.trim_start_matches("file://")).unwrap();
    assert!(docs.contains("event-missing-reset"));
}

#[test]
fn the_quick_fix_inserts_the_reset_after_the_wait_and_the_findings_go_away() {
    let mut client = Client::start(&fixtures());
    let (uri, text) = sync_fixture();
    client.open(&uri, "sync", &text);
    let diagnostics = client.diagnostics(&uri, has("SG102"));
    let range = diagnostics.iter().find(|d| d["code"] == "SG102").unwrap()["range"].clone();
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": []}}),
    );
    let fix = action(&actions, "Insert aclrtResetEvent(handed, consumer) after the wait");
    assert_eq!(fix["isPreferred"], true);
    let fixed = apply(&text, fix["edit"]["changes"][&uri].as_array().unwrap());
    assert!(
        fixed.contains("    aclrtStreamWaitEvent(consumer, handed);\n    aclrtResetEvent(handed, consumer);\n"),
        "{fixed}"
    );
    client.change(&uri, 2, &fixed);
    client.diagnostics(&uri, |diagnostics| diagnostics.is_empty());
}

#[test]
fn the_kernel_race_quick_fix_inserts_the_flag_pair_and_the_race_goes_away() {
    let mut client = Client::start(&fixtures());
    let path = fixtures().join("kernel_race.sync");
    let (uri, text) = (url(&path), std::fs::read_to_string(path).unwrap());
    client.open(&uri, "sync", &text);
    let diagnostics = client.diagnostics(&uri, has("SG801"));
    let race = diagnostics.iter().find(|d| d["code"] == "SG801").unwrap();
    assert_eq!(race["range"]["start"], json!({"line": 3, "character": 4}));
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": race["range"], "context": {"diagnostics": []}}),
    );
    let fix = action(&actions, "Insert SetFlag/WaitFlag<MTE2_V> after `AscendC::DataCopy`");
    let fixed = apply(&text, fix["edit"]["changes"][&uri].as_array().unwrap());
    assert!(
        fixed.contains(
            "x[0..1 KiB]);\n    AscendC::SetFlag<HardEvent::MTE2_V>(0);\n    AscendC::WaitFlag<HardEvent::MTE2_V>(0);\n    AscendC::Muls"
        ),
        "{fixed}"
    );
    client.change(&uri, 2, &fixed);
    client.diagnostics(&uri, |diagnostics| diagnostics.is_empty());
}

/// A fixture of `fixes/`, opened in a client rooted there.
fn open_fix_fixture(name: &str, language: &str) -> (Client, String, String) {
    let root = fixtures().join("fixes");
    let client = Client::start(&root);
    let path = root.join(name);
    let (uri, text) = (url(&path), std::fs::read_to_string(path).unwrap());
    client.open(&uri, language, &text);
    (client, uri, text)
}

fn actions_at(client: &mut Client, uri: &str, finding: &Value) -> Value {
    client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": finding["range"], "context": {"diagnostics": []}}),
    )
}

#[test]
fn cpp_member_handles_are_named_as_written_and_fixed_with_them() {
    let (mut client, uri, text) = open_fix_fixture("member_pipeline.cpp", "cpp");
    let found = client.diagnostics(&uri, has("SG604"));
    assert_eq!(codes(&found), ["SG102", "SG604"]);
    let reset = found.iter().find(|d| d["code"] == "SG102").unwrap();
    assert!(
        reset["message"]
            .as_str()
            .unwrap()
            .starts_with("event ready_ is recorded again"),
        "{reset}"
    );
    let actions = actions_at(&mut client, &uri, reset);
    let reset_fix = action(&actions, "Insert aclrtResetEvent(ready_, compute_) after the wait");
    let mut edits = reset_fix["edit"]["changes"][&uri].as_array().unwrap().clone();
    let free = found.iter().find(|d| d["code"] == "SG604").unwrap();
    let actions = actions_at(&mut client, &uri, free);
    let free_fix = action(&actions, "Insert aclrtSynchronizeStream(upload_) before this");
    edits.extend(free_fix["edit"]["changes"][&uri].as_array().unwrap().iter().cloned());
    let fixed = apply(&text, &edits);
    assert!(
        fixed.contains(
            "CHECK(aclrtStreamWaitEvent(compute_, ready_));\n            CHECK(aclrtResetEvent(ready_, compute_));\n"
        ),
        "{fixed}"
    );
    assert!(
        fixed.contains("        CHECK(aclrtSynchronizeStream(upload_));\n        CHECK(aclrtFree(dev_));"),
        "{fixed}"
    );
    client.change(&uri, 2, &fixed);
    client.diagnostics(&uri, |diagnostics| diagnostics.is_empty());
}

#[test]
fn fix_all_applies_every_mechanical_fix_of_the_file_at_once() {
    let (mut client, uri, text) = open_fix_fixture("member_pipeline.cpp", "cpp");
    client.diagnostics(&uri, has("SG604"));
    let whole = json!({"start": {"line": 0, "character": 0}, "end": {"line": 60, "character": 0}});
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": whole, "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
    );
    let all = actions.as_array().unwrap();
    assert_eq!(all.len(), 1, "only the fix-all action was asked for: {actions:#}");
    assert_eq!(all[0]["kind"], "source.fixAll.syncguard");
    assert_eq!(all[0]["title"], "Fix all syncguard findings with a mechanical fix (2)");
    let fixed = apply(&text, all[0]["edit"]["changes"][&uri].as_array().unwrap());
    client.change(&uri, 2, &fixed);
    client.diagnostics(&uri, |diagnostics| diagnostics.is_empty());
}

#[test]
fn a_torch_host_read_is_fixed_with_the_streams_own_synchronize() {
    let (mut client, uri, text) = open_fix_fixture("torch_offload.py", "python");
    let found = client.diagnostics(&uri, has("SG602"));
    let race = found.iter().find(|d| d["code"] == "SG602").unwrap();
    assert!(race["message"].as_str().unwrap().contains("buffer saved"), "{race}");
    let actions = actions_at(&mut client, &uri, race);
    let fix = action(&actions, "Insert acl.rt.synchronize_stream(side) before this");
    let fixed = apply(&text, fix["edit"]["changes"][&uri].as_array().unwrap());
    assert!(
        fixed.contains("    side.synchronize()\n    return saved.numpy().sum()"),
        "{fixed}"
    );
    client.change(&uri, 2, &fixed);
    client.diagnostics(&uri, |diagnostics| diagnostics.is_empty());
}

#[test]
fn a_torch_race_between_streams_is_fixed_with_wait_stream() {
    let (mut client, uri, text) = open_fix_fixture("torch_side_copy.py", "python");
    let found = client.diagnostics(&uri, has("SG601"));
    let race = found.iter().find(|d| d["code"] == "SG601").unwrap();
    let actions = actions_at(&mut client, &uri, race);
    let fix = action(&actions, "Make side wait for the default stream before this");
    let fixed = apply(&text, fix["edit"]["changes"][&uri].as_array().unwrap());
    // Inside the `with` block the current stream is `side`: the default one is named.
    assert!(
        fixed.contains("        side.wait_stream(torch.npu.default_stream())\n        host = y.to("),
        "{fixed}"
    );
    client.change(&uri, 2, &fixed);
    client.diagnostics(&uri, |diagnostics| diagnostics.is_empty());
}

#[test]
fn every_finding_can_be_suppressed_on_its_line() {
    let mut client = Client::start(&fixtures());
    let (uri, text) = sync_fixture();
    client.open(&uri, "sync", &text);
    let diagnostics = client.diagnostics(&uri, has("SG601"));
    let race = diagnostics.iter().find(|d| d["code"] == "SG601").unwrap();
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": race["range"], "context": {"diagnostics": [race]}}),
    );
    let suppress = action(&actions, "Suppress SG601 on this line");
    let suppressed = apply(&text, suppress["edit"]["changes"][&uri].as_array().unwrap());
    assert!(
        suppressed.contains("    // syncguard: ignore[SG601] <why this is safe here>\n    kernel(consumer, \"drain\""),
        "{suppressed}"
    );
    client.change(&uri, 2, &suppressed);
    let left = client.diagnostics(&uri, |diagnostics| !has("SG601")(diagnostics));
    assert_eq!(codes(&left), ["SG102", "SG604"]);
}

#[test]
fn a_helper_in_another_file_is_checked_with_its_caller_and_the_project_configuration_applies() {
    let project = fixtures().join("project");
    let mut client = Client::start(&project);
    let caller = url(&project.join("pipeline.cpp"));
    let helper = url(&project.join("handoff.cpp"));
    client.open(
        &caller,
        "cpp",
        &std::fs::read_to_string(project.join("pipeline.cpp")).unwrap(),
    );
    // The record and wait are in the helper: that is where the finding is, and the
    // configuration's `ignore = ["SG701"]` holds.
    let found = client.diagnostics(&helper, has("SG102"));
    assert_eq!(codes(&found), ["SG102"]);
    // Fixing the helper, unsaved, clears the finding the caller's entry point had.
    let text = std::fs::read_to_string(project.join("handoff.cpp")).unwrap();
    client.open(&helper, "cpp", &text);
    let fixed = text.replace(
        "    aclrtStreamWaitEvent(to, ev);\n",
        "    aclrtStreamWaitEvent(to, ev);\n    aclrtResetEvent(ev, to);\n",
    );
    client.change(&helper, 2, &fixed);
    client.diagnostics(&helper, |diagnostics| diagnostics.is_empty());
}

#[test]
fn opening_a_file_publishes_it_and_what_its_entry_points_reach_not_the_whole_project() {
    let project = fixtures().join("project");
    let mut client = Client::start(&project);
    let caller = url(&project.join("pipeline.cpp"));
    let text = std::fs::read_to_string(project.join("pipeline.cpp")).unwrap();
    client.open(&caller, "cpp", &text);
    client.diagnostics(&url(&project.join("handoff.cpp")), has("SG102"));
    // A second check, so that everything the first one published has arrived.
    client.change(&caller, 2, &format!("// edited\n{text}"));
    client.published_version(&caller, 2);
    assert!(
        !client.published.contains(&url(&project.join("unrelated.cpp"))),
        "{:?}",
        client.published
    );
    // Opened, the other file gets its own finding.
    let unrelated = url(&project.join("unrelated.cpp"));
    client.open(
        &unrelated,
        "cpp",
        &std::fs::read_to_string(project.join("unrelated.cpp")).unwrap(),
    );
    assert_eq!(codes(&client.diagnostics(&unrelated, has("SG102"))), ["SG102"]);
}

#[test]
fn a_projects_first_check_reports_its_progress_and_later_ones_do_not() {
    let project = fixtures().join("project");
    let mut client = Client::start_with(&project, json!({"window": {"workDoneProgress": true}}));
    let caller = url(&project.join("pipeline.cpp"));
    let text = std::fs::read_to_string(project.join("pipeline.cpp")).unwrap();
    client.open(&caller, "cpp", &text);
    client.published_version(&caller, 1);
    assert_eq!(client.server_requests, ["window/workDoneProgress/create"]);
    let progress = std::mem::take(&mut client.progress);
    let kinds: Vec<&str> = progress.iter().map(|value| value["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"begin"), "{progress:?}");
    assert_eq!(kinds.last(), Some(&"end"), "{progress:?}");
    assert!(
        progress[0]["message"].as_str().unwrap().contains("3 files"),
        "{progress:?}"
    );
    client.change(&caller, 2, &format!("// edited\n{text}"));
    client.published_version(&caller, 2);
    assert_eq!(client.server_requests.len(), 1);
    assert_eq!(client.progress, Vec::<Value>::new());
}

#[test]
fn the_servers_own_options_choose_the_configuration_as_checks_do() {
    let project = fixtures().join("project");
    let helper = url(&project.join("handoff.cpp"));
    let text = std::fs::read_to_string(project.join("handoff.cpp")).unwrap();
    // `syncguard lsp --isolated`: the project's `ignore = ["SG701"]` is not read.
    let options = syncguard_lsp::ServerOptions {
        isolated: true,
        ..Default::default()
    };
    let mut client = Client::start_server(&project, json!({}), options);
    client.open(&helper, "cpp", &text);
    client.diagnostics(&helper, has("SG701"));
    drop(client);
    // `--config FILE`: that file, wherever the checked file is.
    let elsewhere = tempfile::tempdir().unwrap();
    let config = elsewhere.path().join("syncguard.toml");
    std::fs::write(&config, "[lint]\nignore = [\"SG701\", \"SG102\"]\n").unwrap();
    let options = syncguard_lsp::ServerOptions {
        config: Some(config),
        ..Default::default()
    };
    let mut client = Client::start_server(&project, json!({}), options);
    client.open(&helper, "cpp", &text);
    let found = client.diagnostics(&helper, |_| true);
    assert!(
        !found.iter().any(|d| d["code"] == "SG102" || d["code"] == "SG701"),
        "{found:?}"
    );
}

#[test]
fn a_fix_that_would_name_a_handle_out_of_scope_is_not_offered() {
    let project = fixtures().join("project");
    let mut client = Client::start(&project);
    let helper = url(&project.join("handoff.cpp"));
    client.open(
        &helper,
        "cpp",
        &std::fs::read_to_string(project.join("handoff.cpp")).unwrap(),
    );
    let found = client.diagnostics(&helper, has("SG102"));
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": helper}, "range": found[0]["range"], "context": {"diagnostics": []}}),
    );
    let titles: Vec<&str> = actions
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    // The finding names the caller's `consumer`; the helper calls it `to`.
    assert_eq!(titles, ["Suppress SG102 on this line"]);
}

#[test]
fn hover_explains_apis_rule_codes_and_handles() {
    let mut client = Client::start(&fixtures());
    let (uri, text) = sync_fixture();
    client.open(&uri, "sync", &text);
    let hover = |client: &mut Client, line: u32, character: u32| {
        let answer = client.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        );
        answer["contents"]["value"].as_str().unwrap_or("").to_string()
    };
    let api = hover(&mut client, 10, 8);
    assert!(api.contains("aclrtRecordEvent(event"), "{api}");
    assert!(api.contains("aclrtResetEvent"), "{api}");
    let handle = hover(&mut client, 10, 22);
    assert!(handle.contains("an event") && handle.contains("line 6"), "{handle}");
    client.change(&uri, 2, &format!("// syncguard: ignore[SG102]\n{text}"));
    let rule = hover(&mut client, 0, 24);
    assert!(rule.contains("event-missing-reset"), "{rule}");
}

#[test]
fn sync_files_are_formatted_navigated_outlined_highlighted_and_completed() {
    let mut client = Client::start(&fixtures());
    let uri = "untitled:Untitled-1";
    let text = "let s1 = aclrtCreateStream();\nlet ev=aclrtCreateEvent();\naclrtRecordEvent(ev, s1);\n";
    client.open(uri, "sync", text);
    let doc = json!({"uri": uri});
    let edits = client.request(
        "textDocument/formatting",
        json!({"textDocument": doc, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    assert!(apply(text, edits.as_array().unwrap()).contains("let ev = aclrtCreateEvent();"));
    let at_use = json!({"textDocument": doc, "position": {"line": 2, "character": 18}});
    let definition = client.request("textDocument/definition", at_use.clone());
    assert_eq!(definition["range"]["start"], json!({"line": 1, "character": 4}));
    let mut with_context = at_use.clone();
    with_context["context"] = json!({"includeDeclaration": true});
    assert_eq!(
        client
            .request("textDocument/references", with_context)
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let symbols = client.request("textDocument/documentSymbol", json!({"textDocument": doc}));
    let names: Vec<&str> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["s1", "ev"]);
    let tokens = client.request("textDocument/semanticTokens/full", json!({"textDocument": doc}));
    assert!(tokens["data"].as_array().unwrap().len() >= 5 * 9);
    let completions = client.request("textDocument/completion", at_use);
    let reset = completions
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item["label"] == "aclrtResetEvent")
        .expect("API names are completed");
    assert_eq!(reset["insertText"], "aclrtResetEvent(${1:event}, ${2:stream})");
}

#[test]
fn half_typed_files_and_nonsense_requests_never_stop_the_server() {
    let mut client = Client::start(&fixtures());
    let uri = "untitled:Untitled-2";
    client.open(uri, "sync", "let s = aclrtCreateStream(;\naclrtRecordEvent(");
    let found = client.diagnostics(uri, has("SG001"));
    assert!(!found.is_empty());
    let far = json!({"textDocument": {"uri": uri}, "position": {"line": 9999, "character": 9999}});
    for method in [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/completion",
    ] {
        let answer = client.request(method, far.clone());
        assert!(answer.get("error").is_none(), "{method}: {answer}");
    }
    let unknown = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": "file:///nowhere.sync"}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(unknown, Value::Null);
    let invalid = client.request("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(invalid["error"]["code"], -32602);
    let missing = client.request("workspace/symbol", json!({"query": ""}));
    assert_eq!(missing["error"]["code"], -32601);
    // Still serving.
    client.change(uri, 2, "let s = aclrtCreateStream();\n");
    client.diagnostics(uri, |diagnostics| !has("SG001")(diagnostics));
}

#[test]
fn swapped_template_pipes_are_swapped_back() {
    let mut client = Client::start(&fixtures());
    let path = fixtures().join("swapped_pipes.sync");
    let (uri, text) = (url(&path), std::fs::read_to_string(&path).unwrap());
    client.open(&uri, "sync", &text);
    let found = client.diagnostics(&uri, has("SG405"));
    let pipe = found.iter().find(|d| d["code"] == "SG405").unwrap();
    let actions = client.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": pipe["range"], "context": {"diagnostics": []}}),
    );
    let swap = action(&actions, "Swap PIPE_FIX and PIPE_MTE2");
    let fixed = apply(&text, swap["edit"]["changes"][&uri].as_array().unwrap());
    assert!(
        fixed.contains("AscendC::SetNextTaskStart<PIPE_MTE2, PIPE_FIX>();"),
        "{fixed}"
    );
    client.change(&uri, 2, &fixed);
    client.diagnostics(&uri, |diagnostics| !has("SG405")(diagnostics));
}

#[test]
fn an_unused_suppression_is_marked_unnecessary_and_removed_by_its_fix() {
    let mut client = Client::start(&fixtures());
    let uri = "untitled:Untitled-3";
    let text = "let s = aclrtCreateStream();\n// syncguard: ignore[SG107]\naclrtSynchronizeStream(s); // syncguard: ignore[SG601, SG604]\naclrtDestroyStream(s);\n";
    client.open(uri, "sync", text);
    let found = client.diagnostics(uri, |diagnostics| codes(diagnostics).len() == 3);
    assert!(
        found.iter().all(|d| d["code"] == "SG005" && d["tags"] == json!([1])),
        "{found:#?}"
    );
    let mut fixed = text.to_string();
    for at in [0, 1, 2] {
        let version = 2 + at;
        client.change(uri, version, &fixed);
        let found = client.diagnostics(uri, |diagnostics| codes(diagnostics).len() == 3 - at as usize);
        let actions = client.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": found[0]["range"], "context": {"diagnostics": []}}),
        );
        let remove = actions
            .as_array()
            .unwrap()
            .iter()
            .find(|a| {
                a["title"]
                    .as_str()
                    .unwrap()
                    .starts_with("Remove the unused suppression")
            })
            .unwrap_or_else(|| panic!("{actions:#}"));
        fixed = apply(&fixed, remove["edit"]["changes"][uri].as_array().unwrap());
    }
    assert_eq!(
        fixed,
        "let s = aclrtCreateStream();\naclrtSynchronizeStream(s);\naclrtDestroyStream(s);\n"
    );
    client.change(uri, 9, &fixed);
    client.diagnostics(uri, |diagnostics| diagnostics.is_empty());
}

#[test]
fn an_unsaved_python_buffer_is_read_as_python() {
    let mut client = Client::start(&fixtures());
    let uri = "untitled:Untitled-4";
    let text = "import acl\n\n\ndef main():\n    ev, ret = acl.rt.create_event()\n    s, ret = acl.rt.create_stream()\n    ret = acl.rt.stream_wait_event(s, ev)\n    ret = acl.rt.synchronize_stream(s)\n";
    client.open(uri, "python", text);
    let found = client.diagnostics(uri, |diagnostics| !diagnostics.is_empty());
    assert!(codes(&found).contains(&"SG104".to_string()), "{found:#?}");
}

/// A JSON Lines dataset of the kind kept next to training code: no syncguard trace.
fn dataset(rows: usize) -> String {
    (0..rows)
        .map(|row| format!("{{\"text\": \"sentence number {row}\", \"label\": {}}}\n", row % 3))
        .collect()
}

/// A trace whose event is recorded a second time without a reset (SG102).
const UNRESET_EVENT_TRACE: &str = r#"{"syncguard_trace": 1, "world_size": 1}
{"rank": 0, "thread": 0, "api": "aclrtCreateStream", "args": {"stream": "0xc0de1"}}
{"rank": 0, "thread": 0, "api": "aclrtCreateStream", "args": {"stream": "0xc0de2"}}
{"rank": 0, "thread": 0, "api": "aclrtCreateEventWithFlag", "args": {"event": "0xbee", "flag": "ACL_EVENT_SYNC"}}
{"rank": 0, "thread": 0, "api": "aclrtRecordEvent", "args": {"event": "0xbee", "stream": "0xc0de1"}}
{"rank": 0, "thread": 0, "api": "aclrtStreamWaitEvent", "args": {"stream": "0xc0de2", "event": "0xbee"}}
{"rank": 0, "thread": 0, "api": "aclrtRecordEvent", "args": {"event": "0xbee", "stream": "0xc0de1"}}
{"rank": 0, "thread": 0, "api": "aclrtStreamWaitEvent", "args": {"stream": "0xc0de2", "event": "0xbee"}}
{"rank": 0, "thread": 0, "api": "aclrtSynchronizeDevice", "args": {}}
"#;

#[test]
fn a_dataset_jsonl_is_skipped_as_check_dir_skips_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(dir.path());
    let uri = url(&dir.path().join("train.jsonl"));
    client.open(&uri, "jsonl", &dataset(120));
    // The first publish is already empty: no malformed-line errors, one per row.
    let found = client.diagnostics(&uri, |_| true);
    assert!(found.is_empty(), "{:?}", codes(&found));
    client.change(&uri, 2, &dataset(121));
    let found = client.diagnostics(&uri, |_| true);
    assert!(found.is_empty(), "{:?}", codes(&found));
}

#[test]
fn a_trace_jsonl_is_checked_and_its_findings_clear_once_it_is_a_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = Client::start(dir.path());
    let uri = url(&dir.path().join("run-0.jsonl"));
    client.open(&uri, "jsonl", UNRESET_EVENT_TRACE);
    let found = client.diagnostics(&uri, |_| true);
    assert!(codes(&found).contains(&"SG102".to_string()), "{found:#?}");
    // Replaced by data, it is no trace: the stale findings are cleared.
    client.change(&uri, 2, &dataset(5));
    client.diagnostics(&uri, |diagnostics| diagnostics.is_empty());
    client.change(&uri, 3, UNRESET_EVENT_TRACE);
    client.diagnostics(&uri, has("SG102"));
}

/// The workspace's fixture folder `relative`, copied into `to` (the tests edit the copies).
fn copy_fixture_tree(relative: &str, to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(relative);
    for entry in std::fs::read_dir(&from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_fixture_tree(&format!("{relative}/{}", entry.file_name().to_string_lossy()), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn line_of(diagnostic: &Value) -> u64 {
    diagnostic["range"]["start"]["line"].as_u64().unwrap()
}

#[test]
fn a_profiler_trace_opened_is_checked_on_its_events_and_other_json_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let profile = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/profiles/kineto/fail_wait_on_recording_stream.json"),
    )
    .unwrap();
    let mut client = Client::start(dir.path());
    // Unsaved: the editor's text is what is checked.
    let uri = url(&dir.path().join("rank0.pt.trace.json"));
    client.open(&uri, "json", &profile);
    let found = client.diagnostics(&uri, has("SG109"));
    let wait = found.iter().find(|d| d["code"] == "SG109").unwrap();
    assert_eq!(line_of(wait), 8, "the cudaStreamWaitEvent event, line 9: {wait:#}");
    client.change(&uri, 2, r#"{"name": "settings", "traceEvents": []}"#);
    client.diagnostics(&uri, |found| found.is_empty());
    let settings = url(&dir.path().join("package.json"));
    client.open(&settings, "json", r#"{"name": "app", "version": "1.0.0"}"#);
    assert!(client.diagnostics(&settings, |_| true).is_empty());
}

#[test]
fn a_graph_task_dump_opened_is_checked_and_an_edit_that_orders_the_collectives_clears_it() {
    let dir = tempfile::tempdir().unwrap();
    let dump = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/profiles/graph/fail_collectives_ready_together.json"),
    )
    .unwrap();
    let mut client = Client::start(dir.path());
    let uri = url(&dir.path().join("graph_2.json"));
    client.open(&uri, "json", &dump);
    let found = client.diagnostics(&uri, has("SG505"));
    let finding = found.iter().find(|d| d["code"] == "SG505").unwrap();
    assert_eq!(line_of(finding), 8, "the all-gather's task, line 9: {finding:#}");
    // The all-gather's stream waits for the dispatch's record instead of the
    // coordinator's: the two collectives are ordered.
    let ordered = dump.replace(
        r#""name": "EVENT_WAIT_20622287575224", "ph": "X", "pid": 0, "tid": "stream310""#,
        r#""name": "EVENT_WAIT_20622287575256", "ph": "X", "pid": 0, "tid": "stream310""#,
    );
    assert_ne!(ordered, dump);
    client.change(&uri, 2, &ordered);
    client.diagnostics(&uri, |found| !has("SG505")(found));
}

#[test]
fn a_flight_recorder_dump_is_checked_with_the_other_ranks_of_its_folder() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture_tree("analyzer/tests/fixtures/SG901/fail_desync", dir.path());
    let mut client = Client::start(dir.path());
    let rank = |n: usize| dir.path().join(format!("nccl_trace_rank_{n}.json"));
    let opened = url(&rank(0));
    client.open(&opened, "json", &std::fs::read_to_string(rank(0)).unwrap());
    // The culprit is rank 2: its entry carries the finding, though only rank 0 is open.
    let culprit = url(&rank(2));
    let found = client.diagnostics(&culprit, has("SG901"));
    assert_eq!(line_of(found.iter().find(|d| d["code"] == "SG901").unwrap()), 4);
    // Rank 2's dump edited (unsaved) to run what the others ran: the desync is gone.
    let fixed = std::fs::read_to_string(rank(2))
        .unwrap()
        .replace("nccl:broadcast", "nccl:all_reduce");
    client.open(&culprit, "json", &fixed);
    let found = client.diagnostics(&culprit, |found| !has("SG901")(found));
    assert!(!codes(&found).iter().any(|code| code.starts_with("SG90")), "{found:#?}");
}

#[test]
fn an_msprof_timeline_is_checked_with_the_ranks_of_its_cluster() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture_tree("tests/fixtures/profiles/ascend/fail_wait_without_record", dir.path());
    let mut client = Client::start(dir.path());
    let timeline = dir
        .path()
        .join("node1_1_20250101_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json");
    let uri = url(&timeline);
    let text = std::fs::read_to_string(&timeline).unwrap();
    client.open(&uri, "json", &text);
    // Rank 1 waits three times on the notify rank 0 records once (one record may
    // precede the window): the second wait past the records hangs.
    let found = client.diagnostics(&uri, has("SG502"));
    assert_eq!(line_of(found.iter().find(|d| d["code"] == "SG502").unwrap()), 5);
    // One wait removed in the editor: balanced with the record and one from before.
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(5);
    let balanced = lines.join("\n").replace("HCCS\"}},\n]", "HCCS\"}}\n]");
    client.change(&uri, 2, &balanced);
    let found = client.diagnostics(&uri, |found| !has("SG502")(found));
    assert!(!has("SG002")(&found), "the edited timeline reads whole: {found:#?}");
}

#[test]
fn a_profiler_trace_opened_takes_the_execution_trace_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture_tree("tests/fixtures/profiles/kineto_et/fail_race_across_streams", dir.path());
    let mut client = Client::start(dir.path());
    let profile = dir.path().join("rank0.pt.trace.json");
    let uri = url(&profile);
    client.open(&uri, "json", &std::fs::read_to_string(&profile).unwrap());
    let found = client.diagnostics(&uri, has("SG601"));
    let race = found.iter().find(|d| d["code"] == "SG601").unwrap();
    assert_eq!(line_of(race), 8, "the reading launch, line 9: {race:#}");
}

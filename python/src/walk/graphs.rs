//! NPU graphs (`torch.npu.NPUGraph`, `torch.cuda.CUDAGraph`): captured work runs at
//! each replay, not when it is issued.
//!
//! torch_npu captures into an ACL model runtime instance: `capture_begin` is
//! `aclmdlRICaptureBegin` on the current stream, `capture_end` is `aclmdlRICaptureEnd`
//! (which binds the instance), `replay` is `aclmdlRIExecuteAsync` of the instance on the
//! current stream (`NPUGraph.cpp`). `with torch.npu.graph(g, stream=s):` synchronizes
//! the device, makes the capture stream current (`s`, or a side stream torch makes once
//! when none is given), and captures its body (`graphs.py`).

use super::*;

/// The attribute of a graph object that holds its captured instance.
const INSTANCE: &str = "<captured>";

/// A capture in progress: the stream it began on, the streams that joined it by
/// waiting for an event of a capturing stream, the events recorded on the stream it
/// began on (those records are captured) and on joined streams (left out).
#[derive(Default)]
pub(super) struct Capture {
    origin: String,
    joined: std::collections::HashSet<String>,
    captured_events: std::collections::HashSet<String>,
    joined_events: std::collections::HashSet<String>,
}

impl<'t> Walker<'_, 't> {
    /// `torch.npu.NPUGraph()`: an object whose captured instance is bound at its
    /// capture's end.
    pub(super) fn new_graph(&mut self, node: Node<'t>) -> Value {
        self.arguments(node);
        self.heap.push(Obj {
            class: "<graph>".into(),
            ..Obj::default()
        });
        Value::Graph(self.heap.len() - 1)
    }

    /// `torch.npu.graph(g, pool=None, stream=None, capture_error_mode="global")`.
    pub(super) fn graph_context(&mut self, node: Node<'t>) -> Value {
        let (args, kwargs) = self.arguments(node);
        let keyword = |key: &str| kwargs.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone());
        let graph = keyword("npu_graph")
            .or_else(|| keyword("cuda_graph"))
            .or_else(|| args.first().cloned())
            .unwrap_or(Value::Unknown);
        let stream = keyword("stream")
            .or_else(|| args.get(2).cloned())
            .filter(|s| *s != Value::None);
        let mode = keyword("capture_error_mode").or_else(|| args.get(3).cloned());
        Value::GraphContext(Box::new(GraphCapture { graph, stream, mode }))
    }

    /// Entering `with torch.npu.graph(...)`: the device synchronized, the capture stream
    /// made current, the capture begun on it. Returns the capture stream.
    pub(super) fn enter_graph(&mut self, capture: &GraphCapture, at: Node<'t>) -> Value {
        let span = self.range(at);
        self.program_on(self.device, span);
        self.catalogued(at, "acl.rt.synchronize_device", Vec::new());
        let stream = match &capture.stream {
            Some(stream) => self.received_as(stream.clone(), received::Kind::Stream),
            None => self.default_capture_stream(at),
        };
        self.switch_device(self.stream_device(&stream));
        self.current = stream.clone();
        self.capture_begin(at, &capture.graph, capture.mode.as_ref());
        stream
    }

    /// The side stream torch captures on when the code names none: made once.
    fn default_capture_stream(&mut self, at: Node<'t>) -> Value {
        if let Some(stream) = &self.capture_stream {
            return stream.clone();
        }
        let name = self.fresh_name("default_capture_stream");
        let span = self.range(at);
        self.declare(&name, "acl.rt.create_stream", Vec::new(), span);
        self.stream_devices.insert(name.clone(), 0);
        let stream = Value::Stream(name);
        self.capture_stream = Some(stream.clone());
        stream
    }

    /// `g.capture_begin(...)`: `aclmdlRICaptureBegin` on the current stream.
    fn capture_begin(&mut self, at: Node<'t>, graph: &Value, mode: Option<&Value>) {
        if !matches!(graph, Value::Graph(_)) {
            self.note(at, "a capture into a graph the extraction cannot follow is left out");
            return;
        }
        let current = self.current.clone();
        let Some(stream) = self.stream_expr(&current, at) else {
            self.note(at, "the capture stream is not known: the capture is left out");
            return;
        };
        let span = self.range(at);
        if let ast::ExprKind::Name(path) = &stream.kind {
            self.capture = Some(Capture {
                origin: path.text.clone(),
                ..Capture::default()
            });
        }
        let mut args = vec![stream];
        if let Some(Value::Str(mode)) = mode {
            args.push(ast::Expr::name(
                &format!("ACL_MODEL_RI_CAPTURE_MODE_{}", mode.to_ascii_uppercase()),
                span,
            ));
        }
        self.catalogued(at, "aclmdlRICaptureBegin", args);
    }

    /// `g.capture_end()`, or leaving `with torch.npu.graph(g)`: `let ri =
    /// aclmdlRICaptureEnd(stream);` on the capture stream, bound to the graph.
    pub(super) fn capture_end(&mut self, at: Node<'t>, graph: &Value, stream: &Value) {
        let Value::Graph(slot) = graph else {
            return;
        };
        let Some(stream) = self.stream_expr(stream, at) else {
            return;
        };
        let name = self.fresh_name("graph");
        self.create(at, "aclmdlRICaptureEnd", &name, vec![stream]);
        self.capture = None;
        if let Some(obj) = self.heap.get_mut(*slot) {
            obj.attrs.insert(INSTANCE.into(), Value::GraphExec(name));
        }
    }

    /// Whether `stmt`, issued while a capture is in progress, belongs to another stream
    /// joined to it: another stream's wait for an event recorded on a capturing stream
    /// (the waiting stream then captures too), any work on a joined stream (its records
    /// too), a wait for an event a joined stream recorded. In torch the capture then
    /// spans several streams; the model captures one, so such a statement is left out
    /// and listed, and what rests on its objects is undecided. Records and waits on the
    /// stream the capture began on are captured as usual.
    pub(super) fn joins_capture(&mut self, stmt: &ast::Stmt) -> bool {
        let Some(capture) = &mut self.capture else {
            return false;
        };
        let ast::StmtKind::Call(call) = &stmt.kind else {
            return false;
        };
        let names: Vec<String> = call
            .args
            .iter()
            .flat_map(|arg| arg.value.names())
            .map(str::to_string)
            .collect();
        match (call.callee.text.as_str(), names.as_slice()) {
            ("acl.rt.record_event", [event, stream]) if *stream == capture.origin => {
                capture.captured_events.insert(event.clone());
                false
            }
            ("acl.rt.record_event", [event, stream]) if capture.joined.contains(stream) => {
                capture.joined_events.insert(event.clone());
                true
            }
            ("acl.rt.stream_wait_event", [_, event]) if capture.joined_events.contains(event) => true,
            ("acl.rt.stream_wait_event", [stream, event])
                if *stream != capture.origin && capture.captured_events.contains(event) =>
            {
                capture.joined.insert(stream.clone());
                true
            }
            _ => names.iter().any(|name| capture.joined.contains(name)),
        }
    }

    /// `g.replay()`, `g.capture_begin()`, `g.capture_end()`, `g.reset()`.
    pub(super) fn graph_method(&mut self, node: Node<'t>, slot: usize, name: &str) -> Value {
        let (args, kwargs) = self.arguments(node);
        let graph = Value::Graph(slot);
        match name {
            "capture_begin" => {
                let mode = kwargs
                    .iter()
                    .find(|(key, _)| key == "capture_error_mode")
                    .map(|(_, value)| value.clone())
                    .or_else(|| args.get(1).cloned());
                self.capture_begin(node, &graph, mode.as_ref());
            }
            "capture_end" => {
                let current = self.current.clone();
                self.capture_end(node, &graph, &current);
            }
            "replay" | "reset" => {
                let instance = self.heap.get(slot).and_then(|obj| obj.attrs.get(INSTANCE)).cloned();
                let Some(Value::GraphExec(instance)) = instance else {
                    self.note(
                        node,
                        format!("`{name}` of a graph whose capture is not known here is left out"),
                    );
                    return Value::None;
                };
                let span = self.range(node);
                let instance = ast::Expr::name(&instance, span);
                if name == "replay" {
                    let current = self.current.clone();
                    if let Some(stream) = self.stream_expr(&current, node) {
                        self.catalogued(node, "aclmdlRIExecuteAsync", vec![instance, stream]);
                    }
                } else {
                    self.catalogued(node, "aclmdlRIDestroy", vec![instance]);
                    if let Some(obj) = self.heap.get_mut(slot) {
                        obj.attrs.remove(INSTANCE);
                    }
                }
            }
            _ => {}
        }
        Value::None
    }
}

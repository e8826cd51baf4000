//! Devices, as torch keeps them: a current device per host thread (`torch.npu.set_device`,
//! `with torch.npu.device(d):`, a stream context of a stream on another device), a
//! current stream per device, tensors on the device they were made on, and work that
//! runs on the current stream of its tensors' device.
//!
//! In the extracted program `0` names the default stream of the program's current
//! device (`aclrtSetDevice`). A default stream value is written as a placeholder until
//! its statement is emitted; then the program is switched to that stream's device (an
//! `aclrtSetDevice` before the statement, where it is not there already) and the
//! placeholder becomes `0`. Code that stays on device 0 gets no `aclrtSetDevice` at all.

use super::*;

/// How a default stream's device is written until its statement is emitted (no name
/// the walk gives starts with `_`).
const DEFAULT_STREAM_OF: &str = "__default_stream_of_device_";

/// The highest device index followed.
const MAX_DEVICE: i64 = 1023;

/// The device the extracted program has set on the thread being walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ProgramDevice {
    /// None set yet: the device the program starts on, device 0.
    Start,
    Known(i64),
    /// Branches set different ones.
    Unknown,
}

impl<'t> Walker<'_, 't> {
    /// torch's current device becomes `device`; each device keeps its current stream.
    pub(super) fn switch_device(&mut self, device: i64) {
        if device == self.device {
            return;
        }
        let current = std::mem::replace(&mut self.current, Value::Unknown);
        self.other_currents.insert(self.device, current);
        self.current = self
            .other_currents
            .remove(&device)
            .unwrap_or(Value::DefaultStream(device));
        self.device = device;
    }

    /// The current stream of `device`.
    pub(super) fn current_stream_of(&self, device: i64) -> Value {
        if device == self.device {
            return self.current.clone();
        }
        self.other_currents
            .get(&device)
            .cloned()
            .unwrap_or(Value::DefaultStream(device))
    }

    /// The device a stream is on.
    pub(super) fn stream_device(&self, stream: &Value) -> i64 {
        match stream {
            Value::DefaultStream(device) => *device,
            Value::Stream(name) => self.stream_devices.get(name).copied().unwrap_or(self.device),
            _ => self.device,
        }
    }

    /// The device a device tensor is on (the current one where it is not known).
    pub(super) fn tensor_device(&self, buffer: &str) -> i64 {
        self.tensor_devices.get(buffer).copied().unwrap_or(self.device)
    }

    /// The device a device value names (`"npu:1"`, `"npu"`, `1`, a tensor's). torch
    /// takes a negative index for the current device.
    pub(super) fn device_index(&self, value: &Value) -> Option<i64> {
        let index = match value {
            Value::Str(text) => match text.split_once(':') {
                Some((_, index)) => index.trim().parse().ok()?,
                None => matches!(text.as_str(), "npu" | "cuda").then_some(self.device)?,
            },
            Value::Int(index) => *index,
            Value::Buffer(name, Place::Device) => self.tensor_device(name),
            _ => return None,
        };
        Some(if (0..=MAX_DEVICE).contains(&index) {
            index
        } else {
            self.device
        })
    }

    /// `torch.device("npu", 1)`, `torch.device("npu:1")`, `torch.device(1)`: the device
    /// as a string (`"npu:1"`, `"cpu"`).
    pub(super) fn device_value(&self, args: &[Value]) -> Value {
        match args {
            [Value::Str(kind), Value::Int(index)] => Value::Str(format!("{kind}:{index}")),
            [Value::Int(index)] => Value::Str(format!("npu:{index}")),
            [Value::Str(text)] => Value::Str(text.clone()),
            _ => Value::Unknown,
        }
    }

    /// The expression of the default stream of `device`.
    pub(super) fn default_stream_expr(device: i64, span: Range<usize>) -> ast::Expr {
        ast::Expr::name(&format!("{DEFAULT_STREAM_OF}{device}"), span)
    }

    /// Before `stmt` is emitted: the default stream it names becomes `0`, with the
    /// program switched to that stream's device first.
    pub(super) fn place_on_device(&mut self, stmt: &mut ast::Stmt) {
        let mut device = None;
        syntax::for_each_stmt_expr(stmt, &mut |expr| {
            if let ast::ExprKind::Name(path) = &expr.kind
                && let Some(index) = path.text.strip_prefix(DEFAULT_STREAM_OF)
            {
                device = device.or_else(|| index.parse::<i64>().ok());
                *expr = ast::Expr::int(0, expr.span.clone());
            }
        });
        if let Some(device) = device {
            self.program_on(device, stmt.span.clone());
        }
    }

    /// The program's current device is `device` from here: an `aclrtSetDevice` where it
    /// is not. The first switch away from device 0 sets device 0 at the top of the
    /// program, so that device 0 is the program's own, as torch's first device is.
    pub(super) fn program_on(&mut self, device: i64, span: Range<usize>) {
        match self.program_device {
            ProgramDevice::Known(set) if set == device => return,
            ProgramDevice::Start if device == 0 => return,
            _ => {}
        }
        self.declare_home_device(span.clone());
        self.program_device = ProgramDevice::Known(device);
        let set = call_stmt("aclrtSetDevice", vec![ast::Expr::int(device, span.clone())], span);
        if let Some(block) = self.blocks.last_mut() {
            block.push(set);
        }
    }

    /// `aclrtSetDevice(0)` at the top of the program, once: the first device a program
    /// sets is its own, and torch's first device is 0.
    fn declare_home_device(&mut self, span: Range<usize>) {
        if self.home_declared {
            return;
        }
        self.home_declared = true;
        let home = call_stmt("aclrtSetDevice", vec![ast::Expr::int(0, span.clone())], span);
        self.prelude.insert(0, home);
    }

    /// Where torch runs an operation on `buffers`: the device of its device tensors
    /// (the current device where there are none), and that device's current stream.
    /// An operation on tensors of several devices (`comm.gather`, a container of
    /// them given to a callable the files do not define) orders them as it does
    /// internally, which is not known: it is left out.
    pub(super) fn operation_stream(&mut self, buffers: &[(String, Place)], node: Node<'t>) -> Option<(i64, ast::Expr)> {
        let mut devices = buffers
            .iter()
            .filter(|(_, place)| *place == Place::Device)
            .map(|(name, _)| self.tensor_device(name));
        let device = devices.next().unwrap_or(self.device);
        if devices.any(|other| other != device) {
            self.note(
                node,
                "an operation on tensors of several devices is not followed: how it orders them is not known",
            );
            return None;
        }
        let stream = self.current_stream_of(device);
        let expr = self.stream_expr(&stream, node);
        if expr.is_none() {
            self.note(node, "the current stream is not known here: the operation is left out");
        }
        expr.map(|expr| (device, expr))
    }
}

//! The PyTorch execution trace (`torch.profiler.ExecutionTraceObserver`) of the run a
//! Kineto trace profiled: each operator with its record-function id (`rf_id`) and the
//! tensors it took and returned. Joined to the Kineto trace's `cpu_op` events by that
//! id, it gives each kernel launch the memory its operator touched, so races between
//! streams become visible.
//!
//! Sources: PyTorch `torch/csrc/profiler/standalone/execution_trace_observer.cpp` (the
//! node fields; a tensor is `[tensor id, storage id, offset, numel, itemsize, device]`,
//! offsets and sizes in elements) and the linkers that join the two traces (Holistic
//! Trace Analysis' `correlate_execution_trace`: `rf_id` against the `cpu_op`'s
//! `External id` in older traces; Chakra's `trace_link`: against its `Record function
//! id`). docs/PROFILES.md says what the join cannot know.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

/// Bytes looked at to recognize an execution trace.
const SNIFF_BYTES: usize = 4096;

/// Whether `head` (a file's first bytes) is an execution trace: an object naming
/// `schema` and `nodes` whose nodes carry `rf_id` or `op_schema`.
pub fn sniff(head: &[u8]) -> bool {
    let head = &head[..head.len().min(SNIFF_BYTES)];
    let first = head.iter().position(|byte| !byte.is_ascii_whitespace());
    let has = |needle: &[u8]| head.windows(needle.len()).any(|window| window == needle);
    first.is_some_and(|at| head[at] == b'{')
        && has(b"\"schema\"")
        && has(b"\"nodes\"")
        && (has(b"\"rf_id\"") || has(b"\"op_schema\""))
}

/// A memory range an operator touched: a tensor's elements, in bytes of its storage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Access {
    /// The storage, one name per allocation of it (`cuda0_storage7`, `cuda0_storage7.2`
    /// once its memory was allocated again).
    pub buffer: String,
    pub offset: u64,
    pub len: u64,
}

/// What one operator read and wrote on the device.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// The operator (`aten::add`), named with the kernels it launched.
    pub operator: String,
    pub reads: Vec<Access>,
    pub writes: Vec<Access>,
}

/// An execution trace read: the device footprint of each operator, by `rf_id`.
#[derive(Debug, Default)]
pub struct ExecutionTrace {
    pub pid: Option<i64>,
    pub footprints: HashMap<i64, Footprint>,
    /// Nodes without `rf_id` (schemas before 1.0.1): they cannot be joined.
    pub nodes_without_rf_id: usize,
}

#[derive(Deserialize)]
struct File {
    pid: Option<i64>,
    nodes: Vec<Node>,
}

#[derive(Deserialize)]
struct Node {
    rf_id: Option<i64>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    op_schema: String,
    #[serde(default)]
    inputs: Value,
    #[serde(default)]
    input_types: Value,
    #[serde(default)]
    outputs: Value,
    #[serde(default)]
    output_types: Value,
}

/// Read an execution trace's text.
pub fn read(text: &[u8]) -> Result<ExecutionTrace, String> {
    let file: File = serde_json::from_slice(text).map_err(|err| err.to_string())?;
    let mut nodes: Vec<&Node> = file.nodes.iter().collect();
    // Allocations are told apart in the order operators started (`rf_id`), which is the
    // order their memory was taken.
    nodes.sort_by_key(|node| node.rf_id.unwrap_or(i64::MAX));
    let mut storages = Storages::default();
    let mut trace = ExecutionTrace {
        pid: file.pid,
        ..ExecutionTrace::default()
    };
    for node in nodes {
        let Some(rf_id) = node.rf_id else {
            trace.nodes_without_rf_id += 1;
            continue;
        };
        let footprint = storages.footprint(node);
        if !footprint.reads.is_empty() || !footprint.writes.is_empty() {
            trace.footprints.insert(rf_id, footprint);
        }
    }
    Ok(trace)
}

/// A device tensor as the trace writes it.
struct Tensor {
    storage: i64,
    /// The device, as a handle prefix: `cuda0`.
    device: String,
    offset: u64,
    len: u64,
}

/// Which allocation of each storage id is current. Storage ids are the storages' data
/// addresses numbered, so memory freed and allocated again (the caching allocator
/// reuses it) has the same id: an operator returning a storage it was not given made a
/// new allocation of it, and names it anew. Without this, a block reused by another
/// stream after the allocator's own deferred free (which polls events the profile does
/// not show) would read as a race.
#[derive(Default)]
struct Storages {
    allocations: HashMap<(String, i64), u32>,
}

impl Storages {
    fn footprint(&mut self, node: &Node) -> Footprint {
        let (inputs, input_types) = values_and_types(&node.inputs, &node.input_types);
        let (outputs, output_types) = values_and_types(&node.outputs, &node.output_types);
        let mutated = mutated_arguments(&node.op_schema);
        let input_tensors: Vec<(usize, Tensor)> = tensors_of(inputs, input_types).collect();
        let output_tensors: Vec<Tensor> = tensors_of(outputs, output_types).map(|(_, tensor)| tensor).collect();
        for tensor in &output_tensors {
            let given = input_tensors
                .iter()
                .any(|(_, input)| input.storage == tensor.storage && input.device == tensor.device);
            if !given {
                *self
                    .allocations
                    .entry((tensor.device.clone(), tensor.storage))
                    .or_default() += 1;
            }
        }
        let mut footprint = Footprint {
            operator: node.name.clone(),
            ..Footprint::default()
        };
        for (index, tensor) in &input_tensors {
            let access = self.access(tensor);
            match mutated.contains(index) {
                true => footprint.writes.push(access),
                false => footprint.reads.push(access),
            }
        }
        for tensor in &output_tensors {
            let access = self.access(tensor);
            if !footprint.writes.contains(&access) {
                footprint.writes.push(access);
            }
        }
        footprint.reads.retain(|read| !footprint.writes.contains(read));
        footprint
    }

    fn access(&self, tensor: &Tensor) -> Access {
        let allocation = self
            .allocations
            .get(&(tensor.device.clone(), tensor.storage))
            .copied()
            .unwrap_or(0);
        let buffer = match allocation {
            0 | 1 => format!("{}_storage{}", tensor.device, tensor.storage),
            n => format!("{}_storage{}.{n}", tensor.device, tensor.storage),
        };
        Access {
            buffer,
            offset: tensor.offset,
            len: tensor.len,
        }
    }
}

/// A node's argument values and their types: the schema of 1.0 (`inputs` a list,
/// `input_types` beside it) or of 1.1 and later (`inputs: {values, types}`).
fn values_and_types<'a>(values: &'a Value, types: &'a Value) -> (&'a [Value], &'a [Value]) {
    let list = |value: &'a Value| value.as_array().map(Vec::as_slice).unwrap_or(&[]);
    match values {
        Value::Object(object) => (
            list(object.get("values").unwrap_or(&Value::Null)),
            list(object.get("types").unwrap_or(&Value::Null)),
        ),
        _ => (list(values), list(types)),
    }
}

/// The device tensors among a node's arguments, with the argument's position: a
/// `Tensor(...)` argument, or each tensor of a `GenericList[Tensor(...), ...]`.
fn tensors_of<'a>(values: &'a [Value], types: &'a [Value]) -> impl Iterator<Item = (usize, Tensor)> + 'a {
    values.iter().zip(types).enumerate().flat_map(|(index, (value, kind))| {
        let kind = kind.as_str().unwrap_or("");
        let items: Vec<&Value> = if kind.starts_with("Tensor") {
            vec![value]
        } else if kind.starts_with("GenericList[Tensor") {
            value.as_array().map(|items| items.iter().collect()).unwrap_or_default()
        } else {
            Vec::new()
        };
        items.into_iter().filter_map(tensor).map(move |tensor| (index, tensor))
    })
}

/// `[tensor id, storage id, offset, numel, itemsize, device]` on a CUDA device: its
/// elements `offset..offset + numel`, in bytes (a strided view is taken as the span of
/// its element count).
fn tensor(value: &Value) -> Option<Tensor> {
    let fields = value.as_array().filter(|fields| fields.len() >= 6)?;
    let int = |index: usize| fields[index].as_i64();
    let device = fields[5].as_str()?;
    let device = device.strip_prefix("cuda")?;
    let ordinal = device.strip_prefix(':').unwrap_or("0");
    let itemsize = u64::try_from(int(4)?).ok()?;
    let numel = u64::try_from(int(3)?).ok()?;
    Some(Tensor {
        storage: int(1)?,
        device: format!("cuda{ordinal}"),
        offset: u64::try_from(int(2)?).ok()?.checked_mul(itemsize)?,
        len: numel.checked_mul(itemsize).filter(|&len| len > 0)?,
    })
}

/// The positions of the arguments an operator writes, as its schema marks them
/// (`Tensor(a!) self`); keyword-only arguments follow the positional ones in order.
fn mutated_arguments(schema: &str) -> Vec<usize> {
    let Some(open) = schema.find('(') else {
        return Vec::new();
    };
    let Some(close) = schema.rfind(") ->").or_else(|| schema.rfind(')')) else {
        return Vec::new();
    };
    let parameters = schema.get(open + 1..close).unwrap_or("");
    let mut depth = 0usize;
    let mut start = 0;
    let mut arguments = Vec::new();
    for (at, char) in parameters.char_indices() {
        match char {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                arguments.push(&parameters[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    arguments.push(&parameters[start..]);
    arguments
        .into_iter()
        .map(str::trim)
        .filter(|argument| *argument != "*" && !argument.is_empty())
        .enumerate()
        .filter(|(_, argument)| argument.contains("!)"))
        .map(|(index, _)| index)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_marks_which_arguments_are_written() {
        assert_eq!(
            mutated_arguments(
                "aten::uniform_(Tensor(a!) self, float from=0., float to=1., *, Generator? generator=None) -> Tensor(a!)"
            ),
            [0]
        );
        assert_eq!(
            mutated_arguments(
                "aten::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)"
            ),
            [3]
        );
        assert_eq!(
            mutated_arguments("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"),
            Vec::<usize>::new()
        );
        assert_eq!(mutated_arguments(""), Vec::<usize>::new());
    }

    #[test]
    fn an_operator_returning_a_storage_it_was_not_given_names_a_new_allocation() {
        let text = br#"{"schema": "1.0.1", "pid": 7, "nodes": [
            {"name": "aten::empty", "rf_id": 1, "op_schema": "", "inputs": [[4]], "input_types": ["GenericList[Int]"],
             "outputs": [[10, 20, 0, 4, 4, "cuda:0"]], "output_types": ["Tensor(float)"]},
            {"name": "aten::add_", "rf_id": 2, "op_schema": "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
             "inputs": [[10, 20, 0, 4, 4, "cuda:0"], [11, 21, 2, 2, 4, "cuda:0"], 1], "input_types": ["Tensor(float)", "Tensor(float)", "Int"],
             "outputs": [[10, 20, 0, 4, 4, "cuda:0"]], "output_types": ["Tensor(float)"]},
            {"name": "aten::empty", "rf_id": 3, "op_schema": "", "inputs": [[4]], "input_types": ["GenericList[Int]"],
             "outputs": [[12, 20, 0, 4, 4, "cuda:0"]], "output_types": ["Tensor(float)"]},
            {"name": "aten::mul", "rf_id": 4, "op_schema": "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor",
             "inputs": {"values": [[12, 20, 0, 4, 4, "cuda:0"], [13, 22, 0, 4, 4, "cpu"]], "types": ["Tensor(float)", "Tensor(float)"]},
             "outputs": {"values": [[14, 23, 0, 4, 4, "cuda:0"]], "types": ["Tensor(float)"]}}
        ]}"#;
        let trace = read(text).unwrap();
        assert_eq!(trace.pid, Some(7));
        let access = |buffer: &str, offset, len| Access {
            buffer: buffer.to_string(),
            offset,
            len,
        };
        let add = &trace.footprints[&2];
        assert_eq!(add.writes, [access("cuda0_storage20", 0, 16)]);
        assert_eq!(add.reads, [access("cuda0_storage21", 8, 8)]);
        let mul = &trace.footprints[&4];
        assert_eq!(
            mul.reads,
            [access("cuda0_storage20.2", 0, 16)],
            "the CPU tensor is not device memory"
        );
        assert_eq!(mul.writes, [access("cuda0_storage23", 0, 16)]);
    }

    #[test]
    fn only_an_object_of_nodes_with_record_function_ids_is_an_execution_trace() {
        assert!(sniff(
            br#"{"schema": "1.0.1", "pid": 1, "time": "x", "nodes": [{"name": "a", "id": 2, "rf_id": 0}]}"#
        ));
        assert!(!sniff(br#"{"traceEvents": [], "schema": 1}"#));
        assert!(!sniff(br#"[{"schema": 1, "nodes": []}]"#));
    }
}

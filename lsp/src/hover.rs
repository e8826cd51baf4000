//! Hover: what a call does in syncguard's model, a rule's documentation, where a
//! handle comes from.

use syncguard_analyzer::api::{Api, Creates, Effect, lookup};

/// `aclrtRecordEvent(event: Event, stream: Stream)`: the parameters as the catalogue
/// knows them (names from the C prototypes), optional ones in brackets.
pub fn signature(api: &Api) -> String {
    let params: Vec<String> = api
        .params
        .iter()
        .map(|param| {
            let text = format!("{}: {:?}", param.name, param.kind);
            if param.optional { format!("[{text}]") } else { text }
        })
        .collect();
    format!("{}({})", api.name, params.join(", "))
}

/// Markdown for a word: a rule code (`SG102`) or a catalogued API.
pub fn for_word(word: &str) -> Option<String> {
    if let Some(rule) = syncguard_analyzer::rules::RULES.iter().find(|rule| rule.code == word) {
        return Some(format!(
            "**{} {}** ({:?})\n\n{}",
            rule.code, rule.name, rule.severity, rule.docs
        ));
    }
    let api = lookup(word)?;
    Some(format!(
        "```\n{}\n```\n{}{}\n\n{}",
        signature(api),
        behaviour(api),
        creates(api.creates)
            .map(|what| format!("\n\nCreates {what}."))
            .unwrap_or_default(),
        documentation(api.name)
    ))
}

/// Where the vendor documents an API.
fn documentation(name: &str) -> &'static str {
    if name.starts_with("cuda") {
        "Documentation: [CUDA Runtime API](https://docs.nvidia.com/cuda/cuda-runtime-api/index.html)"
    } else if name.starts_with("cu") {
        "Documentation: [CUDA Driver API](https://docs.nvidia.com/cuda/cuda-driver-api/index.html)"
    } else {
        "Documentation: [CANN documentation](https://www.hiascend.com/document)"
    }
}

fn creates(creates: Creates) -> Option<String> {
    Some(match creates {
        Creates::Nothing => return None,
        Creates::Event(semantics, _) => format!("an event ({semantics:?})"),
        other => format!("{other:?}").to_lowercase(),
    })
}

/// What the call does in syncguard's model, in a sentence.
fn behaviour(api: &Api) -> &'static str {
    match api.effect {
        Effect::Create => "Creates a handle.",
        Effect::Destroy => "Destroys the handle; work still queued that uses it must have finished (SG603, SG604).",
        Effect::EventRecord => {
            "Queues a record on the stream: once the work before it has run, the event is set. A sync-kind event \
             stays set until `aclrtResetEvent`: reset it after its waits before recording it again (SG102)."
        }
        Effect::EventWait => {
            "Makes the stream wait until the event is set; work after it is ordered after the work before the \
             matching record. A sync-kind event is not cleared by the wait (SG102, SG103)."
        }
        Effect::EventReset => {
            "Queues a reset on the stream: clears the event's flag. It must run after every wait of the record it \
             clears (SG103) and before the next record (SG102)."
        }
        Effect::EventQuery { .. } => "Asks, without blocking, whether the event's record has run.",
        Effect::EventSynchronize => "Blocks the host until the event's record has run.",
        Effect::EventElapsedTime => "Reads the timestamps of two recorded events (both must have run).",
        Effect::StreamSynchronize => "Blocks the host until all work queued on the stream has run.",
        Effect::DeviceSynchronize => "Blocks the host until all work on the current device has run.",
        Effect::NotifyRecord
        | Effect::ChannelNotifyRecord
        | Effect::ThreadNotifyRecord
        | Effect::NotifyRecordOnThread => {
            "Records a notify: one pending signal that exactly one wait consumes (SG301 counts them)."
        }
        Effect::NotifyWait | Effect::ChannelNotifyWait | Effect::ThreadNotifyWait | Effect::NotifyWaitOnThread => {
            "Waits for a notify record and consumes it; a wait with no record hangs (SG502)."
        }
        Effect::RemoteWrite { .. } => {
            "Writes into a peer's memory over a channel; the peer may read it only after a notify orders the \
             write before the read (SG304, SG305)."
        }
        Effect::RemoteRead { .. } => "Reads a peer's memory over a channel.",
        Effect::LocalCopy { .. } => "Copies between local buffers on an HCCL thread.",
        Effect::Fence { .. } => "Orders the thread's (or channel's) earlier data-plane operations before later ones.",
        Effect::ThreadSynchronize => "Blocks the host until the HCCL thread's work has run.",
        Effect::Kernel => "A kernel on the stream: reads and writes its buffers, in order with the stream's work.",
        Effect::HostFunc => "A host function queued on the stream, in order with its work.",
        Effect::Memcpy { with_stream: true } => {
            "An asynchronous copy on the stream; the host may touch the buffers only after a synchronize (SG602)."
        }
        Effect::Memcpy { with_stream: false } => "A copy that blocks the host until it is done.",
        Effect::Memset { with_stream: true } => "Fills device memory asynchronously on the stream.",
        Effect::Memset { with_stream: false } => "Fills device memory; blocks the host.",
        Effect::ValueWrite { .. } => "The stream writes a value into a memory word (memory-value synchronization).",
        Effect::ValueWait { .. } => {
            "The stream waits until a memory word satisfies the condition; an earlier write that already \
             satisfies it orders nothing (SG308)."
        }
        Effect::SetNextTaskStart => {
            "SuperKernel early start: the next task may start before this one ends; it must be called on every \
             path, once, after the last transfer the next task depends on (SG401-SG403)."
        }
        Effect::WaitPreTaskEnd => "Waits for the previous SuperKernel task to end (SG406).",
        Effect::BeginCapture => "Starts capturing the stream's work into a graph instead of running it (SG504).",
        Effect::GraphLaunch => "Runs a captured graph's work on the stream.",
        Effect::BatchMode { .. } => {
            "HCCL batch mode: data-plane calls in between are submitted together at the end (SG307)."
        }
        Effect::None => "Accepted and left out of the model: it orders nothing syncguard checks.",
        _ => "Modelled as described in the `.sync` language reference (grammar/SYNC.md).",
    }
}

/// The word at `offset` in `text`: an identifier, with `.` and `::` inside it
/// (`acl.rt.record_event`, `AscendC::SetNextTaskStart`).
pub fn word_at(text: &str, offset: usize) -> Option<(usize, &str)> {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == ':';
    let offset = offset.min(text.len());
    let start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_word(*c))
        .last()
        .map_or(offset, |(at, _)| at);
    let end = text[offset..]
        .char_indices()
        .find(|(_, c)| !is_word(*c))
        .map_or(text.len(), |(at, _)| offset + at);
    let word = text[start..end].trim_matches(|c| c == '.' || c == ':');
    (!word.is_empty()).then_some((start, word))
}

/// For a `.sync` handle: how it was bound (`let ev = aclrtCreateEvent();`) and what it is.
pub fn for_handle(text: &str, offset: usize) -> Option<String> {
    let binding = crate::sync_editing::definition(text, offset)?;
    let line_start = text[..binding.start].rfind('\n').map_or(0, |at| at + 1);
    let line_end = text[binding.end..].find('\n').map_or(text.len(), |at| binding.end + at);
    let statement = text[line_start..line_end].trim();
    let line = text[..binding.start].matches('\n').count() + 1;
    let call = statement
        .split_once('=')
        .map(|(_, value)| value.trim())
        .and_then(|value| value.split_once('('))
        .map(|(callee, _)| callee.trim());
    let what = call
        .and_then(lookup)
        .and_then(|api| creates(api.creates))
        .map(|what| format!(": {what}"))
        .unwrap_or_default();
    Some(format!(
        "`{}`{what}, bound on line {line}:\n```sync\n{statement}\n```",
        &text[binding]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_keep_dots_and_paths() {
        let text = "x = acl.rt.record_event(ev, s)";
        assert_eq!(word_at(text, 8).map(|(_, w)| w), Some("acl.rt.record_event"));
        assert_eq!(
            word_at("AscendC::SetNextTaskStart();", 12).map(|(_, w)| w),
            Some("AscendC::SetNextTaskStart")
        );
    }

    #[test]
    fn hover_names_the_api_and_the_rule() {
        let api = for_word("aclrtResetEvent").unwrap();
        assert!(api.contains("aclrtResetEvent(event"), "{api}");
        assert!(api.contains("SG103"), "{api}");
        assert!(for_word("SG102").unwrap().contains("event-missing-reset"));
        assert!(for_word("printf").is_none());
    }

    #[test]
    fn a_handle_says_where_it_was_created() {
        let text = "let s1 = aclrtCreateStream();\nlet ev = aclrtCreateEvent();\naclrtRecordEvent(ev, s1);\n";
        let hover = for_handle(text, text.rfind("ev,").unwrap()).unwrap();
        assert!(hover.contains("an event"), "{hover}");
        assert!(hover.contains("line 2"), "{hover}");
    }
}

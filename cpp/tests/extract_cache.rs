//! Reading a project again after an edit: entry points whose walk read only unchanged
//! files are not walked again, and the programs are those a fresh read extracts.

use syncguard_cpp::{ExtractCache, Options, ParseCache, SourceText, read_project, read_project_cached};

const PIPELINE: &str = r#"#include "acl/acl.h"
void HandOff(aclrtEvent ev, aclrtStream from, aclrtStream to);

// The caller resets the event.
int RunPipeline(void)
{
    aclrtStream producer;
    aclrtStream consumer;
    aclrtEvent ev;
    aclrtCreateStream(&producer);
    aclrtCreateStream(&consumer);
    aclrtCreateEventWithFlag(&ev, ACL_EVENT_SYNC);
    for (int i = 0; i < 2; ++i) {
        HandOff(ev, producer, consumer);
        aclrtResetEvent(ev, consumer);
    }
    return 0;
}
"#;

const HANDOFF: &str = r#"#include "acl/acl.h"
#define WAIT(stream, ev) aclrtStreamWaitEvent(stream, ev)

void HandOff(aclrtEvent ev, aclrtStream from, aclrtStream to)
{
    aclrtRecordEvent(ev, from);
    WAIT(to, ev);
}
"#;

const ALONE: &str = r#"#include <cuda_runtime.h>

__global__ void Scale(float *out);

int RunAlone(float *buf)
{
    cudaStream_t s;
    cudaStreamCreate(&s);
    Scale<<<1, 1, 0, s>>>(buf);
    cudaStreamSynchronize(s);
    return 0;
}
"#;

/// A kernel in a file of its own: what its launch reads and writes is read from its
/// body, and no span of the body is in the program.
const KERNEL: &str = "__global__ void Scale(float *out)\n{\n    out[0] = 2.0f;\n}\n";

fn sources(pipeline: &str, handoff: &str, alone: &str, kernel: &str) -> Vec<SourceText> {
    [
        ("op/pipeline.cpp", pipeline),
        ("op/handoff.cpp", handoff),
        ("op/alone.cu", alone),
        ("op/scale.cu", kernel),
    ]
    .into_iter()
    .map(|(path, text)| SourceText {
        path: path.into(),
        text: text.into(),
    })
    .collect()
}

/// Each entry point's name, place and program as `.sync`.
fn programs(project: &syncguard_cpp::Project, entries: &[syncguard_cpp::EntryProgram]) -> Vec<String> {
    entries
        .iter()
        .map(|entry| {
            format!(
                "{} {} {:?} {:?}\n{}",
                entry.entry,
                entry.source,
                entry.range,
                entry
                    .unchecked_returns
                    .iter()
                    .map(|(source, range, _)| (source, range))
                    .collect::<Vec<_>>(),
                project.space().to_sync(entry)
            )
        })
        .collect()
}

/// Read with `parses` and `cache`; assert the programs are those of a fresh read, and
/// return (walked, reused).
fn read(texts: (&str, &str, &str, &str), parses: &mut ParseCache, cache: &mut ExtractCache) -> (usize, usize) {
    let (pipeline, handoff, alone, kernel) = texts;
    let project = read_project_cached(sources(pipeline, handoff, alone, kernel), Options::default(), parses);
    let cached = programs(&project, &project.entries_cached(cache));
    let fresh_project = read_project(sources(pipeline, handoff, alone, kernel), Options::default());
    let fresh = programs(&fresh_project, &fresh_project.entries());
    assert_eq!(cached, fresh);
    cache.last_read()
}

#[test]
fn only_entry_points_that_read_a_changed_file_are_walked_again() {
    let (mut parses, mut cache) = (ParseCache::default(), ExtractCache::default());
    assert_eq!(
        read((PIPELINE, HANDOFF, ALONE, KERNEL), &mut parses, &mut cache),
        (2, 0)
    );
    // A comment in the pipeline moves every offset after it: its entry point is
    // walked again, the others are not.
    let pipeline = PIPELINE.replace("The caller resets", "Each caller resets");
    assert_eq!(
        read((&pipeline, HANDOFF, ALONE, KERNEL), &mut parses, &mut cache),
        (1, 1)
    );
    // A body in the file of the other entry point: only that one is walked.
    let alone = ALONE.replace(
        "cudaStreamSynchronize(s);",
        "cudaStreamSynchronize(s);\n    cudaStreamDestroy(s);",
    );
    assert_eq!(
        read((&pipeline, HANDOFF, &alone, KERNEL), &mut parses, &mut cache),
        (1, 1)
    );
    // The helper's body, inlined into the pipeline only.
    let handoff = HANDOFF.replace("WAIT(to, ev);", "WAIT(to, ev);\n    aclrtSynchronizeStream(to);");
    assert_eq!(
        read((&pipeline, &handoff, &alone, KERNEL), &mut parses, &mut cache),
        (1, 1)
    );
    // The kernel now only reads its buffer: the launch's entry point reads its body.
    let kernel = KERNEL.replace("out[0] = 2.0f;", "float scale = out[0];\n    (void)scale;");
    assert_eq!(
        read((&pipeline, &handoff, &alone, &kernel), &mut parses, &mut cache),
        (1, 1)
    );
    // A macro changed is part of what a file offers the others: everything is walked.
    let handoff = handoff.replace(
        "aclrtStreamWaitEvent(stream, ev)",
        "aclrtStreamWaitEvent((stream), (ev))",
    );
    assert_eq!(
        read((&pipeline, &handoff, &alone, &kernel), &mut parses, &mut cache),
        (2, 0)
    );
    // A new declaration outside any body, too.
    let alone = format!("{alone}\nint Unused(void);\n");
    assert_eq!(
        read((&pipeline, &handoff, &alone, &kernel), &mut parses, &mut cache),
        (2, 0)
    );
}

/// SPMD code (the bundled mesh all-gather): one program per rank count, each naming the
/// rank where the code asks for it and computing peers from it.
const SPMD: &str = include_str!("../../examples/cpp/fail_mesh_allgather.cpp");

#[test]
fn an_spmd_entry_point_is_reused_when_another_file_changes() {
    let read = |other: &str, cache: &mut ExtractCache, parses: &mut ParseCache| {
        // The other file first: an edit of it moves the ring's file.
        let sources = vec![
            SourceText {
                path: "op/other.cpp".into(),
                text: other.into(),
            },
            SourceText {
                path: "op/ring.cpp".into(),
                text: SPMD.into(),
            },
        ];
        let project = read_project_cached(sources, Options::default(), parses);
        let programs = project.entries_cached(cache);
        assert!(
            programs.iter().any(|entry| entry.ranks == 3),
            "one program per rank count"
        );
        cache.last_read()
    };
    let (mut parses, mut cache) = (ParseCache::default(), ExtractCache::default());
    let first = read("// other\nint Other(void) { return 0; }\n", &mut cache, &mut parses);
    assert_eq!(first.1, 0);
    // Before, the made-up `rank` had no place (`0..0`), and the sums over it spanned
    // from the start of the space into the file: they could not move, so the entry
    // point was walked again on every edit of any file.
    let again = read("// the other\nint Other(void) { return 0; }\n", &mut cache, &mut parses);
    assert_eq!(again, (1, first.0 - 1), "only the other file's entry point is walked");
}

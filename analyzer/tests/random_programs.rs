//! No panic on any Program the frontend can produce: random well-formed programs with
//! streams, both event kinds, notifies, HCCL channels across two ranks and kernels on
//! overlapping buffers go through the whole analysis.

use proptest::prelude::*;
use syncguard_analyzer::{Sources, check_sync_bytes};

const PRELUDE: &str = "ranks 2;
let comm = HcclCommInitRootInfo(2, \"root\", rank);
let s0 = aclrtCreateStream();
let s1 = aclrtCreateStream();
let s2 = aclrtCreateStream();
let ev0 = aclrtCreateEventWithFlag(ACL_EVENT_SYNC);
let ev1 = aclrtCreateEventExWithFlag(ACL_EVENT_SYNC);
let ev2 = aclrtCreateEvent();
let n0 = aclrtCreateNotify(ACL_NOTIFY_DEFAULT);
let a = aclrtMalloc(4 KiB, ACL_MEM_MALLOC_HUGE_FIRST);
let b = aclrtMalloc(4 KiB, ACL_MEM_MALLOC_HUGE_FIRST);
let h = aclrtMallocHost(4 KiB);
let t = HcclThreadAcquireWithStream(comm, COMM_ENGINE_CPU_TS, s2, 2);
let ch = HcclChannelAcquire(comm, COMM_ENGINE_CPU_TS, { remoteRank: 1 - rank, notifyNum: 3 }, 1);
let local = HcclGetHcclBuffer(comm);
let remote = HcclChannelGetHcclBuffer(comm, ch);
";

fn stream() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["s0", "s1", "s2", "NULL"])
}

fn event() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["ev0", "ev1", "ev2"])
}

fn range() -> impl Strategy<Value = String> {
    (prop::sample::select(vec!["a", "b", "local"]), 0u32..3, 1u32..3)
        .prop_map(|(buffer, start, len)| format!("{buffer}[{}..{}]", start * 1024, (start + len) * 1024))
}

fn call() -> impl Strategy<Value = String> {
    prop_oneof![
        (event(), stream()).prop_map(|(e, s)| format!("aclrtRecordEvent({e}, {s});")),
        (stream(), event()).prop_map(|(s, e)| format!("aclrtStreamWaitEvent({s}, {e});")),
        (event(), stream()).prop_map(|(e, s)| format!("aclrtResetEvent({e}, {s});")),
        event().prop_map(|e| format!("aclrtSynchronizeEvent({e});")),
        stream().prop_map(|s| format!("aclrtSynchronizeStream({s});")),
        Just("aclrtSynchronizeDevice();".to_string()),
        stream().prop_map(|s| format!("aclrtRecordNotify(n0, {s});")),
        stream().prop_map(|s| format!("aclrtWaitAndResetNotify(n0, {s}, 0);")),
        (0u32..3).prop_map(|i| format!("HcommChannelNotifyRecordOnThread(t, ch, {i});")),
        (0u32..3).prop_map(|i| format!("HcommChannelNotifyWaitOnThread(t, ch, {i}, 1836);")),
        Just("HcommWriteOnThread(t, ch, remote, local, 2 KiB);".to_string()),
        (stream(), range(), range()).prop_map(|(s, r, w)| format!("kernel({s}, \"k\", reads: [{r}], writes: [{w}]);")),
        Just("host_read(h[0..16]);".to_string()),
        stream().prop_map(|s| format!("aclrtMemcpyAsync(h, 4 KiB, a, 4 KiB, ACL_MEMCPY_DEVICE_TO_HOST, {s});")),
        event().prop_map(|e| format!("aclrtDestroyEvent({e});")),
    ]
}

fn statement() -> impl Strategy<Value = String> {
    let leaf = call();
    leaf.prop_recursive(2, 24, 4, |inner| {
        prop_oneof![
            3 => call(),
            1 => prop::collection::vec(inner.clone(), 1..4)
                .prop_map(|body| format!("if rank == 0 {{\n{}\n}}", body.join("\n"))),
            1 => prop::collection::vec(inner, 1..4)
                .prop_map(|body| format!("for i in 0..2 {{\n{}\n}}", body.join("\n"))),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    #[test]
    fn random_programs_are_analyzed_without_panic(body in prop::collection::vec(statement(), 0..24)) {
        let src = format!("{PRELUDE}{}\n", body.join("\n"));
        let mut sources = Sources::default();
        let checked = check_sync_bytes(&mut sources, "random.sync", src.as_bytes());
        prop_assert!(
            checked.diagnostics.iter().all(|d| d.code != "SG001" && d.code != "SG003"),
            "the generator writes well-formed programs: {:?}",
            checked.diagnostics.first().map(|d| &d.message)
        );
        for diagnostic in &checked.diagnostics {
            prop_assert!(diagnostic.primary.range.end <= src.len());
        }
        syncguard_analyzer::render::render_text(&checked.diagnostics, &sources, Default::default());
    }
}

/// `PRELUDE` over 12 ranks in a ring, so that clocks have more than 64 entries (a tree
/// of three levels), with a second host thread issuing to the same streams.
fn ring_program(main: &[String], worker: &[String]) -> String {
    let prelude = PRELUDE
        .replace("ranks 2;", "ranks 12;")
        .replace("HcclCommInitRootInfo(2,", "HcclCommInitRootInfo(12,")
        .replace("remoteRank: 1 - rank", "remoteRank: (rank + 1) % 12");
    format!("{prelude}{}\nthread w {{\n{}\n}}\n", main.join("\n"), worker.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// The sparse clocks answer "does a happen before b" exactly as the graph's paths
    /// do, for every pair of calls.
    #[test]
    fn the_clocks_order_exactly_the_paths_of_the_graph(
        main in prop::collection::vec(statement(), 0..12),
        worker in prop::collection::vec(call(), 0..6),
    ) {
        use petgraph::visit::Dfs;
        use syncguard_analyzer::exec::{NodeId, instantiate};
        use syncguard_analyzer::hb::HappensBefore;

        let src = ring_program(&main, &worker);
        let checked = check_sync_bytes(&mut Sources::default(), "ring.sync", src.as_bytes());
        let exec = instantiate(&checked.program, Vec::new());
        let hb = HappensBefore::build(&exec).expect("a small execution");
        let nodes = exec.nodes.len();
        for a in 0..nodes {
            let mut reached = vec![false; nodes];
            let mut dfs = Dfs::new(&hb.graph, petgraph::graph::NodeIndex::new(a));
            dfs.next(&hb.graph);
            while let Some(next) = dfs.next(&hb.graph) {
                reached[next.index()] = true;
            }
            let a = NodeId(a as u32);
            for (b, &reached) in reached.iter().enumerate() {
                let b = NodeId(b as u32);
                let expected = reached && hb.executes(a) && hb.executes(b);
                prop_assert_eq!(hb.happens_before(a, b), expected, "{:?} -> {:?} in\n{}", a, b, src);
            }
        }
        // What happens before a call on each agent is a prefix of its calls, whose
        // length the clock gives in one lookup.
        for (index, agent) in exec.agents.iter().enumerate() {
            let id = syncguard_analyzer::exec::AgentId(index as u32);
            for b in 0..nodes {
                let b = NodeId(b as u32);
                let before = agent.nodes.iter().filter(|&&n| hb.happens_before(n, b)).count();
                let prefix = agent.nodes.partition_point(|&n| hb.happens_before(n, b));
                prop_assert_eq!(before, prefix, "{:?} in\n{}", b, src);
                prop_assert_eq!(hb.nodes_before(id, b), before, "{:?} on agent {} in\n{}", b, index, src);
            }
        }
    }
}

//! What the simulator does with real memory: transfers move the bytes kernels wrote.

use std::path::Path;

use syncguard_analyzer::exec::{Action, Memory, instantiate};
use syncguard_analyzer::model::OpKind;
use syncguard_analyzer::{Sources, check_sync_bytes};
use syncguard_runtime_bridge::sim::{Sim, SimOptions};
use syncguard_runtime_bridge::{Plan, run};

#[test]
fn a_one_sided_write_lands_what_the_producer_kernel_wrote_in_the_peers_hccl_buffer() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/hccl-three-phase-write/correct.sync");
    let text = std::fs::read_to_string(path).unwrap();
    let checked = check_sync_bytes(&mut Sources::default(), "correct.sync", text.as_bytes());
    let exec = instantiate(&checked.program, Vec::new());
    for seed in 0..3 {
        let sim = Sim::new(
            &exec,
            SimOptions {
                seed,
                ..SimOptions::default()
            },
        );
        let log = run(&Plan::new(&exec), &sim);
        assert!(log.faults.is_empty() && sim.observed().is_empty(), "seed {seed}");
        // Rank 0's `pack` kernel fills its HCCL buffer with the low byte of its node id;
        // HcommWriteOnThread copies 64 KiB of it into rank 1's HCCL buffer.
        let pack = exec
            .nodes
            .iter()
            .position(|n| matches!(&n.op.kind, OpKind::Kernel { launch, .. } if launch.name == "pack"))
            .expect("the example has a pack kernel");
        assert!(matches!(exec.nodes[pack].action, Action::Access(_)));
        let written = pack as u8;
        let landed = sim.bytes(Memory::HcclBuffer { rank: 1 }, 0, 64 << 10);
        assert!(
            landed.iter().all(|&b| b == written),
            "seed {seed}: the peer's buffer holds the packed bytes"
        );
        assert!(sim.bytes(Memory::HcclBuffer { rank: 1 }, 64 << 10, (64 << 10) + 1) == [0]);
    }
}

//! Write a generated captured run's rank files: `generate_run DIR RANKS STEPS LAUNCHES [RACE_EVERY]`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: usize| args.get(i).map_or(default, |a| a.parse().expect("a number"));
    let dir = std::path::PathBuf::from(
        args.first()
            .expect("usage: generate_run DIR RANKS STEPS LAUNCHES [RACE_EVERY]"),
    );
    std::fs::create_dir_all(&dir).expect("the folder");
    let job = syncguard_skeleton::generate::Job {
        ranks: number(1, 8),
        steps: number(2, 4),
        launches: number(3, 32),
        race_every: number(4, 0),
    };
    let calls = syncguard_skeleton::generate::write_run(&dir, job).expect("the rank files are written");
    println!("{calls}");
}

#![allow(clippy::unwrap_used)]
use std::time::Instant;
use wrench_process::sandbox::planted::Watch;
use wrench_process::sandbox::{self, AUTO_RUN_NAMES, Spec};
#[test]
fn measure() {
    let root = std::fs::canonicalize(std::env::var("MEASURE_ROOT").unwrap()).unwrap();
    let mut names: Vec<String> = [".git", ".wrench"].iter().map(|s| s.to_string()).collect();
    names.extend(AUTO_RUN_NAMES.iter().map(|s| s.to_string()));
    let spec = Spec {
        root: root.clone(),
        read_only_names: names.clone(),
        writable: vec![],
        read_only: vec![],
        network: true,
        own_tmp: vec![],
    };
    let q = std::env::temp_dir().join(format!("mq{}", std::process::id()));
    for i in 0..5 {
        let t = Instant::now();
        let _p = sandbox::prepare(&spec).unwrap();
        let prep = t.elapsed();
        let t = Instant::now();
        let w = Watch::take(&root, &names, &[]);
        let take = t.elapsed();
        let t = Instant::now();
        let s = w.sweep(&q, "m");
        let sweep0 = t.elapsed();
        let l0 = s.listed_dirs;
        std::fs::write(root.join("python/.envrc-not"), "x").unwrap();
        let t = Instant::now();
        let s = w.sweep(&q, "m");
        let sweep1 = t.elapsed();
        std::fs::remove_file(root.join("python/.envrc-not")).unwrap();
        let f = q.join("w");
        std::fs::create_dir_all(&q).unwrap();
        let t = Instant::now();
        w.save(&f).unwrap();
        let save = t.elapsed();
        let t = Instant::now();
        let _ = Watch::load(&f).unwrap();
        let load = t.elapsed();
        let size = std::fs::metadata(&f).unwrap().len();
        println!(
            "run {i}: dirs={} prepare={prep:?} take={take:?} sweep_unchanged={sweep0:?} (listed {l0}) sweep_one_change={sweep1:?} (listed {}) save={save:?} load={load:?} size={size}",
            w.dirs(),
            s.listed_dirs
        );
    }
    let _ = std::fs::remove_dir_all(&q);
}

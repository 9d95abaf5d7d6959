//! Property tests: text without items is returned as it is; random include graphs always
//! terminate within the budgets and report `E_CYCLE` exactly when a file is on its own
//! chain; fetching ahead does not change the output.

use std::collections::BTreeSet;
use std::sync::Arc;

use ctx_assemble::{Assembler, Options};
use ctx_fs::Sandbox;
use ctx_syntax::Code;
use proptest::prelude::*;

fn assembler(dir: &std::path::Path, options: Options) -> Assembler {
    let sandbox =
        Sandbox::builder(dir.to_str().unwrap()).open(cap_std::ambient_authority()).unwrap();
    Assembler::new(Arc::new(sandbox), options)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn text_without_items_comes_back_unchanged(text in "[a-zA-Z0-9 .,;:!?\n\t#*_-]{0,400}") {
        let dir = tempfile::tempdir().unwrap();
        let asm = assembler(dir.path(), Options::default());
        let assembly = asm.assemble_str(&text, "-");
        prop_assert_eq!(assembly.content, text);
        prop_assert!(assembly.diagnostics.is_empty());
    }

    /// Up to six files; each includes a random list of others, possibly with a range.
    #[test]
    fn include_graphs_terminate_and_report_cycles_exactly(
        edges in prop::collection::vec(prop::collection::vec((0usize..6, any::<bool>()), 0..4), 1..7),
        max_depth in 2usize..8,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let n = edges.len();
        for (i, targets) in edges.iter().enumerate() {
            let mut body = format!("f{i}\n");
            for &(t, ranged) in targets {
                let t = t % n;
                body.push_str(&if ranged { format!("@[f{t}.md:1:9]\n") } else { format!("@[f{t}.md]\n") });
            }
            std::fs::write(dir.path().join(format!("f{i}.md")), body).unwrap();
        }
        let mut options = Options::default();
        options.limits.max_depth = max_depth;
        options.limits.max_includes = 2000;
        let assembly = assembler(dir.path(), options).assemble_file("f0.md").unwrap();
        // The model: walk the graph depth first with the same limits.
        /// What the model walk met.
        #[derive(Default)]
        struct Met { count: usize, cycle: bool, depth: bool }
        fn walk(edges: &[Vec<(usize, bool)>], chain: &mut Vec<usize>, max_depth: usize, met: &mut Met) {
            let me = *chain.last().unwrap();
            for &(t, _) in &edges[me] {
                let t = t % edges.len();
                met.count += 1;
                if met.count > 2000 { return; }
                if chain.contains(&t) { met.cycle = true; continue; }
                if chain.len() > max_depth { met.depth = true; continue; }
                chain.push(t);
                walk(edges, chain, max_depth, met);
                chain.pop();
            }
        }
        let mut met = Met::default();
        walk(&edges, &mut vec![0], max_depth, &mut met);
        let (count, expected_cycle, expected_depth) = (met.count, met.cycle, met.depth);
        let codes: BTreeSet<Code> = assembly.diagnostics.iter().map(|d| d.code).collect();
        if count <= 2000 {
            prop_assert_eq!(codes.contains(&Code::Cycle), expected_cycle, "{:?}", codes);
            prop_assert_eq!(codes.contains(&Code::Depth), expected_depth, "{:?}", codes);
        } else {
            prop_assert!(codes.contains(&Code::Budget));
        }
        for d in &assembly.diagnostics {
            if d.code == Code::Cycle {
                // The chain named ends with the file that is already on it.
                let chain: Vec<&str> = d.message.trim_start_matches("include cycle: ").split(" -> ").collect();
                prop_assert!(chain.len() >= 2);
                prop_assert!(chain[..chain.len() - 1].contains(chain.last().unwrap()));
            }
        }
    }

    #[test]
    fn prefetching_does_not_change_the_output(
        files in prop::collection::btree_map("[a-c]{1,2}/[a-d]{1,3}\\.(rs|txt)", "[a-z \n]{0,40}", 1..12),
        max_files in 0usize..6,
    ) {
        let dir = tempfile::tempdir().unwrap();
        for (path, content) in &files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, content).unwrap();
        }
        std::fs::write(dir.path().join("main.md"), "@[a/]\n@[b/]\n@[*/*.rs]\n@c/\n").unwrap();
        let mut options = Options::default();
        options.limits.max_files = max_files;
        options.prefetch = true;
        let ahead = assembler(dir.path(), options.clone()).assemble_file("main.md").unwrap();
        options.prefetch = false;
        let plain = assembler(dir.path(), options).assemble_file("main.md").unwrap();
        prop_assert_eq!(&ahead.content, &plain.content);
        prop_assert_eq!(&ahead.references, &plain.references);
        prop_assert_eq!(&ahead.diagnostics, &plain.diagnostics);
    }
}

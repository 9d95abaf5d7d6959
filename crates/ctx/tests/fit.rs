//! `Context::fit_prompt`: the prompt's own mentions first, the ranked files after them within
//! what is left, the whole measured on the output.

#![allow(clippy::disallowed_methods)] // Tests build their workspaces on disk.

use ctx::{Context, SuggestOptions};

#[test]
fn mentions_come_first_and_the_plan_keeps_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path();
    std::fs::create_dir_all(ws.join("src")).unwrap();
    for i in 0..10 {
        std::fs::write(
            ws.join(format!("src/retry_{i}.rs")),
            format!("/// Retries {i}.\npub fn retry_timeout_{i}() {{}}\n"),
        )
        .unwrap();
    }
    let ctx = Context::builder().root(ws).build().unwrap();
    let prompt = "fix the retry timeout in @src/retry_3.rs";
    let options = SuggestOptions::default().limit(ctx::FIT_CANDIDATES);
    for budget in [0, 40, 200, 600, 4000] {
        let plan = ctx.fit_prompt(prompt, budget, &options).unwrap();
        assert!(plan.own_tokens > 0);
        assert!(plan.tokens <= budget.max(plan.own_tokens), "{budget}: {}", plan.tokens);
        assert!(plan.attachments.iter().all(|a| a.path != "src/retry_3.rs"), "mentioned already");
        let assembly = ctx.expand_prompt_with(prompt, &plan.attachments);
        let added = assembly.content.strip_prefix(prompt).unwrap();
        assert_eq!(ctx::tokens::count(added), plan.tokens);
        if budget >= 4000 {
            assert_eq!(plan.choices.len(), 9, "{:?}", plan.choices);
        }
        // The same inputs, the same plan.
        let again = ctx.fit_prompt(prompt, budget, &options).unwrap();
        assert_eq!(again.attachments, plan.attachments);
    }
}

//! ctx itself: the rules folder of `ctx system-prompt` (`.ctx/rules`, else `.mutsumi/rules`),
//! as the facade assembles it (`Context::system_prompt`, given through
//! [`Env::ctx_prompt`](crate::Env::ctx_prompt)): each active rule's content, then the
//! `### Runtime Context` section, joined by a blank line.

use crate::agent::Agent;
use crate::env::Env;
use crate::model::{Placement, Reason, Rules, Scope, Segment, Why};
use crate::reader::{Reader, View};

/// ctx's own reader.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ctx;

/// The name of the piece holding the runtime section.
const RUNTIME: &str = "### Runtime Context";

impl Reader for Ctx {
    fn agent(&self) -> Agent {
        Agent::Ctx
    }

    fn read(&self, env: &Env<'_>) -> Rules {
        let mut view = View::new(env, Agent::Ctx);
        let Some(prompt) = env.ctx else {
            view.note("ctx's rules folder was not assembled for this view");
            return view.finish();
        };
        let root = env.abs("");
        for rule in &prompt.rules {
            let text = rule.content.trim_end().to_owned();
            if text.is_empty() {
                view.not_file(&rule.path, Reason::Empty);
                continue;
            }
            let piece = crate::read::piece(
                &env.project_place(),
                &rule.path,
                1,
                Why::Always,
                Placement::System,
                text,
            );
            view.piece(piece);
        }
        for path in &prompt.inactive {
            view.not_file(path, Reason::Manual);
        }
        if prompt.rules_dir.is_none() {
            view.note("no rules folder (.ctx/rules or .mutsumi/rules); `ctx init` creates one");
        }
        let runtime = prompt.runtime.trim_end().to_owned();
        let mut piece = crate::read::piece(
            &env.project_place(),
            "",
            1,
            Why::Always,
            Placement::System,
            runtime,
        );
        piece.path = String::new();
        piece.abs = root;
        piece.scope = Scope::Project;
        view.piece(piece.named(RUNTIME));
        view.finish()
    }

    fn render(&self, rules: &Rules) -> Vec<Segment> {
        let parts = rules.pieces.iter().map(|p| p.text.clone()).collect();
        Segment::joined(Placement::System, parts, "\n\n", |s| format!("{s}\n"))
            .into_iter()
            .collect()
    }
}

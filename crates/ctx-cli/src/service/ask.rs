//! Asking the index service of the workspace, when one runs: `ctx suggest`, `ctx expand
//! --auto` and `ctx index` take its answer, and rank or update by themselves when there is no
//! service, when it refuses (another root or settings, a watch that cannot vouch), or when
//! anything about its socket or its answer is wrong.

use std::io::{self, Write as _};

use super::place;
use super::proto::{self, Answer, Ask, MAX_ANSWER, MAX_REQUEST, Request, Status, VERSION};
use crate::settings::Settings;

/// The ranked files from the service, or `None` when the caller must rank by itself.
pub(crate) fn suggest(
    settings: &Settings,
    ctx: &ctx::Context,
    prompt: &str,
    opts: &ctx::SuggestOptions,
) -> Option<Vec<ctx::Suggestion>> {
    // Weights are not part of the question: a caller with its own ranks by itself.
    if prompt.len() > MAX_REQUEST / 2 || opts.weights != ctx::SuggestOptions::default().weights {
        return None;
    }
    let ask = Ask::Suggest {
        prompt: prompt.to_owned(),
        limit: opts.limit,
        max_lines: opts.max_lines,
        max_tokens: opts.max_tokens,
        explain: opts.explain,
    };
    match question(settings, ctx, ask)? {
        Answer::Suggestions(found) => Some(found),
        _ => None,
    }
}

/// The index's figures from the service, or `None` when the caller must update by itself.
pub(crate) fn status(settings: &Settings, ctx: &ctx::Context) -> Option<Status> {
    match question(settings, ctx, Ask::Status)? {
        Answer::Status(status) => Some(status),
        _ => None,
    }
}

/// Asks the service of the context's workspace; `None` when there is none or it refuses.
fn question(settings: &Settings, ctx: &ctx::Context, ask: Ask) -> Option<Answer> {
    let dir = place::socket_dir(settings).ok()?;
    let root = place::root_of(ctx);
    let mut stream = match dir.connect(&place::socket_name(&root)) {
        Ok(stream) => stream?,
        Err(err) => {
            // A socket that is not the user's own is worth a word: someone may have planted it.
            if err.kind() == ctx::fs::ErrorKind::Permission && !settings.quiet {
                let _ =
                    writeln!(io::stderr().lock(), "warning: not asking the index service: {err}");
            }
            return None;
        }
    };
    let request =
        Request { version: VERSION, root, fingerprint: place::fingerprint(settings, ctx), ask };
    proto::send(&mut stream, &request).ok()?;
    match proto::receive::<Answer>(&mut stream, MAX_ANSWER) {
        Ok(Answer::Refused(why)) => {
            tracing::debug!("the index service refused: {why}");
            None
        }
        Ok(answer) => {
            tracing::debug!("answered by the index service");
            Some(answer)
        }
        Err(err) => {
            tracing::debug!("no answer from the index service: {err}");
            None
        }
    }
}

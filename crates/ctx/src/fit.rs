//! [`Context::fit_prompt`]: the plan of a prompt's context within a token budget. The
//! prompt's own mentions come first, as the assembler expands them; the ranked files fill
//! what they leave, each whole, as its ranges or as its outline with ranges, by value per token
//! (`ctx_suggest::fit::choose`); every figure is measured on the rendered output, wrappers,
//! tags and headings included, and the plan is checked against the budget by assembling it.

use ctx_assemble::record::Lines;
use ctx_assemble::{Assembly, Attachment};
use ctx_suggest::fit::{self, Choice, View};
use ctx_suggest::{Index, LineRange};

use crate::context::Context;
use crate::error::Error;
use crate::suggestions::SuggestOptions;

/// Most files ranked and measured for a plan.
pub const FIT_CANDIDATES: usize = 60;

/// A prompt's context planned within a budget.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct FitPlan {
    /// The files attached after the prompt's own mentions, in rank order, then line order.
    pub attachments: Vec<Attachment>,
    /// What was chosen for each file, with its tokens.
    pub choices: Vec<Choice>,
    /// The o200k tokens the expansion adds to the prompt, measured on its output: the
    /// prompt's own mentions, the attachments, every wrapper and heading.
    pub tokens: usize,
    /// The tokens of the prompt's own mentions alone.
    pub own_tokens: usize,
}

impl Context {
    /// Plans what follows `prompt` within `max_tokens` o200k tokens: its own mentions, then
    /// the ranked files that fill what is left (`opts.limit` of them looked at, at most
    /// [`FIT_CANDIDATES`]), each whole or as its ranges. The budget counts all the expansion
    /// adds to the prompt, as assembled with this context's format; the plan is assembled
    /// and, while it is over or the assembler had to cut or leave out an attachment for the
    /// budget, planned again in less room. The same inputs give the same plan.
    ///
    /// # Errors
    ///
    /// As [`Context::suggest`].
    pub fn fit_prompt(
        &self,
        prompt: &str,
        max_tokens: usize,
        opts: &SuggestOptions,
    ) -> Result<FitPlan, Error> {
        let own = self.expand_prompt(prompt);
        let own_tokens = added_tokens(prompt, &own);
        let mentioned: Vec<&str> = own.references.iter().map(|r| r.path.as_str()).collect();
        let left = max_tokens.saturating_sub(own_tokens);
        if left == 0 {
            return Ok(FitPlan {
                attachments: Vec::new(),
                choices: Vec::new(),
                tokens: own_tokens,
                own_tokens,
            });
        }
        let opts = opts.clone().limit(opts.limit.clamp(1, FIT_CANDIDATES));
        let sandbox = self.sandbox();
        let mut candidates =
            self.ask(|index: &Index| index.candidates(sandbox, prompt, &opts, left))?;
        candidates.retain(|c| !mentioned.contains(&c.path.as_str()));
        let (section, wrap) = self.wrappers(prompt, own_tokens, &candidates);
        let overhead = |path: &str| wrap + ctx_tokens::count(path);
        let mut room = left.saturating_sub(section);
        let mut margin = MARGIN;
        loop {
            let choices = fit::choose(&candidates, room, &overhead);
            let attachments = attachments(&choices, &candidates);
            let (tokens, assembly) = if attachments.is_empty() {
                (own_tokens, None)
            } else {
                let assembly = self.expand_prompt_with(prompt, &attachments);
                (added_tokens(prompt, &assembly), Some(assembly))
            };
            let cut = assembly.as_ref().is_some_and(suggestion_cut);
            if (tokens <= max_tokens && !cut) || choices.is_empty() {
                let mut choices = choices;
                if let Some(assembly) = &assembly {
                    written_views(&mut choices, assembly);
                }
                return Ok(FitPlan { attachments, choices, tokens, own_tokens });
            }
            // Over the budget, or within it only because the assembler cut or left out an
            // attachment (it keeps room for its closing note): plan again in less room.
            room = room.saturating_sub(margin.max(tokens.saturating_sub(max_tokens)));
            margin = margin.saturating_mul(2);
        }
    }

    /// The tokens the block of attachments costs once (its heading) and each attachment
    /// besides its lines and path, measured by assembling the prompt with one and with two
    /// small attachments; a margin of two tokens an element covers where tokens merge across
    /// a boundary.
    fn wrappers(&self, prompt: &str, own: usize, candidates: &[fit::Candidate]) -> (usize, usize) {
        // Each probe: a file, its first line, and the tokens of that line and of the path.
        let probes: Vec<(String, u32, usize)> = candidates
            .iter()
            .filter_map(|c| {
                let line = c.ranges.first()?.0.start;
                let content = self.sandbox().read_path(&c.path, None).ok()?.1;
                let text = content.text()?;
                let shown = text.split_inclusive('\n').nth(line.saturating_sub(1) as usize)?;
                Some((c.path.clone(), line, ctx_tokens::count(shown) + ctx_tokens::count(&c.path)))
            })
            .take(2)
            .collect();
        if probes.len() < 2 {
            // Nothing to measure against: a generous guess, checked by the assembly anyway.
            return (40, 30);
        }
        let measure = |n: usize| {
            let list: Vec<Attachment> = probes[..n]
                .iter()
                .map(|(path, line, _)| {
                    Attachment::suggested(path.clone(), Some(Lines { start: *line, end: *line }))
                })
                .collect();
            added_tokens(prompt, &self.expand_prompt_with(prompt, &list))
        };
        let (one, two) = (measure(1), measure(2));
        let wrap = two.saturating_sub(one + probes[1].2) + 2;
        let section = one.saturating_sub(own + probes[0].2 + wrap) + 2;
        (section, wrap)
    }
}

/// The tokens of what the expansion adds to `prompt`: its output less the prompt it starts
/// with.
fn added_tokens(prompt: &str, assembly: &Assembly) -> usize {
    let rest = assembly.content.strip_prefix(prompt).unwrap_or(&assembly.content);
    ctx_tokens::count(rest)
}

/// The attachments of the choices: a whole file, one per range, or the whole file held to
/// the tokens of its outline view (which the assembler's reducer then shows).
fn attachments(choices: &[Choice], candidates: &[fit::Candidate]) -> Vec<Attachment> {
    let mut out = Vec::new();
    for c in choices {
        match &c.view {
            View::Whole => out.push(Attachment::suggested(c.path.clone(), None)),
            View::Outline(_) => {
                let candidate = candidates.iter().find(|k| k.path == c.path);
                match candidate.and_then(|k| Some((k, k.outline.as_ref()?.0))) {
                    Some((k, cap)) => {
                        // Its best ranges first, as the fitter measured the view.
                        let ranges =
                            k.ranges.iter().map(|r| Lines { start: r.0.start, end: r.0.end });
                        let within = Attachment::suggested_within(&c.path, cap, ranges.collect());
                        out.push(within);
                    }
                    None => out.push(Attachment::suggested(c.path.clone(), None)),
                }
            }
            View::Ranges(ranges) => out.extend(ranges.iter().map(|r| {
                Attachment::suggested(c.path.clone(), Some(Lines { start: r.start, end: r.end }))
            })),
        }
    }
    out
}

/// The tokens a plan that did not fit gives up first; each further try gives up twice as
/// many.
const MARGIN: usize = 32;

/// Whether the assembler cut or left out a suggested attachment for the token budget: an
/// outline view, held to its own tokens and reduced to them by design, is not such a cut.
fn suggestion_cut(assembly: &Assembly) -> bool {
    assembly.references.iter().filter(|r| r.suggested).any(|r| {
        r.dropped > 0 || r.cut.as_ref().is_some_and(|cut| cut.view.as_deref() != Some("outline"))
    })
}

/// The outline views as the assembly wrote them: the ranges its reducer kept (a file that
/// fitted whole after all is the whole file).
fn written_views(choices: &mut [Choice], assembly: &Assembly) {
    for c in choices.iter_mut().filter(|c| matches!(c.view, View::Outline(_))) {
        let written = assembly.references.iter().find(|r| r.suggested && r.path == c.path);
        let Some(record) = written else { continue };
        match &record.cut {
            Some(cut) if cut.view.as_deref() == Some("outline") => {
                let ranges = cut.ranges.iter().map(|l| LineRange { start: l.start, end: l.end });
                c.view = View::Outline(ranges.collect());
            }
            None if !record.truncated => c.view = View::Whole,
            _ => {}
        }
    }
}

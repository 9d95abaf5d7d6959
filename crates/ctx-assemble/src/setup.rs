//! [`Setup`]: what a run reads with and by, lent by the assembler that starts it: the
//! sandbox, the options, the tools, the resolver, the reducer and the front matter memo.

use ctx_fs::Sandbox;

use crate::memo::FrontMatterMemo;
use crate::options::Options;
use crate::reducer::Reducer;
use crate::resolve::Resolver;
use crate::tools::Tools;

/// What a run reads with and by.
#[derive(Clone, Copy)]
pub(crate) struct Setup<'a> {
    pub(crate) sandbox: &'a Sandbox,
    pub(crate) options: &'a Options,
    pub(crate) tools: &'a Tools,
    pub(crate) resolver: Option<&'a dyn Resolver>,
    pub(crate) reducer: Option<&'a dyn Reducer>,
    pub(crate) front_matter: &'a FrontMatterMemo,
}

//! The `*_async` calls, for tokio applications (feature `async`): each runs its synchronous
//! twin on tokio's blocking pool, since every one of them reads files.

use crate::context::{Context, ContextBuilder, Error, ErrorKind};
use crate::conversations::{BuiltConversation, ConversationBuilder};
use crate::{Assembly, SuggestOptions, Suggestion};

/// The error of a background task that did not finish.
fn task(err: tokio::task::JoinError) -> Error {
    Error::from(ErrorKind::Task(err.to_string()))
}

impl ContextBuilder {
    /// [`ContextBuilder::build`] on a blocking thread, for tokio applications: opening the
    /// roots and reading a solution's projects ([`ContextBuilder::solution`]) do file I/O.
    ///
    /// # Errors
    ///
    /// As [`ContextBuilder::build`], and when the background task fails.
    pub async fn build_async(self) -> Result<Context, Error> {
        tokio::task::spawn_blocking(move || self.build()).await.map_err(task)?
    }
}

impl Context {
    /// [`Context::assemble_file`] on a blocking thread, for tokio applications.
    ///
    /// # Errors
    ///
    /// As [`Context::assemble_file`].
    pub async fn assemble_file_async(&self, path: &str) -> Result<Assembly, Error> {
        let this = self.clone();
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || this.assemble_file(&path)).await.map_err(task)?
    }

    /// [`Context::expand_prompt`] on a blocking thread, for tokio applications.
    ///
    /// # Errors
    ///
    /// When the background task fails.
    pub async fn expand_prompt_async(&self, prompt: &str) -> Result<Assembly, Error> {
        let this = self.clone();
        let prompt = prompt.to_owned();
        tokio::task::spawn_blocking(move || this.expand_prompt(&prompt)).await.map_err(task)
    }

    /// [`Context::suggest`] on a blocking thread, for tokio applications.
    ///
    /// # Errors
    ///
    /// As [`Context::suggest`], and when the background task fails.
    pub async fn suggest_async(
        &self,
        prompt: &str,
        opts: &SuggestOptions,
    ) -> Result<Vec<Suggestion>, Error> {
        let this = self.clone();
        let prompt = prompt.to_owned();
        let opts = opts.clone();
        tokio::task::spawn_blocking(move || this.suggest(&prompt, &opts)).await.map_err(task)?
    }
}

impl ConversationBuilder {
    /// [`ConversationBuilder::build`] on a blocking thread, for tokio applications.
    ///
    /// # Errors
    ///
    /// As [`ConversationBuilder::build`], and when the background task fails.
    pub async fn build_async(self, prompt: &str) -> Result<BuiltConversation, Error> {
        let prompt = prompt.to_owned();
        tokio::task::spawn_blocking(move || self.build(&prompt)).await.map_err(task)?
    }
}

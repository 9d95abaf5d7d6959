//! A context whose source index is read in the background ([`ContextBuilder::build_deferred`]),
//! for the servers: they answer at once with the workspace alone, and through the index once it
//! is read, so that reading a large (or hostile) solution never sits on a request's path.

use std::sync::{Arc, Condvar, Mutex};

use crate::context::{Context, ContextBuilder, Error};

/// Where the complete context lands: empty until it is built, then the context or why not.
type Slot = Arc<(Mutex<Option<Result<Context, String>>>, Condvar)>;

/// A context now, and the same with its source index once that is read.
#[derive(Clone, Debug)]
pub struct Deferred {
    /// Without the source index: ready when the builder returns.
    quick: Context,
    /// With it, once built (the error of a build that failed, as text).
    full: Slot,
}

impl ContextBuilder {
    /// Builds the context without its source index (see [`ContextBuilder::solution`] and
    /// [`ContextBuilder::detect_solution`]) and starts reading the index on a thread of its
    /// own; [`Deferred::current`] gives the context with the index once it is read. Without a
    /// solution to read, the context is complete at once.
    ///
    /// # Errors
    ///
    /// As [`ContextBuilder::build`], for the context without the index; a failure to read the
    /// index later leaves [`Deferred::current`] without it ([`Deferred::wait`] says why).
    pub fn build_deferred(self) -> Result<Deferred, Error> {
        if !self.reads_sources() {
            return Ok(Deferred::from(self.build()?));
        }
        let quick = self.clone().no_sources().build()?;
        let full: Slot = Arc::default();
        let slot = Arc::clone(&full);
        std::thread::Builder::new()
            .name("ctx-sources".into())
            .spawn(move || {
                let built = self.build().map_err(|e| e.to_string());
                let (lock, ready) = &*slot;
                *lock.lock().unwrap_or_else(|e| e.into_inner()) = Some(built);
                ready.notify_all();
            })
            .map_err(|e| Error::from(crate::ErrorKind::Task(e.to_string())))?;
        Ok(Deferred { quick, full })
    }
}

impl From<Context> for Deferred {
    /// A context that is complete already.
    fn from(ctx: Context) -> Deferred {
        let full = Arc::new((Mutex::new(Some(Ok(ctx.clone()))), Condvar::new()));
        Deferred { quick: ctx, full }
    }
}

impl Deferred {
    /// Whether the complete context is built (or failed): [`Deferred::current`] will not
    /// change any more.
    pub fn is_complete(&self) -> bool {
        self.full.0.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// The context with its source index when that has been read, else the one without.
    pub fn current(&self) -> Context {
        match &*self.full.0.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(Ok(ctx)) => ctx.clone(),
            _ => self.quick.clone(),
        }
    }

    /// Waits until the source index has been read (or failed), then [`Deferred::current`]:
    /// for a caller that may wait, off the path that must answer at once.
    pub fn settled(&self) -> Context {
        let _ = self.wait();
        self.current()
    }

    /// Waits until the source index has been read (or failed): the complete context, or why
    /// it could not be built.
    ///
    /// # Errors
    ///
    /// The message of the error that stopped the complete context.
    pub fn wait(&self) -> Result<Context, String> {
        let (lock, ready) = &*self.full;
        let mut slot = lock.lock().unwrap_or_else(|e| e.into_inner());
        while slot.is_none() {
            slot = ready.wait(slot).unwrap_or_else(|e| e.into_inner());
        }
        slot.clone().expect("set before the wait ends")
    }
}
